/*
 * run_mismatch.c - re-run, minimize, classify and file one mismatch.
 */
#include "run_mismatch.h"

#include "mmafuzz_gen.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Append formatted text to buf at *pos; -1 when full. */
#define PUT(...)                                                                   \
    do {                                                                           \
        int w_ = snprintf(buf + pos, len - pos, __VA_ARGS__);                      \
        if (w_ < 0 || (size_t)w_ >= len - pos)                                     \
            return -1;                                                             \
        pos += (size_t)w_;                                                         \
    } while (0)

int mm_format_file(const mz_dev *z, const mf_case *orig, uint64_t orig_d, const mm_origin *o, const mm_outcome *out,
                   char *buf, size_t len)
{
    const mf_instr *in = z->in;
    const mf_device_info *di = mf_device_get_info(z->dev);
    size_t pos = 0;
    char tbuf[40], line[8192], dh[24], mh[24];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(tbuf, sizeof tbuf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    PUT("# mmafuzz mismatch: device and model disagree on the first case below.\n");
    PUT("# instr: %s\n", in->name);
    PUT("# signature: %s\n", out->sig);
    PUT("# device-spec: %s\n", o->device_spec);
    PUT("# device: %s (arch %s)\n", di->name, di->arch);
    PUT("# driver: %s\n# runtime: %s\n", di->driver, di->runtime);
    PUT("# mmafuzz: %s\n", MF_VERSION);
    if (z->model != z->in)
        PUT("# model: %s (mmafuzz run --model: compared with another architecture's model)\n", z->model->name);
    if (o->index >= 0) {
        PUT("# seed: %llu\n", o->seed);
        PUT("# index: %lld (tile %lld, row %d, column %d of %dx%d)\n", o->index, o->tile, o->row, o->col, o->m, o->n);
    }
    PUT("# generator: %s\n", o->generator ? o->generator : "-");
    PUT("# generator-version: %d\n", MF_GEN_VERSION);
    PUT("# time: %s\n", tbuf);
    char runs[80] = "";
    for (int r = 0; r < MZ_RERUNS; r++) {
        mf_vec_format_value(in->fd, out->runs[r], dh, sizeof dh);
        snprintf(runs + strlen(runs), sizeof runs - strlen(runs), "%s%s", r ? "," : "", dh);
    }
    PUT("# re-runs alone on the device: d=%s\n", runs);
    if (out->kind == MZ_REPEATS)
        PUT("# minimized: %d non-zero products, c %s; %ld candidates in %ld device calls, %.3f s\n",
            out->res.products, out->res.c_nonzero ? "non-zero" : "zero", out->res.evals, out->res.batches,
            out->res.seconds);
    else
        PUT("# not minimized: %s\n", out->kind == MZ_NONDETERMINISTIC
                                         ? "the device gave different results on different runs"
                                         : "alone on a tile the device agrees with the model; in its batch it did not");
    PUT("# hash: xxh3-128 of \"mmafuzz-case %d\\n\" + instr name + \"\\n\" + the first case's c=, a=, b= "
        "(sa=, sb=; meta= of a sparse row) fields + \"\\n\"\n", ST_FORMAT_VERSION);
    if (z->model != z->in)
        PUT("# replay: mmafuzz replay FILE --device %s --model %s\n", o->device_spec, mf_arch_name(z->model->arch));
    else
        PUT("# replay: mmafuzz replay FILE --device %s\n", o->device_spec);
    PUT("instr %s\n", in->name);
    if (out->kind == MZ_REPEATS) {
        if (mf_vec_format_case(in, &out->res.cs, &out->res.d_dev, line, sizeof line) < 0)
            return -1;
        mf_vec_format_value(in->fd, out->res.d_model, mh, sizeof mh);
        PUT("%s model=%s\n", line, mh);
        PUT("# the case as generated; d= is the device's output in its batch\n");
    }
    if (mf_vec_format_case(in, orig, &orig_d, line, sizeof line) < 0)
        return -1;
    mf_vec_format_value(in->fd, mf_eval(z->model, orig), mh, sizeof mh);
    PUT("%s model=%s%s\n", line, mh, out->kind == MZ_REPEATS ? " role=original" : "");
    return (int)pos;
}

mm_err mm_handle(store *st, mz_dev *z, const mf_case *orig, uint64_t batch_d, const mm_origin *o, mm_outcome *out,
              char *err, size_t errlen)
{
    const mf_instr *in = z->in;
    memset(out, 0, sizeof *out);
    z->stopped = 0;
    int kind = mz_recheck(z, orig, batch_d, out->runs);
    if (kind < 0) {
        snprintf(err, errlen, "%s", z->err);
        return z->stopped ? MM_STOPPED : MM_ERR_DEVICE;
    }
    out->kind = kind;
    const mf_case *key = orig;
    if (kind == MZ_REPEATS) {
        int rc = mz_minimize(z, orig, &out->res);
        if (rc == MZ_STOPPED) {
            snprintf(err, errlen, "%s", z->err);
            return MM_STOPPED;
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s", z->err);
            return MM_ERR_DEVICE;
        }
        key = &out->res.cs;
        out->sig = rv_signature(in->fd, out->res.d_dev, out->res.d_model);
    } else {
        out->sig = kind == MZ_NONDETERMINISTIC ? "non-deterministic" : "context-dependent";
    }
    st_hash(in, key, out->hex);
    st_path(st->root, in, out->hex, out->path, sizeof out->path);
    static char text[1 << 16];  /* one file at a time (main thread) */
    int n = mm_format_file(z, orig, batch_d, o, out, text, sizeof text);
    if (n < 0) {
        snprintf(err, errlen, "%s: mismatch file text too long", in->name);
        return MM_ERR_FORMAT;
    }
    int rc = st_file(st, in, out->hex, out->sig, text, (size_t)n, err, errlen);
    if (rc < 0)
        return MM_ERR_STORE;
    out->is_new = rc;
    return MM_OK;
}

/* Copy the first word of v (up to a blank) or all of it into dst. */
static void copy_value(char *dst, size_t len, const char *v, size_t vlen, int word)
{
    if (word) {
        size_t w = strcspn(v, " \t");
        if (w < vlen)
            vlen = w;
    }
    snprintf(dst, len, "%.*s", (int)(vlen < len ? vlen : len - 1), v);
}

int mm_header_parse(const char *text, mm_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    int found = 0, lineno = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        lineno++;
        if (len > 2 && line[0] == '#' && line[1] == ' ') {
            const char *k = line + 2, *colon = memchr(k, ':', len - 2);
            if (colon && colon[1] == ' ') {
                size_t klen = (size_t)(colon - k);
                const char *v = colon + 2;
                size_t vlen = len - (size_t)(v - line);
#define KEY(name) (klen == sizeof(name) - 1 && !strncmp(k, name, klen))
                if (KEY("instr")) {
                    copy_value(h->instr, sizeof h->instr, v, vlen, 1);
                    found++;
                } else if (KEY("signature")) {
                    copy_value(h->signature, sizeof h->signature, v, vlen, 0);
                    found++;
                } else if (KEY("device-spec")) {
                    copy_value(h->device_spec, sizeof h->device_spec, v, vlen, 1);
                    found++;
                } else if (KEY("device")) {
                    copy_value(h->device, sizeof h->device, v, vlen, 0);
                    found++;
                } else if (KEY("mmafuzz")) {
                    copy_value(h->version, sizeof h->version, v, vlen, 1);
                    found++;
                } else if (KEY("model")) {
                    copy_value(h->model, sizeof h->model, v, vlen, 1);
                    h->model_row = mf_instr_find(h->model);
                    if (!h->model_row) {
                        snprintf(err, errlen, "%d: '# model:' names no instruction of the table: '%s'", lineno,
                                 h->model);
                        return -1;
                    }
                    found++;
                } else if (KEY("seed") || KEY("index")) {
                    char num[32];
                    copy_value(num, sizeof num, v, vlen, 1);
                    char *end;
                    if (KEY("seed")) {
                        h->seed = strtoull(num, &end, 10);
                        h->has_seed = num[0] >= '0' && num[0] <= '9' && !*end;
                    } else {
                        h->index = strtoll(num, &end, 10);
                        h->has_index = num[0] >= '0' && num[0] <= '9' && !*end;
                    }
                    if (!(KEY("seed") ? h->has_seed : h->has_index)) {
                        snprintf(err, errlen, "%d: '# %.*s:' expected a decimal number, got '%s'", lineno, (int)klen,
                                 k, num);
                        return -1;
                    }
                    found++;
                } else if (KEY("generator")) {
                    copy_value(h->generator, sizeof h->generator, v, vlen, 0);
                    found++;
                }
#undef KEY
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return found;
}

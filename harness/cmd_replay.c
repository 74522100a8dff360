/*
 * cmd_replay.c - `mmafuzz replay` (re-run saved cases on device and model)
 * and `mmafuzz shrink` (minimize a saved case again).
 */
#include "cli.h"
#include "instr_select.h"
#include "mf_device.h"
#include "run_fs.h"
#include "run_mismatch.h"
#include "run_stats.h"  /* the status line (rs_progress) */
#include "run_store.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ replay */

enum { RP_AGREE, RP_FIXED, RP_STILL, RP_CHANGED, RP_UNSUPPORTED, RP_ERROR, RP_COUNT };
static const char *const rp_names[RP_COUNT] = {"agrees", "fixed", "still-mismatching", "device-changed",
                                               "unsupported", "device-error"};

typedef struct pending {
    long line;
    const mf_instr *in;
    mf_case cs;
    int has_d;
    uint64_t d;
} pending;

typedef struct replay_ctx {
    mf_device *dev;
    mf_arch model_arch;  /* --model ARCH; MF_ARCH_COUNT: each row's own model */
    int verbose;
    const char *const *pat;  /* --instr patterns (npat 0: every case) */
    int npat;
    long filtered;           /* cases --instr left out */
    char path[4096];
    pending *p;
    size_t n, cap;
    long count[RP_COUNT];
    mz_dev *z;  /* one per table row, made on first use */
    rs_progress prog;              /* the status line: files' bytes done of all, cases */
    double bytes_total, bytes_done;
    long long seen;                /* cases read */
} replay_ctx;

static double file_bytes(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (double)sb.st_size : 0;
}

static int add_bytes(const char *path, void *ctx)
{
    *(double *)ctx += file_bytes(path);
    return 0;
}

static void replay_progress(replay_ctx *rc, int force)
{
    if (!rs_progress_due(&rc->prog, force))
        return;
    char c[24], r[24], b[24], eta[80], line[300];
    double el = rs_now() - rc->prog.t0;
    rs_progress_eta(&rc->prog, rc->bytes_done, rc->bytes_total, eta, sizeof eta);
    snprintf(line, sizeof line, "mmafuzz replay: #%.0fs cases %s (%s/s)  bytes %s%s  still-mismatching %ld", el,
             rs_human((double)rc->seen, c, sizeof c), rs_human(el > 0 ? (double)rc->seen / el : 0, r, sizeof r),
             rs_human(rc->bytes_done, b, sizeof b), eta, rc->count[RP_STILL]);
    rs_progress_print(&rc->prog, line);
}

/* Classify one case: device now (dev), model now (model), recorded d. */
static int classify(const mf_instr *in, uint64_t dev, uint64_t model, int has_d, uint64_t d)
{
    if (mf_output_equal(in, dev, model))
        return has_d && !mf_output_equal(in, d, model) ? RP_FIXED : RP_AGREE;
    if (has_d && !mf_output_equal(in, dev, d))
        return RP_CHANGED;
    return RP_STILL;
}

static void flush_pending(replay_ctx *rc)
{
    /* one device call per instruction present */
    for (size_t i = 0; i < rc->n; i++) {
        const mf_instr *in = rc->p[i].in;
        if (!in)
            continue;  /* done */
        size_t row = (size_t)(in - mf_instr_table);
        mz_dev *z = &rc->z[row];
        const mf_instr *model = rc->model_arch == MF_ARCH_COUNT ? in : mf_instr_on_arch(in, rc->model_arch);
        int supported = model && mf_device_supports(rc->dev, in, NULL);
        if (supported && !z->dev && mz_dev_init(z, rc->dev, in, model)) {
            fprintf(stderr, "mmafuzz replay: %s\n", z->err);
            supported = 0;
        }
        size_t cnt = 0;
        mf_case *cs = malloc(rc->n * sizeof *cs);
        size_t *idx = malloc(rc->n * sizeof *idx);
        uint64_t *out = malloc(rc->n * sizeof *out);
        if (!cs || !idx || !out) {
            fprintf(stderr, "mmafuzz replay: out of memory\n");
            exit(2);
        }
        for (size_t j = i; j < rc->n; j++)
            if (rc->p[j].in == in) {
                cs[cnt] = rc->p[j].cs;
                idx[cnt++] = j;
            }
        int rc_dev = supported ? mz_dev_run(z, cs, cnt, out) : MF_DEV_ERR_UNSUPPORTED;
        if (supported && rc_dev)
            fprintf(stderr, "mmafuzz replay: %s: device error: %s\n", in->name, z->err);
        for (size_t q = 0; q < cnt; q++) {
            pending *pe = &rc->p[idx[q]];
            int st;
            uint64_t mv = model ? mf_eval(model, &pe->cs) : 0;
            if (!supported)
                st = RP_UNSUPPORTED;
            else if (rc_dev)
                st = RP_ERROR;
            else
                st = classify(in, out[q], mv, pe->has_d, pe->d);
            rc->count[st]++;
            if (st != RP_AGREE || rc->verbose) {
                char dh[24] = "-", mh[24], rh[24] = "-";
                if (supported && !rc_dev)
                    mf_vec_format_value(in->fd, out[q], dh, sizeof dh);
                mf_vec_format_value(in->fd, mv, mh, sizeof mh);
                if (pe->has_d)
                    mf_vec_format_value(in->fd, pe->d, rh, sizeof rh);
                printf("%s:%ld: %s %s: device d=%s model=%s recorded d=%s\n", rc->path, pe->line, in->name,
                       rp_names[st], dh, mh, rh);
            }
            pe->in = NULL;
        }
        free(cs);
        free(idx);
        free(out);
    }
    rc->n = 0;
}

static int replay_case(const st_case *c, void *vctx)
{
    replay_ctx *rc = vctx;
    if (!instr_selects_any(rc->pat, rc->npat, c->in->name)) {
        rc->filtered++;
        return 0;
    }
    if (strcmp(rc->path, c->path)) {
        flush_pending(rc);
        if (rc->path[0])
            rc->bytes_done += file_bytes(rc->path);
        snprintf(rc->path, sizeof rc->path, "%s", c->path);
        replay_progress(rc, 0);
    }
    if ((++rc->seen & 4095) == 0)
        replay_progress(rc, 0);
    if (rc->n == rc->cap) {
        size_t cap = rc->cap ? rc->cap * 2 : 256;
        pending *p = realloc(rc->p, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "mmafuzz replay: out of memory\n");
            return 1;
        }
        rc->p = p;
        rc->cap = cap;
    }
    rc->p[rc->n++] = (pending){c->line, c->in, c->cs, c->has_d, c->d};
    if (rc->n >= 4096)
        flush_pending(rc);
    return 0;
}

int cmd_replay(int argc, char **argv)
{
    cli_opts_replay a;
    int prc = cli_replay_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *device = a.device;
    const char **paths = a.pos;
    int np = a.npos, verbose = a.verbose > 0;
    mf_arch model_arch = a.model ? mf_arch_by_name(a.model) : MF_ARCH_COUNT;
    replay_ctx rc;
    memset(&rc, 0, sizeof rc);
    rc.verbose = verbose;
    rc.model_arch = model_arch;
    rc.pat = a.instr.v;
    rc.npat = a.instr.n;
    if (instr_select_check("replay", "--instr ", rc.pat, rc.npat)) {
        cli_replay_free(&a);
        return 2;
    }
    char err[600];
    if (mf_device_open(device, &rc.dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz replay: --device %s: %s\n", device, err);
        cli_replay_free(&a);
        return 2;
    }
    rc.z = calloc(mf_instr_count, sizeof *rc.z);
    static const char *const suffixes[] = {".vec", ".vec.gz", NULL};  /* st_read's */
    for (int i = 0; i < np; i++)
        fs_walk(paths[i], suffixes, add_bytes, &rc.bytes_total, err, sizeof err);  /* errors: st_read says */
    rs_progress_start(&rc.prog, 10);
    long skipped = st_read(paths, np, replay_case, &rc);
    flush_pending(&rc);
    if (rc.path[0])
        rc.bytes_done += file_bytes(rc.path);
    if (rc.prog.printed)
        replay_progress(&rc, 1);
    rs_progress_end(&rc.prog);
    printf("replayed on %s: %ld still-mismatching, %ld device-changed, %ld fixed, %ld agree, %ld unsupported, "
           "%ld device errors; %ld file%s skipped\n",
           mf_device_get_info(rc.dev)->name, rc.count[RP_STILL], rc.count[RP_CHANGED], rc.count[RP_FIXED],
           rc.count[RP_AGREE], rc.count[RP_UNSUPPORTED], rc.count[RP_ERROR], skipped < 0 ? 0 : skipped,
           skipped == 1 ? "" : "s");
    if (rc.npat)
        printf("%ld case%s of other instructions left out (--instr)\n", rc.filtered, rc.filtered == 1 ? "" : "s");
    for (size_t i = 0; i < mf_instr_count; i++)
        if (rc.z[i].dev)
            mz_dev_free(&rc.z[i]);
    free(rc.z);
    free(rc.p);
    cli_replay_free(&a);
    mf_device_close(rc.dev);
    if (rc.count[RP_STILL] || rc.count[RP_CHANGED])
        return 1;
    return (skipped != 0 || rc.count[RP_ERROR]) ? 2 : 0;
}

/* ------------------------------------------------------------ shrink */

typedef struct shrink_ctx {
    int have;
    st_case c;
    char header[4096];
} shrink_ctx;

static int shrink_pick(const st_case *c, void *vctx)
{
    shrink_ctx *sc = vctx;
    /* the case as generated when the file has one, else the first case */
    if (!sc->have || (c->original && !sc->c.original)) {
        sc->c = *c;
        snprintf(sc->header, sizeof sc->header, "%s", c->header ? c->header : "");
        sc->have = 1;
    }
    return 0;
}

int cmd_shrink(int argc, char **argv)
{
    cli_opts_shrink a;
    int prc = cli_shrink_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *device = a.device, *out = a.out, *file = a.pos[0];
    const char *model_name = a.model;
    cli_shrink_free(&a);  /* the strings point into argv */
    shrink_ctx sc;
    memset(&sc, 0, sizeof sc);
    const char *paths[1] = {file};
    long skipped = st_read(paths, 1, shrink_pick, &sc);
    if (skipped || !sc.have) {
        if (!skipped)
            fprintf(stderr, "%s:1: expected at least one case\n", file);
        return 2;
    }
    mm_header hd;
    char herr[300];
    if (mm_header_parse(sc.header, &hd, herr, sizeof herr) < 0) {
        fprintf(stderr, "%s:%s\n", file, herr);
        return 2;
    }
    if (!device)
        device = hd.device_spec[0] ? hd.device_spec : NULL;
    if (!device) {
        fprintf(stderr, "mmafuzz shrink: %s has no '# device-spec:' line; give --device SPEC\n", file);
        return 2;
    }
    /* the model to compare with: --model, else the file's '# model:' line, else the case's own row */
    const mf_instr *model = sc.c.in;
    if (model_name) {
        model = mf_instr_on_arch(sc.c.in, mf_arch_by_name(model_name));
        if (!model) {
            fprintf(stderr, "mmafuzz shrink: --model %s has no instruction %s\n", model_name, sc.c.in->name);
            return 2;
        }
    } else if (hd.model_row) {
        model = hd.model_row;
    }
    char err[700];
    mf_device *dev;
    if (mf_device_open(device, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz shrink: --device %s: %s\n", device, err);
        return 2;
    }
    int status = 2;
    mz_dev z;
    store st;
    memset(&st, 0, sizeof st);
    if (!mf_device_supports(dev, sc.c.in, NULL)) {
        fprintf(stderr, "mmafuzz shrink: %s is not runnable on %s\n", sc.c.in->name, device);
    } else if (mz_dev_init(&z, dev, sc.c.in, model)) {
        fprintf(stderr, "mmafuzz shrink: %s\n", z.err);
    } else {
        uint64_t d;
        if (mz_dev_run(&z, &sc.c.cs, 1, &d)) {
            fprintf(stderr, "mmafuzz shrink: %s\n", z.err);
        } else if (mf_output_equal(sc.c.in, d, mf_eval(model, &sc.c.cs))) {
            printf("%s:%ld: %s: device and model agree now; nothing to minimize\n", file, sc.c.line, sc.c.in->name);
            status = 0;
        } else if (st_lock(out, 0, err, sizeof err) < 0 || st_open(&st, out, err, sizeof err)) {
            fprintf(stderr, "mmafuzz shrink: %s\n", err);  /* one writer per store: its lock held until exit */
        } else {
            char note[4200];
            snprintf(note, sizeof note, "shrink of %s:%ld", file, sc.c.line);
            mm_origin o = {device, 0, -1, -1, 0, 0, z.m, z.n, note};
            mm_outcome res;
            if (mm_handle(&st, &z, &sc.c.cs, d, &o, &res, err, sizeof err) || st_flush(&st, err, sizeof err)) {
                fprintf(stderr, "mmafuzz shrink: %s\n", err);
            } else {
                char line[8192];
                if (res.kind == MZ_REPEATS) {
                    mf_vec_format_case(sc.c.in, &res.res.cs, &res.res.d_dev, line, sizeof line);
                    printf("instr %s\n%s\n", sc.c.in->name, line);
                    printf("# %s, %d non-zero products, %ld candidates in %ld device calls, %.3f s\n", res.sig,
                           res.res.products, res.res.evals, res.res.batches, res.res.seconds);
                } else {
                    printf("# %s: not minimized\n", res.sig);
                }
                printf("# %s %s\n", res.is_new ? "new file" : "already filed:", res.path);
                status = 1;
            }
            st_close(&st);
        }
        mz_dev_free(&z);
    }
    mf_device_close(dev);
    return status;
}

/*
 * kernel_table.c - the kernel table read and searched for a recording
 * (kernel_table.h).  Columns, as python/mmafuzz/kernels.py writes them:
 * gpu software op a_format d_format flags m n k reproduced outputs model kernel.
 */
#include "kernel_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef MMAFUZZ_KERNEL_TABLE
#define MMAFUZZ_KERNEL_TABLE ""
#endif

enum { NCOL = 13 };

int mf_ktable_defaults(char paths[][4096], int max)
{
    int n = 0;
    struct stat sb;
    if (n < max && *MMAFUZZ_KERNEL_TABLE && stat(MMAFUZZ_KERNEL_TABLE, &sb) == 0)
        snprintf(paths[n++], 4096, "%s", MMAFUZZ_KERNEL_TABLE);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char user[4096] = "";
    if (xdg && *xdg)
        snprintf(user, sizeof user, "%s/mmafuzz/kernels.tsv", xdg);
    else if (home && *home)
        snprintf(user, sizeof user, "%s/.cache/mmafuzz/kernels.tsv", home);
    if (n < max && *user && stat(user, &sb) == 0)
        snprintf(paths[n++], 4096, "%s", user);
    return n;
}

int mf_ktable_parse_model(const char *text, mf_kernel *kr, char *err, size_t errlen)
{
    size_t n = strlen(text);
    char *t = malloc(n + 1);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i <= n; i++)
        t[i] = text[i] == ';' ? '\n' : text[i];
    int rc = mf_kernel_parse(t, kr, err, errlen);
    free(t);
    return rc;
}

/* flags text "k=v,k=v" (or "-"): does `have` hold every k=v of `want`? */
static int flags_subset(const char *want, const char *have)
{
    if (!strcmp(want, "-") || !*want)
        return 1;
    const char *p = want;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (const char *q = have; *q;) {
            const char *qe = strchr(q, ',');
            size_t ql = qe ? (size_t)(qe - q) : strlen(q);
            if (ql == len && !memcmp(p, q, len)) {
                found = 1;
                break;
            }
            q += ql + (qe != NULL);
        }
        if (!found)
            return 0;
        p += len + (e != NULL);
    }
    return 1;
}

int mf_ktable_lookup(const char *const *paths, int npaths, const mf_rec *r, mf_kernel *kr, char *where,
                     size_t wlen, char *note, size_t nlen, char *err, size_t errlen)
{
    int found = 0;
    long rows = 0;
    char *best_model = NULL, best_sw[256] = "";
    for (int t = 0; t < npaths; t++) {
        FILE *f = fopen(paths[t], "r");
        if (!f) {
            snprintf(err, errlen, "%s: cannot open: %s", paths[t], strerror(errno));
            free(best_model);
            return -1;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        long ln = 0;
        while ((len = getline(&line, &cap, f)) >= 0) {
            ln++;
            while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                line[--len] = 0;
            if (!len || line[0] == '#' || (ln == 1 && !strncmp(line, "gpu\t", 4)))
                continue;
            char *col[NCOL];
            int nc = 0;
            for (char *p = line; nc < NCOL;) {
                col[nc++] = p;
                char *tab = strchr(p, '\t');
                if (!tab)
                    break;
                *tab = 0;
                p = tab + 1;
            }
            if (nc != NCOL || strchr(col[NCOL - 1], '\t')) {
                snprintf(err, errlen, "%s:%ld: expected %d tab-separated fields (gpu software op a_format d_format flags "
                         "m n k reproduced outputs model kernel)", paths[t], ln, NCOL);
                free(line);
                fclose(f);
                free(best_model);
                return -1;
            }
            rows++;
            char *e1, *e2, *e3;
            long long m = strtoll(col[6], &e1, 10), n = strtoll(col[7], &e2, 10), k = strtoll(col[8], &e3, 10);
            if (*e1 || *e2 || *e3 || !*col[6] || !*col[7] || !*col[8]) {
                snprintf(err, errlen, "%s:%ld: expected m, n, k decimal integers", paths[t], ln);
                free(line);
                fclose(f);
                free(best_model);
                return -1;
            }
            if (strcmp(col[2], r->op) || strcmp(col[3], r->a_name) || strcmp(col[4], r->d_name) || m != r->m ||
                n != r->n || k != r->k || strcmp(col[0], r->gpu) || !flags_subset(r->flags, col[5]))
                continue;
            free(best_model);
            best_model = strdup(col[11]);
            snprintf(best_sw, sizeof best_sw, "%s", col[1]);
            snprintf(where, wlen, "%s:%ld", paths[t], ln);
            found = 1;
        }
        free(line);
        fclose(f);
    }
    if (!found) {
        snprintf(err, errlen, "no kernel model for %s %s->%s %lldx%lldx%lld flags %s on '%s' in the kernel table "
                 "(%ld calls in %d file%s); give one with --kernel FILE", r->op, r->a_name, r->d_name,
                 (long long)r->m, (long long)r->n, (long long)r->k, r->flags, r->gpu, rows, npaths,
                 npaths == 1 ? "" : "s");
        return 0;
    }
    if (!best_model) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char msg[256];
    int rc = mf_ktable_parse_model(best_model, kr, msg, sizeof msg);
    free(best_model);
    if (rc) {
        snprintf(err, errlen, "%s: model: %s", where, msg);
        return -1;
    }
    if (*r->software && strcmp(best_sw, r->software))
        snprintf(note, nlen, "the table's call ran on %s, this one on %s", best_sw, r->software);
    else if (nlen)
        *note = 0;
    return 1;
}

int mf_ktable_guess(mf_format a, mf_format b, mf_format d, int splitk_num, int fast_accum, mf_kernel *kr)
{
    const int fp8 = a == MF_FMT_E4M3 || a == MF_FMT_E5M2;
    const int ik = fp8 ? 32 : a == MF_FMT_TF32 ? 8 : 16;
    char name[96];
    snprintf(name, sizeof name, "hopper/wgmma.m64n8k%d.f32.%s.%s", ik, mf_format_get(a)->name, mf_format_get(b)->name);
    const mf_instr *in = mf_instr_find(name);
    if (!in || splitk_num < 1)
        return -1;
    memset(kr, 0, sizeof *kr);
    kr->in = in;
    kr->bk = fp8 ? 128 : 64;
    kr->split = (uint32_t)splitk_num;
    kr->split_rule = MF_KSPLIT_CEIL;
    kr->reduce = MF_KRED_SERIAL;
    kr->promote = fp8 && !fast_accum ? 4 : 0;
    kr->out = d;
    return mf_kernel_check(kr) ? -1 : 0;
}

int mf_ktable_derive(const mf_rec *r, mf_kernel *kr, char *where, size_t wlen)
{
    const jv *H = &r->header;
    const jv *sm = jv_get(jv_get(H, "env"), "sm"), *algo = jv_get(jv_get(H, "cublaslt"), "algo");
    const jv *sk = jv_get(algo, "splitk_num"), *fast = jv_get(jv_get(H, "flags"), "fast_accum");
    if (strcmp(r->op, "cublasLtMatmul") || !sm || sm->kind != JV_STRING || strcmp(sm->str, "90") || !sk ||
        sk->kind != JV_NUMBER || !sk->is_int || sk->i < 1 || sk->i > 4096 || r->fa != r->fb)
        return 0;
    if (mf_ktable_guess(r->fa, r->fb, r->fd, (int)sk->i, fast && fast->kind == JV_TRUE, kr))
        return 0;
    snprintf(where, wlen, "derived from the cuBLASLt algorithm (split-K %lld%s)", (long long)sk->i,
             kr->promote ? ", fp8 promotion every 4" : "");
    return 1;
}

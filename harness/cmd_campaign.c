/*
 * cmd_campaign.c - `mmafuzz campaign init DIR`: define a campaign once
 * (campaign.h describes the folder and the definition).
 */
#include "campaign.h"
#include "cli.h"
#include "mf_device.h"
#include "run_fs.h"
#include "run_loop.h"
#include "run_pool.h"
#include "run_store.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The frozen pool: the saved cases a selected instruction can take, as .vec text. */
typedef struct pool_text {
    char *buf;
    size_t len, cap;
    long long n;
    const run_instr *ri;
    int ni;
    int failed;
} pool_text;

static int pool_case(const st_case *c, void *vctx)
{
    pool_text *p = vctx;
    int ok = 0;
    for (int i = 0; i < p->ni && !ok; i++)
        ok = pool_compatible(c->in, p->ri[i].in);
    if (!ok)
        return 0;
    char line[8192];
    int n = mf_vec_format_case(c->in, &c->cs, NULL, line, sizeof line);
    if (n < 0)
        return 0;
    size_t need = strlen(c->in->name) + (size_t)n + 16;
    if (p->len + need >= p->cap) {
        size_t cap = (p->cap + need) * 2;
        char *nb = realloc(p->buf, cap);
        if (!nb) {
            p->failed = 1;
            return 1;
        }
        p->buf = nb;
        p->cap = cap;
    }
    p->len += (size_t)sprintf(p->buf + p->len, "instr %s\n%s\n", c->in->name, line);
    p->n++;
    return 0;
}

static int campaign_init(const cli_opts_campaign *a, const char *dir)
{
    if (!a->given.runs) {
        fprintf(stderr, "mmafuzz campaign init: -runs N is required (the campaign's budget in dot-product cases)\n");
        return 2;
    }
    cp_def *d = calloc(1, sizeof *d);
    if (!d)
        return 2;
    run_opts o;
    memset(&o, 0, sizeof o);
    for (int p = 0; p < a->instr.n; p++)
        o.pat[o.npat++] = a->instr.v[p];
    o.device = a->device;
    o.model = a->model;
    o.batch = a->batch;
    o.runs = a->runs;
    o.lock_fd = -1;
    gen_mix_default(&o.mix);
    char err[1400];
    if (a->given.mix && gen_mix_parse(a->mix, &o.mix, err, sizeof err)) {
        fprintf(stderr, "mmafuzz campaign init: %s\n", err);
        free(d);
        return 2;
    }
    gen_mix_format(&o.mix, d->mix, sizeof d->mix);
    mf_device *dev;
    if (mf_device_open(o.device, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz campaign init: --device %s: %s (the device's tile shapes are part of the "
                        "definition)\n", o.device, err);
        free(d);
        return 2;
    }
    run_instr *ri;
    int ni;
    if (run_select(&o, dev, &ri, &ni) != RUN_OK) {
        mf_device_close(dev);
        free(d);
        return 2;
    }
    mf_device_close(dev);
    if (ni > CP_MAX_INSTR) {
        fprintf(stderr, "mmafuzz campaign init: %d instructions, at most %d in a campaign\n", ni, CP_MAX_INSTR);
        free(ri);
        free(d);
        return 2;
    }
    d->seed = a->seed;
    snprintf(d->device, sizeof d->device, "%s", o.device);
    snprintf(d->model, sizeof d->model, "%s", o.model ? o.model : "");
    d->runs = o.runs;
    d->minimize_every = a->minimize_every;
    d->gen_version = MF_GEN_VERSION;
    d->ninstr = ni;
    unsigned long long total = 0;
    for (int i = 0; i < ni; i++) {
        cp_instr *ci = &d->instr[i];
        snprintf(ci->name, sizeof ci->name, "%s", ri[i].in->name);
        ci->m = ri[i].m;
        ci->n = ri[i].n;
        ci->k = ri[i].k;
        long long per = (long long)ri[i].m * ri[i].n;
        ci->tiles = (unsigned long long)((ri[i].quota + per - 1) / per);  /* run's split: -runs / ni, rounded up */
        total += ci->tiles * (unsigned long long)per;
    }
    /* the frozen pool */
    const char *paths[RUN_MAX_CORPUS + 2];
    int np = 0;
    if (!a->corpus.n) {
        if (fs_is_dir("corpus/golden"))
            paths[np++] = "corpus/golden";
        if (fs_is_dir("corpus/findings"))
            paths[np++] = "corpus/findings";
    }
    for (int c = 0; c < a->corpus.n; c++)
        paths[np++] = a->corpus.v[c];
    pool_text pt = {NULL, 0, 0, 0, ri, ni, 0};
    if (np)
        st_read(paths, np, pool_case, &pt);
    free(ri);
    if (pt.failed) {
        fprintf(stderr, "mmafuzz campaign init: out of memory for the pool\n");
        free(pt.buf);
        free(d);
        return 2;
    }
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(pt.buf ? pt.buf : "", pt.len));
    for (int i = 0; i < 16; i++)
        snprintf(d->pool_hash + 2 * i, 3, "%02x", c.digest[i]);
    d->pool_cases = pt.n;
    int rc = 2;
    char path[1200];
    snprintf(path, sizeof path, "%s/pool.vec", dir);
    if (strlen(dir) > CP_DIR_MAX) {  /* its shards' folders must fit a store's name (ST_ROOT_MAX) */
        fprintf(stderr, "mmafuzz campaign init: %.60s...: a folder name of %zu characters; a campaign's is at most "
                        "%d\n", dir, strlen(dir), CP_DIR_MAX);
    } else if (fs_mkdir_p(dir)) {
        fprintf(stderr, "mmafuzz campaign init: %s: cannot create the folder\n", dir);
    } else {
        int w = fs_write_atomic(path, pt.buf ? pt.buf : "", pt.len, 0, err, sizeof err);
        if (w == 1) {  /* there already: the same pool (a concurrent init), or another campaign's */
            size_t ol;
            char *old = fs_read_all(path, &ol, err, sizeof err);
            w = old && ol == pt.len && !memcmp(old, pt.buf ? pt.buf : "", ol) ? 0 : 2;
            free(old);
            if (w)
                snprintf(err, sizeof err, "%s: another campaign's frozen pool is there (choose another folder)",
                         path);
        }
        if (w) {
            fprintf(stderr, "mmafuzz campaign init: %s\n", err);
        } else {
            w = cp_def_write(dir, d, err, sizeof err);
            if (w < 0 || w == 2) {
                fprintf(stderr, "mmafuzz campaign init: %s\n", err);
            } else {
                printf("campaign %s %s %s: %d instruction%s, %llu cases in whole tiles, seed %llu, device %s%s%s, "
                       "%lld saved cases frozen in the pool\n",
                       d->id, w == 1 ? "already defined identically in" : "defined in", dir, ni, ni == 1 ? "" : "s",
                       total, d->seed, d->device, d->model[0] ? ", model " : "", d->model, d->pool_cases);
                rc = 0;
            }
        }
    }
    free(pt.buf);
    free(d);
    return rc;
}

int cmd_campaign(int argc, char **argv)
{
    cli_opts_campaign a;
    int prc = cli_campaign_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    int rc;
    if (strcmp(a.pos[0], "init") || a.npos != 2) {
        fprintf(stderr, "mmafuzz campaign: expected 'init DIR', got '%s'%s\n", a.pos[0],
                a.npos != 2 ? " and no folder" : "");
        rc = 2;
    } else {
        rc = campaign_init(&a, a.pos[1]);
    }
    cli_campaign_free(&a);
    return rc;
}

/*
 * run_loop.c - the campaign loop of `mmafuzz run` (see run_loop.h).
 */
#include "run_loop.h"

#include "buckets.h"
#include "campaign.h"
#include "instr_select.h"
#include "run_fs.h"
#include "mmafuzz_gen.h"
#include "run_pool.h"
#include "run_mismatch.h"
#include "run_state.h"
#include "run_stats.h"
#include "run_workers.h"
#include "vecfile.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNKS 1024         /* a batch is cut into this many chunks (fewer if it has fewer tiles) */
#define REC_PER_CHUNK 64     /* plain run: disagreements per chunk recorded as candidates for filing (all are counted) */
#define GPU_RECS 4096        /* --verify gpu, plain run: disagreements of a call recorded as candidates for filing */
_Static_assert(GPU_RECS <= CHUNKS * REC_PER_CHUNK, "a call's candidates fit the recs of a batch");
#define POOL_CAP 8192
#define VIEW_CAP 4096

/* One recorded mismatch of a batch. */
typedef struct rec {
    unsigned long long tile;  /* the tile's index in the campaign */
    int i, j;
    uint64_t dev, model;
    int cls;                  /* --campaign: its signature class */
    uint64_t bk;              /* its bucket id (rf_classify) */
} rec;

/* The disagreements of one chunk by bucket (buckets.h): every disagreement
 * is classified, so the counts are exact; entries in order of first
 * sighting, found through an open-addressing table of their indices. */
typedef struct tally_e {
    uint64_t id;
    long long n;
    rec first;                /* its first disagreement in the chunk (describes a bucket new to the run) */
} tally_e;

typedef struct tally {
    tally_e *e;
    size_t n, cap;
    int32_t *slot;            /* nslot (a power of two) entries: an index into e, or -1 */
    size_t nslot;
    int oom;                  /* a sighting was lost for want of memory: the run stops */
} tally;

typedef struct batch {
    int slot;                 /* index into the run's instruction list */
    const mf_instr *in;
    const mf_instr *model;    /* the row the model evaluates (in, unless --model) */
    int m, n, k;
    size_t ntiles;
    unsigned long long first_tile;  /* slot t holds tile tile_base + tile_stride * (first_tile + t) */
    unsigned long long tile_base, tile_stride;
    int camp;                 /* --campaign: record per tile (trecs) and count per class (ncls) */
    rec *trecs;               /* CP_TILE_RECS per tile: the first mismatch of each class in the tile */
    unsigned char *trec_n;    /* per tile */
    long long *ncls;          /* CP_NCLASS per chunk */
    const rf_classifier *cls; /* the buckets of the instruction against its model row */
    tally *tl;                /* per chunk */
    void *A, *B, *C, *SA, *SB, *D;
    unsigned char *gen;       /* generator of each tile */
    size_t cap_tiles;         /* tiles the arrays hold */
    size_t nchunks;           /* chunk c: tiles [ntiles*c/nchunks, ntiles*(c+1)/nchunks) */
    rec *recs;                /* plain run: REC_PER_CHUNK per chunk (GPU_RECS in chunk 0 of a --verify gpu call) */
    int *nrec;                /* per chunk */
    long long *nmis;          /* per chunk */
    double *chunk_s;          /* per chunk: seconds spent generating it plus evaluating it */
    unsigned char *want;      /* per worker: the model's output tile */
    size_t want_bytes;
    gen_ctx g;
    /* --verify gpu: the tiles stayed on the GPU; a tile's case is generated
     * again on the host (gen_tile, the same bits) into slot 0 when asked for */
    int sparse;
    unsigned long long cached_tile;
    int cached;
    rec **dumpv;              /* --dump-disagreements, host path: every disagreement of chunk c */
    size_t *ndump, *capdump;
} batch;


/* One job of the workers: evaluate one batch and generate the next.  The
 * workers take chunks from the two counters, so a slow thread delays the
 * batch by one chunk at most; what is recorded depends on the chunks only,
 * not on the number of threads or their timing. */
typedef struct job {
    batch *eval, *gen;
    atomic_size_t next_eval, next_gen;
} job;

/* the stop request of SIGINT, SIGTERM, SIGHUP (run_fs.h: a second one ends the process) */
#define g_stop (*fs_stop_flag())

/* ------------------------------------------------------------ tallies */

static void tally_reset(tally *t)
{
    t->n = 0;
    t->oom = 0;
    if (t->slot)
        memset(t->slot, 0xff, t->nslot * sizeof *t->slot);
}

static void tally_free(tally *t)
{
    free(t->e);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* Count disagreement r in bucket id. */
static void tally_add(tally *t, uint64_t id, const rec *r)
{
    if (2 * (t->n + 1) > t->nslot) {  /* grow the index (and rebuild it) */
        size_t ns = t->nslot ? 2 * t->nslot : 16;
        int32_t *sl = malloc(ns * sizeof *sl);
        if (!sl) {
            t->oom = 1;
            return;
        }
        memset(sl, 0xff, ns * sizeof *sl);
        for (size_t q = 0; q < t->n; q++) {
            size_t h = (size_t)t->e[q].id & (ns - 1);
            while (sl[h] >= 0)
                h = (h + 1) & (ns - 1);
            sl[h] = (int32_t)q;
        }
        free(t->slot);
        t->slot = sl;
        t->nslot = ns;
    }
    size_t h = (size_t)id & (t->nslot - 1);
    while (t->slot[h] >= 0 && t->e[t->slot[h]].id != id)
        h = (h + 1) & (t->nslot - 1);
    tally_e *e;
    if (t->slot[h] >= 0) {
        e = &t->e[t->slot[h]];
    } else {
        if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 8;
            tally_e *ne = realloc(t->e, cap * sizeof *ne);
            if (!ne) {
                t->oom = 1;
                return;
            }
            t->e = ne;
            t->cap = cap;
        }
        t->slot[h] = (int32_t)t->n;
        e = &t->e[t->n++];
        e->id = id;
        e->n = 0;
        e->first = *r;
    }
    e->n++;
}

/* ------------------------------------------------------------ workers */

static size_t chunk_first(const batch *b, size_t c) { return b->ntiles * c / b->nchunks; }
static unsigned long long tile_of(const batch *b, size_t t) { return b->tile_base + b->tile_stride * (b->first_tile + t); }

/* The case of output (i, j) of campaign tile `tile` of batch b, and the
 * generator of its tile: read from the batch's arrays, or (a batch verified
 * on the GPU) from the tile generated again on the host. */
static gen_kind batch_case(batch *b, unsigned long long tile, int i, int j, mf_case *cs)
{
    size_t t;
    if (b->sparse) {
        if (!b->cached || b->cached_tile != tile) {
            b->gen[0] = (unsigned char)gen_tile(&b->g, tile, 0);
            b->cached_tile = tile;
            b->cached = 1;
        }
        t = 0;
    } else {
        t = (size_t)((tile - b->tile_base) / b->tile_stride - b->first_tile);
    }
    mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB, t, i, j, cs);
    return (gen_kind)b->gen[t];
}

/* --campaign: count a mismatch by class, and record it when it is the first
 * of its class in tile t (what is recorded depends on the tile alone). */
static void camp_record(batch *b, size_t c, size_t t, int i, int j, uint64_t d, uint64_t mv)
{
    int cls = cp_class_index(rv_signature(b->in->fd, d, mv));
    if (cls < 0)
        cls = CP_NCLASS - 1;
    b->ncls[c * CP_NCLASS + (size_t)cls]++;
    rec *r = b->trecs + t * CP_TILE_RECS;
    int n = b->trec_n[t];
    for (int q = 0; q < n; q++)
        if (r[q].cls == cls)
            return;
    if (n < CP_TILE_RECS) {
        r[n] = (rec){tile_of(b, t), i, j, d, mv, cls, 0};
        b->trec_n[t] = (unsigned char)(n + 1);
    }
}

/* --dump-disagreements: keep a disagreement of chunk c (written after the batch). */
static void dump_keep(batch *b, size_t c, unsigned long long tile, int i, int j, uint64_t d, uint64_t mv)
{
    if (b->ndump[c] == b->capdump[c]) {
        size_t cap = b->capdump[c] ? 2 * b->capdump[c] : 64;
        rec *p = realloc(b->dumpv[c], cap * sizeof *p);
        if (!p)
            return;  /* out of memory: the dump is a debug aid, the counts stay right */
        b->dumpv[c] = p;
        b->capdump[c] = cap;
    }
    b->dumpv[c][b->ndump[c]++] = (rec){tile, i, j, d, mv, 0, 0};
}

/* Compare every output element of chunk c of batch b with the model
 * (mf_eval_tiles, one tile at a time into the scratch tile `want`). */
static void eval_chunk(batch *b, size_t c, unsigned char *want)
{
    const mf_instr *in = b->model;
    const int m = b->m, n = b->n, k = b->k;
    const size_t S = in->n_scales, mn = (size_t)m * (size_t)n;
    const size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
                 ed = mf_abi_elem_bytes(in->fd), es = S ? mf_abi_elem_bytes(in->fs) : 1;
    long long nmis = 0;
    int nrec = 0;
    rec *recs = b->recs + c * REC_PER_CHUNK;
    tally *tl = &b->tl[c];
    tally_reset(tl);
    const unsigned char *A = b->A, *B = b->B, *C = b->C, *SA = b->SA, *SB = b->SB, *D = b->D;
    if (b->camp)
        memset(b->ncls + c * CP_NCLASS, 0, CP_NCLASS * sizeof *b->ncls);
    for (size_t t = chunk_first(b, c), t1 = chunk_first(b, c + 1); t < t1; t++) {
        if (b->camp)
            b->trec_n[t] = 0;
        mf_eval_tiles(in, m, n, k, 1, A + t * (size_t)m * (size_t)k * ea, B + t * (size_t)n * (size_t)k * eb,
                      C + t * mn * ec,
                      S ? SA + t * (size_t)m * S * es : in->sparse ? SA + t * (size_t)m * in->n_meta : NULL,
                      S ? SB + t * (size_t)n * S * es : NULL, want);
        const unsigned char *dt = D + t * mn * ed;
        if (!memcmp(dt, want, mn * ed))
            continue;   /* the common case: the whole tile agrees bit for bit */
        for (size_t o = 0; o < mn; o++) {
            uint64_t d = mf_elem_get(ed, dt, o), mv = mf_elem_get(ed, want, o);
            if (d != mv && !mf_output_equal(b->in, d, mv)) {
                const int i = (int)(o / (size_t)n), j = (int)(o % (size_t)n);
                nmis++;
                if (b->dumpv)
                    dump_keep(b, c, tile_of(b, t), i, j, d, mv);
                if (b->camp)
                    camp_record(b, c, t, i, j, d, mv);
                /* its bucket, on the case as generated */
                mf_case cs;
                mf_tile_get_case(b->in, m, n, k, b->A, b->B, b->C, b->SA, b->SB, t, i, j, &cs);
                rec r = {tile_of(b, t), i, j, d, mv, 0, rf_classify(b->cls, &cs, d, mv)};
                tally_add(tl, r.bk, &r);
                if (!b->camp && nrec < REC_PER_CHUNK)
                    recs[nrec++] = r;
            }
        }
    }
    b->nrec[c] = nrec;
    b->nmis[c] = nmis;
}

/* --verify gpu: the bucket of every hit of a device call, in the model
 * threads.  The hits (sorted by tile) are cut into pieces by index alone,
 * piece p counted in tally p (so what is counted, and in which order, does
 * not depend on the threads); worker w generates a hit's tile again into
 * slot w of the batch (the same bits as on the device). */
typedef struct hits_job {
    batch *b;
    const mf_verify_hit *hits;
    size_t nhits, npieces;
    atomic_size_t next;
} hits_job;

static void hits_fn(void *ctx, int w, int nw)
{
    (void)nw;
    hits_job *hj = ctx;
    batch *b = hj->b;
    size_t p;
    while ((p = atomic_fetch_add(&hj->next, 1)) < hj->npieces) {
        tally *tl = &b->tl[p];
        tally_reset(tl);
        uint64_t have = UINT64_MAX;
        for (size_t q = hj->nhits * p / hj->npieces, q1 = hj->nhits * (p + 1) / hj->npieces; q < q1; q++) {
            const mf_verify_hit *h = &hj->hits[q];
            if (h->tile != have) {
                gen_tile(&b->g, h->tile, (size_t)w);
                have = h->tile;
            }
            mf_case cs;
            mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB, (size_t)w, (int)h->i, (int)h->j,
                             &cs);
            rec r = {h->tile, (int)h->i, (int)h->j, h->dev, h->model, 0, rf_classify(b->cls, &cs, h->dev, h->model)};
            tally_add(tl, r.bk, &r);
            if (!b->camp && q < GPU_RECS)
                b->recs[q] = r;  /* chunk 0's candidates for filing, in hit order */
        }
    }
}

static void job_fn(void *ctx, int w, int nw)
{
    (void)nw;
    job *jb = ctx;
    size_t c;
    if (jb->eval) {
        batch *b = jb->eval;
        while (!g_stop && (c = atomic_fetch_add(&jb->next_eval, 1)) < b->nchunks) {
            double t0 = rs_now();
            eval_chunk(b, c, b->want + (size_t)w * b->want_bytes);
            b->chunk_s[c] += rs_now() - t0;
        }
    }
    if (jb->gen) {
        batch *b = jb->gen;
        while (!g_stop && (c = atomic_fetch_add(&jb->next_gen, 1)) < b->nchunks) {
            double t0 = rs_now();
            for (size_t t = chunk_first(b, c), t1 = chunk_first(b, c + 1); t < t1; t++)
                b->gen[t] = (unsigned char)gen_tile(&b->g, tile_of(b, t), t);
            b->chunk_s[c] = rs_now() - t0;
        }
    }
}

/* ------------------------------------------------------------ corpus */

typedef struct load_ctx {
    pool *p;
    run_instr *ri;
    int ni;
    long long loaded;
} load_ctx;

static int load_case(const st_case *c, void *vctx)
{
    load_ctx *lc = vctx;
    for (int i = 0; i < lc->ni; i++)
        if (pool_compatible(c->in, lc->ri[i].in)) {
            pool_add(lc->p, c->in, &c->cs);
            lc->loaded++;
            break;
        }
    return g_stop != 0;  /* a stop request ends the loading (the run then ends at once) */
}

/* The tile arrays come from the device's allocator (page-locked for CUDA:
 * copied without staging). */
static int alloc_batch(batch *b, mf_device *dev, size_t bytes[6], size_t tiles, size_t want_bytes, int nworkers,
                       int camp)
{
    memset(b, 0, sizeof *b);
    b->tile_stride = 1;
    if (camp) {
        b->camp = 1;
        b->trecs = calloc(tiles * CP_TILE_RECS + 1, sizeof *b->trecs);
        b->trec_n = calloc(tiles + 1, 1);
        b->ncls = calloc((size_t)CHUNKS * CP_NCLASS, sizeof *b->ncls);
        if (!b->trecs || !b->trec_n || !b->ncls)
            return -1;
    }
    void **arr[6] = {&b->A, &b->B, &b->C, &b->SA, &b->SB, &b->D};
    int ok = 1;
    for (int q = 0; q < 6; q++)
        ok &= (*arr[q] = mf_device_host_alloc(dev, bytes[q] + 8)) != NULL;
    b->gen = calloc(tiles + 1, 1);
    b->cap_tiles = tiles;
    b->tl = calloc(CHUNKS, sizeof *b->tl);
    b->recs = calloc((size_t)CHUNKS * REC_PER_CHUNK, sizeof *b->recs);
    b->nrec = calloc(CHUNKS, sizeof *b->nrec);
    b->nmis = calloc(CHUNKS, sizeof *b->nmis);
    b->chunk_s = calloc(CHUNKS, sizeof *b->chunk_s);
    b->want_bytes = (want_bytes + 63) / 64 * 64;
    b->want = calloc((size_t)nworkers, b->want_bytes);
    return ok && b->gen && b->tl && b->recs && b->nrec && b->nmis && b->chunk_s && b->want ? 0 : -1;
}

static void free_batch(batch *b, mf_device *dev)
{
    void *arr[6] = {b->A, b->B, b->C, b->SA, b->SB, b->D};
    for (int q = 0; q < 6; q++)
        mf_device_host_free(dev, arr[q]);
    free(b->gen);
    for (size_t c = 0; b->tl && c < CHUNKS; c++)
        tally_free(&b->tl[c]);
    free(b->tl);
    free(b->recs);
    free(b->nrec);
    free(b->nmis);
    free(b->chunk_s);
    free(b->want);
    free(b->trecs);
    free(b->trec_n);
    free(b->ncls);
    for (size_t c = 0; b->dumpv && c < CHUNKS; c++)
        free(b->dumpv[c]);
    free(b->dumpv);
    free(b->ndump);
    free(b->capdump);
}

/* The instruction's minimizer on the device, set up on first use.
 * @return 0, or -1 with the message printed. */
static int minimizer_ready(run_instr *r, mf_device *dev)
{
    if (r->z_ready)
        return 0;
    if (mz_dev_init(&r->z, dev, r->in, r->model)) {
        fprintf(stderr, "mmafuzz run: %s\n", r->z.err);
        return -1;
    }
    r->z_ready = 1;
    r->z.stop = &g_stop;
    return 0;
}

/* Count one handled disagreement: t_handle seconds of re-runs, minimization and filing. */
static void count_handled(rs_instr *ps, double t_handle, const mm_outcome *out)
{
    ps->minimized++;
    ps->min_seconds += t_handle;
    if (t_handle > ps->min_max_seconds)
        ps->min_max_seconds = t_handle;
    if (out->kind != MZ_REPEATS)
        ps->nondet++;
}

/* The description of the bucket of tally entry e (the case of its first
 * disagreement classified again, with its words): for a bucket this process
 * meets for the first time. */
static void tally_describe(batch *b, const tally_e *e, rf_bucket *bk)
{
    mf_case cs;
    batch_case(b, e->first.tile, e->first.i, e->first.j, &cs);
    rf_classify_bucket(b->cls, &cs, e->first.dev, e->first.model, bk);
}

/* Count the disagreements of an evaluated batch by bucket in OUT/buckets.tsv
 * (every one of them: the counts are exact), then handle the recorded ones
 * (the first REC_PER_CHUNK of each chunk): the first of each signature class
 * first, then the rest in index order, up to o->minimize, each only while
 * its bucket has fewer than o->per_bucket files from this process. */
static run_err handle_mismatches(const run_opts *o, run_instr *ri, batch *b, store *st, rf_buckets *bs, pool *pl,
                                 rs_stats *rs, mf_device *dev)
{
    rs_instr *ps = &rs->per[b->slot];
    run_instr *r = &ri[b->slot];
    long long total = 0;
    size_t nrec = 0;
    for (size_t c = 0; c < b->nchunks; c++) {
        total += b->nmis[c];
        if (b->tl[c].oom)
            return RUN_ERR_NOMEM;
        nrec += (size_t)b->nrec[c];
    }
    ps->mismatches += total;
    if (!total)
        return RUN_OK;
    for (size_t c = 0; c < b->nchunks; c++)  /* buckets before any minimization */
        for (size_t q = 0; q < b->tl[c].n; q++) {
            const tally_e *e = &b->tl[c].e[q];
            rf_bucket bk;
            memset(&bk, 0, sizeof bk);
            snprintf(bk.id, sizeof bk.id, "%016llx", (unsigned long long)e->id);
            if (!rf_buckets_known(bs, bk.id))
                tally_describe(b, e, &bk);
            int is_new = 0;
            if (rf_buckets_count(bs, b->in->name, &bk, e->n, &is_new))
                return RUN_ERR_NOMEM;
            if (is_new && o->verbose)
                fprintf(stderr, "%sNEW bucket %s %s: %s\n", rs->tty ? "\n" : "", bk.id, b->in->name, bk.words);
        }
    rs->buckets_seen = rf_buckets_seen(bs);
    rs->buckets_new = rf_buckets_new(bs);
    if (!o->minimize)
        return RUN_OK;
    rec *all = malloc((nrec ? nrec : 1) * sizeof *all);
    unsigned char *chosen = calloc(nrec ? nrec : 1, 1);
    rf_bucket *bk = calloc(nrec ? nrec : 1, sizeof *bk);
    if (!all || !chosen || !bk) {
        free(all);
        free(chosen);
        free(bk);
        return RUN_ERR_NOMEM;
    }
    size_t n = 0;
    for (size_t c = 0; c < b->nchunks; c++)
        for (int q = 0; q < b->nrec[c]; q++)
            all[n++] = b->recs[c * REC_PER_CHUNK + (size_t)q];
    for (size_t q = 0; q < n; q++)
        snprintf(bk[q].id, sizeof bk[q].id, "%016llx", (unsigned long long)all[q].bk);
    long long budget = o->minimize;
    const char *seen[16];
    int nseen = 0;
    for (size_t q = 0; q < n && budget > 0; q++) {  /* one per signature class */
        const char *sig = rv_signature(b->in->fd, all[q].dev, all[q].model);
        int known = 0;
        for (int s = 0; s < nseen; s++)
            known |= !strcmp(seen[s], sig);
        if (!known && nseen < 16) {
            seen[nseen++] = sig;
            if (rf_buckets_take(bs, &bk[q])) {
                chosen[q] = 1;
                budget--;
            }
        }
    }
    for (size_t q = 0; q < n && budget > 0; q++)
        if (!chosen[q] && rf_buckets_take(bs, &bk[q])) {
            chosen[q] = 1;
            budget--;
        }
    run_err rc = RUN_OK;
    /* cases for the mutation pool, added at the end: the batch's own tiles are
     * generated from the pool as it was (a batch checked on the GPU is
     * generated again on the host, case by case) */
    size_t nadd = 0;
    mf_case *adds = malloc(2 * (size_t)(o->minimize < (long long)n ? o->minimize : (long long)n) * sizeof *adds + 1);
    if (!adds) {
        free(all);
        free(chosen);
        free(bk);
        return RUN_ERR_NOMEM;
    }
    if (minimizer_ready(r, dev))
        rc = RUN_ERR_DEVICE;
    for (size_t q = 0; q < n && rc == RUN_OK; q++) {
        if (!chosen[q])
            continue;
        if (g_stop)
            break;  /* a stop request: the rest of the batch's mismatches stay counted, not filed */
        mf_case orig;
        gen_kind gk = batch_case(b, all[q].tile, all[q].i, all[q].j, &orig);
        mm_origin origin = {o->device, o->seed, (long long)(all[q].tile * (unsigned long long)(b->m * b->n)) +
                                                     all[q].i * b->n + all[q].j,
                            (long long)all[q].tile, all[q].i, all[q].j, b->m, b->n, gen_name(gk)};
        mm_outcome out;
        char err[700];
        double t_handle = rs_now();
        mm_err me = mm_handle(st, &r->z, &orig, all[q].dev, &origin, &out, err, sizeof err);
        if (me == MM_STOPPED)
            break;
        if (me != MM_OK) {
            fprintf(stderr, "%smmafuzz run: %s\n", rs->tty ? "\n" : "", err);
            if (me == MM_ERR_STORE)
                rc = RUN_ERR_STORE;  /* store errors end the run; device errors are counted */
            else
                ps->dev_errors++;
            continue;
        }
        count_handled(ps, rs_now() - t_handle, &out);
        if (out.kind == MZ_REPEATS)
            adds[nadd++] = out.res.cs;
        adds[nadd++] = orig;
        st_entry *e = st_find(st, out.hex);
        if (out.is_new)
            ps->new_files++;
        int first_this_run = e && !e->run_seen;
        if (first_this_run) {
            e->run_seen = 1;
            ps->unique++;
        }
        if (first_this_run && o->verbose) {
            if (rs->tty)
                fprintf(stderr, "\n");
            fprintf(stderr, "%s %s %s%s\n", out.is_new ? "NEW " : "seen", out.sig, out.path,
                    out.kind == MZ_REPEATS ? "" : " (not minimized)");
        }
    }
    /* --dump-disagreements keeps the starting pool, as a campaign does: the
     * tiles are then a function of (seed, tile, corpus) alone, and the dumps
     * of --verify gpu and --verify host compare.  Otherwise the cases filed
     * here, which depend on how the path groups its candidates (the first
     * REC_PER_CHUNK of each host chunk, the first GPU_RECS of a GPU call),
     * would change later tiles of every row sharing the pool. */
    for (size_t q = 0; q < nadd && !o->dump; q++)
        pool_add(pl, b->in, &adds[q]);
    free(adds);
    free(all);
    free(chosen);
    free(bk);
    return rc;
}

/* --campaign: file the recorded mismatches of a checked batch (list: the
 * first of each class in each tile, in tile order) by the definition's policy: the first mismatch of each class in a tile when the
 * tile is sampled (cp_tile_sampled: a function of the tile alone), and the
 * first one of a class the shard has no finding of yet.  Nothing is added
 * to the mutation pool (it stays the frozen one).  newhex[c] receives the
 * hash of a finding of class c filed here.  *stopped: a stop request came
 * (the batch is then not counted, and runs again on resume). */
static run_err handle_campaign(const run_opts *o, run_instr *ri, batch *b, const rec *list, size_t nlist, store *st,
                               rs_stats *rs, mf_device *dev, char newhex[CP_NCLASS][33], int *stopped)
{
    rs_instr *ps = &rs->per[b->slot];
    run_instr *r = &ri[b->slot];
    const cp_istate *cs = &o->cstate->in[r->cp];
    int tried[CP_NCLASS] = {0};
    for (int c = 0; c < CP_NCLASS; c++)
        newhex[c][0] = 0;
    *stopped = 0;
    int sampled = 0;
    for (size_t q = 0; q < nlist; q++) {
        const rec *rc = &list[q];
        if (q == 0 || rc->tile != list[q - 1].tile)
            sampled = cp_tile_sampled(o->def, b->in->name, rc->tile);
        {
            int wanted = !cs->cls_hex[rc->cls][0] && !newhex[rc->cls][0] && !tried[rc->cls];
            if (!sampled && !wanted)
                continue;
            if (g_stop) {
                *stopped = 1;
                return RUN_OK;
            }
            tried[rc->cls] = 1;
            if (minimizer_ready(r, dev))
                return RUN_ERR_DEVICE;
            mf_case orig;
            gen_kind gk = batch_case(b, rc->tile, rc->i, rc->j, &orig);
            mm_origin origin = {o->device, o->seed, (long long)(rc->tile * (unsigned long long)(b->m * b->n)) +
                                                        rc->i * b->n + rc->j,
                                (long long)rc->tile, rc->i, rc->j, b->m, b->n, gen_name(gk)};
            mm_outcome out;
            char err[700];
            double t_handle = rs_now();
            mm_err me = mm_handle(st, &r->z, &orig, rc->dev, &origin, &out, err, sizeof err);
            if (me == MM_STOPPED || g_stop) {
                *stopped = 1;
                return RUN_OK;
            }
            if (me != MM_OK) {
                fprintf(stderr, "%smmafuzz run: %s\n", rs->tty ? "\n" : "", err);
                if (me == MM_ERR_STORE)
                    return RUN_ERR_STORE;
                ps->dev_errors++;
                continue;
            }
            fs_fault("finding.filed", 1);  /* a kill test's window: filed, not yet counted by the state */
            count_handled(ps, rs_now() - t_handle, &out);
            if (!cs->cls_hex[rc->cls][0] && !newhex[rc->cls][0])
                snprintf(newhex[rc->cls], 33, "%s", out.hex);
            if (out.is_new)
                ps->new_files++;
            st_entry *e = st_find(st, out.hex);
            if (e && !e->run_seen) {
                e->run_seen = 1;
                ps->unique++;
                if (o->verbose)
                    fprintf(stderr, "%s%s %s %s\n", rs->tty ? "\n" : "", out.is_new ? "NEW " : "seen", out.sig,
                            out.path);
            }
        }
    }
    return RUN_OK;
}

/* ------------------------------------------------------------ selection */

/* --campaign: the definition's instructions, the lock and the shard state. */
static run_err select_campaign(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    const cp_def *d = o->def;
    char err[1400];
    if (fs_mkdir_p(o->shard_dir)) {
        fprintf(stderr, "mmafuzz run: %s: cannot create the folder (%s)\n", o->shard_dir, strerror(errno));
        return RUN_ERR_STORE;
    }
    int fd = cp_lock_shard(o->shard_dir, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        return RUN_ERR_STORE;
    }
    ((run_opts *)o)->lock_fd = fd;  /* held until the process exits */
    int rc = cp_state_read(o->shard_dir, d, o->shard_i, o->shard_n, o->cstate, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        return RUN_ERR_INPUT;
    }
    run_instr *ri = calloc((size_t)d->ninstr, sizeof *ri);
    if (!ri)
        return RUN_ERR_NOMEM;
    int ni = 0;
    long long left = 0;
    for (int q = 0; q < d->ninstr; q++) {
        const cp_instr *ci = &d->instr[q];
        const mf_instr *in = mf_instr_find(ci->name);
        run_instr *r = &ri[ni];
        r->in = in;
        r->model = in && o->model ? mf_instr_on_arch(in, mf_arch_by_name(o->model)) : in;
        if (!in || !r->model || !mf_device_supports(dev, in, NULL) ||
            mf_device_tile_shape(dev, in, NULL, &r->m, &r->n, &r->k) || r->m != ci->m || r->n != ci->n ||
            r->k != ci->k) {
            fprintf(stderr, "mmafuzz run: %s: the device %s does not run it as the definition says (%dx%dx%d)\n",
                    ci->name, o->device, ci->m, ci->n, ci->k);
            free(ri);
            return RUN_ERR_USAGE;
        }
        r->cp = q;
        r->tiles_per_batch = (size_t)(o->batch / (r->m * r->n));
        if (r->tiles_per_batch < 1)
            r->tiles_per_batch = 1;
        unsigned long long own = cp_shard_tiles(ci->tiles, o->shard_i, o->shard_n);
        r->next_tile = r->done_tile = o->cstate->in[q].done;
        r->quota = (long long)(own - r->done_tile) * r->m * r->n;
        left += r->quota;
        ni++;
    }
    fprintf(stderr, "mmafuzz run: shard %d/%d: %s, %lld cases left\n", o->shard_i, o->shard_n,
            rc == 1 ? "starting" : "resuming from its state", left);
    *out = ri;
    *nout = ni;
    return RUN_OK;
}

/* --verify: gpu when asked, or by default on a device that verifies on
 * itself (a CUDA device whose build has the device-code model) and can
 * verify every instruction; else host.  The device says what it can do
 * (mf_device_verifies, mf_device_can_verify). */
static run_err choose_verify(const run_opts *o, mf_device *dev, const run_instr *ri, int ni)
{
    run_opts *w = (run_opts *)o;  /* the decision is part of the options from here on */
    int want_gpu = o->verify && !strcmp(o->verify, "gpu"), want_host = o->verify && !strcmp(o->verify, "host");
    w->verify_gpu = 0;
    if (want_host)
        return RUN_OK;
    if (want_gpu && !mf_device_verifies(dev)) {
        fprintf(stderr, "mmafuzz run: --verify gpu needs a CUDA device (--device cuda[:N|:all|:N,M]); %s checks its "
                        "cases on the host (--verify host)\n", o->device);
        return RUN_ERR_USAGE;
    }
    for (int i = 0; i < ni; i++) {
        const char *why = NULL;
        if (!mf_device_can_verify(dev, ri[i].in, NULL, ri[i].model, &why)) {
            if (want_gpu) {
                fprintf(stderr, "mmafuzz run: --verify gpu: %s: %s (--verify host checks it)\n", ri[i].in->name,
                        why ? why : "not verifiable on this device");
                return RUN_ERR_USAGE;
            }
            return RUN_OK;  /* the default: host for all when one cannot (one pipeline per run) */
        }
    }
    w->verify_gpu = mf_device_verifies(dev);
    return RUN_OK;
}

static run_err select_instrs(const run_opts *o, mf_device *dev, run_instr **out, int *nout);

run_err run_select(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    run_err rc = o->campaign ? select_campaign(o, dev, out, nout) : select_instrs(o, dev, out, nout);
    if (rc == RUN_OK && (rc = choose_verify(o, dev, *out, *nout)) != RUN_OK) {
        free(*out);
        *out = NULL;
        *nout = 0;
    }
    return rc;
}

static run_err select_instrs(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    if (instr_select_check("run", "--instr ", o->pat, o->npat))
        return RUN_ERR_USAGE;
    run_instr *ri = calloc(mf_instr_count, sizeof *ri);
    if (!ri) {
        fprintf(stderr, "mmafuzz run: out of memory\n");
        return RUN_ERR_NOMEM;
    }
    int ni = 0, skipped = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects_any(o->pat, o->npat, in->name))
            continue;
        if (!mf_device_supports(dev, in, NULL)) {
            if (o->npat && o->verbose)
                fprintf(stderr, "mmafuzz run: %s: not runnable on %s, skipped\n", in->name, o->device);
            skipped += o->npat > 0;
            continue;
        }
        run_instr *r = &ri[ni];
        r->in = in;
        r->model = o->model ? mf_instr_on_arch(in, mf_arch_by_name(o->model)) : in;
        if (!r->model) {
            if (o->npat && o->verbose)
                fprintf(stderr, "mmafuzz run: %s: model %s has no such instruction, skipped\n", in->name, o->model);
            skipped += o->npat > 0;
            continue;
        }
        if (mf_device_tile_shape(dev, in, NULL, &r->m, &r->n, &r->k) || r->k != in->k || r->m < 1 || r->n < 1) {
            fprintf(stderr, "mmafuzz run: %s: the device gives no usable tile shape, skipped\n", in->name);
            continue;
        }
        r->tiles_per_batch = (size_t)(o->batch / (r->m * r->n));
        if (r->tiles_per_batch < 1)
            r->tiles_per_batch = 1;
        ni++;
    }
    if (skipped && !o->verbose)
        fprintf(stderr, "mmafuzz run: %d selected instruction%s not runnable on %s%s, skipped (-v lists them)\n",
                skipped, skipped == 1 ? "" : "s", o->device, o->model ? " or not in the --model architecture" : "");
    if (ni == 0) {
        fprintf(stderr, "mmafuzz run: no instruction to run on %s\n", o->device);
        free(ri);
        return RUN_ERR_USAGE;
    }
    /* resume: the tile counters */
    if (o->resume) {
        run_state_tile *t = NULL;
        int nt = 0;
        run_opts dummy = *o;
        if (run_state_read(o->resume, &dummy, 1, 1, &t, &nt, NULL)) {
            free(ri);
            return RUN_ERR_INPUT;
        }
        for (int i = 0; i < ni; i++)
            for (int q = 0; q < nt; q++)
                if (!strcmp(t[q].name, ri[i].in->name))
                    ri[i].next_tile = ri[i].done_tile = ri[i].start_tile = t[q].tile;
        free(t);
    }
    /* quotas: -runs split evenly over the instructions (rounded up, without overflow) */
    for (int i = 0; i < ni; i++)
        ri[i].quota = o->runs < 0 ? -1 : o->runs / ni + (o->runs % ni != 0);
    *out = ri;
    *nout = ni;
    return RUN_OK;
}

/* Write OUT/campaign.state with the tile counters of the campaign and what
 * is left of the budget after `elapsed` seconds. */
static run_err save_state(const run_opts *o, const run_instr *ri, int ni, double elapsed, char *err, size_t errlen)
{
    if (o->campaign)  /* the shard's state is kept up to date in o->cstate as batches are counted */
        return cp_state_write(o->shard_dir, o->cstate, err, errlen) ? RUN_ERR_STORE : RUN_OK;
    run_state_tile *t = calloc((size_t)ni, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "campaign.state: out of memory");
        return RUN_ERR_NOMEM;
    }
    for (int i = 0; i < ni; i++) {
        snprintf(t[i].name, sizeof t[i].name, "%s", ri[i].in->name);
        t[i].tile = ri[i].done_tile;
    }
    run_state_budget left = {-1, -1};
    if (o->runs >= 0) {
        long long done = 0;
        for (int i = 0; i < ni && done < o->runs; i++)
            done += (long long)(ri[i].done_tile - ri[i].start_tile) * ri[i].m * ri[i].n;
        left.cases = done < o->runs ? o->runs - done : 0;
    }
    if (o->max_time)
        left.seconds = elapsed < (double)o->max_time ? o->max_time - (long long)elapsed : 0;
    char files[CK_NFILES][CK_HASH];  /* the versions of the files it covers (run_ckpt.h) */
    run_err rc = RUN_OK;
    for (int f = 0; f < CK_NFILES && rc == RUN_OK; f++)
        if (ck_hash(o->out, ck_files[f], files[f], err, errlen))
            rc = RUN_ERR_STORE;
    if (rc == RUN_OK)
        rc = run_state_write(o, &left, t, ni, files, err, errlen);
    free(t);
    return rc;
}

/* A checkpoint: the findings' index and the bucket counts, then the state
 * that covers them.  A plain run keeps the versions its current state
 * records (run_ckpt.h) until the new state is in place; nothing is written
 * after a file that failed. */
static run_err commit(const run_opts *o, store *st, rf_buckets *bs, const run_instr *ri, int ni, double elapsed,
                      char *err, size_t errlen)
{
    if (!o->campaign && ck_keep(o->out, "index.tsv", err, errlen))
        return RUN_ERR_STORE;
    if (st_flush(st, err, errlen))
        return RUN_ERR_STORE;
    if (bs && ((!o->campaign && ck_keep(o->out, "buckets.tsv", err, errlen)) || rf_buckets_flush(bs, err, errlen)))
        return RUN_ERR_STORE;
    return save_state(o, ri, ni, elapsed, err, errlen);
}

/* A plain run's store before it is opened: the files newer than its
 * campaign.state (a checkpoint cut short) rolled back to the versions the
 * state records (run_ckpt.h).  @return RUN_OK, or RUN_ERR_INPUT (message
 * printed). */
static int no_line(const rf_bucket_line *l, void *ctx)
{
    (void)l;
    (void)ctx;
    return 0;
}

static run_err restore_checkpoint(const run_opts *o)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.state", o->out);
    if (o->campaign || access(path, F_OK) != 0)
        return RUN_OK;
    run_opts dummy = *o;
    run_state_tile *t = NULL;
    int nt = 0;
    char files[CK_NFILES][CK_HASH];
    if (run_state_read(o->out, &dummy, 1, 1, &t, &nt, files))
        return RUN_ERR_INPUT;
    free(t);
    char err[1600];
    snprintf(path, sizeof path, "%s/buckets.tsv", o->out);
    if (rf_buckets_read(path, no_line, NULL, err, sizeof err) < 0) {  /* damage said as FILE:LINE first */
        fprintf(stderr, "mmafuzz run: %s\n", err);
        return RUN_ERR_INPUT;
    }
    for (int f = 0; f < CK_NFILES; f++) {
        if (files[f][0] && ck_restore(o->out, ck_files[f], files[f], err, sizeof err) < 0) {
            fprintf(stderr, "mmafuzz run: %s\n", err);
            return RUN_ERR_INPUT;
        }
    }
    return RUN_OK;
}

/* ------------------------------------------------------------ the loop */

/* What the loop's steps share. */
typedef struct loop_ctx {
    const run_opts *o;
    mf_device *dev;
    run_instr *ri;
    int ni;
    store *st;
    rf_buckets *bs;           /* OUT/buckets.tsv; NULL under --campaign (the shard state keeps the counts) */
    pool *pl;
    rs_stats *rs;
    workers *wp;
    FILE **dump;              /* --dump-disagreements DIR: one file per instruction (ri order), or NULL */
    run_err status;
    const char *why;          /* why the loop ended */
    int stopped;              /* a stop request came while filing: the batch was not counted */
    int dev_fail;             /* device errors in a row */
    double t_start, last_save, ckpt_s;
    unsigned long long gpu_call_max; /* --verify gpu: GPU_CALL_MAX_CASES times the device's GPUs */
    long long bk_at_start;           /* a campaign shard's buckets when this process started */
    long long rechecked;      /* --verify gpu: tiles checked again on the host (a hit buffer overflowed) */
    int gpu_limit_shown;
} loop_ctx;

static void loop_fail(loop_ctx *L, run_err e)
{
    if (L->status != RUN_OK)
        return;
    L->status = e;
    L->why = e == RUN_ERR_STORE ? "store error" : e == RUN_ERR_DEVICE ? "device error" : "out of memory";
}

/* A device call failed: counted; a campaign shard stops (its tiles are done in
 * order: resume runs the batch again), a plain run after three in a row. */
static void loop_device_error(loop_ctx *L, int slot, const char *msg)
{
    fprintf(stderr, "%smmafuzz run: device error: %s\n", L->rs->tty ? "\n" : "", msg);
    L->rs->per[slot].dev_errors++;
    if (L->o->campaign) {
        loop_fail(L, RUN_ERR_DEVICE);
    } else if (++L->dev_fail >= 3) {
        fprintf(stderr, "mmafuzz run: three device errors in a row; stopping\n");
        loop_fail(L, RUN_ERR_DEVICE);
        L->why = "device errors";
    }
}

static void dump_line(loop_ctx *L, int slot, unsigned long long tile, int i, int j, uint64_t d, uint64_t mv)
{
    int w = mf_format_get(L->ri[slot].in->fd)->hex_width;
    if (fprintf(L->dump[slot], "%llu %d %d %0*llx %0*llx\n", tile, i, j, w, (unsigned long long)d, w,
                (unsigned long long)mv) < 0 && L->status == RUN_OK) {
        fprintf(stderr, "mmafuzz run: %s: write failed (%s)\n", L->o->dump, strerror(errno));
        loop_fail(L, RUN_ERR_STORE);
    }
}

/* --dump-disagreements, host path: every disagreement of the batch, in tile order. */
static void dump_host_batch(loop_ctx *L, batch *b)
{
    if (!L->dump)
        return;
    for (size_t c = 0; c < b->nchunks; c++) {
        for (size_t q = 0; q < b->ndump[c]; q++) {
            const rec *r = &b->dumpv[c][q];
            dump_line(L, b->slot, r->tile, r->i, r->j, r->dev, r->model);
        }
        b->ndump[c] = 0;
    }
}

/* Count a checked batch and file its disagreements, the same way whichever
 * path checked it: list holds the first disagreement of each class in each
 * tile, in tile order (--campaign); a plain run files from b->recs. */
static void account_batch(loop_ctx *L, batch *b, const rec *list, size_t nlist, const long long ncls[CP_NCLASS],
                          long long mis, double model_s)
{
    const run_opts *o = L->o;
    rs_instr *ps = &L->rs->per[b->slot];
    run_instr *r = &L->ri[b->slot];
    long long cases = (long long)b->ntiles * b->m * b->n;
    L->stopped = 0;
    if (o->campaign) {
        /* file first, then count: the batch's tiles, cases and disagreements
         * enter the shard state together, after the findings */
        char newhex[CP_NCLASS][33];
        run_err he = handle_campaign(o, L->ri, b, list, nlist, L->st, L->rs, L->dev, newhex, &L->stopped);
        if (he != RUN_OK) {
            loop_fail(L, he);
            return;
        }
        if (L->stopped)
            return;
        /* room for the batch's buckets first: its counts enter the state all together or not at all */
        size_t most = 0;
        int oom = 0;
        for (size_t c = 0; c < b->nchunks; c++) {
            most += b->tl[c].n;
            oom |= b->tl[c].oom;
        }
        if (oom || cp_state_bucket_reserve(o->cstate, most)) {
            loop_fail(L, RUN_ERR_NOMEM);
            return;
        }
        cp_istate *cs = &o->cstate->in[r->cp];
        for (int k = 0; k < CP_NCLASS; k++) {
            cs->cls[k] += ncls[k];
            if (newhex[k][0] && !cs->cls_hex[k][0]) {
                _Static_assert(sizeof cs->cls_hex[k] == sizeof newhex[k], "one hash size");
                memcpy(cs->cls_hex[k], newhex[k], sizeof cs->cls_hex[k]);
            }
        }
        /* the disagreements by bucket, into the same state */
        for (size_t c = 0; c < b->nchunks; c++) {
            for (size_t q = 0; q < b->tl[c].n; q++) {
                const tally_e *e = &b->tl[c].e[q];
                rf_bucket bk;
                memset(&bk, 0, sizeof bk);
                snprintf(bk.id, sizeof bk.id, "%016llx", (unsigned long long)e->id);
                if (cp_state_bucket_find(o->cstate, r->cp, bk.id) < 0)
                    tally_describe(b, e, &bk);
                cp_state_bucket_add(o->cstate, r->cp, bk.id, e->n, bk.words);  /* cannot fail: room made */
            }
        }
        /* the status line's buckets: the shard's, and those this process added */
        L->rs->buckets_seen = (long long)o->cstate->nbk;
        L->rs->buckets_new = L->rs->buckets_seen - L->bk_at_start;
        ps->model_s += model_s;
        ps->cases += cases;
        ps->tiles += (long long)b->ntiles;
        ps->mismatches += mis;
        cs->cases += cases;
        cs->mismatches += mis;
        cs->done = r->done_tile = b->first_tile + b->ntiles;
    } else {
        ps->cases += cases;
        ps->model_s += model_s;
        ps->tiles += (long long)b->ntiles;
        r->done_tile = b->first_tile + b->ntiles;
        run_err he = handle_mismatches(o, L->ri, b, L->st, L->bs, L->pl, L->rs, L->dev);  /* counts b->nmis */
        if (he != RUN_OK)
            loop_fail(L, he);
    }
}

/* A batch checked on the host (its chunks evaluated by the workers). */
static void account_host_batch(loop_ctx *L, batch *b)
{
    size_t nlist = 0;
    long long ncls[CP_NCLASS] = {0}, mis = 0;
    double model_s = 0;
    for (size_t c = 0; c < b->nchunks; c++) {
        model_s += b->chunk_s[c];
        mis += b->nmis[c];
        for (int k = 0; b->camp && k < CP_NCLASS; k++)
            ncls[k] += b->ncls[c * CP_NCLASS + (size_t)k];
    }
    if (b->camp)  /* the first of each class in each tile, in tile order (compacted in place) */
        for (size_t t = 0; t < b->ntiles; t++)
            for (int q = 0; q < b->trec_n[t]; q++)
                b->trecs[nlist++] = b->trecs[t * CP_TILE_RECS + (size_t)q];
    dump_host_batch(L, b);
    account_batch(L, b, b->trecs, nlist, ncls, mis, model_s);
}

/* The findings' index (and bucket counts), then the state: every ckpt_s. */
static void checkpoint(loop_ctx *L)
{
    if (L->status != RUN_OK || rs_now() - L->last_save < L->ckpt_s)
        return;
    char err[1400];
    run_err se = commit(L->o, L->st, L->bs, L->ri, L->ni, rs_now() - L->t_start, err, sizeof err);
    if (se != RUN_OK) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        loop_fail(L, se);
    }
    L->last_save = rs_now();
}

/* The batch's SA and SB arrays as the device ABI takes them: SA for a
 * block-scaled row (its scales) or a sparse row (its metadata), SB for a
 * block-scaled row; NULL otherwise.  Every path that runs a batch on the
 * device passes these (the host re-check of an overflowed --verify gpu call
 * passed NULL, and sparse rows ran there without their metadata). */
static void *batch_sa(const batch *b) { return b->in->n_scales || b->in->sparse ? b->SA : NULL; }
static void *batch_sb(const batch *b) { return b->in->n_scales ? b->SB : NULL; }

/* Point batch b at tiles [first, first + nt) of instruction r. */
static void batch_plan(loop_ctx *L, batch *b, run_instr *r, unsigned long long first, size_t nt,
                       const pool_entry **view, size_t nview)
{
    const run_opts *o = L->o;
    b->slot = (int)(r - L->ri);
    b->in = r->in;
    b->model = r->model;
    b->m = r->m;
    b->n = r->n;
    b->k = r->k;
    b->ntiles = nt;
    b->nchunks = nt < CHUNKS ? nt : CHUNKS;
    b->first_tile = first;
    b->tile_base = o->campaign ? (unsigned long long)o->shard_i : 0;
    b->tile_stride = o->campaign ? (unsigned long long)o->shard_n : 1;
    b->sparse = 0;
    b->cached = 0;
    b->cls = r->cls;
    b->g = (gen_ctx){r->in, r->m, r->n, r->k, o->seed, o->mix, view, nview, b->A, b->B, b->C, b->SA, b->SB};
}

/* Check tiles [first, first + nt) of r on the host path, one buffer-full at
 * a time (no pipelining): --verify gpu uses it when a call found more
 * disagreements than its hit buffer holds, so that none is lost. */
static void host_check_range(loop_ctx *L, batch *b, run_instr *r, unsigned long long first, size_t nt,
                             const pool_entry **view, size_t nview)
{
    for (size_t lo = 0; lo < nt && L->status == RUN_OK && !g_stop; ) {
        size_t cnt = nt - lo < r->tiles_per_batch ? nt - lo : r->tiles_per_batch;
        batch_plan(L, b, r, first + lo, cnt, view, nview);
        job gen = {NULL, b, 0, 0};
        workers_start(L->wp, job_fn, &gen);
        workers_wait(L->wp);
        char derr[600];
        double t_dev = rs_now();
        int rc = g_stop ? 0
                        : mf_device_run_tiles(L->dev, b->in, NULL, cnt, b->A, b->B, b->C, batch_sa(b), batch_sb(b),
                                              b->D, derr, sizeof derr);
        L->rs->per[b->slot].device_s += rs_now() - t_dev;
        if (rc) {
            loop_device_error(L, b->slot, derr);
            return;
        }
        job ev = {b, NULL, 0, 0};
        workers_start(L->wp, job_fn, &ev);
        workers_wait(L->wp);
        if (g_stop)
            return;
        account_host_batch(L, b);
        if (L->stopped)
            return;
        L->rechecked += (long long)cnt;
        lo += cnt;
    }
}

/* --verify gpu: the most cases of one device call, per GPU of the device.  A
 * call ends with every GPU's pipeline drained (its last chunk runs alone,
 * then the host collects the disagreements while the GPUs wait), so a call
 * should be many chunks on each GPU (about 2^25 cases each,
 * devices/cuda/verify.cu); 2^30 is 32 of them, about a fifth of a second on
 * an H100.  Over the 211 hopper rows, 120 s (scripts/multi_gpu.sh scale,
 * four H200s): with one cap for the whole call (8 chunks a GPU) four GPUs ran
 * 3.17 times one GPU's rate (3.39 after the first 20 s); with this cap 3.41
 * (3.67).  What is left: every call still ends with all GPUs drained while
 * the host takes their results, and each row's calls start at 2^24 cases and
 * double, so the first seconds are many short calls. */
#define GPU_CALL_MAX_CASES ((unsigned long long)1 << 30)

/* --verify gpu: tiles [first, first + nt) of r generated, run, evaluated and
 * compared on the device; the disagreements come back sorted by (tile, i, j)
 * and are counted and filed like a host batch's.  gb: a batch whose arrays
 * hold the one tile generated again on the host when a case is asked for;
 * hb: a batch for the host path when the hit buffer overflowed. */
static void gpu_batch(loop_ctx *L, run_instr *r, unsigned long long first, size_t nt, batch *gb, batch *hb,
                      mf_verify_hit *hits, rec *list, const pool_entry **view)
{
    const run_opts *o = L->o;
    rs_instr *ps = &L->rs->per[r - L->ri];
    size_t nview = pool_view(L->pl, r->in, view, VIEW_CAP);
    mf_verify_req rq;
    memset(&rq, 0, sizeof rq);
    rq.in = r->in;
    rq.model = r->model;
    rq.tile_base = o->campaign ? (uint64_t)o->shard_i : 0;
    rq.tile_stride = o->campaign ? (uint64_t)o->shard_n : 1;
    rq.first = first;
    rq.ntiles = nt;
    rq.seed = o->seed;
    rq.mix = o->mix;
    rq.view = view;
    rq.nview = nview;
    rq.view_version = L->pl->version;
    rq.hits = hits;
    rq.hits_cap = (size_t)o->hits;
    mf_verify_res res;
    char derr[800];
    double t0 = rs_now();
    int rc = mf_device_verify_tiles(L->dev, &rq, &res, derr, sizeof derr);
    ps->device_s += rs_now() - t0;
    if (rc) {
        loop_device_error(L, (int)(r - L->ri), derr);
        return;
    }
    L->dev_fail = 0;
    for (int g = 0; g < res.ngpu && g < RS_MAX_GPUS; g++)
        L->rs->gpu_cases[g] += (long long)res.gpu_cases[g];
    /* the batch size follows the disagreement rate: a call should keep all of them */
    unsigned long long per = (unsigned long long)r->m * (unsigned long long)r->n;
    if (res.mismatches > rq.hits_cap / 4 && r->gpu_tiles > 1)
        r->gpu_tiles = res.overflow ? (r->gpu_tiles + 3) / 4 : (r->gpu_tiles + 1) / 2;
    else if (res.mismatches < rq.hits_cap / 16 && r->gpu_tiles * per < L->gpu_call_max)
        r->gpu_tiles *= 2;
    if (res.overflow) {
        host_check_range(L, hb, r, first, nt, view, nview);
        return;
    }
    batch_plan(L, gb, r, first, nt, view, nview);
    gb->sparse = 1;
    /* the buckets of the hits: in the workers (each generates tiles into its own slot), or here when the
     * batch's arrays hold fewer tiles than there are workers */
    hits_job hj = {gb, hits, res.nhits, res.nhits < CHUNKS ? (res.nhits ? res.nhits : 1) : CHUNKS, 0};
    if ((size_t)workers_count(L->wp) <= gb->cap_tiles) {
        workers_start(L->wp, hits_fn, &hj);
        workers_wait(L->wp);
    } else {
        hits_fn(&hj, 0, 1);
    }
    gb->cached = 0;  /* slot 0 was overwritten */
    gb->nchunks = hj.npieces;
    for (size_t p = 0; p < hj.npieces; p++)
        gb->nmis[p] = gb->nrec[p] = 0;
    gb->nrec[0] = o->campaign ? 0 : (int)(res.nhits < GPU_RECS ? res.nhits : GPU_RECS);
    long long ncls[CP_NCLASS] = {0};
    size_t nlist = 0, tile_from = 0;
    for (size_t q = 0; q < res.nhits; q++) {
        const mf_verify_hit *h = &hits[q];
        if (L->dump)
            dump_line(L, (int)(r - L->ri), h->tile, (int)h->i, (int)h->j, h->dev, h->model);
        if (o->campaign) {
            int cls = cp_class_index(rv_signature(r->in->fd, h->dev, h->model));
            if (cls < 0)
                cls = CP_NCLASS - 1;
            ncls[cls]++;
            if (q == 0 || h->tile != hits[q - 1].tile)
                tile_from = nlist;
            int known = 0;
            for (size_t p = tile_from; p < nlist; p++)
                known |= list[p].cls == cls;
            if (!known && nlist - tile_from < CP_TILE_RECS)
                list[nlist++] = (rec){h->tile, (int)h->i, (int)h->j, h->dev, h->model, cls, 0};
        }
    }
    gb->nmis[0] = (long long)res.mismatches;
    account_batch(L, gb, list, nlist, ncls, (long long)res.mismatches, res.gpu_s);
}

/* --verify gpu: one device call per batch, instructions in turn. */
static void gpu_loop(loop_ctx *L, batch *gb, batch *hb, const pool_entry **view)
{
    const run_opts *o = L->o;
    mf_verify_hit *hits = malloc((size_t)o->hits * sizeof *hits);
    rec *list = malloc((size_t)o->hits * sizeof *list);
    if (!hits || !list) {
        fprintf(stderr, "mmafuzz run: out of memory for %lld hits (--hits)\n", o->hits);
        loop_fail(L, RUN_ERR_NOMEM);
    }
    int ngpu = mf_device_gpu_count(L->dev);
    L->gpu_call_max = GPU_CALL_MAX_CASES * (unsigned long long)(ngpu > 0 ? ngpu : 1);
    for (int i = 0; i < L->ni; i++) {
        unsigned long long per = (unsigned long long)L->ri[i].m * (unsigned long long)L->ri[i].n;
        L->ri[i].gpu_tiles = ((unsigned long long)1 << 24) / per ? ((unsigned long long)1 << 24) / per : 1;
    }
    int rot = 0;
    while (L->status == RUN_OK) {
        if (g_stop) {
            L->why = "interrupted";
            break;
        }
        if (o->max_time && rs_now() - L->t_start >= (double)o->max_time) {
            L->why = "time limit";
            break;
        }
        run_instr *r = NULL;
        for (int tries = 0; tries < L->ni && !r; tries++)
            if (L->ri[(rot + tries) % L->ni].quota != 0)
                r = &L->ri[(rot + tries) % L->ni];
        if (!r)
            break;
        rot = (int)(r - L->ri + 1) % L->ni;
        long long per = (long long)r->m * r->n;
        size_t nt = (size_t)r->gpu_tiles;
        if (r->quota > 0 && (long long)nt * per > r->quota)
            nt = (size_t)((r->quota + per - 1) / per);
        unsigned long long first = r->next_tile;
        r->next_tile += nt;
        if (r->quota > 0)
            r->quota = r->quota > (long long)nt * per ? r->quota - (long long)nt * per : 0;
        gpu_batch(L, r, first, nt, gb, hb, hits, list, view);
        if (L->stopped || g_stop) {
            L->why = "interrupted";
            break;
        }
        checkpoint(L);
        rs_report(L->rs, o->report_period, 0);
    }
    free(hits);
    free(list);
}


run_err run_loop(const run_opts *o, mf_device *dev, run_instr *ri, int ni, long long *mismatches)
{
    char err[1400];
    /* a stop request from here on ends the run through the loop, which writes the state */
    fs_stop_install();
    if (restore_checkpoint(o) != RUN_OK)
        return RUN_ERR_INPUT;
    store st;
    if (st_open(&st, o->out, err, sizeof err)) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        return RUN_ERR_STORE;
    }
    /* buckets (buckets.h) decide what a plain run files; a campaign shard files
     * by the campaign's own policy (handle_campaign) and keeps no buckets.tsv */
    rf_buckets *bs = o->campaign ? NULL : rf_buckets_open(o->out, (int)o->per_bucket, err, sizeof err);
    if (!bs && !o->campaign) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        st_close(&st);
        return RUN_ERR_STORE;
    }
    if (!o->campaign) {
        /* finding files the index lacks (filed after its last checkpoint), then
         * a state at once: a run killed before its first checkpoint can be resumed */
        long nrec = st_reconcile(&st, err, sizeof err);
        run_err se = nrec < 0 ? RUN_ERR_STORE : save_state(o, ri, ni, 0, err, sizeof err);
        if (nrec > 0)
            fprintf(stderr, "mmafuzz run: %s: %ld finding file%s not in index.tsv (filed after its last "
                            "checkpoint): indexed, each counted once\n", o->out, nrec, nrec == 1 ? "" : "s");
        if (se != RUN_OK) {
            fprintf(stderr, "mmafuzz run: %s\n", err);
            rf_buckets_close(bs);
            st_close(&st);
            return se;
        }
    }
    pool pl;
    const pool_entry **view = malloc(VIEW_CAP * sizeof *view * 3);
    if (pool_init(&pl, POOL_CAP) || !view) {
        fprintf(stderr, "mmafuzz run: out of memory\n");
        rf_buckets_close(bs);
        st_close(&st);
        return RUN_ERR_NOMEM;
    }
    /* the mutation pool: corpus folders; on --resume also the campaign's earlier mismatches */
    {
        const char *paths[RUN_MAX_CORPUS + 2];
        int np = 0;
        /* default: the saved-case corpora (corpus/fuzz holds libFuzzer inputs,
         * some malformed on purpose, and is not one) */
        if (!o->ncorpus) {
            if (fs_is_dir("corpus/golden"))
                paths[np++] = "corpus/golden";
            if (fs_is_dir("corpus/findings"))
                paths[np++] = "corpus/findings";
        }
        for (int c = 0; c < o->ncorpus; c++)
            paths[np++] = o->corpus[c];
        if (o->resume)
            paths[np++] = o->out;
        char frozen[1200];
        if (o->campaign) {  /* the campaign's frozen pool only, in its order: tiles are pure functions of it */
            snprintf(frozen, sizeof frozen, "%s/pool.vec", o->campaign);
            paths[0] = frozen;
            np = 1;
        }
        load_ctx lc = {&pl, ri, ni, 0};
        long skipped = st_read(paths, np, load_case, &lc);
        if (np)
            fprintf(stderr, "mmafuzz run: %lld saved cases in the mutation pool%s\n", lc.loaded,
                    skipped > 0 ? " (some files skipped, see above)" : "");
    }

    rs_stats rs;
    memset(&rs, 0, sizeof rs);
    rs.per = calloc((size_t)ni, sizeof *rs.per);
    rs.n = ni;
    rs.device = o->device;
    rs.seed = o->seed;
    rs.jobs = o->jobs;
    for (int i = 0; i < ni; i++)
        rs.per[i].in = ri[i].in;
    char run_id[200];
    cp_run_id(run_id, sizeof run_id);
    if (o->campaign) {  /* one stats file per process run, named by its run id */
        char sdir[1300], shard[40];
        snprintf(sdir, sizeof sdir, "%s/stats", o->out);
        snprintf(shard, sizeof shard, "%d/%d", o->shard_i, o->shard_n);
        rs.run_id = run_id;
        snprintf(rs.shard, sizeof rs.shard, "%s", shard);
        if (fs_mkdir_p(sdir))
            fprintf(stderr, "mmafuzz run: %s: cannot create the folder (%s)\n", sdir, strerror(errno));
        snprintf(rs.json_path, sizeof rs.json_path, "%.800s/%.200s.jsonl", sdir, run_id);
    }
    {
        const mf_device_info *info = mf_device_get_info(dev);
        mf_device_describe(dev, rs.gpu, sizeof rs.gpu);
        snprintf(rs.gpu_uuid, sizeof rs.gpu_uuid, "%s", info->uuid);
        snprintf(rs.gpu_pci, sizeof rs.gpu_pci, "%s", info->pci_bus_id);
    }
    for (int i = 0; i < ni; i++)
        rs.planned = ri[i].quota < 0 || rs.planned < 0      ? -1
                     : rs.planned > LLONG_MAX - ri[i].quota ? LLONG_MAX  /* -runs near 2^63: no overflow */
                                                            : rs.planned + ri[i].quota;
    if (rs.planned < 0)
        rs.planned = 0;
    rs_open(&rs, o->out);

    /* batch buffers, sized for the largest instruction */
    size_t bytes[6] = {0}, maxtiles = 0, want_bytes = 0;
    for (int i = 0; i < ni; i++) {
        const mf_instr *in = ri[i].in;
        size_t t = ri[i].tiles_per_batch, S = in->n_scales;
        size_t SM = S ? S : in->sparse ? in->n_meta : 0;   /* SA: scales, or a sparse row's metadata bytes */
        size_t b6[6] = {t * ri[i].m * ri[i].k * mf_abi_elem_bytes(in->fa), t * ri[i].n * ri[i].k * mf_abi_elem_bytes(in->fb),
                        t * ri[i].m * ri[i].n * mf_abi_elem_bytes(in->fc), t * ri[i].m * SM, t * ri[i].n * S,
                        t * ri[i].m * ri[i].n * mf_abi_elem_bytes(in->fd)};
        for (int q = 0; q < 6; q++)
            if (b6[q] > bytes[q])
                bytes[q] = b6[q];
        if (t > maxtiles)
            maxtiles = t;
        if (b6[5] / t > want_bytes)
            want_bytes = b6[5] / t;
    }
    workers *wp = workers_new(o->jobs);
    batch bufs[3];
    int ok = wp != NULL;
    for (int i = 0; i < ni; i++)  /* the buckets of each instruction, shared by the model threads */
        ok &= (ri[i].cls = rf_classifier_new(ri[i].in, ri[i].model)) != NULL;
    for (int q = 0; q < 3; q++)
        ok &= alloc_batch(&bufs[q], dev, bytes, maxtiles, want_bytes, o->jobs, o->campaign != NULL) == 0;
    if (!ok) {
        fprintf(stderr, "mmafuzz run: out of memory for the batch buffers\n");
        return RUN_ERR_NOMEM;
    }
    int nw = workers_count(wp);

    const mf_device_info *di = mf_device_get_info(dev);
    char threads[160];
    if (o->verify_gpu)
        snprintf(threads, sizeof threads, "cases generated, run and checked on %d GPU%s (--verify gpu), %d host threads",
                 mf_device_gpu_count(dev), mf_device_gpu_count(dev) == 1 ? "" : "s", nw);
    else
        snprintf(threads, sizeof threads, "%d model threads", nw);
    fprintf(stderr, "mmafuzz run: seed %llu, device %s (%s), %d instruction%s, %s%s%s, mix %s, out %s\n", o->seed,
            di->name, di->arch, ni, ni == 1 ? "" : "s", threads, o->model ? ", model " : "", o->model ? o->model : "",
            o->mix_text, o->out);
    rs.verify_gpu = o->verify_gpu;
    rs.ngpu = mf_device_gpu_count(dev) < RS_MAX_GPUS ? mf_device_gpu_count(dev) : RS_MAX_GPUS;
    for (int g = 0; g < rs.ngpu; g++)
        snprintf(rs.gpu_uuids[g], sizeof rs.gpu_uuids[g], "%s", mf_device_gpu_uuid(dev, g));


    loop_ctx L;
    memset(&L, 0, sizeof L);
    L.o = o;
    L.dev = dev;
    L.ri = ri;
    L.ni = ni;
    L.st = &st;
    L.bs = bs;
    L.pl = &pl;
    L.rs = &rs;
    L.wp = wp;
    L.why = "runs done";
    L.bk_at_start = o->campaign ? (long long)o->cstate->nbk : 0;
    rs.buckets_seen = L.bk_at_start;  /* a resumed shard's buckets (a plain run's store counts its own) */
    L.t_start = L.last_save = rs_now();
    /* a shard's state is written every 10 s, the longest interval a campaign allows (each checkpoint first flushes
     * the findings written since the last one; at 2 s this cost 10% of the H100's rate with 200 findings/s, at
     * 10 s 3%), and at the end; MMAFUZZ_CHECKPOINT_S overrides it (0 to 10: kill tests write it after every batch).
     * A plain run writes its index and state every 2 s. */
    L.ckpt_s = o->campaign ? 10.0 : 2.0;
    if (getenv("MMAFUZZ_CHECKPOINT_S")) {
        L.ckpt_s = strtod(getenv("MMAFUZZ_CHECKPOINT_S"), NULL);
        if (!(L.ckpt_s >= 0 && L.ckpt_s <= 10))
            L.ckpt_s = 10.0;
    }
    if (o->no_sync)
        L.ckpt_s = 1e30;  /* no checkpoints: state and index at the end only */
    if (o->dump && (L.dump = calloc((size_t)ni, sizeof *L.dump)) == NULL)
        loop_fail(&L, RUN_ERR_NOMEM);
    for (int i = 0; o->dump && L.dump && i < ni && L.status == RUN_OK; i++) {
        /* DIR/ARCH__QUALIFIER.tsv, appended: a shard's or a resumed run's tiles follow in order */
        char path[1400];
        if (fs_mkdir_p(o->dump)) {
            fprintf(stderr, "mmafuzz run: --dump-disagreements %s: cannot create the folder (%s)\n", o->dump,
                    strerror(errno));
            L.status = RUN_ERR_STORE;
            break;
        }
        int len = snprintf(path, sizeof path, "%s/%s.tsv", o->dump, ri[i].in->name);
        for (int c = (int)strlen(o->dump) + 1; c < len; c++)
            if (path[c] == '/')
                path[c] = '_';
        if (!(L.dump[i] = fopen(path, "a"))) {
            fprintf(stderr, "mmafuzz run: %s: cannot open (%s)\n", path, strerror(errno));
            L.status = RUN_ERR_STORE;
        }
    }
    for (int q = 0; q < 3 && L.dump; q++)
        if (!(bufs[q].dumpv = calloc(CHUNKS, sizeof *bufs[q].dumpv)) || !(bufs[q].ndump = calloc(CHUNKS, sizeof(size_t))) ||
            !(bufs[q].capdump = calloc(CHUNKS, sizeof(size_t))))
            loop_fail(&L, RUN_ERR_NOMEM);

    if (o->verify_gpu && L.status == RUN_OK)
        gpu_loop(&L, &bufs[0], &bufs[1], view);
    int rot = 0;               /* round-robin position */
    batch *ready = NULL;       /* generated, not yet run */
    batch *ran = NULL;         /* run, not yet evaluated */
    int nextbuf = 0;
    for (; !o->verify_gpu;) {
        int stopping = g_stop || (o->max_time && rs_now() - L.t_start >= (double)o->max_time) || L.status;
        if (g_stop)
            L.why = "interrupted";
        else if (o->max_time && rs_now() - L.t_start >= (double)o->max_time)
            L.why = "time limit";
        if (stopping)
            ready = NULL;  /* a generated batch not yet run is dropped; its tiles are generated again on resume */
        /* plan the next batch to generate */
        batch *gen = NULL;
        if (!stopping) {
            for (int tries = 0; tries < ni; tries++) {
                run_instr *r = &ri[(rot + tries) % ni];
                if (r->quota == 0)
                    continue;
                size_t per = (size_t)(r->m * r->n);
                size_t nt = r->tiles_per_batch;
                if (r->quota > 0 && (long long)(nt * per) > r->quota)
                    nt = (size_t)((r->quota + (long long)per - 1) / (long long)per);
                gen = &bufs[nextbuf];
                nextbuf = (nextbuf + 1) % 3;
                const pool_entry **v = view + (size_t)(gen - bufs) * VIEW_CAP;
                batch_plan(&L, gen, r, r->next_tile, nt, v, pool_view(&pl, r->in, v, VIEW_CAP));
                r->next_tile += nt;
                if (r->quota > 0)
                    r->quota = r->quota > (long long)(nt * per) ? r->quota - (long long)(nt * per) : 0;
                rot = (int)(r - ri + 1) % ni;
                break;
            }
        }
        if (!ready && !ran && !gen)
            break;
        job jb = {ran, gen, 0, 0};
        workers_start(wp, job_fn, &jb);
        int run_ok = 0;
        if (ready) {
            char derr[600];
            double t_dev = rs_now();
            int rc = mf_device_run_tiles(dev, ready->in, NULL, ready->ntiles, ready->A, ready->B, ready->C,
                                         batch_sa(ready), batch_sb(ready), ready->D, derr, sizeof derr);
            if (rc) {
                loop_device_error(&L, ready->slot, derr);
            } else {
                L.dev_fail = 0;
                run_ok = 1;
            }
            rs.per[ready->slot].device_s += rs_now() - t_dev;
        }
        workers_wait(wp);
        if (g_stop) {
            /* a stop request: the workers left their chunks unfinished, so the
             * batches in flight are dropped (their tiles are not counted as
             * done, and are generated again on resume) */
            L.why = "interrupted";
            ran = ready = NULL;
            continue;
        }
        if (ran) {
            account_host_batch(&L, ran);
            if (L.stopped) {
                L.why = "interrupted";
                ready = NULL;
            }
            checkpoint(&L);
            rs_report(&rs, o->report_period, 0);
        }
        ran = run_ok ? ready : NULL;
        ready = gen;
    }
    run_err status = L.status;
    rs_report(&rs, o->report_period, 1);
    rs_summary(&rs, stdout, L.why);
    if (L.rechecked)
        printf("--verify gpu: %lld tiles checked again on the host (a call's disagreements exceeded --hits %lld)\n",
               L.rechecked, o->hits);
    if (bs)
        printf("buckets: %lld seen, %lld new; %lld disagreements counted without a file\n", rf_buckets_seen(bs),
               rf_buckets_new(bs), rf_buckets_counted_only(bs));
    run_err se = commit(o, &st, bs, ri, ni, rs_now() - L.t_start, err, sizeof err);
    if (se != RUN_OK) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        if (status == RUN_OK)
            status = se;
    }
    for (int i = 0; L.dump && i < ni; i++)
        if (L.dump[i] && fclose(L.dump[i]) != 0) {
            fprintf(stderr, "mmafuzz run: %s: write failed (%s)\n", o->dump, strerror(errno));
            if (status == RUN_OK)
                status = RUN_ERR_STORE;
        }
    free(L.dump);
    *mismatches = rs_total(&rs, RS_MISMATCHES);
    if (rs_close(&rs) && status == RUN_OK)
        status = RUN_ERR_STORE;  /* stats.jsonl could not be written (message printed) */
    for (int i = 0; i < ni; i++)
        if (ri[i].z_ready)
            mz_dev_free(&ri[i].z);
    for (int q = 0; q < 3; q++)
        free_batch(&bufs[q], dev);
    for (int i = 0; i < ni; i++) {
        rf_classifier_free(ri[i].cls);
        ri[i].cls = NULL;
    }
    workers_free(wp);
    pool_free(&pl);
    free(view);
    rf_buckets_close(bs);
    st_close(&st);
    free(rs.per);
    return status;
}

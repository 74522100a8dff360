/*
 * run_batch.c - the batches of `mmafuzz run` and the workers' jobs on them
 * (run_batch.h).
 */
#include "run_batch.h"

#include "run_fs.h"
#include "run_mismatch.h"
#include "run_stats.h"

#include <stdlib.h>
#include <string.h>

/* the stop request of SIGINT, SIGTERM, SIGHUP (run_fs.h) */
#define g_stop (*fs_stop_flag())

/* ------------------------------------------------------------ tallies */

void tally_reset(tally *t)
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
void tally_add(tally *t, uint64_t id, const rec *r)
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

gen_kind batch_case(batch *b, unsigned long long tile, int i, int j, mf_case *cs)
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

void hits_fn(void *ctx, int w, int nw)
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

void job_fn(void *ctx, int w, int nw)
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

int alloc_batch(batch *b, mf_device *dev, size_t bytes[6], size_t tiles, size_t want_bytes, int nworkers, int camp)
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

void free_batch(batch *b, mf_device *dev)
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

void tally_describe(batch *b, const tally_e *e, rf_bucket *bk)
{
    mf_case cs;
    batch_case(b, e->first.tile, e->first.i, e->first.j, &cs);
    rf_classify_bucket(b->cls, &cs, e->first.dev, e->first.model, bk);
}

void batch_plan(batch *b, int slot, const mf_instr *in, const mf_instr *model, int m, int n, int k,
                const rf_classifier *cls, unsigned long long first, size_t nt, unsigned long long tile_base,
                unsigned long long tile_stride, uint64_t seed, gen_mix mix, const pool_entry **view, size_t nview)
{
    b->slot = slot;
    b->in = in;
    b->model = model;
    b->m = m;
    b->n = n;
    b->k = k;
    b->ntiles = nt;
    b->nchunks = nt < CHUNKS ? nt : CHUNKS;
    b->first_tile = first;
    b->tile_base = tile_base;
    b->tile_stride = tile_stride;
    b->sparse = 0;
    b->cached = 0;
    b->cls = cls;
    b->g = (gen_ctx){in, m, n, k, seed, mix, view, nview, b->A, b->B, b->C, b->SA, b->SB};
}

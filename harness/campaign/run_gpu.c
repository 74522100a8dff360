/*
 * run_gpu.c - the GPU stage of `mmafuzz run` (--verify gpu; run_stage.h):
 * each step is one device call that generates, runs, evaluates and
 * compares a range of tiles on the device (mf_device_verify_tiles); only
 * the disagreements come back, and they are counted and filed like a host
 * batch's.
 *
 * A call is launched, then collected.  Today the device call returns when
 * it is done, and the stage holds one call; to overlap calls (each GPU's
 * next call generated and launched while the host handles the last one's
 * disagreements), the stage would hold one gpu_call per call in flight,
 * each with its own hit buffer, list and pool view, and collect the oldest
 * after launching the next.
 */
#include "run_stage.h"

#include <stdlib.h>
#include <string.h>

/* Check tiles [first, first + nt) of r on the host path, one buffer-full at
 * a time (no pipelining): --verify gpu uses it when a call found more
 * disagreements than its hit buffer holds, so that none is lost. */
static void host_check_range(loop_ctx *L, batch *b, run_instr *r, unsigned long long first, size_t nt,
                             const pool_entry **view, size_t nview)
{
    for (size_t lo = 0; lo < nt && L->status == RUN_OK && !g_stop; ) {
        size_t cnt = nt - lo < r->tiles_per_batch ? nt - lo : r->tiles_per_batch;
        loop_plan(L, b, r, first + lo, cnt, view, nview);
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

/* One device call: the tiles it checks, its request, and what came back. */
typedef struct gpu_call {
    run_instr *r;
    unsigned long long first;
    size_t nt;
    const pool_entry **view;  /* VIEW_CAP entries: the pool's cases for r */
    size_t nview;
    mf_verify_hit *hits;      /* o->hits entries */
    rec *list;                /* --campaign: the first hit of each class in each tile (o->hits entries) */
    mf_verify_req rq;
    mf_verify_res res;
    int rc;                   /* the call's MF_DEV_* code; derr its message */
    char derr[800];
} gpu_call;

typedef struct gpu_stage {
    batch *gb;                /* a batch whose arrays hold the one tile generated again on the host when a case
                                 is asked for */
    batch *hb;                /* a batch for the host path when the hit buffer overflowed */
    gpu_call call;
} gpu_stage;

/* Start call c on tiles [first, first + nt) of r. */
static void gpu_launch(loop_ctx *L, gpu_call *c, run_instr *r, unsigned long long first, size_t nt)
{
    const run_opts *o = L->o;
    c->r = r;
    c->first = first;
    c->nt = nt;
    c->nview = pool_view(L->pl, r->in, c->view, VIEW_CAP);
    mf_verify_req *rq = &c->rq;
    memset(rq, 0, sizeof *rq);
    rq->in = r->in;
    rq->model = r->model;
    rq->tile_base = o->campaign ? (uint64_t)o->shard_i : 0;
    rq->tile_stride = o->campaign ? (uint64_t)o->shard_n : 1;
    rq->first = first;
    rq->ntiles = nt;
    rq->seed = o->seed;
    rq->mix = o->mix;
    rq->view = c->view;
    rq->nview = c->nview;
    rq->view_version = L->pl->version;
    rq->hits = c->hits;
    rq->hits_cap = (size_t)o->hits;
    double t0 = rs_now();
    c->rc = mf_device_verify_tiles(L->dev, rq, &c->res, c->derr, sizeof c->derr);
    L->rs->per[r - L->ri].device_s += rs_now() - t0;
}

/* Take call c's results: the disagreements, sorted by (tile, i, j), are
 * bucketed in the workers, dumped, and counted and filed (account_batch);
 * a call whose hit buffer overflowed is checked again on the host. */
static void gpu_collect(loop_ctx *L, gpu_stage *g, gpu_call *c)
{
    const run_opts *o = L->o;
    run_instr *r = c->r;
    const mf_verify_res *res = &c->res;
    batch *gb = g->gb;
    mf_verify_hit *hits = c->hits;
    rec *list = c->list;
    if (c->rc) {
        loop_device_error(L, (int)(r - L->ri), c->derr);
        return;
    }
    L->dev_fail = 0;
    for (int q = 0; q < res->ngpu && q < RS_MAX_GPUS; q++)
        L->rs->gpu_cases[q] += (long long)res->gpu_cases[q];
    /* the batch size follows the disagreement rate: a call should keep all of them */
    unsigned long long per = (unsigned long long)r->m * (unsigned long long)r->n;
    if (res->mismatches > c->rq.hits_cap / 4 && r->gpu_tiles > 1)
        r->gpu_tiles = res->overflow ? (r->gpu_tiles + 3) / 4 : (r->gpu_tiles + 1) / 2;
    else if (res->mismatches < c->rq.hits_cap / 16 && r->gpu_tiles * per < L->gpu_call_max)
        r->gpu_tiles *= 2;
    if (res->overflow) {
        host_check_range(L, g->hb, r, c->first, c->nt, c->view, c->nview);
        return;
    }
    loop_plan(L, gb, r, c->first, c->nt, c->view, c->nview);
    gb->sparse = 1;
    /* the buckets of the hits: in the workers (each generates tiles into its own slot), or here when the
     * batch's arrays hold fewer tiles than there are workers */
    hits_job hj = {gb, hits, res->nhits, res->nhits < CHUNKS ? (res->nhits ? res->nhits : 1) : CHUNKS, 0};
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
    gb->nrec[0] = o->campaign ? 0 : (int)(res->nhits < GPU_RECS ? res->nhits : GPU_RECS);
    long long ncls[CP_NCLASS] = {0};
    size_t nlist = 0, tile_from = 0;
    for (size_t q = 0; q < res->nhits; q++) {
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
    gb->nmis[0] = (long long)res->mismatches;
    account_batch(L, gb, list, nlist, ncls, (long long)res->mismatches, res->gpu_s);
}

static size_t gpu_tiles(const run_stage *s, const run_instr *r)
{
    (void)s;
    return (size_t)r->gpu_tiles;
}

/* One device call per step, instructions in turn. */
static int gpu_step(loop_ctx *L, run_stage *s, run_instr *r, unsigned long long first, size_t nt, int stopping)
{
    gpu_stage *g = s->self;
    if (stopping || !r)
        return 0;
    gpu_launch(L, &g->call, r, first, nt);
    gpu_collect(L, g, &g->call);
    if (L->stopped || g_stop) {
        L->why = "interrupted";
        return 0;
    }
    checkpoint(L);
    rs_report(L->rs, L->o->report_period, 0);
    return 1;
}

static void gpu_fini(loop_ctx *L, run_stage *s)
{
    (void)L;
    gpu_stage *g = s->self;
    free(g->call.hits);
    free(g->call.list);
    free(g);
}

int gpu_stage_init(loop_ctx *L, run_stage *s, batch *gb, batch *hb, const pool_entry **view)
{
    const run_opts *o = L->o;
    gpu_stage *g = calloc(1, sizeof *g);
    *s = (run_stage){gpu_tiles, gpu_step, gpu_fini, g};
    if (!g) {
        fprintf(stderr, "mmafuzz run: out of memory\n");
        s->fini = NULL;
        loop_fail(L, RUN_ERR_NOMEM);
        return -1;
    }
    g->gb = gb;
    g->hb = hb;
    g->call.view = view;
    g->call.hits = malloc((size_t)o->hits * sizeof *g->call.hits);
    g->call.list = malloc((size_t)o->hits * sizeof *g->call.list);
    if (!g->call.hits || !g->call.list) {
        fprintf(stderr, "mmafuzz run: out of memory for %lld hits (--hits)\n", o->hits);
        loop_fail(L, RUN_ERR_NOMEM);
        return -1;
    }
    int ngpu = mf_device_gpu_count(L->dev);
    L->gpu_call_max = GPU_CALL_MAX_CASES * (unsigned long long)(ngpu > 0 ? ngpu : 1);
    for (int i = 0; i < L->ni; i++) {
        unsigned long long per = (unsigned long long)L->ri[i].m * (unsigned long long)L->ri[i].n;
        L->ri[i].gpu_tiles = ((unsigned long long)1 << 24) / per ? ((unsigned long long)1 << 24) / per : 1;
    }
    return 0;
}

/*
 * run_loop.c - the loop of `mmafuzz run` (run_loop.h): setting up the store,
 * the mutation pool, the statistics and the batch buffers; one loop that
 * takes each instruction's tiles in turn and hands them to a pipeline stage
 * (the host stage here, the GPU stage of --verify gpu in run_gpu.c); the
 * checkpoints; the summary.  Counting and filing are run_file.c's, the
 * batches run_batch.c's, the choice of instructions run_select.c's.
 */
#include "run_stage.h"

#include "run_state.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ checkpoints */

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
    char path[1100], serr[1400];
    long torn;
    snprintf(path, sizeof path, "%s/stats.jsonl", o->out);  /* whole but for a torn last record (rs_open cuts it) */
    if (!o->campaign && rs_read_file(path, NULL, NULL, &torn, serr, sizeof serr) < 0) {
        fprintf(stderr, "mmafuzz run: %s\n", serr);
        return RUN_ERR_INPUT;
    }
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

/* ------------------------------------------------------------ the loop's steps */

void loop_fail(loop_ctx *L, run_err e)
{
    if (L->status != RUN_OK)
        return;
    L->status = e;
    L->why = e == RUN_ERR_STORE ? "store error" : e == RUN_ERR_DEVICE ? "device error" : "out of memory";
}

void loop_device_error(loop_ctx *L, int slot, const char *msg)
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

void dump_line(loop_ctx *L, int slot, unsigned long long tile, int i, int j, uint64_t d, uint64_t mv)
{
    int w = mf_format_get(L->ri[slot].in->fd)->hex_width;
    if (fprintf(L->dump[slot], "%llu %d %d %0*llx %0*llx\n", tile, i, j, w, (unsigned long long)d, w,
                (unsigned long long)mv) < 0 && L->status == RUN_OK) {
        fprintf(stderr, "mmafuzz run: %s: write failed (%s)\n", L->o->dump, strerror(errno));
        loop_fail(L, RUN_ERR_STORE);
    }
}

void checkpoint(loop_ctx *L)
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

void loop_plan(loop_ctx *L, batch *b, run_instr *r, unsigned long long first, size_t nt, const pool_entry **view,
               size_t nview)
{
    const run_opts *o = L->o;
    batch_plan(b, (int)(r - L->ri), r->in, r->model, r->m, r->n, r->k, r->cls, first, nt,
               o->campaign ? (unsigned long long)o->shard_i : 0, o->campaign ? (unsigned long long)o->shard_n : 1,
               o->seed, o->mix, view, nview);
}

/* ------------------------------------------------------------ the host stage */

/* The host stage (run_loop.h): while the main thread runs batch b on the
 * device, the workers compare batch b-1 with the model and generate batch
 * b+1; three buffers rotate. */
typedef struct host_stage {
    batch *bufs;               /* 3 */
    const pool_entry **view;   /* VIEW_CAP per buffer */
    batch *ready;              /* generated, not yet run */
    batch *ran;                /* run, not yet evaluated */
    int nextbuf;
} host_stage;

static size_t host_tiles(const run_stage *s, const run_instr *r)
{
    (void)s;
    return r->tiles_per_batch;
}

static int host_step(loop_ctx *L, run_stage *s, run_instr *r, unsigned long long first, size_t nt, int stopping)
{
    host_stage *h = s->self;
    if (stopping)
        h->ready = NULL;  /* a generated batch not yet run is dropped; its tiles are generated again on resume */
    batch *gen = NULL;    /* the next batch to generate */
    if (r) {
        gen = &h->bufs[h->nextbuf];
        h->nextbuf = (h->nextbuf + 1) % 3;
        const pool_entry **v = h->view + (size_t)(gen - h->bufs) * VIEW_CAP;
        loop_plan(L, gen, r, first, nt, v, pool_view(L->pl, r->in, v, VIEW_CAP));
    }
    if (!h->ready && !h->ran && !gen)
        return 0;
    job jb = {h->ran, gen, 0, 0};
    workers_start(L->wp, job_fn, &jb);
    int run_ok = 0;
    batch *ready = h->ready;
    if (ready) {
        char derr[600];
        double t_dev = rs_now();
        int rc = mf_device_run_tiles(L->dev, ready->in, NULL, ready->ntiles, ready->A, ready->B, ready->C,
                                     batch_sa(ready), batch_sb(ready), ready->D, derr, sizeof derr);
        if (rc) {
            loop_device_error(L, ready->slot, derr);
        } else {
            L->dev_fail = 0;
            run_ok = 1;
        }
        L->rs->per[ready->slot].device_s += rs_now() - t_dev;
    }
    workers_wait(L->wp);
    if (g_stop) {
        /* a stop request: the workers left their chunks unfinished, so the
         * batches in flight are dropped (their tiles are not counted as
         * done, and are generated again on resume) */
        L->why = "interrupted";
        h->ran = h->ready = NULL;
        return 1;
    }
    if (h->ran) {
        account_host_batch(L, h->ran);
        if (L->stopped) {
            L->why = "interrupted";
            ready = NULL;
        }
        checkpoint(L);
        rs_report(L->rs, L->o->report_period, 0);
    }
    h->ran = run_ok ? ready : NULL;
    h->ready = gen;
    return 1;
}

/* ------------------------------------------------------------ the loop */

/* An error, a stop request or the time limit: the loop is stopping (why it
 * ended set for the last two). */
static int loop_stopping(loop_ctx *L)
{
    const run_opts *o = L->o;
    if (L->status != RUN_OK)
        return 1;  /* the error says why */
    int over_time = o->max_time && rs_now() - L->t_start >= (double)o->max_time;
    if (g_stop)
        L->why = "interrupted";
    else if (over_time)
        L->why = "time limit";
    return g_stop || over_time;
}

/* The next instruction with cases left, round-robin from *rot, and its next
 * tiles: as many as one step of the stage takes, capped at its quota (which
 * they are taken from).  @return NULL when every quota is spent. */
static run_instr *take_tiles(loop_ctx *L, const run_stage *s, int *rot, unsigned long long *first, size_t *nt)
{
    for (int tries = 0; tries < L->ni; tries++) {
        run_instr *r = &L->ri[(*rot + tries) % L->ni];
        if (r->quota == 0)
            continue;
        long long per = (long long)r->m * r->n;
        size_t n = s->tiles(s, r);
        if (r->quota > 0 && (long long)n * per > r->quota)
            n = (size_t)((r->quota + per - 1) / per);
        *first = r->next_tile;
        *nt = n;
        r->next_tile += n;
        if (r->quota > 0)
            r->quota = r->quota > (long long)n * per ? r->quota - (long long)n * per : 0;
        *rot = (int)(r - L->ri + 1) % L->ni;
        return r;
    }
    return NULL;
}

/* The main loop: each turn, unless stopping, the next instruction's tiles
 * into the stage, until the stage has nothing left in flight. */
static void loop_run(loop_ctx *L, run_stage *s)
{
    int rot = 0;  /* round-robin position */
    for (;;) {
        int stopping = loop_stopping(L);
        unsigned long long first = 0;
        size_t nt = 0;
        run_instr *r = stopping ? NULL : take_tiles(L, s, &rot, &first, &nt);
        if (!s->step(L, s, r, first, nt, stopping))
            break;
    }
    if (s->fini)
        s->fini(L, s);
}

/* ------------------------------------------------------------ setting up */

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

/* The mutation pool: corpus folders; on --resume also the campaign's
 * earlier mismatches; a campaign's frozen pool only. */
static void load_pool(const run_opts *o, pool *pl, run_instr *ri, int ni)
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
    load_ctx lc = {pl, ri, ni, 0};
    long skipped = st_read(paths, np, load_case, &lc);
    if (np)
        fprintf(stderr, "mmafuzz run: %lld saved cases in the mutation pool%s\n", lc.loaded,
                skipped > 0 ? " (some files skipped, see above)" : "");
}

/* The statistics: the status line and OUT/stats.jsonl (a campaign: one file
 * per process run, named by run_id), with the device's identity. */
static void open_stats(const run_opts *o, mf_device *dev, const run_instr *ri, int ni, rs_stats *rs,
                       char run_id[200])
{
    memset(rs, 0, sizeof *rs);
    rs->per = calloc((size_t)ni, sizeof *rs->per);
    rs->n = ni;
    rs->device = o->device;
    rs->seed = o->seed;
    rs->jobs = o->jobs;
    for (int i = 0; i < ni; i++)
        rs->per[i].in = ri[i].in;
    cp_run_id(run_id, 200);
    if (o->campaign) {  /* one stats file per process run, named by its run id */
        char sdir[1300], shard[40];
        snprintf(sdir, sizeof sdir, "%s/stats", o->out);
        snprintf(shard, sizeof shard, "%d/%d", o->shard_i, o->shard_n);
        rs->run_id = run_id;
        snprintf(rs->shard, sizeof rs->shard, "%s", shard);
        if (fs_mkdir_p(sdir))
            fprintf(stderr, "mmafuzz run: %s: cannot create the folder (%s)\n", sdir, strerror(errno));
        snprintf(rs->json_path, sizeof rs->json_path, "%.800s/%.200s.jsonl", sdir, run_id);
    }
    const mf_device_info *info = mf_device_get_info(dev);
    mf_device_describe(dev, rs->gpu, sizeof rs->gpu);
    snprintf(rs->gpu_uuid, sizeof rs->gpu_uuid, "%s", info->uuid);
    snprintf(rs->gpu_pci, sizeof rs->gpu_pci, "%s", info->pci_bus_id);
    for (int i = 0; i < ni; i++)
        rs->planned = ri[i].quota < 0 || rs->planned < 0      ? -1
                      : rs->planned > LLONG_MAX - ri[i].quota ? LLONG_MAX  /* -runs near 2^63: no overflow */
                                                              : rs->planned + ri[i].quota;
    if (rs->planned < 0)
        rs->planned = 0;
    rs_open(rs, o->out);
}

/* The three batch buffers, sized for the largest instruction, and the
 * buckets of each instruction (shared by the model threads).  @return 0,
 * or -1: out of memory. */
static int alloc_buffers(const run_opts *o, mf_device *dev, run_instr *ri, int ni, batch bufs[3])
{
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
    int ok = 1;
    for (int i = 0; i < ni; i++)
        ok &= (ri[i].cls = rf_classifier_new(ri[i].in, ri[i].model)) != NULL;
    for (int q = 0; q < 3; q++)
        ok &= alloc_batch(&bufs[q], dev, bytes, maxtiles, want_bytes, o->jobs, o->campaign != NULL) == 0;
    return ok ? 0 : -1;
}

/* --dump-disagreements DIR: DIR/ARCH__QUALIFIER.tsv for each instruction,
 * appended (a shard's or a resumed run's tiles follow in order), and room
 * for each buffer's disagreements. */
static void open_dumps(loop_ctx *L, batch bufs[3])
{
    const run_opts *o = L->o;
    if (!o->dump)
        return;
    if ((L->dump = calloc((size_t)L->ni, sizeof *L->dump)) == NULL)
        loop_fail(L, RUN_ERR_NOMEM);
    for (int i = 0; L->dump && i < L->ni && L->status == RUN_OK; i++) {
        char path[1400];
        if (fs_mkdir_p(o->dump)) {
            fprintf(stderr, "mmafuzz run: --dump-disagreements %s: cannot create the folder (%s)\n", o->dump,
                    strerror(errno));
            L->status = RUN_ERR_STORE;
            break;
        }
        int len = snprintf(path, sizeof path, "%s/%s.tsv", o->dump, L->ri[i].in->name);
        for (int c = (int)strlen(o->dump) + 1; c < len; c++)
            if (path[c] == '/')
                path[c] = '_';
        if (!(L->dump[i] = fopen(path, "a"))) {
            fprintf(stderr, "mmafuzz run: %s: cannot open (%s)\n", path, strerror(errno));
            L->status = RUN_ERR_STORE;
        }
    }
    for (int q = 0; q < 3 && L->dump; q++)
        if (!(bufs[q].dumpv = calloc(CHUNKS, sizeof *bufs[q].dumpv)) || !(bufs[q].ndump = calloc(CHUNKS, sizeof(size_t))) ||
            !(bufs[q].capdump = calloc(CHUNKS, sizeof(size_t))))
            loop_fail(L, RUN_ERR_NOMEM);
}

/* For st_reconcile: does this resume run tile `tile` of instr (of the run's
 * seed) again, from the checkpoint it starts at? */
typedef struct rerun_ctx {
    const run_opts *o;
    const run_instr *ri;
    int ni;
} rerun_ctx;

static int reruns(const char *instr, unsigned long long seed, unsigned long long tile, void *vctx)
{
    const rerun_ctx *c = vctx;
    for (int i = 0; c->o->resume && seed == c->o->seed && i < c->ni; i++)
        if (!strcmp(c->ri[i].in->name, instr))
            return tile >= c->ri[i].start_tile;
    return 0;
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
     * by the campaign's own policy (run_file.c) and counts its buckets in its state */
    rf_buckets *bs = o->campaign ? NULL : rf_buckets_open(o->out, (int)o->per_bucket, err, sizeof err);
    if (!bs && !o->campaign) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        st_close(&st);
        return RUN_ERR_STORE;
    }
    if (!o->campaign) {
        /* finding files the index lacks (filed after its last checkpoint), then
         * a state at once: a run killed before its first checkpoint can be resumed */
        rerun_ctx rc = {o, ri, ni};  /* a fresh run runs no tile again: no finding's header is read */
        long nrec = st_reconcile(&st, o->resume ? reruns : NULL, &rc, err, sizeof err);
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
    load_pool(o, &pl, ri, ni);

    rs_stats rs;
    char run_id[200];
    open_stats(o, dev, ri, ni, &rs, run_id);
    workers *wp = workers_new(o->jobs);
    batch bufs[3];
    if (!wp || alloc_buffers(o, dev, ri, ni, bufs)) {
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
    open_dumps(&L, bufs);

    run_stage stage;
    host_stage hs = {bufs, view, NULL, NULL, 0};
    if (o->verify_gpu)
        gpu_stage_init(&L, &stage, &bufs[0], &bufs[1], view);
    else
        stage = (run_stage){host_tiles, host_step, NULL, &hs};
    loop_run(&L, &stage);

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

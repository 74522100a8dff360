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
#define REC_PER_CHUNK 64     /* mismatches recorded per chunk (all are counted) */
#define POOL_CAP 8192
#define VIEW_CAP 4096

/* One recorded mismatch of a batch. */
typedef struct rec {
    unsigned long long tile;  /* the tile's index in the campaign */
    int i, j;
    uint64_t dev, model;
    int cls;                  /* --campaign: its signature class */
} rec;

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
    void *A, *B, *C, *SA, *SB, *D;
    unsigned char *gen;       /* generator of each tile */
    size_t nchunks;           /* chunk c: tiles [ntiles*c/nchunks, ntiles*(c+1)/nchunks) */
    rec *recs;                /* REC_PER_CHUNK per chunk */
    int *nrec;                /* per chunk */
    long long *nmis;          /* per chunk */
    double *chunk_s;          /* per chunk: seconds spent generating it plus evaluating it */
    unsigned char *want;      /* per worker: the model's output tile */
    size_t want_bytes;
    gen_ctx g;
} batch;


/* One job of the workers: evaluate one batch and generate the next.  The
 * workers take chunks from the two counters, so a slow thread delays the
 * batch by one chunk at most; what is recorded depends on the chunks only,
 * not on the number of threads or their timing. */
typedef struct job {
    batch *eval, *gen;
    atomic_size_t next_eval, next_gen;
} job;

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    if (g_stop)
        _exit(130);  /* a second Ctrl-C: leave now */
    g_stop = 1;
}

/* ------------------------------------------------------------ workers */

static size_t chunk_first(const batch *b, size_t c) { return b->ntiles * c / b->nchunks; }
static unsigned long long tile_of(const batch *b, size_t t) { return b->tile_base + b->tile_stride * (b->first_tile + t); }

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
        r[n] = (rec){tile_of(b, t), i, j, d, mv, cls};
        b->trec_n[t] = (unsigned char)(n + 1);
    }
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
    int nrec = 0;
    long long nmis = 0;
    rec *recs = b->recs + c * REC_PER_CHUNK;
    const unsigned char *A = b->A, *B = b->B, *C = b->C, *SA = b->SA, *SB = b->SB, *D = b->D;
    if (b->camp)
        memset(b->ncls + c * CP_NCLASS, 0, CP_NCLASS * sizeof *b->ncls);
    for (size_t t = chunk_first(b, c), t1 = chunk_first(b, c + 1); t < t1; t++) {
        if (b->camp)
            b->trec_n[t] = 0;
        mf_eval_tiles(in, m, n, k, 1, A + t * (size_t)m * (size_t)k * ea, B + t * (size_t)n * (size_t)k * eb,
                      C + t * mn * ec, S ? SA + t * (size_t)m * S * es : NULL, S ? SB + t * (size_t)n * S * es : NULL,
                      want);
        const unsigned char *dt = D + t * mn * ed;
        if (!memcmp(dt, want, mn * ed))
            continue;   /* the common case: the whole tile agrees bit for bit */
        for (size_t o = 0; o < mn; o++) {
            uint64_t d = mf_elem_get(ed, dt, o), mv = mf_elem_get(ed, want, o);
            if (d != mv && !mf_output_equal(b->in, d, mv)) {
                nmis++;
                if (b->camp)
                    camp_record(b, c, t, (int)(o / (size_t)n), (int)(o % (size_t)n), d, mv);
                else if (nrec < REC_PER_CHUNK)
                    recs[nrec++] = (rec){b->first_tile + t, (int)(o / (size_t)n), (int)(o % (size_t)n), d, mv, 0};
            }
        }
    }
    b->nrec[c] = nrec;
    b->nmis[c] = nmis;
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
    return 0;
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
    b->recs = calloc((size_t)CHUNKS * REC_PER_CHUNK, sizeof *b->recs);
    b->nrec = calloc(CHUNKS, sizeof *b->nrec);
    b->nmis = calloc(CHUNKS, sizeof *b->nmis);
    b->chunk_s = calloc(CHUNKS, sizeof *b->chunk_s);
    b->want_bytes = (want_bytes + 63) / 64 * 64;
    b->want = calloc((size_t)nworkers, b->want_bytes);
    return ok && b->gen && b->recs && b->nrec && b->nmis && b->chunk_s && b->want ? 0 : -1;
}

static void free_batch(batch *b, mf_device *dev)
{
    void *arr[6] = {b->A, b->B, b->C, b->SA, b->SB, b->D};
    for (int q = 0; q < 6; q++)
        mf_device_host_free(dev, arr[q]);
    free(b->gen);
    free(b->recs);
    free(b->nrec);
    free(b->nmis);
    free(b->chunk_s);
    free(b->want);
    free(b->trecs);
    free(b->trec_n);
    free(b->ncls);
}

/* Handle the recorded mismatches of an evaluated batch: the first of each
 * signature class first, then the rest in index order, up to o->minimize,
 * each only while its bucket (buckets.h, computed on the case as generated)
 * has fewer than o->per_bucket files from this process; the rest are
 * counted in OUT/buckets.tsv. */
static run_err handle_mismatches(const run_opts *o, run_instr *ri, batch *b, store *st, rf_buckets *bs, pool *pl,
                                 rs_stats *rs, mf_device *dev)
{
    rs_instr *ps = &rs->per[b->slot];
    run_instr *r = &ri[b->slot];
    long long total = 0;
    size_t nrec = 0;
    for (size_t c = 0; c < b->nchunks; c++) {
        total += b->nmis[c];
        nrec += (size_t)b->nrec[c];
    }
    ps->mismatches += total;
    if (!total || !o->minimize)
        return RUN_OK;
    rec *all = malloc(nrec * sizeof *all);
    unsigned char *chosen = calloc(nrec, 1);
    if (!all || !chosen) {
        free(all);
        free(chosen);
        return RUN_ERR_NOMEM;
    }
    size_t n = 0;
    for (size_t c = 0; c < b->nchunks; c++)
        for (int q = 0; q < b->nrec[c]; q++)
            all[n++] = b->recs[c * REC_PER_CHUNK + (size_t)q];
    rf_bucket *bk = calloc(n ? n : 1, sizeof *bk);
    if (!bk) {
        free(all);
        free(chosen);
        return RUN_ERR_NOMEM;
    }
    for (size_t q = 0; q < n; q++) {  /* buckets before any minimization */
        mf_case cs;
        int is_new = 0;
        mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB,
                         (size_t)(all[q].tile - b->first_tile), all[q].i, all[q].j, &cs);
        rf_buckets_classify(bs, b->in, r->model, &cs, all[q].dev, &bk[q], &is_new);
        if (is_new && o->verbose)
            fprintf(stderr, "%sNEW bucket %s %s: %s\n", rs->tty ? "\n" : "", bk[q].id, b->in->name, bk[q].words);
    }
    rs->buckets_seen = rf_buckets_seen(bs);
    rs->buckets_new = rf_buckets_new(bs);
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
    if (!r->z_ready) {
        if (mz_dev_init(&r->z, dev, b->in, r->model)) {
            fprintf(stderr, "mmafuzz run: %s\n", r->z.err);
            rc = RUN_ERR_DEVICE;
        } else {
            r->z_ready = 1;
            r->z.stop = &g_stop;
        }
    }
    for (size_t q = 0; q < n && rc == RUN_OK; q++) {
        if (!chosen[q])
            continue;
        if (g_stop)
            break;  /* a stop request: the rest of the batch's mismatches stay counted, not filed */
        mf_case orig;
        size_t t = (size_t)(all[q].tile - b->first_tile);
        mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB, t, all[q].i, all[q].j, &orig);
        mm_origin origin = {o->device, o->seed, (long long)(all[q].tile * (unsigned long long)(b->m * b->n)) +
                                                     all[q].i * b->n + all[q].j,
                            (long long)all[q].tile, all[q].i, all[q].j, b->m, b->n, gen_name((gen_kind)b->gen[t])};
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
        /* the time to handle it: re-runs, minimization and the file */
        t_handle = rs_now() - t_handle;
        ps->minimized++;
        ps->min_seconds += t_handle;
        if (t_handle > ps->min_max_seconds)
            ps->min_max_seconds = t_handle;
        if (out.kind != MZ_REPEATS)
            ps->nondet++;
        else
            pool_add(pl, b->in, &out.res.cs);
        pool_add(pl, b->in, &orig);
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
    free(all);
    free(chosen);
    free(bk);
    return rc;
}

/* --campaign: file the recorded mismatches of an evaluated batch by the
 * definition's policy: the first mismatch of each class in a tile when the
 * tile is sampled (cp_tile_sampled: a function of the tile alone), and the
 * first one of a class the shard has no finding of yet.  Nothing is added
 * to the mutation pool (it stays the frozen one).  newhex[c] receives the
 * hash of a finding of class c filed here.  *stopped: a stop request came
 * (the batch is then not counted, and runs again on resume). */
static run_err handle_campaign(const run_opts *o, run_instr *ri, batch *b, store *st, rs_stats *rs, mf_device *dev,
                               char newhex[CP_NCLASS][33], int *stopped)
{
    rs_instr *ps = &rs->per[b->slot];
    run_instr *r = &ri[b->slot];
    const cp_istate *cs = &o->cstate->in[r->cp];
    int tried[CP_NCLASS] = {0};
    for (int c = 0; c < CP_NCLASS; c++)
        newhex[c][0] = 0;
    *stopped = 0;
    for (size_t t = 0; t < b->ntiles; t++) {
        if (!b->trec_n[t])
            continue;
        int sampled = cp_tile_sampled(o->def, b->in->name, tile_of(b, t));
        for (int q = 0; q < b->trec_n[t]; q++) {
            const rec *rc = &b->trecs[t * CP_TILE_RECS + (size_t)q];
            int wanted = !cs->cls_hex[rc->cls][0] && !newhex[rc->cls][0] && !tried[rc->cls];
            if (!sampled && !wanted)
                continue;
            if (g_stop) {
                *stopped = 1;
                return RUN_OK;
            }
            tried[rc->cls] = 1;
            if (!r->z_ready) {
                if (mz_dev_init(&r->z, dev, b->in, r->model)) {
                    fprintf(stderr, "mmafuzz run: %s\n", r->z.err);
                    return RUN_ERR_DEVICE;
                }
                r->z_ready = 1;
                r->z.stop = &g_stop;
            }
            mf_case orig;
            mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB, t, rc->i, rc->j, &orig);
            mm_origin origin = {o->device, o->seed, (long long)(rc->tile * (unsigned long long)(b->m * b->n)) +
                                                        rc->i * b->n + rc->j,
                                (long long)rc->tile, rc->i, rc->j, b->m, b->n, gen_name((gen_kind)b->gen[t])};
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
            t_handle = rs_now() - t_handle;
            ps->minimized++;
            ps->min_seconds += t_handle;
            if (t_handle > ps->min_max_seconds)
                ps->min_max_seconds = t_handle;
            if (out.kind != MZ_REPEATS)
                ps->nondet++;
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

run_err run_select(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    if (o->campaign)
        return select_campaign(o, dev, out, nout);
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
        if (run_state_read(o->resume, &dummy, 1, 1, &t, &nt)) {
            free(ri);
            return RUN_ERR_INPUT;
        }
        for (int i = 0; i < ni; i++)
            for (int q = 0; q < nt; q++)
                if (!strcmp(t[q].name, ri[i].in->name))
                    ri[i].next_tile = ri[i].done_tile = t[q].tile;
        free(t);
    }
    /* quotas: -runs split evenly over the instructions (rounded up, without overflow) */
    for (int i = 0; i < ni; i++)
        ri[i].quota = o->runs < 0 ? -1 : o->runs / ni + (o->runs % ni != 0);
    *out = ri;
    *nout = ni;
    return RUN_OK;
}

/* Write OUT/campaign.state with the tile counters of the campaign. */
static run_err save_state(const run_opts *o, const run_instr *ri, int ni, char *err, size_t errlen)
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
    run_err rc = run_state_write(o, t, ni, err, errlen);
    free(t);
    return rc;
}

/* ------------------------------------------------------------ the loop */

run_err run_loop(const run_opts *o, mf_device *dev, run_instr *ri, int ni, long long *mismatches)
{
    char err[700];
    run_err status = RUN_OK;
    /* a stop request from here on ends the run through the loop, which writes the state */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
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
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        if (!vis || !*vis)
            vis = getenv("HIP_VISIBLE_DEVICES");
        if (info->backend == MF_BACKEND_MODEL)
            snprintf(rs.gpu, sizeof rs.gpu, "%s (a model, no hardware)", info->name);
        else
            snprintf(rs.gpu, sizeof rs.gpu, "%s %s index %d%s%s", info->name, info->arch, info->index,
                     vis && *vis ? " visible-devices " : "", vis && *vis ? vis : "");
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
        size_t b6[6] = {t * ri[i].m * ri[i].k * mf_abi_elem_bytes(in->fa), t * ri[i].n * ri[i].k * mf_abi_elem_bytes(in->fb),
                        t * ri[i].m * ri[i].n * mf_abi_elem_bytes(in->fc), t * ri[i].m * S, t * ri[i].n * S,
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
    for (int q = 0; q < 3; q++)
        ok &= alloc_batch(&bufs[q], dev, bytes, maxtiles, want_bytes, o->jobs, o->campaign != NULL) == 0;
    if (!ok) {
        fprintf(stderr, "mmafuzz run: out of memory for the batch buffers\n");
        return RUN_ERR_NOMEM;
    }
    int nw = workers_count(wp);

    const mf_device_info *di = mf_device_get_info(dev);
    fprintf(stderr, "mmafuzz run: seed %llu, device %s (%s), %d instruction%s, %d model threads%s%s, mix %s, out %s\n",
            o->seed, di->name, di->arch, ni, ni == 1 ? "" : "s", nw, o->model ? ", model " : "", o->model ? o->model : "",
            o->mix_text, o->out);


    double t_start = rs_now(), last_save = t_start;
    /* a shard's state is written every 10 s, the longest interval a campaign allows (each checkpoint first flushes
     * the findings written since the last one; at 2 s this cost 10% of the H100's rate with 200 findings/s, at
     * 10 s 3%), and at the end; MMAFUZZ_CHECKPOINT_S overrides it (0 to 10: kill tests write it after every batch).
     * A plain run writes its index and state every 2 s. */
    double ckpt_s = o->campaign ? 10.0 : 2.0;
    if (o->campaign && getenv("MMAFUZZ_CHECKPOINT_S")) {
        ckpt_s = strtod(getenv("MMAFUZZ_CHECKPOINT_S"), NULL);
        if (!(ckpt_s >= 0 && ckpt_s <= 10))
            ckpt_s = 10.0;
    }
    if (o->no_sync)
        ckpt_s = 1e30;  /* no checkpoints: state and index at the end only */
    int rot = 0;               /* round-robin position */
    batch *ready = NULL;       /* generated, not yet run */
    batch *ran = NULL;         /* run, not yet evaluated */
    int nextbuf = 0;
    const char *why = "runs done";
    int dev_fail = 0;
    for (;;) {
        int stopping = g_stop || (o->max_time && rs_now() - t_start >= (double)o->max_time) || status;
        if (g_stop)
            why = "interrupted";
        else if (o->max_time && rs_now() - t_start >= (double)o->max_time)
            why = "time limit";
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
                gen->slot = (int)(r - ri);
                gen->in = r->in;
                gen->model = r->model;
                gen->m = r->m;
                gen->n = r->n;
                gen->k = r->k;
                gen->ntiles = nt;
                gen->nchunks = nt < CHUNKS ? nt : CHUNKS;
                gen->first_tile = r->next_tile;
                gen->tile_base = o->campaign ? (unsigned long long)o->shard_i : 0;
                gen->tile_stride = o->campaign ? (unsigned long long)o->shard_n : 1;
                r->next_tile += nt;
                if (r->quota > 0)
                    r->quota = r->quota > (long long)(nt * per) ? r->quota - (long long)(nt * per) : 0;
                const pool_entry **v = view + (size_t)(gen - bufs) * VIEW_CAP;
                gen->g = (gen_ctx){r->in, r->m, r->n, r->k, o->seed, o->mix, v, pool_view(&pl, r->in, v, VIEW_CAP),
                                   gen->A, gen->B, gen->C, gen->SA, gen->SB};
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
                                         ready->in->n_scales ? ready->SA : NULL, ready->in->n_scales ? ready->SB : NULL,
                                         ready->D, derr, sizeof derr);
            if (rc) {
                fprintf(stderr, "%smmafuzz run: device error: %s\n", rs.tty ? "\n" : "", derr);
                rs.per[ready->slot].dev_errors++;
                if (o->campaign) {  /* a shard's tiles are done in order: stop, resume runs the batch again */
                    status = RUN_ERR_DEVICE;
                    why = "device error";
                } else if (++dev_fail >= 3) {
                    fprintf(stderr, "mmafuzz run: three device errors in a row; stopping\n");
                    status = RUN_ERR_DEVICE;
                    why = "device errors";
                }
            } else {
                dev_fail = 0;
                run_ok = 1;
            }
            rs.per[ready->slot].device_s += rs_now() - t_dev;
        }
        workers_wait(wp);
        if (g_stop) {
            /* a stop request: the workers left their chunks unfinished, so the
             * batches in flight are dropped (their tiles are not counted as
             * done, and are generated again on resume) */
            why = "interrupted";
            ran = ready = NULL;
            continue;
        }
        if (ran && o->campaign) {
            /* file first, then count: the batch's tiles, cases and disagreements
             * enter the shard state together, after the findings */
            char newhex[CP_NCLASS][33];
            int stopped = 0;
            run_err he = handle_campaign(o, ri, ran, &st, &rs, dev, newhex, &stopped);
            if (he != RUN_OK) {
                status = he;
                why = he == RUN_ERR_STORE ? "store error" : he == RUN_ERR_DEVICE ? "device error" : "out of memory";
            } else if (!stopped) {
                rs_instr *ps = &rs.per[ran->slot];
                cp_istate *cs = &o->cstate->in[ri[ran->slot].cp];
                long long cases = (long long)ran->ntiles * ran->m * ran->n, mis = 0;
                for (size_t c = 0; c < ran->nchunks; c++) {
                    ps->model_s += ran->chunk_s[c];
                    mis += ran->nmis[c];
                    for (int k = 0; k < CP_NCLASS; k++)
                        cs->cls[k] += ran->ncls[c * CP_NCLASS + (size_t)k];
                }
                for (int k = 0; k < CP_NCLASS; k++)
                    if (newhex[k][0] && !cs->cls_hex[k][0])
                        snprintf(cs->cls_hex[k], sizeof cs->cls_hex[k], "%s", newhex[k]);
                ps->cases += cases;
                ps->tiles += (long long)ran->ntiles;
                ps->mismatches += mis;
                cs->cases += cases;
                cs->mismatches += mis;
                cs->done = ri[ran->slot].done_tile = ran->first_tile + ran->ntiles;
            } else {
                why = "interrupted";
                ready = NULL;
            }
            if (status == RUN_OK && rs_now() - last_save >= ckpt_s) {  /* findings' index, then the state */
                if (st_flush(&st, err, sizeof err)) {
                    fprintf(stderr, "mmafuzz run: %s\n", err);
                    status = RUN_ERR_STORE;
                    why = "store error";
                }
                run_err se = status == RUN_OK ? save_state(o, ri, ni, err, sizeof err) : RUN_OK;
                if (se != RUN_OK) {
                    fprintf(stderr, "mmafuzz run: %s\n", err);
                    status = se;
                    why = "store error";
                }
                last_save = rs_now();
            }
            rs_report(&rs, o->report_period, 0);
        } else if (ran) {
            rs_instr *ps = &rs.per[ran->slot];
            ps->cases += (long long)ran->ntiles * ran->m * ran->n;
            for (size_t c = 0; c < ran->nchunks; c++)
                ps->model_s += ran->chunk_s[c];
            ps->tiles += (long long)ran->ntiles;
            ri[ran->slot].done_tile = ran->first_tile + ran->ntiles;
            run_err he = handle_mismatches(o, ri, ran, &st, bs, &pl, &rs, dev);
            if (he != RUN_OK) {
                status = he;
                why = he == RUN_ERR_STORE ? "store error" : he == RUN_ERR_DEVICE ? "device error" : "out of memory";
            }
            if (rs_now() - last_save >= ckpt_s) {  /* index and state: every ckpt_s and at the end */
                if (st_flush(&st, err, sizeof err) || rf_buckets_flush(bs, err, sizeof err)) {
                    fprintf(stderr, "mmafuzz run: %s\n", err);
                    status = RUN_ERR_STORE;
                    why = "store error";
                }
                run_err se = save_state(o, ri, ni, err, sizeof err);
                if (se != RUN_OK) {
                    fprintf(stderr, "mmafuzz run: %s\n", err);
                    status = se;
                    why = "store error";
                }
                last_save = rs_now();
            }
            rs_report(&rs, o->report_period, 0);
        }
        ran = run_ok ? ready : NULL;
        ready = gen;
    }
    rs_report(&rs, o->report_period, 1);
    rs_summary(&rs, stdout, why);
    if (bs)
        printf("buckets: %lld seen, %lld new; %lld disagreements counted without a file\n", rf_buckets_seen(bs),
               rf_buckets_new(bs), rf_buckets_counted_only(bs));
    if (st_flush(&st, err, sizeof err) || (bs && rf_buckets_flush(bs, err, sizeof err))) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        if (status == RUN_OK)
            status = RUN_ERR_STORE;
    }
    run_err se = save_state(o, ri, ni, err, sizeof err);
    if (se != RUN_OK) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        if (status == RUN_OK)
            status = se;
    }
    *mismatches = rs_total(&rs, RS_MISMATCHES);
    if (rs_close(&rs) && status == RUN_OK)
        status = RUN_ERR_STORE;  /* stats.jsonl could not be written (message printed) */
    for (int i = 0; i < ni; i++)
        if (ri[i].z_ready)
            mz_dev_free(&ri[i].z);
    for (int q = 0; q < 3; q++)
        free_batch(&bufs[q], dev);
    workers_free(wp);
    pool_free(&pl);
    free(view);
    rf_buckets_close(bs);
    st_close(&st);
    free(rs.per);
    return status;
}
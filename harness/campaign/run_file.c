/*
 * run_file.c - counting a checked batch of `mmafuzz run` and filing its
 * disagreements (run_stage.h), for plain runs and campaign shards alike.
 *
 * Every disagreement is counted by bucket (buckets.h): a bucket depends on
 * the case alone, so a plain run counts into OUT/buckets.tsv and a shard
 * into its state, with one function.  The candidates for filing are the
 * disagreements a batch recorded; a policy chooses among them:
 *   - a plain run: the first of each signature class, then the rest in
 *     order, up to --minimize, each while its bucket has fewer than
 *     --per-bucket files from this process (rf_buckets_take);
 *   - a campaign shard: the definition's (the first of each class in a
 *     sampled tile, cp_tile_sampled, and the first of a class the shard has
 *     no finding of yet), a function of the tiles alone, so that shards
 *     file the same whatever the process runs; a stop request while filing
 *     drops the batch (it runs again on resume).
 * Each chosen one is then re-run, minimized and filed by one function.
 */
#include "run_stage.h"

#include <stdlib.h>
#include <string.h>

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

/* ------------------------------------------------------------ buckets */

/* The disagreements of batch b by bucket (every one: the counts are exact),
 * into OUT/buckets.tsv (a plain run) or the shard's state (--campaign: its
 * room made first), the buckets new to them described. */
static run_err count_buckets(loop_ctx *L, batch *b)
{
    const run_opts *o = L->o;
    const int cp = L->ri[b->slot].cp;
    for (size_t c = 0; c < b->nchunks; c++)
        for (size_t q = 0; q < b->tl[c].n; q++) {
            const tally_e *e = &b->tl[c].e[q];
            rf_bucket bk;
            memset(&bk, 0, sizeof bk);
            snprintf(bk.id, sizeof bk.id, "%016llx", (unsigned long long)e->id);
            int known = L->bs ? rf_buckets_known(L->bs, bk.id) : cp_state_bucket_find(o->cstate, cp, bk.id) >= 0;
            if (!known)
                tally_describe(b, e, &bk);
            if (!L->bs) {
                cp_state_bucket_add(o->cstate, cp, bk.id, e->n, bk.words);  /* cannot fail: room made */
                continue;
            }
            int is_new = 0;
            if (rf_buckets_count(L->bs, b->in->name, &bk, e->n, &is_new))
                return RUN_ERR_NOMEM;
            if (is_new && o->verbose)
                fprintf(stderr, "%sNEW bucket %s %s: %s\n", L->rs->tty ? "\n" : "", bk.id, b->in->name, bk.words);
        }
    if (L->bs) {
        L->rs->buckets_seen = rf_buckets_seen(L->bs);
        L->rs->buckets_new = rf_buckets_new(L->bs);
    } else {  /* the status line's buckets: the shard's, and those this process added */
        L->rs->buckets_seen = (long long)o->cstate->nbk;
        L->rs->buckets_new = L->rs->buckets_seen - L->bk_at_start;
    }
    return RUN_OK;
}

/* ------------------------------------------------------------ choosing */

/* A plain run: the first of each signature class first, then the rest in
 * index order, up to o->minimize, each only while its bucket has fewer than
 * o->per_bucket files from this process. */
static void choose_by_bucket(loop_ctx *L, batch *b, const rec *cand, size_t n, unsigned char *chosen)
{
    rf_bucket bk;
    long long budget = L->o->minimize;
    const char *seen[16];
    int nseen = 0;
    for (size_t q = 0; q < n && budget > 0; q++) {  /* one per signature class */
        const char *sig = rv_signature(b->in->fd, cand[q].dev, cand[q].model);
        int known = 0;
        for (int s = 0; s < nseen; s++)
            known |= !strcmp(seen[s], sig);
        if (!known && nseen < 16) {
            seen[nseen++] = sig;
            memset(&bk, 0, sizeof bk);
            snprintf(bk.id, sizeof bk.id, "%016llx", (unsigned long long)cand[q].bk);
            if (rf_buckets_take(L->bs, &bk)) {
                chosen[q] = 1;
                budget--;
            }
        }
    }
    for (size_t q = 0; q < n && budget > 0; q++) {
        if (chosen[q])
            continue;
        memset(&bk, 0, sizeof bk);
        snprintf(bk.id, sizeof bk.id, "%016llx", (unsigned long long)cand[q].bk);
        if (rf_buckets_take(L->bs, &bk)) {
            chosen[q] = 1;
            budget--;
        }
    }
}

/* --campaign: the definition's policy, on the first mismatch of each class
 * in each tile (cand, in tile order): all of a tile's when the tile is
 * sampled (cp_tile_sampled: a function of the tile alone), and the first
 * one of a class the shard has no finding of yet. */
static void choose_by_sample(loop_ctx *L, batch *b, const rec *cand, size_t n, unsigned char *chosen)
{
    const cp_istate *cs = &L->o->cstate->in[L->ri[b->slot].cp];
    int tried[CP_NCLASS] = {0};
    int sampled = 0;
    for (size_t q = 0; q < n; q++) {
        if (q == 0 || cand[q].tile != cand[q - 1].tile)
            sampled = cp_tile_sampled(L->o->def, b->in->name, cand[q].tile);
        int wanted = !cs->cls_hex[cand[q].cls][0] && !tried[cand[q].cls];
        if (sampled || wanted) {
            chosen[q] = 1;
            tried[cand[q].cls] = 1;
        }
    }
}

/* ------------------------------------------------------------ filing */

/* What filing the chosen candidates gave. */
typedef struct filed {
    char (*hex)[33];   /* per candidate: the finding's hash ("" when none was filed) */
    mf_case *adds;     /* NULL, or room for two cases per chosen candidate: cases for the mutation pool */
    size_t nadd;
    int stopped;       /* a stop request came */
} filed;

/* Re-run, minimize and file each chosen candidate of batch b, in order.
 * A stop request ends the filing (f->stopped); with drop_on_stop also one
 * that comes while a candidate is handled (its finding is then not
 * counted: the batch runs again on resume).  @return RUN_OK, or
 * RUN_ERR_STORE / RUN_ERR_DEVICE (device errors of a candidate are counted,
 * and the filing goes on). */
static run_err file_chosen(loop_ctx *L, batch *b, const rec *cand, size_t n, const unsigned char *chosen,
                           int drop_on_stop, filed *f)
{
    const run_opts *o = L->o;
    rs_instr *ps = &L->rs->per[b->slot];
    run_instr *r = &L->ri[b->slot];
    f->stopped = 0;
    f->nadd = 0;
    for (size_t q = 0; q < n; q++) {
        f->hex[q][0] = 0;
        if (!chosen[q] || f->stopped)
            continue;
        if (g_stop) {
            f->stopped = 1;  /* the rest of the batch's mismatches stay counted, not filed */
            continue;
        }
        if (minimizer_ready(r, L->dev))
            return RUN_ERR_DEVICE;
        const rec *c = &cand[q];
        mf_case orig;
        gen_kind gk = batch_case(b, c->tile, c->i, c->j, &orig);
        mm_origin origin = {o->device, o->seed, (long long)(c->tile * (unsigned long long)(b->m * b->n)) +
                                                     c->i * b->n + c->j,
                            (long long)c->tile, c->i, c->j, b->m, b->n, gen_name(gk)};
        mm_outcome out;
        char err[700];
        double t_handle = rs_now();
        mm_err me = mm_handle(L->st, &r->z, &orig, c->dev, &origin, &out, err, sizeof err);
        if (me == MM_STOPPED || (drop_on_stop && g_stop)) {
            f->stopped = 1;
            continue;
        }
        if (me != MM_OK) {
            fprintf(stderr, "%smmafuzz run: %s\n", L->rs->tty ? "\n" : "", err);
            if (me == MM_ERR_STORE)
                return RUN_ERR_STORE;  /* store errors end the run; device errors are counted */
            ps->dev_errors++;
            continue;
        }
        fs_fault("finding.filed", 1);  /* a kill test's window: filed, not yet counted by the state */
        count_handled(ps, rs_now() - t_handle, &out);
        snprintf(f->hex[q], sizeof f->hex[q], "%s", out.hex);
        if (f->adds) {
            if (out.kind == MZ_REPEATS)
                f->adds[f->nadd++] = out.res.cs;
            f->adds[f->nadd++] = orig;
        }
        if (out.is_new)
            ps->new_files++;
        st_entry *e = st_find(L->st, out.hex);
        if (e && !e->run_seen) {
            e->run_seen = 1;
            ps->unique++;
            if (o->verbose)
                fprintf(stderr, "%s%s %s %s%s\n", L->rs->tty ? "\n" : "", out.is_new ? "NEW " : "seen", out.sig,
                        out.path, out.kind == MZ_REPEATS ? "" : " (not minimized)");
        }
    }
    return RUN_OK;
}

/* Room for n candidates' choices and hashes. */
static int filing_alloc(size_t n, unsigned char **chosen, filed *f)
{
    memset(f, 0, sizeof *f);
    *chosen = calloc(n ? n : 1, 1);
    f->hex = calloc(n ? n : 1, sizeof *f->hex);
    return *chosen && f->hex ? 0 : -1;
}

static void filing_free(unsigned char *chosen, filed *f)
{
    free(chosen);
    free(f->hex);
    free(f->adds);
}

/* ------------------------------------------------------------ accounting */

/* --campaign: file first, then count: the batch's tiles, cases and
 * disagreements enter the shard state together, after the findings; a stop
 * request while filing leaves the batch uncounted (L->stopped). */
static run_err account_shard(loop_ctx *L, batch *b, const rec *list, size_t nlist, const long long ncls[CP_NCLASS],
                             long long mis, double model_s)
{
    const run_opts *o = L->o;
    rs_instr *ps = &L->rs->per[b->slot];
    run_instr *r = &L->ri[b->slot];
    cp_istate *cs = &o->cstate->in[r->cp];
    unsigned char *chosen;
    filed f;
    if (filing_alloc(nlist, &chosen, &f)) {
        filing_free(chosen, &f);
        return RUN_ERR_NOMEM;
    }
    choose_by_sample(L, b, list, nlist, chosen);
    run_err rc = file_chosen(L, b, list, nlist, chosen, 1, &f);
    L->stopped = rc == RUN_OK && f.stopped;
    char newhex[CP_NCLASS][33];  /* a finding of each class the shard had none of */
    memset(newhex, 0, sizeof newhex);
    for (size_t q = 0; q < nlist; q++)
        if (f.hex[q][0] && !newhex[list[q].cls][0])
            memcpy(newhex[list[q].cls], f.hex[q], sizeof newhex[0]);
    filing_free(chosen, &f);
    if (rc != RUN_OK || L->stopped)
        return rc;
    /* room for the batch's buckets first: its counts enter the state all together or not at all */
    size_t most = 0;
    int oom = 0;
    for (size_t c = 0; c < b->nchunks; c++) {
        most += b->tl[c].n;
        oom |= b->tl[c].oom;
    }
    if (oom || cp_state_bucket_reserve(o->cstate, most))
        return RUN_ERR_NOMEM;
    for (int k = 0; k < CP_NCLASS; k++) {
        cs->cls[k] += ncls[k];
        if (newhex[k][0] && !cs->cls_hex[k][0]) {
            _Static_assert(sizeof cs->cls_hex[k] == sizeof newhex[k], "one hash size");
            memcpy(cs->cls_hex[k], newhex[k], sizeof cs->cls_hex[k]);
        }
    }
    count_buckets(L, b);  /* into the same state (cannot fail: room made) */
    long long cases = (long long)b->ntiles * b->m * b->n;
    ps->model_s += model_s;
    ps->cases += cases;
    ps->tiles += (long long)b->ntiles;
    ps->mismatches += mis;
    cs->cases += cases;
    cs->mismatches += mis;
    cs->done = r->done_tile = b->first_tile + b->ntiles;
    return RUN_OK;
}

/* A plain run: count the batch, its disagreements by bucket in
 * OUT/buckets.tsv (before any filing), then file the recorded ones (the
 * first REC_PER_CHUNK of each chunk, the first GPU_RECS of a GPU call) and
 * add the filed cases to the mutation pool at the end. */
static run_err account_plain(loop_ctx *L, batch *b, double model_s)
{
    const run_opts *o = L->o;
    rs_instr *ps = &L->rs->per[b->slot];
    run_instr *r = &L->ri[b->slot];
    ps->cases += (long long)b->ntiles * b->m * b->n;
    ps->model_s += model_s;
    ps->tiles += (long long)b->ntiles;
    r->done_tile = b->first_tile + b->ntiles;
    long long total = 0;
    size_t n = 0;
    for (size_t c = 0; c < b->nchunks; c++) {
        total += b->nmis[c];
        if (b->tl[c].oom)
            return RUN_ERR_NOMEM;
        n += (size_t)b->nrec[c];
    }
    ps->mismatches += total;
    if (!total)
        return RUN_OK;
    run_err rc = count_buckets(L, b);
    if (rc != RUN_OK || !o->minimize)
        return rc;
    rec *all = malloc((n ? n : 1) * sizeof *all);
    unsigned char *chosen;
    filed f;
    if (filing_alloc(n, &chosen, &f) || !all) {
        free(all);
        filing_free(chosen, &f);
        return RUN_ERR_NOMEM;
    }
    size_t q = 0, nchosen = 0;
    for (size_t c = 0; c < b->nchunks; c++)
        for (int k = 0; k < b->nrec[c]; k++)
            all[q++] = b->recs[c * REC_PER_CHUNK + (size_t)k];
    choose_by_bucket(L, b, all, n, chosen);
    for (q = 0; q < n; q++)
        nchosen += chosen[q];
    f.adds = malloc(2 * nchosen * sizeof *f.adds + 1);  /* each filed one: its case, and its minimized case */
    rc = f.adds ? file_chosen(L, b, all, n, chosen, 0, &f) : RUN_ERR_NOMEM;
    /* the cases for the mutation pool, added at the end: the batch's own
     * tiles are generated from the pool as it was (a batch checked on the
     * GPU is generated again on the host, case by case).  --dump-disagreements
     * keeps the starting pool, as a campaign does: the tiles are then a
     * function of (seed, tile, corpus) alone, and the dumps of --verify gpu
     * and --verify host compare.  Otherwise the cases filed here, which
     * depend on how the path groups its candidates (the first REC_PER_CHUNK
     * of each host chunk, the first GPU_RECS of a GPU call), would change
     * later tiles of every row sharing the pool. */
    for (size_t k = 0; k < f.nadd && !o->dump; k++)
        pool_add(L->pl, b->in, &f.adds[k]);
    free(all);
    filing_free(chosen, &f);
    return rc;
}

void account_batch(loop_ctx *L, batch *b, const rec *list, size_t nlist, const long long ncls[CP_NCLASS],
                   long long mis, double model_s)
{
    L->stopped = 0;
    run_err rc = L->o->campaign ? account_shard(L, b, list, nlist, ncls, mis, model_s) : account_plain(L, b, model_s);
    if (rc != RUN_OK)
        loop_fail(L, rc);
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

void account_host_batch(loop_ctx *L, batch *b)
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

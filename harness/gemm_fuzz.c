/*
 * gemm_fuzz.c - `mmafuzz gemm -runs N` (or -max_total_time): whole cuBLASLt
 * GEMM calls fuzzed on the GPU against the kernel model (docs/kernels.md,
 * "Fuzzing GEMM calls").
 *
 * Each round draws a type, a shape (M, N and K from the user's lists, a
 * quarter of them moved by -7..+7: odd sizes), an algorithm of the heuristic's list and an
 * operand kind (devices/mf_kcheck.h), makes `calls` calls' operands on the
 * GPU, runs them, and checks every output on the GPU against the kernel
 * model of that (type, shape, algorithm).  The first model of a
 * configuration is the guess derived from the algorithm's attributes
 * (mf_ktable_guess); when it disagrees, the kernel model's parameters are searched
 * on the GPU, on the same calls, nearest first (fewest parameters changed),
 * and the disagreement goes to the bucket named by what changed ("split 1 ->
 * 3"), or to "unexplained".  The first disagreement of each bucket is
 * minimized (the output's row of A and column of B only, then the fewest
 * nonzero K positions that still disagree, each candidate run on the GPU)
 * and filed as a recording named by its xxHash under OUT/findings/.
 */
#include "gemm_fuzz.h"

#include "json.h"
#include "kernel_table.h"
#include "mf_gemm.h"
#include "mf_kcheck.h"
#include "npz.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

enum { MAX_CONFIGS = 4096, MAX_BUCKETS = 256, MAX_CANDIDATES = 4000 };

typedef struct gf_config {
    int type;
    int64_t m, n, k;
    int algo;
    mf_gemm_algo info;
    mf_kernel guess, model;   /* model: the one that explained every call so far */
    int fitted;               /* 1: model came from a search; -1: nothing explained it */
} gf_config;

typedef struct gf_bucket {
    char key[192];
    uint64_t calls, outputs;
    char file[64];
} gf_bucket;

typedef struct gf_state {
    const gemm_fuzz_opts *o;
    mf_gemm *h;
    gf_config cfg[MAX_CONFIGS];
    int ncfg;
    gf_bucket bk[MAX_BUCKETS];
    int nbk;
    uint64_t rounds, calls, outputs, steps, differ;
    uint64_t check_steps;   /* every check's steps, the parameter searches' too */
    double check_s;
} gf_state;

static uint64_t gf_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A size from list v[0..n): a quarter of the draws move it by -7..+7 (odd
 * sizes near the listed ones), never below 1. */
static int64_t draw_size(uint64_t r, const int64_t *v, int n)
{
    int64_t x = v[r % (uint64_t)n];
    if (((r >> 20) & 3) == 0) {
        x += (int64_t)((r >> 24) % 15) - 7;
        x = x < 1 ? 1 : x;
    }
    return x;
}

static size_t ebytes(mf_format f) { return f == MF_FMT_TF32 ? 4 : (size_t)mf_tile_elem_bytes(f); }

/* The parameters that differ between two models, as "split 1 -> 3, reduce serial -> tree". */
static void model_diff(const mf_kernel *a, const mf_kernel *b, char *out, size_t len)
{
    static const char *rule[] = {"ceil", "balanced"}, *red[] = {"serial", "tree"};
    size_t n = 0;
    out[0] = 0;
#define GF_ADD(...)                                                                                                  \
    do {                                                                                                             \
        if (n < len)                                                                                                 \
            n += (size_t)snprintf(out + n, len - n, "%s", n ? ", " : "");                                            \
        if (n < len)                                                                                                 \
            n += (size_t)snprintf(out + n, len - n, __VA_ARGS__);                                                    \
    } while (0)
    if (a->bk != b->bk)
        GF_ADD("bk %u -> %u", a->bk, b->bk);
    if (a->split != b->split)
        GF_ADD("split %u -> %u", a->split, b->split);
    if (a->split_rule != b->split_rule && b->split > 1)
        GF_ADD("split_rule %s -> %s", rule[a->split_rule], rule[b->split_rule]);
    if (a->reduce != b->reduce && b->split > 2)
        GF_ADD("reduce %s -> %s", red[a->reduce], red[b->reduce]);
    if (a->promote != b->promote)
        GF_ADD("promote %u -> %u", a->promote, b->promote);
#undef GF_ADD
    if (!out[0])
        snprintf(out, len, "none");
}

/* Candidate models around g, nearest first: one parameter changed, then two,
 * then three.  @return how many were written to c[]. */
static int candidates(const mf_kernel *g, int64_t K, mf_kernel *c, int max)
{
    const uint32_t ik = g->in->k;
    uint32_t bks[8], nb = 0;
    const uint32_t try_bk[] = {g->bk, 32, 64, 128, 256, 512};
    for (int i = 0; i < 6; i++) {
        uint32_t b = try_bk[i];
        int dup = b % ik != 0;
        for (uint32_t j = 0; j < nb; j++)
            dup |= bks[j] == b;
        if (!dup)
            bks[nb++] = b;
    }
    const int fp8 = g->in->fa == MF_FMT_E4M3 || g->in->fa == MF_FMT_E5M2;
    const uint32_t promos[] = {g->promote, 0, 1, 2, 4, 8};
    const int npromo = fp8 ? 6 : 1;
    int n = 0;
    for (int dist = 1; dist <= 4 && n < max; dist++)
        for (uint32_t bi = 0; bi < nb; bi++)
            for (int pi = 0; pi < npromo; pi++) {
                const uint32_t iters = (uint32_t)((K + bks[bi] - 1) / bks[bi]);
                const uint32_t smax = iters < 64 ? iters : 64;
                for (uint32_t s = 1; s <= smax; s++)
                    for (int rule = 0; rule < 2; rule++)
                        for (int red = 0; red < 2; red++) {
                            if (s == 1 && (rule || red))
                                continue;
                            if (s == 2 && red)
                                continue;
                            mf_kernel k = *g;
                            k.bk = bks[bi];
                            k.promote = promos[pi];
                            k.split = s;
                            k.split_rule = (uint8_t)rule;
                            k.reduce = (uint8_t)red;
                            const int d = (k.bk != g->bk) + (k.promote != g->promote) + (k.split != g->split) +
                                          (k.split > 1 && k.split_rule != g->split_rule) +
                                          (k.split > 2 && k.reduce != g->reduce);
                            if (d != dist || (pi && promos[pi] == g->promote) || (bi && bks[bi] == g->bk) ||
                                mf_kernel_check(&k))
                                continue;
                            if (n < max)
                                c[n++] = k;
                        }
            }
    return n;
}

typedef struct gf_round {
    mf_gemm_desc d;
    int calls;
    void *dA, *dB, *dD;
    size_t abytes, bbytes, dbytes;
} gf_round;

static int run_calls(gf_state *S, const gf_round *r, int algo, char *err, size_t el)
{
    const size_t a1 = r->abytes / (size_t)r->calls, b1 = r->bbytes / (size_t)r->calls, d1 = r->dbytes / (size_t)r->calls;
    for (int c = 0; c < r->calls; c++)
        if (mf_gemm_run(S->h, &r->d, algo, (const char *)r->dA + c * a1, (const char *)r->dB + c * b1,
                        (char *)r->dD + c * d1, NULL, err, el))
            return -1;
    return mf_gemm_sync(S->h, NULL, err, el);
}

/* Check `calls` calls of round r from call `first` against kr on the GPU. */
static int check_from(gf_state *S, const gf_round *r, const mf_kernel *kr, int first, int calls, mf_kcheck_result *res,
                      char *err, size_t el)
{
    const size_t a1 = r->abytes / (size_t)r->calls, b1 = r->bbytes / (size_t)r->calls, d1 = r->dbytes / (size_t)r->calls;
    mf_kcheck_job j = {kr, r->d.m, r->d.n, r->d.k, calls, r->d.b_colmajor, (const char *)r->dA + (size_t)first * a1,
                       (const char *)r->dB + (size_t)first * b1, (const char *)r->dD + (size_t)first * d1};
    const double t0 = now_s();
    int rc = mf_kcheck_run(&j, res, NULL, err, el);
    S->check_s += now_s() - t0;
    S->check_steps += rc ? 0 : res->steps;
    return rc;
}

static int check(gf_state *S, const gf_round *r, const mf_kernel *kr, int calls, mf_kcheck_result *res, char *err,
                 size_t el)
{
    return check_from(S, r, kr, 0, calls, res, err, el);
}

/* Minimize the disagreement of output (i, j) of call c of round r against
 * model kr: only A's row i and B's column j kept, then K positions zeroed
 * (both operands) while the output still disagrees; filed under OUT.
 * @return 0 (file named in *name), or -1. */
static int minimize_and_file(gf_state *S, gf_round *r, const gf_config *cf, const mf_kernel *kr, int c, uint32_t i,
                             uint32_t j, const char *bucket, char *name, size_t nlen, char *err, size_t el)
{
    const int64_t M = r->d.m, N = r->d.n, K = r->d.k > 0 ? r->d.k : 1;
    const size_t ea = ebytes(r->d.a), eb = ebytes(r->d.b), ed = ebytes(r->d.d);
    const size_t a1 = (size_t)(M * K) * ea, b1 = (size_t)(K * N) * eb;
    unsigned char *A = calloc(1, a1), *B = calloc(1, b1), *rowA = malloc((size_t)K * ea), *colB = malloc((size_t)K * eb);
    unsigned char *D = malloc((size_t)(M * N) * ed);
    uint8_t *keep = malloc((size_t)K), *save = malloc((size_t)K);
    const double deadline = now_s() + 30;   /* a minimization's budget: what is left then is filed */
    int rc = -1;
    if (!A || !B || !rowA || !colB || !D || !keep || !save) {
        snprintf(err, el, "out of memory");
        goto out;
    }
    /* the call's operands back from the GPU: row i of A and column j of B */
    if (mf_gemm_download(S->h, rowA, (const char *)r->dA + (size_t)c * a1 + (size_t)i * (size_t)K * ea, (size_t)K * ea,
                         err, el))
        goto out;
    {
        unsigned char *Bc = malloc(b1);
        if (!Bc || mf_gemm_download(S->h, Bc, (const char *)r->dB + (size_t)c * b1, b1, err, el)) {
            free(Bc);
            goto out;
        }
        for (int64_t k = 0; k < K; k++) {
            const size_t at = r->d.b_colmajor ? (size_t)(j * K + k) : (size_t)(k * N + j);
            memcpy(colB + (size_t)k * eb, Bc + at * eb, eb);
        }
        free(Bc);
    }
    memset(keep, 1, (size_t)K);
    /* one trial: the kept positions of row i / column j on the GPU (call 0 of
     * the round's buffers), output (i, j) against kr; 1 if it disagrees */
#define GF_TRY(result)                                                                                               \
    do {                                                                                                             \
        memset(A, 0, a1);                                                                                            \
        memset(B, 0, b1);                                                                                            \
        for (int64_t k = 0; k < K; k++)                                                                              \
            if (keep[k]) {                                                                                           \
                memcpy(A + ((size_t)i * (size_t)K + (size_t)k) * ea, rowA + (size_t)k * ea, ea);                     \
                const size_t at = r->d.b_colmajor ? (size_t)(j * K + k) : (size_t)(k * N + j);                       \
                memcpy(B + at * eb, colB + (size_t)k * eb, eb);                                                      \
            }                                                                                                        \
        mf_kcheck_result res_;                                                                                       \
        if (mf_gemm_upload(S->h, r->dA, A, a1, err, el) || mf_gemm_upload(S->h, r->dB, B, b1, err, el) ||           \
            mf_gemm_run(S->h, &r->d, cf->algo, r->dA, r->dB, r->dD, NULL, err, el) ||                                \
            mf_gemm_sync(S->h, NULL, err, el) || check(S, r, kr, 1, &res_, err, el))                                 \
            goto out;                                                                                                \
        result = 0;                                                                                                  \
        for (int q = 0; q < res_.nmiss; q++)                                                                         \
            result |= res_.miss[q].i == i && res_.miss[q].j == j;                                                    \
    } while (0)
    int bad;
    GF_TRY(bad);
    if (!bad) {
        snprintf(err, el, "the disagreement did not survive keeping only its row and column");
        goto out;
    }
    /* delta debugging over the kept positions: drop chunks, halving */
    for (int64_t chunk = K / 2; chunk >= 1; chunk /= 2) {
        for (int64_t s = 0; s < K; s += chunk) {
            int any = 0;
            for (int64_t k = s; k < s + chunk && k < K; k++)
                any |= keep[k];
            if (!any)
                continue;
            memcpy(save, keep, (size_t)K);
            for (int64_t k = s; k < s + chunk && k < K; k++)
                keep[k] = 0;
            GF_TRY(bad);
            if (!bad)   /* needed: put it back */
                memcpy(keep, save, (size_t)K);
            if (now_s() > deadline)
                break;
        }
        if (now_s() > deadline)
            break;
    }
    GF_TRY(bad);
#undef GF_TRY
    if (!bad) {
        snprintf(err, el, "minimization lost the disagreement");
        goto out;
    }
    if (mf_gemm_download(S->h, D, r->dD, (size_t)(M * N) * ed, err, el))
        goto out;
    {
        int64_t nz = 0;
        for (int64_t k = 0; k < K; k++)
            nz += keep[k];
        char model[512], guess[512];
        mf_kernel_format(kr, guess, sizeof guess);
        model[0] = 0;
        if (cf->fitted == 1)
            mf_kernel_format(&cf->model, model, sizeof model);
        char *hdr = NULL;
        size_t hl = 0;
        FILE *f = open_memstream(&hdr, &hl);
        if (!f)
            goto out;
        fprintf(f, "{\"format\": \"mmafuzz-recording\", \"version\": 1, \"op\": \"cublasLtMatmul\", \"m\": %lld, "
                   "\"n\": %lld, \"k\": %lld, \"a_format\": \"%s\", \"b_format\": \"%s\", \"d_format\": \"%s\", ",
                (long long)M, (long long)N, (long long)K, mf_format_get(r->d.a)->name, mf_format_get(r->d.b)->name,
                mf_format_get(r->d.d)->name);
        fprintf(f, "\"flags\": {\"algo\": %d, \"b_colmajor\": %s, \"fast_accum\": %s}, \"kernels\": [], ", cf->algo,
                r->d.b_colmajor ? "true" : "false", r->d.fast_accum ? "true" : "false");
        fprintf(f, "\"cublaslt\": {\"algo\": {\"index\": %d, \"algo_id\": %d, \"tile\": \"%s\", \"stages\": \"%s\", "
                   "\"splitk_num\": %d, \"reduction_scheme\": %u}}, ",
                cf->algo, cf->info.algo_id, cf->info.tile, cf->info.stages, cf->info.splitk_num,
                cf->info.reduction_scheme);
        fprintf(f, "\"finding\": {\"bucket\": ");
        json_put_str(f, bucket);
        fprintf(f, ", \"output\": [%u, %u], \"nonzero_k\": %lld, \"disagrees_with\": ", i, j, (long long)nz);
        json_put_str(f, guess);
        fprintf(f, ", \"explained_by\": ");
        json_put_str(f, model);
        fprintf(f, "}}");
        fclose(f);
        unsigned char *Dv = malloc(ed);
        if (!Dv) {
            free(hdr);
            goto out;
        }
        memcpy(Dv, D + ((size_t)i * (size_t)N + j) * ed, ed);
        int64_t rows[1] = {i}, cols[1] = {j};
        npz_array arr[6];
        memset(arr, 0, sizeof arr);
        arr[0] = (npz_array){.kind = 'u', .width = 1, .ndim = 1, .shape = {hl, 1}, .count = hl, .data = hdr};
        snprintf(arr[0].name, sizeof arr[0].name, "header");
        arr[1] = (npz_array){.kind = 'u', .width = (int)ea, .ndim = 2, .shape = {(uint64_t)M, (uint64_t)K},
                             .count = (uint64_t)(M * K), .data = A};
        snprintf(arr[1].name, sizeof arr[1].name, "a");
        /* b is K x N row-major in a recording whatever the call's layout */
        unsigned char *Bk = r->d.b_colmajor ? calloc(1, b1) : B;
        if (!Bk) {
            free(Dv);
            free(hdr);
            goto out;
        }
        if (r->d.b_colmajor)
            for (int64_t k = 0; k < K; k++)
                memcpy(Bk + (size_t)(k * N + j) * eb, B + (size_t)(j * K + k) * eb, eb);
        arr[2] = (npz_array){.kind = 'u', .width = (int)eb, .ndim = 2, .shape = {(uint64_t)K, (uint64_t)N},
                             .count = (uint64_t)(K * N), .data = Bk};
        snprintf(arr[2].name, sizeof arr[2].name, "b");
        arr[3] = (npz_array){.kind = 'u', .width = (int)ed, .ndim = 2, .shape = {1, 1}, .count = 1, .data = Dv};
        snprintf(arr[3].name, sizeof arr[3].name, "d");
        arr[4] = (npz_array){.kind = 'i', .width = 8, .ndim = 1, .shape = {1, 1}, .count = 1, .data = rows};
        snprintf(arr[4].name, sizeof arr[4].name, "d_rows");
        arr[5] = (npz_array){.kind = 'i', .width = 8, .ndim = 1, .shape = {1, 1}, .count = 1, .data = cols};
        snprintf(arr[5].name, sizeof arr[5].name, "d_cols");
        /* the name: xxHash of the header and the kept operands */
        XXH64_state_t *x = XXH64_createState();
        XXH64_reset(x, 0);
        XXH64_update(x, hdr, hl);
        XXH64_update(x, rowA, (size_t)K * ea);
        XXH64_update(x, keep, (size_t)K);
        const unsigned long long hash = XXH64_digest(x);
        XXH64_freeState(x);
        char dir[4096], path[4200];
        snprintf(dir, sizeof dir, "%s/findings", S->o->out);
        mkdir(S->o->out, 0777);
        mkdir(dir, 0777);
        snprintf(name, nlen, "%016llx.npz", hash);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        struct stat st;
        rc = stat(path, &st) == 0 ? 0 : npz_write(path, arr, 6, err, el);
        if (Bk != B)
            free(Bk);
        free(Dv);
        free(hdr);
    }
out:
    free(A);
    free(B);
    free(rowA);
    free(colB);
    free(D);
    free(keep);
    free(save);
    return rc;
}

static gf_bucket *bucket(gf_state *S, const char *key)
{
    for (int b = 0; b < S->nbk; b++)
        if (!strcmp(S->bk[b].key, key))
            return &S->bk[b];
    if (S->nbk == MAX_BUCKETS)
        return NULL;
    gf_bucket *b = &S->bk[S->nbk++];
    memset(b, 0, sizeof *b);
    snprintf(b->key, sizeof b->key, "%s", key);
    return b;
}

static volatile sig_atomic_t gf_stop;
static void on_signal(int s)
{
    (void)s;
    gf_stop = 1;
}

int gemm_fuzz(const gemm_fuzz_opts *o)
{
    char err[512];
    gf_state *S = calloc(1, sizeof *S);
    if (!S) {
        fprintf(stderr, "mmafuzz gemm: out of memory\n");
        return 2;
    }
    S->o = o;
    S->h = mf_gemm_open(o->device, err, sizeof err);
    if (!S->h) {
        fprintf(stderr, "mmafuzz gemm: %s\n", err);
        free(S);
        return o->require_gpu ? 1 : 77;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    const double t0 = now_s();
    double last = t0;
    int rc = 0;
    /* buffers for the largest round: budget bytes per operand */
    const size_t budget = (size_t)o->mem_mib << 20;
    void *dA = mf_gemm_alloc(S->h, budget, err, sizeof err), *dB = mf_gemm_alloc(S->h, budget, err, sizeof err);
    void *dD = mf_gemm_alloc(S->h, budget, err, sizeof err);
    if (!dA || !dB || !dD) {
        fprintf(stderr, "mmafuzz gemm: %s\n", err);
        rc = 1;
        goto done;
    }
    for (uint64_t round = 0; !gf_stop; round++) {
        if (o->runs && S->calls >= o->runs)
            break;
        if (o->max_time > 0 && now_s() - t0 >= o->max_time)
            break;
        const uint64_t r = gf_mix(o->seed * 0x100000001B3ull + round);
        gf_round R;
        memset(&R, 0, sizeof R);
        const int t = (int)(r % (uint64_t)o->ntypes);
        R.d.a = R.d.b = o->types_in[t];
        R.d.d = o->types_out[t];
        R.d.b_colmajor = R.d.a == MF_FMT_E4M3 || R.d.a == MF_FMT_E5M2 ? 1 : (int)((r >> 5) & 1);
        R.d.m = draw_size(gf_mix(r + 1), o->ms, o->nms);
        R.d.n = draw_size(gf_mix(r + 2), o->ns, o->nns);
        R.d.k = draw_size(gf_mix(r + 3), o->ks, o->nks);
        if (mf_gemm_check(&R.d))
            continue;
        mf_gemm_algo al[MF_GEMM_MAX_ALGOS];
        const int na = mf_gemm_algos(S->h, &R.d, al, o->algos, NULL, err, sizeof err);
        if (na < 1)
            continue;
        const int algo = (int)((r >> 40) % (uint64_t)na);
        /* the configuration and its model */
        gf_config *cf = NULL;
        for (int i = 0; i < S->ncfg; i++)
            if (S->cfg[i].type == t && S->cfg[i].m == R.d.m && S->cfg[i].n == R.d.n && S->cfg[i].k == R.d.k &&
                S->cfg[i].algo == algo)
                cf = &S->cfg[i];
        if (!cf) {
            if (S->ncfg == MAX_CONFIGS)
                S->ncfg = 0;   /* forget the oldest: they are found again */
            cf = &S->cfg[S->ncfg++];
            memset(cf, 0, sizeof *cf);
            cf->type = t;
            cf->m = R.d.m;
            cf->n = R.d.n;
            cf->k = R.d.k;
            cf->algo = algo;
            cf->info = al[algo];
            if (mf_ktable_guess(R.d.a, R.d.b, R.d.d, al[algo].splitk_num, R.d.fast_accum, &cf->guess)) {
                S->ncfg--;
                continue;
            }
            cf->model = cf->guess;
        }
        const size_t a1 = (size_t)(R.d.m * R.d.k) * ebytes(R.d.a), b1 = (size_t)(R.d.k * R.d.n) * ebytes(R.d.b),
                     d1 = (size_t)(R.d.m * R.d.n) * ebytes(R.d.d);
        size_t calls = budget / (a1 > b1 ? (a1 > d1 ? a1 : d1) : (b1 > d1 ? b1 : d1));
        const size_t want = (size_t)1 << 20;   /* outputs a round: enough threads to fill the GPU */
        const size_t fill = (want + (size_t)(R.d.m * R.d.n) - 1) / (size_t)(R.d.m * R.d.n);
        calls = calls < fill ? calls : fill;
        calls = calls < 256 ? calls : 256;
        if (o->runs && calls > o->runs / 16 + 1)   /* a -runs budget spans at least 16 rounds */
            calls = (size_t)(o->runs / 16 + 1);
        if (o->runs && calls > o->runs - S->calls)
            calls = (size_t)(o->runs - S->calls);
        if (calls < 1)
            continue;
        R.calls = (int)calls;
        R.dA = dA;
        R.dB = dB;
        R.dD = dD;
        R.abytes = a1 * calls;
        R.bbytes = b1 * calls;
        R.dbytes = d1 * calls;
        const int kind = (int)((r >> 48) % MF_KGEN_COUNT);
        const uint64_t seed = gf_mix(r ^ 0xA5A5A5A5ull);
        /* A: element e of a call at k = e % K; B row-major: k = e / N; column-major: e % K */
        if (mf_kgen_run(R.d.a, dA, (size_t)(R.d.m * R.d.k) * calls, (size_t)(R.d.m * R.d.k), seed, kind, 0, R.d.k, 1,
                        R.d.k, NULL, err, sizeof err) ||
            mf_kgen_run(R.d.b, dB, (size_t)(R.d.k * R.d.n) * calls, (size_t)(R.d.k * R.d.n), seed, kind, 1, R.d.k,
                        R.d.b_colmajor ? 1 : R.d.n, R.d.b_colmajor ? R.d.k : 0, NULL, err, sizeof err) ||
            run_calls(S, &R, algo, err, sizeof err)) {
            fprintf(stderr, "mmafuzz gemm: %s\n", err);
            rc = 1;
            break;
        }
        mf_kcheck_result res;
        if (check(S, &R, &cf->model, R.calls, &res, err, sizeof err)) {
            fprintf(stderr, "mmafuzz gemm: %s\n", err);
            rc = 1;
            break;
        }
        S->rounds++;
        S->calls += calls;
        S->outputs += res.outputs;
        S->steps += res.steps;
        if (res.differ && cf->fitted != -1) {
            /* search the model's parameters on these calls, nearest first */
            static mf_kernel cand[MAX_CANDIDATES];
            const int nc = candidates(&cf->guess, R.d.k, cand, MAX_CANDIDATES);
            /* each candidate first on the call of the first disagreement, then on all the round's calls */
            int found = -1;
            const int c0 = res.nmiss ? (int)res.miss[0].call : 0;
            for (int q = 0; q < nc && found < 0 && !gf_stop; q++) {
                mf_kcheck_result rq;
                if (check_from(S, &R, &cand[q], c0, 1, &rq, err, sizeof err))
                    break;
                if (!rq.differ && (R.calls == 1 || (!check(S, &R, &cand[q], R.calls, &rq, err, sizeof err) && !rq.differ)))
                    found = q;
            }
            char key[192], diff[160];
            const mf_kernel before = cf->model;
            if (found >= 0) {
                cf->model = cand[found];
                cf->fitted = 1;
                model_diff(&cf->guess, &cf->model, diff, sizeof diff);
            } else {
                cf->fitted = -1;
                snprintf(diff, sizeof diff, "unexplained");
            }
            snprintf(key, sizeof key, "%s:%s %s", mf_format_get(R.d.a)->name, mf_format_get(R.d.d)->name, diff);
            gf_bucket *b = bucket(S, key);
            if (b) {
                b->calls += calls;
                b->outputs += res.differ;
                if (!b->file[0] && res.nmiss) {
                    char e2[512];
                    if (minimize_and_file(S, &R, cf, &before, (int)res.miss[0].call, res.miss[0].i, res.miss[0].j,
                                          key, b->file, sizeof b->file, e2, sizeof e2))
                        snprintf(b->file, sizeof b->file, "-");
                }
            }
        } else if (res.differ) {
            gf_bucket *b = bucket(S, "unexplained (again)");
            if (b) {
                b->calls += calls;
                b->outputs += res.differ;
            }
        }
        S->differ += res.differ;
        if (now_s() - last >= o->status_every) {
            last = now_s();
            const double el = last - t0;
            fprintf(stderr, "#%llu calls %llu outputs %llu steps/s %.3g (check %.3g) buckets %d configs %d %.0fs\n",
                    (unsigned long long)S->rounds, (unsigned long long)S->calls, (unsigned long long)S->outputs,
                    (double)S->steps / el, S->check_s > 0 ? (double)S->check_steps / S->check_s : 0.0, S->nbk, S->ncfg, el);
        }
    }
done:;
    const double el = now_s() - t0;
    if (o->json) {
        printf("{\"rounds\": %llu, \"calls\": %llu, \"outputs\": %llu, \"steps\": %llu, \"seconds\": %.3f, "
               "\"steps_per_s\": %.6g, \"check_steps_per_s\": %.6g, \"differ\": %llu, \"configs\": %d, \"buckets\": [",
               (unsigned long long)S->rounds, (unsigned long long)S->calls, (unsigned long long)S->outputs,
               (unsigned long long)S->steps, el, el > 0 ? (double)S->steps / el : 0.0,
               S->check_s > 0 ? (double)S->check_steps / S->check_s : 0.0, (unsigned long long)S->differ, S->ncfg);
        for (int b = 0; b < S->nbk; b++) {
            printf("%s{\"bucket\": ", b ? ", " : "");
            json_put_str(stdout, S->bk[b].key);
            printf(", \"calls\": %llu, \"outputs\": %llu, \"file\": ", (unsigned long long)S->bk[b].calls,
                   (unsigned long long)S->bk[b].outputs);
            json_put_str(stdout, S->bk[b].file);
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("gemm fuzz: %llu calls, %llu outputs, %.3g instruction steps/s (%.3g in the check), %llu outputs "
               "differ from the first model, %d configurations, %.1f s\n",
               (unsigned long long)S->calls, (unsigned long long)S->outputs, el > 0 ? (double)S->steps / el : 0.0,
               S->check_s > 0 ? (double)S->check_steps / S->check_s : 0.0, (unsigned long long)S->differ, S->ncfg, el);
        for (int b = 0; b < S->nbk; b++)
            printf("  %-60s %8llu calls %10llu outputs  %s\n", S->bk[b].key, (unsigned long long)S->bk[b].calls,
                   (unsigned long long)S->bk[b].outputs, S->bk[b].file);
    }
    for (int b = 0; b < S->nbk; b++)
        rc |= strstr(S->bk[b].key, "unexplained") ? 1 : 0;
    mf_gemm_free(S->h, dA);
    mf_gemm_free(S->h, dB);
    mf_gemm_free(S->h, dD);
    mf_gemm_close(S->h);
    free(S);
    return rc;
}

/*
 * cmd_gemm.c - `mmafuzz gemm`: whole GEMM calls through cuBLASLt
 * (devices/mf_gemm.h).  --algos lists the heuristic's algorithms of each
 * call with their configuration; --record writes each chosen algorithm's
 * call as a recording (docs/recordings.md) on generated operands, and
 * --check checks it at once as `mmafuzz check` does.  M, N, K and TYPE are
 * comma lists: every combination is one call, so that a grid runs in one
 * process (one cuBLASLt handle).
 */
#include "check_rec.h"
#include "cli.h"
#include "gemm_fuzz.h"
#include "json.h"
#include "kernel_table.h"
#include "mf_gemm.h"
#include "npz.h"
#include "recording.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MAX_LIST = 64, SKIP_STATUS = 77 };

/* "1,8,64" into v[]; @return the count, or -1. */
static int int_list(const char *s, int64_t *v, int max, int64_t lo, int64_t hi)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9')
            return -1;
        long long x = strtoll(p, &end, 10);
        if (errno || x < lo || x > hi || n == max || (*end && *end != ','))
            return -1;
        v[n++] = x;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p)
            return -1;
    }
    return n;
}

typedef struct gtype {
    char name[24];   /* as given: "f16", "e4m3:bf16" */
    mf_format in, out;
} gtype;

static int type_list(const char *s, gtype *t, int max)
{
    int n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max || strlen(tok) >= sizeof t[n].name)
            return -1;
        snprintf(t[n].name, sizeof t[n].name, "%s", tok);
        char *colon = strchr(tok, ':');
        if (colon)
            *colon = 0;
        t[n].in = mf_format_by_name(tok);
        if (t[n].in == MF_FMT_NONE)
            return -1;
        if (colon) {
            t[n].out = mf_format_by_name(colon + 1);
            if (t[n].out == MF_FMT_NONE)
                return -1;
        } else if (t[n].in == MF_FMT_E4M3 || t[n].in == MF_FMT_E5M2) {
            return -1;   /* fp8 names its output */
        } else {
            t[n].out = t[n].in == MF_FMT_TF32 ? MF_FMT_F32 : t[n].in;
        }
        n++;
    }
    return n;
}

/* ---------------------------------------------------- operand generation */

typedef struct genjob {
    mf_format f;
    uint64_t seed, K, rows;
    int transpose_to_rowmajor;   /* B row-major K x N from its columns: out[k * rows + j] */
    size_t w;
    unsigned char *out;
    uint64_t next;
    pthread_mutex_t mu;
} genjob;

static void *gen_worker(void *arg)
{
    genjob *g = arg;
    unsigned char *col = g->transpose_to_rowmajor ? malloc(g->K * g->w) : NULL;
    for (;;) {
        pthread_mutex_lock(&g->mu);
        uint64_t r0 = g->next;
        g->next += 16;
        pthread_mutex_unlock(&g->mu);
        if (r0 >= g->rows)
            break;
        for (uint64_t r = r0; r < r0 + 16 && r < g->rows; r++) {
            if (!g->transpose_to_rowmajor) {
                mf_rec_generate(g->f, g->seed, r * g->K, g->K, -4, 2, g->out + r * g->K * g->w);
            } else if (col) {
                mf_rec_generate(g->f, g->seed, r * g->K, g->K, -4, 2, col);
                for (uint64_t k = 0; k < g->K; k++)
                    memcpy(g->out + (k * g->rows + r) * g->w, col + k * g->w, g->w);
            }
        }
    }
    free(col);
    return NULL;
}

/* rows x K elements of the generator (rows of A, or columns of B), in
 * threads; transposed: K x rows (B row-major). */
static unsigned char *generate(mf_format f, uint64_t seed, uint64_t rows, uint64_t K, int transposed, int jobs)
{
    size_t w = (size_t)mf_rec_width(f);
    unsigned char *out = malloc(rows * K * w);
    if (!out)
        return NULL;
    genjob g = {.f = f, .seed = seed, .K = K, .rows = rows, .transpose_to_rowmajor = transposed, .w = w, .out = out};
    pthread_mutex_init(&g.mu, NULL);
    pthread_t th[256];
    int n = 0;
    for (; n < jobs - 1 && n < 256; n++)
        if (pthread_create(&th[n], NULL, gen_worker, &g))
            break;
    gen_worker(&g);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&g.mu);
    return out;
}

/* ------------------------------------------------------------ printing */

static void algo_text(const mf_gemm_algo *a)
{
    printf("  [%d] algo %d tile %s stages %s splitK %d reduction %u swizzle %u custom %u inner %u cluster %u "
           "impl 0x%llx workspace %zu waves %.3g\n",
           a->index, a->algo_id, a->tile, a->stages, a->splitk_num, a->reduction_scheme, a->cta_swizzling,
           a->custom_option, a->inner_shape_id, a->cluster_shape_id, (unsigned long long)a->numerical_impl,
           a->workspace, (double)a->waves);
}

static void algo_json(FILE *f, const mf_gemm_algo *a)
{
    fprintf(f, "{\"index\": %d, \"algo_id\": %d, \"tile_id\": %u, \"tile\": \"%s\", \"stages_id\": %u, \"stages\": \"%s\", "
            "\"splitk_num\": %d, \"reduction_scheme\": %u, \"cta_swizzling\": %u, \"custom_option\": %u, "
            "\"inner_shape_id\": %u, \"cluster_shape_id\": %u, \"numerical_impl\": %llu, \"workspace\": %zu, "
            "\"waves\": %.6g}",
            a->index, a->algo_id, a->tile_id, a->tile, a->stages_id, a->stages, a->splitk_num, a->reduction_scheme,
            a->cta_swizzling, a->custom_option, a->inner_shape_id, a->cluster_shape_id,
            (unsigned long long)a->numerical_impl, a->workspace, (double)a->waves);
}

static const char *fname(mf_format f) { return mf_format_get(f)->name; }

/* ------------------------------------------------------------ recording */

typedef struct gpuinfo {
    char name[256], sm[16], driver[32], runtime[32], host[256];
} gpuinfo;

/* The header of one call's recording, as JSON text. */
static char *header_json(const mf_gemm_desc *d, const char *type, int algo, int nalgos, const mf_gemm_algo *a,
                         const mf_gemm_config *cfg, int deterministic, const gpuinfo *g, uint64_t seed_a,
                         uint64_t seed_b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "{\"format\": \"mmafuzz-recording\", \"version\": 1, \"op\": \"cublasLtMatmul\", \"m\": %lld, "
            "\"n\": %lld, \"k\": %lld, \"a_format\": \"%s\", \"b_format\": \"%s\", \"d_format\": \"%s\", ",
            (long long)d->m, (long long)d->n, (long long)d->k, fname(d->a), fname(d->b), fname(d->d));
    fprintf(f, "\"flags\": {\"algo\": %d, \"b_colmajor\": %s, \"fast_accum\": %s, \"reduction_mask\": %u, "
            "\"workspace\": %zu}, ",
            algo, d->b_colmajor ? "true" : "false", d->fast_accum ? "true" : "false", d->reduction_mask,
            d->workspace ? d->workspace : (size_t)32 << 20);
    fprintf(f, "\"kernels\": [], \"deterministic\": %s, \"type\": ", deterministic ? "true" : "false");
    json_put_str(f, type);
    fprintf(f, ", \"cublaslt\": {\"algo\": ");
    algo_json(f, a);
    fprintf(f, ", \"heuristic_count\": %d, \"compute\": \"%s\", \"compute_type\": %d, \"scale_type\": %d, "
            "\"fast_accum\": %d, \"scales\": %s}, ",
            nalgos, cfg->compute, cfg->compute_type, cfg->scale_type, cfg->fast_accum, cfg->has_scales ? "true" : "false");
    fprintf(f, "\"env\": {\"gpu\": ");
    json_put_str(f, g->name);
    fprintf(f, ", \"sm\": \"%s\", \"driver\": \"%s\", \"cuda\": \"%s\", \"cublaslt\": \"%s\", \"host\": ", g->sm,
            g->driver, g->runtime, cfg->library);
    json_put_str(f, g->host);
    fprintf(f, "}, \"inputs\": {\"generator\": \"mmafuzz.splitmix64\", \"seed_a\": %llu, \"seed_b\": %llu, "
            "\"exp_lo\": -4, \"exp_hi\": 2}}",
            (unsigned long long)seed_a, (unsigned long long)seed_b);
    fclose(f);
    return buf;
}

/* The recorded rows (or columns) of an output of n: when the call is
 * sampled (M or N above `sample`, as mmafuzz.recording.record's sample), the
 * first and last sample/2 of a dimension above sample, else all. */
static int64_t pick(int64_t n, int sampled, int sample, int64_t *idx)
{
    if (!sampled || n <= sample) {
        for (int64_t i = 0; i < n; i++)
            idx[i] = i;
        return n;
    }
    int h = sample / 2, c = 0;
    for (int i = 0; i < h; i++)
        idx[c++] = i;
    for (int i = 0; i < h; i++)
        idx[c++] = n - h + i;
    return c;
}

static int write_recording(const char *path, const char *header, const mf_gemm_desc *d, const unsigned char *D,
                           int sample, char *err, size_t errlen)
{
    size_t w = (size_t)mf_rec_width(d->d);
    int sampled = d->m > sample || d->n > sample;
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)(sampled ? sample : d->m));
    int64_t *ci = malloc(sizeof(int64_t) * (size_t)(sampled ? sample : d->n));
    if (!ri || !ci) {
        free(ri);
        free(ci);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int64_t nr = pick(d->m, sampled, sample, ri), nc = pick(d->n, sampled, sample, ci);
    unsigned char *sub = malloc((size_t)(nr * nc) * w);
    if (!sub) {
        free(ri);
        free(ci);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < nr; i++)
        for (int64_t j = 0; j < nc; j++)
            memcpy(sub + (size_t)(i * nc + j) * w, D + ((size_t)ri[i] * (size_t)d->n + (size_t)ci[j]) * w, w);
    npz_array arr[4];
    int n = 0;
    memset(arr, 0, sizeof arr);
    arr[n] = (npz_array){.kind = 'u', .width = 1, .ndim = 1, .shape = {strlen(header), 1}, .count = strlen(header),
                         .data = (void *)header};
    snprintf(arr[n++].name, sizeof arr[0].name, "header");
    arr[n] = (npz_array){.kind = 'u', .width = (int)w, .ndim = 2, .shape = {(uint64_t)nr, (uint64_t)nc},
                         .count = (uint64_t)(nr * nc), .data = sub};
    snprintf(arr[n++].name, sizeof arr[0].name, "d");
    if (sampled && (nr < d->m || nc < d->n)) {
        arr[n] = (npz_array){.kind = 'i', .width = 8, .ndim = 1, .shape = {(uint64_t)nr, 1}, .count = (uint64_t)nr,
                             .data = ri};
        snprintf(arr[n++].name, sizeof arr[0].name, "d_rows");
        arr[n] = (npz_array){.kind = 'i', .width = 8, .ndim = 1, .shape = {(uint64_t)nc, 1}, .count = (uint64_t)nc,
                             .data = ci};
        snprintf(arr[n++].name, sizeof arr[0].name, "d_cols");
    }
    int rc = npz_write(path, arr, n, err, errlen);
    free(sub);
    free(ri);
    free(ci);
    return rc;
}

/* ------------------------------------------------------------------ gemm */

int cmd_gemm(int argc, char **argv)
{
    cli_opts_gemm a;
    int prc = cli_gemm_parse(argc, argv, &a);
    if (prc) {
        cli_gemm_free(&a);
        return prc > 0 ? 0 : 2;
    }
    int64_t Ms[MAX_LIST], Ns[MAX_LIST], Ks[MAX_LIST];
    gtype types[16];
    int nm = int_list(a.pos[0], Ms, MAX_LIST, 1, 1 << 20), nn = int_list(a.pos[1], Ns, MAX_LIST, 1, 1 << 20),
        nk = int_list(a.pos[2], Ks, MAX_LIST, 1, 1 << 24), nt = type_list(a.pos[3], types, 16);
    int status = 2;
    if (nm < 1 || nn < 1 || nk < 1) {
        fprintf(stderr, "mmafuzz gemm: M, N and K: expected comma lists of positive integers (at most %d each; M, N "
                        "up to 2^20, K up to 2^24)\n", MAX_LIST);
        cli_gemm_free(&a);
        return 2;
    }
    if (nt < 1) {
        fprintf(stderr, "mmafuzz gemm: TYPE: expected a comma list of f16, bf16, tf32, f32, or IN:OUT (f16:f32, "
                        "e4m3:f32, e4m3:bf16, e5m2:bf16: fp8 names its output)\n");
        cli_gemm_free(&a);
        return 2;
    }
    const char *dev = a.device;
    int device = 0;
    if (strncmp(dev, "cuda", 4) || (dev[4] && (dev[4] != ':' || sscanf(dev + 5, "%d", &device) != 1 || device < 0))) {
        fprintf(stderr, "mmafuzz gemm: --device: expected cuda or cuda:N, got '%s'\n", dev);
        cli_gemm_free(&a);
        return 2;
    }
    const char *algo_s = a.algo;
    int algo_all = !strcmp(algo_s, "all"), algo_one = 0;
    if (!algo_all) {
        char *end;
        long x = strtol(algo_s, &end, 10);
        if (*end || !*algo_s || x < 0 || x >= MF_GEMM_MAX_ALGOS) {
            fprintf(stderr, "mmafuzz gemm: --algo: expected 0 to %d or all, got '%s'\n", MF_GEMM_MAX_ALGOS - 1, algo_s);
            cli_gemm_free(&a);
            return 2;
        }
        algo_one = (int)x;
    }
    if (a.given.runs || a.max_total_time) {   /* fuzzing (gemm_fuzz.c) */
        if (a.record || a.check || a.algos) {
            fprintf(stderr, "mmafuzz gemm: -runs / -max_total_time fuzz; --record, --check and --algos are for "
                            "listed calls\n");
            cli_gemm_free(&a);
            return 2;
        }
        mf_format tin[16], tout[16];
        for (int t = 0; t < nt; t++) {
            tin[t] = types[t].in;
            tout[t] = types[t].out;
        }
        const char *req = getenv("MMAFUZZ_REQUIRE_GPU");
        gemm_fuzz_opts fo = {.device = device, .seed = a.seed, .runs = a.given.runs ? (uint64_t)a.runs : 0,
                             .max_time = (double)a.max_total_time, .out = a.out, .types_in = tin, .types_out = tout,
                             .ntypes = nt, .ms = Ms, .ns = Ns, .ks = Ks, .nms = nm, .nns = nn, .nks = nk,
                             .algos = (int)a.algos_max, .mem_mib = (int)a.mem_mib, .status_every = 10,
                             .json = a.json > 0, .require_gpu = req && *req && strcmp(req, "0")};
        int frc = gemm_fuzz(&fo);
        cli_gemm_free(&a);
        return frc;
    }
    const char *record = a.record;
    int json = (a.json > 0), check = (a.check > 0);
    int sample = (int)a.sample;
    int jobs = (int)a.jobs;
    if (jobs == 0)
        jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t seed = a.seed;
    if (check && !record) {
        fprintf(stderr, "mmafuzz gemm: --check checks what --record writes: give --record\n");
        cli_gemm_free(&a);
        return 2;
    }
    long ncalls = (long)nm * nn * nk * nt;
    int one_file = record && strlen(record) > 4 && !strcmp(record + strlen(record) - 4, ".npz");
    if (one_file && (ncalls != 1 || algo_all)) {
        fprintf(stderr, "mmafuzz gemm: --record FILE.npz holds one call (one M, N, K, TYPE and --algo I); give a "
                        "folder for %ld calls%s\n", ncalls, algo_all ? " of every algorithm" : "");
        cli_gemm_free(&a);
        return 2;
    }
    if (record && !one_file && mkdir(record, 0777) && errno != EEXIST) {
        fprintf(stderr, "mmafuzz gemm: --record %s: cannot create the folder: %s\n", record, strerror(errno));
        cli_gemm_free(&a);
        return 2;
    }
    /* every call is checked before any GPU work: bad usage is exit 2 with or without a GPU */
    mf_gemm_desc base = {.b_colmajor = (a.b_colmajor > 0),
                         .fast_accum = (a.fast_accum > 0),
                         .reduction_mask = (uint32_t)a.reduction_mask,
                         .workspace = (size_t)a.workspace_mib << 20};
    for (int t = 0; t < nt; t++)
        for (int i = 0; i < nm; i++)
            for (int j = 0; j < nn; j++)
                for (int l = 0; l < nk; l++) {
                    mf_gemm_desc d = base;
                    d.m = Ms[i], d.n = Ns[j], d.k = Ks[l];
                    d.a = d.b = types[t].in;
                    d.d = types[t].out;
                    if (d.a == MF_FMT_E4M3 || d.a == MF_FMT_E5M2)
                        d.b_colmajor = 1;
                    const char *why = mf_gemm_check(&d);
                    if (why && !(d.k % 16 && (d.a == MF_FMT_E4M3 || d.a == MF_FMT_E5M2))) {
                        fprintf(stderr, "mmafuzz gemm: %s %lldx%lldx%lld: %s\n", types[t].name, (long long)d.m,
                                (long long)d.n, (long long)d.k, why);
                        cli_gemm_free(&a);
                        return 2;
                    }
                }
    char err[1024];
    mf_gemm *h = mf_gemm_open(device, err, sizeof err);
    if (!h) {
        const char *req = getenv("MMAFUZZ_REQUIRE_GPU");
        int require = req && !strcmp(req, "1");
        fprintf(stderr, "mmafuzz gemm: %s%s\n", err, require ? " (MMAFUZZ_REQUIRE_GPU=1: a failure)" : "");
        cli_gemm_free(&a);
        return require ? 1 : SKIP_STATUS;
    }
    gpuinfo g;
    mf_gemm_gpu(h, g.name, sizeof g.name, g.sm, sizeof g.sm, g.driver, sizeof g.driver, g.runtime, sizeof g.runtime);
    if (gethostname(g.host, sizeof g.host))
        snprintf(g.host, sizeof g.host, "?");
    g.host[sizeof g.host - 1] = 0;
    if (!json)
        printf("GPU %d: %s (sm %s), driver %s, runtime %s\n", device, g.name, g.sm, g.driver, g.runtime);
    /* the check of recordings, as `mmafuzz check` does it */
    char table_paths[2][4096];
    const char *tables[2];
    check_rec_opts ro = {.kernel_file = a.kernel, .tables = tables,
                         .max_errors = a.errors, .jobs = jobs, .json = json};
    int ntab = mf_ktable_defaults(table_paths, 2);
    for (int i = 0; i < ntab; i++)
        tables[ro.ntables++] = table_paths[i];
    check_rec_totals rt = {0};
    long recorded = 0, skipped = 0, nondet = 0, unchecked = 0;
    status = 0;
    uint64_t seed_a = 2 * seed, seed_b = 2 * seed + 1;
    for (int t = 0; t < nt && status != 2; t++)
        for (int l = 0; l < nk && status != 2; l++) {
            /* operands for the largest M and N of this K; smaller calls use their leading rows / columns
             * (the generator's element (r, c) does not depend on M or N) */
            int64_t K = Ks[l], Mmax = 0, Nmax = 0;
            for (int i = 0; i < nm; i++)
                Mmax = Ms[i] > Mmax ? Ms[i] : Mmax;
            for (int j = 0; j < nn; j++)
                Nmax = Ns[j] > Nmax ? Ns[j] : Nmax;
            unsigned char *hA = NULL, *hBc = NULL;
            void *dA = NULL, *dBc = NULL, *dD = NULL, *dBr = NULL;
            for (int j = 0; j < nn && status != 2; j++) {
                for (int i = 0; i < nm && status != 2; i++) {
                    mf_gemm_desc d = base;
                    d.m = Ms[i], d.n = Ns[j], d.k = K;
                    d.a = d.b = types[t].in;
                    d.d = types[t].out;
                    int fp8 = d.a == MF_FMT_E4M3 || d.a == MF_FMT_E5M2;
                    if (fp8)
                        d.b_colmajor = 1;
                    if (mf_gemm_check(&d)) {   /* fp8 with K not a multiple of 16: not a call cuBLASLt makes */
                        skipped++;
                        if (!json)
                            printf("%s %lldx%lldx%lld: skipped (%s)\n", types[t].name, (long long)d.m, (long long)d.n,
                                   (long long)d.k, mf_gemm_check(&d));
                        continue;
                    }
                    mf_gemm_algo al[MF_GEMM_MAX_ALGOS];
                    mf_gemm_config cfg;
                    int na = mf_gemm_algos(h, &d, al, MF_GEMM_MAX_ALGOS, &cfg, err, sizeof err);
                    if (na < 0) {
                        if (json) {
                            printf("{\"type\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"error\": ", types[t].name,
                                   (long long)d.m, (long long)d.n, (long long)d.k);
                            json_put_str(stdout, err);
                            printf("}\n");
                        } else {
                            printf("%s %lldx%lldx%lld: %s\n", types[t].name, (long long)d.m, (long long)d.n,
                                   (long long)d.k, err);
                        }
                        skipped++;
                        continue;
                    }
                    if (!record) {
                        if (json) {
                            printf("{\"gpu\": ");
                            json_put_str(stdout, g.name);
                            printf(", \"sm\": \"%s\", \"cublaslt\": \"%s\", \"type\": \"%s\", \"a_format\": \"%s\", "
                                   "\"d_format\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"b_colmajor\": %s, "
                                   "\"fast_accum\": %d, \"compute\": \"%s\", \"algos\": [",
                                   g.sm, cfg.library, types[t].name, fname(d.a), fname(d.d), (long long)d.m,
                                   (long long)d.n, (long long)d.k, d.b_colmajor ? "true" : "false", cfg.fast_accum,
                                   cfg.compute);
                            for (int x = 0; x < na; x++) {
                                if (x)
                                    printf(", ");
                                algo_json(stdout, &al[x]);
                            }
                            printf("]}\n");
                        } else {
                            printf("%s %lldx%lldx%lld (B %s, compute %s%s): %d algorithm%s\n", types[t].name,
                                   (long long)d.m, (long long)d.n, (long long)d.k,
                                   d.b_colmajor ? "column-major" : "row-major", cfg.compute,
                                   fp8 ? (cfg.fast_accum ? ", fast accum" : ", no fast accum") : "", na,
                                   na == 1 ? "" : "s");
                            for (int x = 0; x < na; x++)
                                algo_text(&al[x]);
                        }
                        fflush(stdout);
                        continue;
                    }
                    /* --record: operands, once per (type, K), made on the host and copied to the GPU */
                    size_t w = (size_t)mf_rec_width(d.a), wd = (size_t)mf_rec_width(d.d);
                    if (!hA) {
                        hA = generate(d.a, seed_a, (uint64_t)Mmax, (uint64_t)K, 0, jobs);
                        hBc = generate(d.b, seed_b, (uint64_t)Nmax, (uint64_t)K, 0, jobs);   /* columns of B */
                        size_t sa = (size_t)Mmax * (size_t)K * w, sb = (size_t)Nmax * (size_t)K * w;
                        size_t sd = (size_t)Mmax * (size_t)Nmax * wd;
                        if (!hA || !hBc) {
                            fprintf(stderr, "mmafuzz gemm: out of memory for the operands of K = %lld\n", (long long)K);
                            status = 2;
                            break;
                        }
                        if (!(dA = mf_gemm_alloc(h, sa, err, sizeof err)) || !(dBc = mf_gemm_alloc(h, sb, err, sizeof err)) ||
                            !(dD = mf_gemm_alloc(h, sd, err, sizeof err)) || mf_gemm_upload(h, dA, hA, sa, err, sizeof err) ||
                            mf_gemm_upload(h, dBc, hBc, sb, err, sizeof err)) {
                            fprintf(stderr, "mmafuzz gemm: K = %lld: %s\n", (long long)K, err);
                            status = 2;
                            break;
                        }
                    }
                    size_t sb = (size_t)d.n * (size_t)K * w, sd = (size_t)d.m * (size_t)d.n * wd;
                    void *dB = dBc;
                    if (!d.b_colmajor && dBr) {
                        dB = dBr;
                    } else if (!d.b_colmajor) {   /* B row-major K x N from its first N columns, once per N */
                        unsigned char *hBr = malloc(sb);
                        if (!hBr) {
                            fprintf(stderr, "mmafuzz gemm: out of memory\n");
                            status = 2;
                            break;
                        }
                        for (int64_t jj = 0; jj < d.n; jj++)
                            for (int64_t kk = 0; kk < K; kk++)
                                memcpy(hBr + ((size_t)kk * (size_t)d.n + (size_t)jj) * w,
                                       hBc + ((size_t)jj * (size_t)K + (size_t)kk) * w, w);
                        int bad = !(dBr = mf_gemm_alloc(h, sb, err, sizeof err)) || mf_gemm_upload(h, dBr, hBr, sb, err, sizeof err);
                        free(hBr);
                        if (bad) {
                            fprintf(stderr, "mmafuzz gemm: %s\n", err);
                            status = 2;
                            break;
                        }
                        dB = dBr;
                    }
                    unsigned char *D1 = malloc(sd), *D2 = malloc(sd);
                    if (!D1 || !D2) {
                        fprintf(stderr, "mmafuzz gemm: out of memory\n");
                        free(D1), free(D2);
                        status = 2;
                        break;
                    }
                    for (int x = 0; x < na && status != 2; x++) {
                        if (!algo_all && x != algo_one)
                            continue;
                        if (mf_gemm_run(h, &d, x, dA, dB, dD, NULL, err, sizeof err) || mf_gemm_sync(h, NULL, err, sizeof err) ||
                            mf_gemm_download(h, D1, dD, sd, err, sizeof err) ||
                            mf_gemm_run(h, &d, x, dA, dB, dD, NULL, err, sizeof err) || mf_gemm_sync(h, NULL, err, sizeof err) ||
                            mf_gemm_download(h, D2, dD, sd, err, sizeof err)) {
                            fprintf(stderr, "mmafuzz gemm: %s %lldx%lldx%lld algorithm %d: %s\n", types[t].name,
                                    (long long)d.m, (long long)d.n, (long long)d.k, x, err);
                            status = 2;
                            break;
                        }
                        int det = !memcmp(D1, D2, sd);
                        nondet += !det;
                        char *hdr = header_json(&d, types[t].name, x, na, &al[x], &cfg, det, &g, seed_a, seed_b);
                        char path[4096];
                        if (one_file)
                            snprintf(path, sizeof path, "%s", record);
                        else
                            snprintf(path, sizeof path, "%s/cublaslt-%s-%lldx%lldx%lld-a%d.npz", record, types[t].name,
                                     (long long)d.m, (long long)d.n, (long long)d.k, x);
                        for (char *c = strrchr(path, '/') ? strrchr(path, '/') : path; *c; c++)
                            if (*c == ':')
                                *c = '_';
                        if (!hdr || write_recording(path, hdr, &d, D1, sample, err, sizeof err)) {
                            fprintf(stderr, "mmafuzz gemm: %s: %s\n", path, hdr ? err : "out of memory");
                            free(hdr);
                            status = 2;
                            break;
                        }
                        free(hdr);
                        recorded++;
                        if (!check) {
                            if (json) {
                                printf("{\"file\": ");
                                json_put_str(stdout, path);
                                printf(", \"deterministic\": %s, \"algo\": ", det ? "true" : "false");
                                algo_json(stdout, &al[x]);
                                printf("}\n");
                            } else {
                                printf("%s: algo %d tile %s splitK %d reduction %u%s\n", path, al[x].algo_id, al[x].tile,
                                       al[x].splitk_num, al[x].reduction_scheme, det ? "" : " (NOT deterministic)");
                            }
                        } else {
                            int rc = check_recording(path, &ro, &rt);
                            if (rc == 2) {
                                unchecked++;
                                if (json) {
                                    printf("{\"file\": ");
                                    json_put_str(stdout, path);
                                    printf(", \"error\": \"not checked: no kernel model (the message is on stderr)\"}\n");
                                }
                            }
                            else if (rc == 1 && status == 0)
                                status = 1;
                        }
                        fflush(stdout);
                    }
                    free(D1);
                    free(D2);
                }
                mf_gemm_free(h, dBr);
                dBr = NULL;
            }
            free(hA);
            free(hBc);
            mf_gemm_free(h, dA);
            mf_gemm_free(h, dBc);
            mf_gemm_free(h, dD);
            dA = dBc = dD = NULL;
        }
    if (record && status != 2) {
        if (json)
            printf("{\"recorded\": %ld, \"skipped\": %ld, \"nondeterministic\": %ld, \"passed\": %ld, \"failed\": %ld, "
                   "\"unchecked\": %ld}\n", recorded, skipped, nondet, rt.pass, rt.fail, unchecked);
        else if (check)
            printf("%ld calls recorded (%ld not deterministic, %ld skipped): %ld passed, %ld failed, %ld without a "
                   "model\n", recorded, nondet, skipped, rt.pass, rt.fail, unchecked);
        else
            printf("%ld calls recorded (%ld not deterministic, %ld skipped)\n", recorded, nondet, skipped);
        if (unchecked && status == 0)
            status = 1;
    }
    mf_gemm_close(h);
    cli_gemm_free(&a);
    return status;
}

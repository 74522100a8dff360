/*
 * model_bench.cu - mmafuzz_model_bench: the model and the case generators as
 * device code (model_device.cuh) on the GPU.
 *
 * usage: mmafuzz_model_bench [--all] [--rows] [--check] [-n CASES] [-seed S] [-device N]
 *                            [--check-tiles T] [--instr NAME]...
 *
 * Benchmark (default): for every family, each of its rows is timed on a
 * short run, then its slowest row on -n cases (default 2^24): tiles
 * generated on the GPU by mfd::gen_tile (one thread per tile, default mix),
 * then the model on the GPU (one thread per case), D written to device
 * memory.  The model is timed two ways: mfd::mf_eval on an mf_case (every
 * row), and the row's fixed-shape entry where it has one (eval_fixed_kernel:
 * the T-FDPA and F16-emu rows, dense and sparse, the fp8 pairs reading the
 * model's packed products from a table; eval_fma_kernel: the f64 FMA
 * chains; the entries the GPU check calls for its fixed shapes).  Printed:
 * model-on-GPU dot products/s (the fixed-shape entry where there is one,
 * else mf_eval; the kernel alone, from CUDA events), which of the two,
 * mf_eval's rate, and the generators' tiles/s and cases/s.  --rows: also the
 * short run of every row, under its family; --all: also every hopper row on
 * -n cases; --instr: those rows only.
 *
 * --check: the GPU against the host library, exit 1 on any difference:
 *   gen   every generator alone (mutate with a pool of saved cases copied to
 *         the GPU) on --check-tiles tiles (default 10^6) of
 *         hopper/mma.m16n8k16.f32.f16.f16.f32 and 2000 of every other
 *         row: the generator used and every byte of A, B, C, SA, SB;
 *   eval  mf_eval on the GPU against ::mf_eval on the host, 2^14 generated
 *         cases of every row, and the same for the fixed-shape entry of
 *         every row that has one.
 *
 * With no CUDA device: exit 77 (skipped), or 1 when MMAFUZZ_REQUIRE_GPU=1.
 */
#include "model_device.cuh"

#include <cuda_runtime.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <thread>
#include <vector>

#define CK(call)                                                                                             \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "mmafuzz_model_bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                    cudaGetErrorString(e_));                                                                 \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static_assert(sizeof(mfd::mf_instr) == sizeof(::mf_instr), "mf_instr: same layout on both sides");
static_assert(sizeof(mfd::gen_ctx) == sizeof(::gen_ctx), "gen_ctx: same layout on both sides");
static_assert(sizeof(mfd::gen_saved_case) == sizeof(::gen_saved_case), "gen_saved_case: same layout");

/* ---------------------------------------------------------------- kernels */

/* One tile per thread: tiles first .. first+ntiles-1 into slots 0.. */
__global__ void __launch_bounds__(128) gen_kernel(const __grid_constant__ mfd::gen_ctx g, uint64_t first,
                                                  size_t ntiles, uint8_t *kind)
{
    const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= ntiles)
        return;
    const mfd::gen_kind k = mfd::gen_tile(&g, first + t, t);
    if (kind)
        kind[t] = (uint8_t)k;
}

/* One case per thread: case idx is output (i, j) of tile idx / (M*N); only
 * a[0..K-1], b[0..K-1] (and the row's scales) of the case are filled.  At
 * most 168 registers (three blocks a multiprocessor), as before the sparse
 * rows' fixed-length path (model/sparse.c) took mf_eval to 255 and every
 * row's general path slowed with the occupancy. */
__global__ void __launch_bounds__(128, 3) eval_kernel(const __grid_constant__ mfd::mf_instr row, const void *A,
                                                   const void *B, const void *C, const void *SA, const void *SB,
                                                   uint64_t *D, size_t ncases)
{
    const size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= ncases)
        return;
    const size_t mn = (size_t)row.m * row.n, t = idx / mn, r = idx % mn;
    const int i = (int)(r / row.n), j = (int)(r % row.n), K = row.k, S = row.n_scales;
    const size_t ea = mfd::mf_tile_elem_bytes(row.fa), eb = mfd::mf_tile_elem_bytes(row.fb);
    mfd::mf_case cs;
    const size_t ra = (t * row.m + i) * (size_t)K, rb = (t * row.n + j) * (size_t)K;
    for (int k = 0; k < K; k++) {
        cs.a[k] = mfd::mf_elem_get(ea, A, ra + k);
        cs.b[k] = mfd::mf_elem_get(eb, B, rb + k);
    }
    cs.c = mfd::mf_elem_get(mfd::mf_tile_elem_bytes(row.fc), C, (t * row.m + i) * (size_t)row.n + j);
    for (int s = 0; s < S; s++) {
        const size_t es = mfd::mf_tile_elem_bytes(row.fs);
        cs.sa[s] = mfd::mf_elem_get(es, SA, (t * row.m + i) * (size_t)S + s);
        cs.sb[s] = mfd::mf_elem_get(es, SB, (t * row.n + j) * (size_t)S + s);
    }
    for (int q = 0; row.sparse && q < row.n_meta; q++)
        cs.meta[q] = ((const uint8_t *)SA)[(t * row.m + i) * (size_t)row.n_meta + q];
    D[idx] = mfd::mf_eval(&row, &cs);
}

/* The model's fixed-shape entries (mf_t_fdpa_fixed, mf_f16_emu_fixed,
 * mf_sparse_fixed), as the GPU check calls them: one case per thread, the
 * row's a and b read from the tile straight into arrays of constant length
 * (registers), no mf_case in local memory and no indirect call.  K is the
 * entry's K (a sparse row's K/2 kept products), L its chunk length, E the
 * bytes of an A and B element, PER a sparse row's kept positions a group;
 * the formats and the rest of the row are read at run time.  For the rows
 * of fixed_ok_kernel only. */
enum FixedFam { FX_TFDPA, FX_F16EMU };

template <int E, int K>
__device__ __forceinline__ void load_elems(const void *base, size_t first, uint64_t (&out)[K])
{
#pragma unroll
    for (int q = 0; q < K; q++)
        out[q] = E == 1   ? (uint64_t)__ldg((const unsigned char *)base + first + q)
                 : E == 2 ? (uint64_t)__ldg((const unsigned short *)base + first + q)
                          : (uint64_t)__ldg((const unsigned int *)base + first + q);
}

template <int FAM, int E, int K, int L, int SP, int PER, int TAB>
__global__ void __launch_bounds__(128) eval_fixed_kernel(const __grid_constant__ mfd::mf_instr row, const void *A,
                                                         const void *B, const void *C, const void *SA,
                                                         const unsigned short *tab, uint64_t *D, size_t ncases)
{
    constexpr int KL = SP ? 2 * K : K;   /* the row's K: logical positions of a sparse row */
    const size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= ncases)
        return;
    const size_t mn = (size_t)row.m * row.n, t = idx / mn, r = idx % mn;
    const size_t i = r / row.n, j = r % row.n;
    uint64_t a[KL], b[KL];
    load_elems<E, KL>(A, (t * row.m + i) * KL, a);
    load_elems<E, KL>(B, (t * row.n + j) * KL, b);
    const uint64_t c = mfd::mf_elem_get(mfd::mf_tile_elem_bytes(row.fc), C, (t * row.m + i) * row.n + j);
    uint64_t d;
    if (SP) {
        constexpr int G = SP ? KL / (2 * PER) : 1;   /* metadata nibbles: one per group of 2 * PER positions */
        uint8_t meta[G];
#pragma unroll
        for (int q = 0; q < G; q++)
            meta[q] = __ldg((const uint8_t *)SA + (t * row.m + i) * G + q);
        d = mfd::mf_sparse_fixed(&row, row.fa, row.fb, a, b, meta, c, K, L, SP ? PER : 1, 1, TAB ? tab : NULL);
    } else {
        uint32_t w[K];
#pragma unroll
        for (int q = 0; TAB && q < K; q++)
            w[q] = __ldg(tab + ((unsigned)a[q] | (unsigned)b[q] << 8));
        if (FAM == FX_TFDPA)
            d = mfd::mf_t_fdpa_fixed(&row, row.fa, row.fb, row.fc, row.fd, a, b, TAB ? w : NULL, c, K, L);
        else
            d = mfd::mf_f16_emu_fixed(&row, row.fa, row.fb, a, b, TAB ? w : NULL, c, K);
    }
    D[idx] = d;
}

/* The f64 FMA chains (every format f64, no operand forms): the model's
 * mf_fma_chain_fixed on the tile's operands, whose f64 elements are the
 * uint64_t words the model takes, as the GPU check's vfma_kernel calls it. */
__global__ void __launch_bounds__(128) eval_fma_kernel(const __grid_constant__ mfd::mf_instr row, const void *A,
                                                       const void *B, const void *C, const void *SA,
                                                       const unsigned short *tab, uint64_t *D, size_t ncases)
{
    (void)SA, (void)tab;
    const size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= ncases)
        return;
    const size_t mn = (size_t)row.m * row.n, t = idx / mn, r = idx % mn;
    const size_t i = r / row.n, j = r % row.n;
    const uint64_t *a = (const uint64_t *)A + (t * row.m + i) * row.k, *b = (const uint64_t *)B + (t * row.n + j) * row.k;
    D[idx] = mfd::mf_fma_chain_fixed(mfd::MF_FMT_F64, a, b, __ldg((const unsigned long long *)C + idx), row.k);
}

/* 1 in *ok when row takes a fixed-shape entry (the model's own conditions:
 * mf_eval would reach the same entry), with *per its kept positions a group
 * when sparse. */
__global__ void fixed_ok_kernel(const __grid_constant__ mfd::mf_instr row, int *ok)
{
    int per = 0, yes;
    if (row.sparse)
        yes = mfd::mf_sparse_fixed_ok(&row, &per);
    else if (row.family == mfd::MF_T_FDPA)
        yes = !mfd::mf_row_has_forms(&row) && mfd::mf_t_fdpa_plan(&row) != NULL;
    else if (row.family == mfd::MF_F16_EMU)
        yes = !mfd::mf_row_has_forms(&row) && (row.k == 16 || row.k == 32) && mfd::mf_f16_emu_fast(&row);
    else if (row.family == mfd::MF_FMA_CHAIN)
        yes = !mfd::mf_row_has_forms(&row) && row.fa == mfd::MF_FMT_F64 && row.fb == mfd::MF_FMT_F64 &&
              row.fc == mfd::MF_FMT_F64 && row.fd == mfd::MF_FMT_F64;
    else
        yes = 0;
    ok[0] = yes;
    ok[1] = per;
}

/* The shapes with an instance: (family, E, K, L, sparse, PER, TAB), those
 * of the table's T-FDPA and F16-emu rows; TAB: the fp8 pairs read their
 * products from the product table (mfd_prod_table_kernel), as the GPU check does.  A
 * row of another shape is timed on mf_eval alone, and says so. */
#define FIXED_SHAPES(X)                                                                                      \
    X(FX_F16EMU, 1, 16, 16, 0, 0, 1) X(FX_F16EMU, 1, 32, 16, 0, 0, 1) X(FX_F16EMU, 1, 32, 16, 1, 2, 1)       \
    X(FX_TFDPA, 1, 16, 16, 0, 0, 0) X(FX_TFDPA, 1, 32, 16, 0, 0, 0) X(FX_TFDPA, 1, 32, 32, 0, 0, 0)          \
    X(FX_TFDPA, 1, 16, 16, 0, 0, 1) X(FX_TFDPA, 1, 32, 16, 0, 0, 1) X(FX_TFDPA, 1, 32, 32, 0, 0, 1)          \
    X(FX_TFDPA, 1, 32, 32, 1, 2, 1)                                                                          \
    X(FX_TFDPA, 2, 4, 4, 0, 0, 0) X(FX_TFDPA, 2, 8, 8, 0, 0, 0)                                              \
    X(FX_TFDPA, 2, 8, 8, 1, 2, 0) X(FX_TFDPA, 2, 16, 8, 0, 0, 0) X(FX_TFDPA, 2, 16, 8, 1, 2, 0)              \
    X(FX_TFDPA, 2, 16, 16, 0, 0, 0) X(FX_TFDPA, 2, 16, 16, 1, 2, 0) X(FX_TFDPA, 4, 4, 4, 0, 0, 0)            \
    X(FX_TFDPA, 4, 4, 4, 1, 1, 0) X(FX_TFDPA, 4, 8, 4, 0, 0, 0) X(FX_TFDPA, 4, 8, 4, 1, 1, 0)                \
    X(FX_TFDPA, 4, 8, 8, 0, 0, 0) X(FX_TFDPA, 4, 8, 8, 1, 1, 0)

typedef void (*fixed_fn)(mfd::mf_instr, const void *, const void *, const void *, const void *,
                         const unsigned short *, uint64_t *, size_t);
struct FixedShape {
    int fam, e, k, l, sp, per, tab;
    fixed_fn fn;
};
#define FIXED_ENTRY(FAM, E, K, L, SP, PER, TAB) {FAM, E, K, L, SP, PER, TAB, eval_fixed_kernel<FAM, E, K, L, SP, PER, TAB>},
static const FixedShape fixed_shapes[] = {FIXED_SHAPES(FIXED_ENTRY)};

/* ---------------------------------------------------------------- helpers */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A row on the device: its mf_instr (name and qualifier pointing to device
 * copies of the strings) and that copy in host memory (for kernel arguments). */
struct dev_row {
    mfd::mf_instr row;         /* fields as the table's, name/qualifier device pointers */
    mfd::mf_instr *d_row;      /* the same in device memory (gen_ctx.in) */
    char *d_name;
};

static dev_row upload_row(const ::mf_instr *in)
{
    dev_row r;
    memcpy(&r.row, in, sizeof r.row);
    const size_t nl = strlen(in->name) + 1;
    CK(cudaMalloc(&r.d_name, nl));
    CK(cudaMemcpy(r.d_name, in->name, nl, cudaMemcpyHostToDevice));
    r.row.name = r.d_name;
    r.row.qualifier = r.d_name + (in->qualifier - in->name);
    CK(cudaMalloc(&r.d_row, sizeof *r.d_row));
    CK(cudaMemcpy(r.d_row, &r.row, sizeof r.row, cudaMemcpyHostToDevice));
    return r;
}

static void free_row(dev_row *r)
{
    cudaFree(r->d_row);
    cudaFree(r->d_name);
}

/* Tile buffers A, B, C, SA, SB for `tiles` tiles of a row. */
struct tile_bufs {
    size_t bytes[5];
    void *d[5];
};

static void tile_sizes(const ::mf_instr *in, size_t tiles, size_t *bytes)
{
    const size_t m = in->m, n = in->n, k = in->k, S = in->n_scales;
    bytes[0] = tiles * m * k * mf_tile_elem_bytes(in->fa);
    bytes[1] = tiles * n * k * mf_tile_elem_bytes(in->fb);
    bytes[2] = tiles * m * n * mf_tile_elem_bytes(in->fc);
    /* SA: the block scales, or a sparse row's metadata (n_meta bytes per row of A, mmafuzz_model.h) */
    bytes[3] = in->sparse ? tiles * m * in->n_meta : S ? tiles * m * S * mf_tile_elem_bytes(in->fs) : 0;
    bytes[4] = S ? tiles * n * S * mf_tile_elem_bytes(in->fs) : 0;
}

static tile_bufs alloc_dev(const ::mf_instr *in, size_t tiles)
{
    tile_bufs b;
    tile_sizes(in, tiles, b.bytes);
    for (int i = 0; i < 5; i++) {
        b.d[i] = NULL;
        if (b.bytes[i])
            CK(cudaMalloc(&b.d[i], b.bytes[i]));
    }
    return b;
}

static void free_dev(tile_bufs *b)
{
    for (int i = 0; i < 5; i++)
        cudaFree(b->d[i]);
}

static mfd::gen_ctx dev_ctx(const dev_row *r, const tile_bufs *b, uint64_t seed)
{
    mfd::gen_ctx g;
    memset(&g, 0, sizeof g);
    g.in = r->d_row;
    g.m = r->row.m;
    g.n = r->row.n;
    g.k = r->row.k;
    g.seed = seed;
    ::gen_mix_default((::gen_mix *)&g.mix);
    g.A = b->d[0];
    g.B = b->d[1];
    g.C = b->d[2];
    g.SA = b->d[3];
    g.SB = b->d[4];
    return g;
}

static unsigned blocks_for(size_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

/* ---------------------------------------------------------------- benchmark */

/* The product tables made so far, by (A format, B format, as_f16). */
static unsigned short *prod_tab[MF_FMT_COUNT][MF_FMT_COUNT][2];

static const unsigned short *prod_table(mf_format fa, mf_format fb, int as_f16)
{
    unsigned short *&t = prod_tab[fa][fb][as_f16];
    if (!t) {
        CK(cudaMalloc(&t, 65536 * sizeof *t));
        mfd_prod_table_kernel<<<64, 256>>>(fa, fb, as_f16, t);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    return t;
}

/* The fixed-shape instance for row `in` (r: its device copy), or NULL;
 * *tab: its product table, or NULL. */
static fixed_fn fixed_for(const dev_row &r, const ::mf_instr *in, const unsigned short **tab)
{
    *tab = NULL;
    int *d_ok, ok[2];
    CK(cudaMalloc(&d_ok, sizeof ok));
    fixed_ok_kernel<<<1, 1>>>(r.row, d_ok);
    CK(cudaGetLastError());
    CK(cudaMemcpy(ok, d_ok, sizeof ok, cudaMemcpyDeviceToHost));
    cudaFree(d_ok);
    const int e = (int)mf_tile_elem_bytes(in->fa), k = in->sparse ? in->k / 2 : in->k;
    if (!ok[0] || e != (int)mf_tile_elem_bytes(in->fb))
        return NULL;
    if (in->family == MF_FMA_CHAIN)
        return eval_fma_kernel;
    const int fam = in->family == MF_F16_EMU ? FX_F16EMU : FX_TFDPA, l = in->L < k ? in->L : k;
    const int packs = mfd_prod_packs(in->fa, in->fb);   /* fp8: the model packs their products */
    for (int want = packs; want >= 0; want--)   /* an fp8 pair: the instance with the table, else without */
        for (const FixedShape &f : fixed_shapes)
            if (f.fam == fam && f.e == e && f.k == k && f.l == l && f.sp == (in->sparse ? 1 : 0) &&
                f.per == (in->sparse ? ok[1] : 0) && f.tab == want) {
                if (f.tab)
                    *tab = prod_table(in->fa, in->fb, fam == FX_F16EMU);
                return f.fn;
            }
    return NULL;
}

struct bench_result {
    double eval_per_s;      /* the model: the row's fixed-shape entry where it has one, else mf_eval */
    double general_per_s;   /* mf_eval on an mf_case (every row) */
    bool fixed;             /* eval_per_s is the fixed-shape entry's */
    double gen_tiles_per_s, gen_cases_per_s;
};

static bench_result bench_row(const ::mf_instr *in, size_t ncases, uint64_t seed)
{
    const size_t mn = (size_t)in->m * in->n, tiles = (ncases + mn - 1) / mn;
    ncases = tiles * mn;
    dev_row r = upload_row(in);
    tile_bufs b = alloc_dev(in, tiles);
    uint64_t *D;
    CK(cudaMalloc(&D, ncases * sizeof *D));
    const mfd::gen_ctx g = dev_ctx(&r, &b, seed);
    const unsigned short *tab;
    const fixed_fn fx = fixed_for(r, in, &tab);
    cudaEvent_t e0, e1, e2, e3;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    CK(cudaEventCreate(&e3));
    /* warm-up (first launches load the module), then the timed kernels */
    gen_kernel<<<blocks_for(tiles, 128), 128>>>(g, 0, tiles, NULL);
    eval_kernel<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], b.d[4], D, ncases);
    if (fx)
        fx<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], tab, D, ncases);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e0));
    gen_kernel<<<blocks_for(tiles, 128), 128>>>(g, tiles, tiles, NULL);
    CK(cudaEventRecord(e1));
    eval_kernel<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], b.d[4], D, ncases);
    CK(cudaEventRecord(e2));
    if (fx)
        fx<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], tab, D, ncases);
    CK(cudaEventRecord(e3));
    CK(cudaEventSynchronize(e3));
    CK(cudaGetLastError());
    float ms_gen, ms_eval, ms_fixed;
    CK(cudaEventElapsedTime(&ms_gen, e0, e1));
    CK(cudaEventElapsedTime(&ms_eval, e1, e2));
    CK(cudaEventElapsedTime(&ms_fixed, e2, e3));
    bench_result res;
    res.general_per_s = (double)ncases / (ms_eval * 1e-3);
    res.fixed = fx != NULL;
    res.eval_per_s = fx ? (double)ncases / (ms_fixed * 1e-3) : res.general_per_s;
    res.gen_tiles_per_s = (double)tiles / (ms_gen * 1e-3);
    res.gen_cases_per_s = (double)ncases / (ms_gen * 1e-3);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaEventDestroy(e3);
    cudaFree(D);
    free_dev(&b);
    free_row(&r);
    return res;
}

static void print_result(const char *what, const ::mf_instr *in, size_t n, const bench_result &res)
{
    printf("%-12s %-62s %8.3g dot/s model (%s, general %.3g)  %8.3g tiles/s gen (%.3g cases/s)  n=%zu\n", what,
           in->name, res.eval_per_s, res.fixed ? "fixed" : "general", res.general_per_s, res.gen_tiles_per_s,
           res.gen_cases_per_s, n);
    fflush(stdout);
}

static int run_bench(size_t ncases, uint64_t seed, int all, int rows, const std::vector<const ::mf_instr *> &only)
{
    if (!only.empty()) {
        for (const ::mf_instr *in : only)
            print_result("row", in, ncases, bench_row(in, ncases, seed));
        return 0;
    }
    printf("model on the GPU: per family, its slowest row (short runs of every row first)\n");
    for (int f = 0; f < MF_FAMILY_COUNT; f++) {
        const ::mf_instr *slowest = NULL;
        double worst = 0;
        for (size_t i = 0; i < mf_instr_count; i++) {
            const ::mf_instr *in = &mf_instr_table[i];
            if ((int)in->family != f)
                continue;
            const size_t n = ncases / 16 < (1u << 18) ? ncases / 16 : (1u << 18);
            const bench_result r = bench_row(in, n, seed);
            if (rows)
                print_result("  row", in, n, r);
            if (!slowest || r.eval_per_s < worst) {
                slowest = in;
                worst = r.eval_per_s;
            }
        }
        if (slowest)
            print_result(mf_family_name((mf_family)f), slowest, ncases, bench_row(slowest, ncases, seed));
    }
    if (all) {
        printf("every hopper row:\n");
        for (size_t i = 0; i < mf_instr_count; i++)
            if (mf_instr_table[i].arch == MF_ARCH_HOPPER)
                print_result("hopper", &mf_instr_table[i], ncases, bench_row(&mf_instr_table[i], ncases, seed));
    }
    return 0;
}

/* ---------------------------------------------------------------- check */

static int failures;
static int fixed_rows;   /* rows whose fixed-shape entry --check held against the host too */

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        if (failures++ < 20) {                                                                               \
            printf("FAIL: ");                                                                                \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

/* Every generator alone on `tiles` tiles of row `in`: GPU against host. */
static long check_gen_row(const ::mf_instr *in, size_t tiles, uint64_t seed)
{
    /* the pool: the diagonal cases of 16 uniform tiles of the row */
    enum { POOL = 16 };
    size_t pb[5];
    tile_sizes(in, POOL, pb);
    std::vector<uint8_t> pool_bufs[5];
    for (int i = 0; i < 5; i++)
        pool_bufs[i].assign(pb[i] + 1, 0);
    gen_fill_tiles(in, in->m, in->n, in->k, seed ^ 0x9e3779b97f4a7c15ull, 0, POOL, pool_bufs[0].data(),
                   pool_bufs[1].data(), pool_bufs[2].data(), in->n_scales ? pool_bufs[3].data() : NULL,
                   in->n_scales ? pool_bufs[4].data() : NULL);
    std::vector<::gen_saved_case> pool(POOL);
    const int S = in->n_scales;
    for (int p = 0; p < POOL; p++) {
        ::mf_case *cs = &pool[p].cs;
        memset(cs, 0, sizeof *cs);
        pool[p].in = in;
        const int s = p % std::min((int)in->m, (int)in->n);
        for (int k = 0; k < in->k; k++) {
            cs->a[k] = mf_elem_get(mf_tile_elem_bytes(in->fa), pool_bufs[0].data(), ((size_t)p * in->m + s) * in->k + k);
            cs->b[k] = mf_elem_get(mf_tile_elem_bytes(in->fb), pool_bufs[1].data(), ((size_t)p * in->n + s) * in->k + k);
        }
        cs->c = mf_elem_get(mf_tile_elem_bytes(in->fc), pool_bufs[2].data(), ((size_t)p * in->m + s) * in->n + s);
        for (int q = 0; q < S; q++) {
            cs->sa[q] = mf_elem_get(mf_tile_elem_bytes(in->fs), pool_bufs[3].data(), ((size_t)p * in->m + s) * S + q);
            cs->sb[q] = mf_elem_get(mf_tile_elem_bytes(in->fs), pool_bufs[4].data(), ((size_t)p * in->n + s) * S + q);
        }
    }
    dev_row r = upload_row(in);
    /* the pool on the GPU: the cases (their `in` is never read there) and the view */
    mfd::gen_saved_case *d_pool;
    const mfd::gen_saved_case **d_view;
    CK(cudaMalloc(&d_pool, POOL * sizeof *d_pool));
    CK(cudaMemcpy(d_pool, pool.data(), POOL * sizeof *d_pool, cudaMemcpyHostToDevice));
    std::vector<const mfd::gen_saved_case *> dview(POOL);
    for (int p = 0; p < POOL; p++)
        dview[p] = d_pool + p;
    CK(cudaMalloc(&d_view, POOL * sizeof *d_view));
    CK(cudaMemcpy(d_view, dview.data(), POOL * sizeof *d_view, cudaMemcpyHostToDevice));
    std::vector<const ::gen_saved_case *> hview(POOL);
    for (int p = 0; p < POOL; p++)
        hview[p] = &pool[p];

    const size_t chunk = std::min(tiles, (size_t)1 << 17);
    tile_bufs b = alloc_dev(in, chunk);
    uint8_t *d_kind;
    CK(cudaMalloc(&d_kind, chunk));
    std::vector<uint8_t> h[5], got[5], hk(chunk), dk(chunk);
    for (int i = 0; i < 5; i++) {
        h[i].assign(b.bytes[i] + 1, 0);
        got[i].assign(b.bytes[i] + 1, 0);
    }
    long n = 0;
    for (int gk = 0; gk < GEN_COUNT; gk++) {
        int reported = 0;
        for (size_t first = 0; first < tiles; first += chunk) {
            const size_t nt = std::min(chunk, tiles - first);
            mfd::gen_ctx g = dev_ctx(&r, &b, seed);
            memset(&g.mix, 0, sizeof g.mix);
            g.mix.w[gk] = 1;
            g.view = d_view;
            g.nview = POOL;
            gen_kernel<<<blocks_for(nt, 128), 128>>>(g, first, nt, d_kind);
            CK(cudaGetLastError());
            ::gen_ctx hc;
            memset(&hc, 0, sizeof hc);
            hc.in = in;
            hc.m = in->m;
            hc.n = in->n;
            hc.k = in->k;
            hc.seed = seed;
            hc.mix.w[gk] = 1;
            hc.view = hview.data();
            hc.nview = POOL;
            /* the host: tile first+t into slot t, as on the GPU */
            hc.A = h[0].data();
            hc.B = h[1].data();
            hc.C = h[2].data();
            hc.SA = S || in->sparse ? h[3].data() : NULL;
            hc.SB = S ? h[4].data() : NULL;
            {
                const unsigned nth = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
                std::vector<std::thread> th;
                for (unsigned w = 0; w < nth; w++)
                    th.emplace_back([&, w]() {
                        for (size_t t = w; t < nt; t += nth)
                            hk[t] = (uint8_t)::gen_tile(&hc, first + t, t);
                    });
                for (auto &x : th)
                    x.join();
            }
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(dk.data(), d_kind, nt, cudaMemcpyDeviceToHost));
            size_t used[5];
            tile_sizes(in, nt, used);
            for (int i = 0; i < 5; i++)
                if (used[i])
                    CK(cudaMemcpy(got[i].data(), b.d[i], used[i], cudaMemcpyDeviceToHost));
            for (size_t t = 0; t < nt && reported < 3; t++)
                if (hk[t] != dk[t] || hk[t] != gk) {
                    FAIL("%s generator %s tile %zu: host used %d, GPU %d", in->name, gen_name((gen_kind)gk), first + t,
                         hk[t], dk[t]);
                    reported++;
                }
            static const char *names[5] = {"A", "B", "C", "SA", "SB"};
            for (int i = 0; i < 5 && reported < 3; i++)
                if (used[i] && memcmp(h[i].data(), got[i].data(), used[i])) {
                    size_t at = 0;
                    while (h[i][at] == got[i][at])
                        at++;
                    FAIL("%s generator %s tiles %zu..: %s differs at byte %zu (host 0x%02x, GPU 0x%02x)", in->name,
                         gen_name((gen_kind)gk), first, names[i], at, h[i][at], got[i][at]);
                    reported++;
                }
            n += (long)nt;
        }
    }
    cudaFree(d_kind);
    free_dev(&b);
    cudaFree(d_view);
    cudaFree(d_pool);
    free_row(&r);
    return n;
}

/* mf_eval on the GPU against the host on `ncases` generated cases of `in`. */
static long check_eval_row(const ::mf_instr *in, size_t ncases, uint64_t seed)
{
    const size_t mn = (size_t)in->m * in->n, tiles = (ncases + mn - 1) / mn;
    ncases = tiles * mn;
    dev_row r = upload_row(in);
    tile_bufs b = alloc_dev(in, tiles);
    uint64_t *D;
    CK(cudaMalloc(&D, ncases * sizeof *D));
    const mfd::gen_ctx g = dev_ctx(&r, &b, seed);
    gen_kernel<<<blocks_for(tiles, 128), 128>>>(g, 0, tiles, NULL);
    eval_kernel<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], b.d[4], D, ncases);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint64_t> dfix;
    const unsigned short *tab;
    if (const fixed_fn fx = fixed_for(r, in, &tab)) {   /* the fixed-shape entry too, where the row has one */
        fx<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], tab, D, ncases);
        CK(cudaGetLastError());
        dfix.resize(ncases);
        CK(cudaMemcpy(dfix.data(), D, ncases * sizeof *D, cudaMemcpyDeviceToHost));
        fixed_rows++;
        eval_kernel<<<blocks_for(ncases, 128), 128>>>(r.row, b.d[0], b.d[1], b.d[2], b.d[3], b.d[4], D, ncases);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    std::vector<uint8_t> h[5];
    for (int i = 0; i < 5; i++) {
        h[i].assign(b.bytes[i] + 1, 0);
        if (b.bytes[i])
            CK(cudaMemcpy(h[i].data(), b.d[i], b.bytes[i], cudaMemcpyDeviceToHost));
    }
    std::vector<uint64_t> d(ncases);
    CK(cudaMemcpy(d.data(), D, ncases * sizeof *D, cudaMemcpyDeviceToHost));
    const int S = in->n_scales;
    int reported = 0;
    for (size_t idx = 0; idx < ncases; idx++) {
        const size_t t = idx / mn, rr = idx % mn;
        const int i = (int)(rr / in->n), j = (int)(rr % in->n);
        ::mf_case cs;
        memset(&cs, 0, sizeof cs);
        for (int k = 0; k < in->k; k++) {
            cs.a[k] = mf_elem_get(mf_tile_elem_bytes(in->fa), h[0].data(), (t * in->m + i) * in->k + k);
            cs.b[k] = mf_elem_get(mf_tile_elem_bytes(in->fb), h[1].data(), (t * in->n + j) * in->k + k);
        }
        cs.c = mf_elem_get(mf_tile_elem_bytes(in->fc), h[2].data(), (t * in->m + i) * in->n + j);
        for (int q = 0; q < S; q++) {
            cs.sa[q] = mf_elem_get(mf_tile_elem_bytes(in->fs), h[3].data(), (t * in->m + i) * S + q);
            cs.sb[q] = mf_elem_get(mf_tile_elem_bytes(in->fs), h[4].data(), (t * in->n + j) * S + q);
        }
        for (int q = 0; in->sparse && q < in->n_meta; q++)
            cs.meta[q] = h[3][(t * in->m + i) * in->n_meta + q];
        const uint64_t want = ::mf_eval(in, &cs);
        if (d[idx] != want && reported++ < 3)
            FAIL("%s case %zu: GPU 0x%" PRIx64 ", host 0x%" PRIx64, in->name, idx, d[idx], want);
        if (!dfix.empty() && dfix[idx] != want && reported++ < 3)
            FAIL("%s case %zu: GPU fixed-shape entry 0x%" PRIx64 ", host 0x%" PRIx64, in->name, idx, dfix[idx], want);
    }
    cudaFree(D);
    free_dev(&b);
    free_row(&r);
    return (long)ncases;
}

static int run_check(size_t check_tiles, uint64_t seed)
{
    const ::mf_instr *main_row = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    double t0 = now();
    long tiles = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const ::mf_instr *in = &mf_instr_table[i];
        tiles += check_gen_row(in, in == main_row ? check_tiles : std::min(check_tiles, (size_t)2000), seed + i);
    }
    printf("gen: %ld tiles, every generator (mutate with a pool of 16 cases on the GPU), %s at %zu tiles per "
           "generator, the other rows at %zu: %.1f s\n",
           tiles, main_row ? main_row->name : "-", check_tiles, std::min(check_tiles, (size_t)2000), now() - t0);
    const int gen_failures = failures;
    t0 = now();
    long cases = 0;
    for (size_t i = 0; i < mf_instr_count; i++)
        cases += check_eval_row(&mf_instr_table[i], 1 << 14, seed * 7 + i);
    printf("eval: %ld cases over %zu rows, GPU mf_eval against the host's (and on %d rows the fixed-shape entry "
           "too): %.1f s\n",
           cases, mf_instr_count, fixed_rows, now() - t0);
    if (failures) {
        printf("%d differences (%d in gen, %d in eval)\n", failures, gen_failures, failures - gen_failures);
        return 1;
    }
    printf("GPU and host agree\n");
    return 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    size_t ncases = (size_t)1 << 24, check_tiles = 1000000;
    uint64_t seed = 1;
    int all = 0, rows = 0, check = 0, device = 0;
    std::vector<const ::mf_instr *> only;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--all"))
            all = 1;
        else if (!strcmp(a, "--rows"))
            rows = 1;
        else if (!strcmp(a, "--check"))
            check = 1;
        else if (i + 1 < argc && !strcmp(a, "-n"))
            ncases = strtoull(argv[++i], NULL, 0);
        else if (i + 1 < argc && !strcmp(a, "-seed"))
            seed = strtoull(argv[++i], NULL, 0);
        else if (i + 1 < argc && !strcmp(a, "-device"))
            device = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(a, "--check-tiles"))
            check_tiles = strtoull(argv[++i], NULL, 0);
        else if (i + 1 < argc && !strcmp(a, "--instr")) {
            const ::mf_instr *in = mf_instr_find(argv[++i]);
            if (!in) {
                fprintf(stderr, "mmafuzz_model_bench: unknown instruction '%s'\n", argv[i]);
                return 2;
            }
            only.push_back(in);
        } else {
            fprintf(stderr,
                    "usage: %s [--all] [--rows] [--check] [-n CASES] [-seed S] [-device N] [--check-tiles T] [--instr NAME]...\n",
                    argv[0]);
            return 2;
        }
    }
    if (ncases == 0 || check_tiles == 0) {
        fprintf(stderr, "mmafuzz_model_bench: -n and --check-tiles expect a positive number\n");
        return 2;
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        const char *req = getenv("MMAFUZZ_REQUIRE_GPU");
        const int require = req && !strcmp(req, "1");
        printf("%s: no CUDA device (%s)\n", require ? "FAIL (MMAFUZZ_REQUIRE_GPU=1)" : "SKIP",
               e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return require ? 1 : 77;
    }
    CK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, device));
    printf("device %d: %s (sm_%d%d, %d SMs)\n", device, prop.name, prop.major, prop.minor, prop.multiProcessorCount);
    CK(mfd_device_init(0));
    /* the general path (eval_kernel): the same room as the GPU check gives it (model_device.cuh) */
    CK(cudaDeviceSetLimit(cudaLimitStackSize, MFD_STACK_BYTES));
    return check ? run_check(check_tiles, seed) : run_bench(ncases, seed, all, rows, only);
}

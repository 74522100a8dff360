/*
 * gemm_cublaslt.c - the cuBLASLt GEMM device of devices/mf_gemm.h: one
 * whole GEMM call through cublasLtMatmul, with the heuristic's algorithm or
 * another of its list, and each algorithm's configuration read back.
 *
 * Plain C over cuBLASLt's and the CUDA runtime's C APIs.  Built with them
 * when the CUDA layer is built (devices/cuda/CMakeLists.txt defines
 * MMAFUZZ_HAVE_CUBLASLT and links CUDA::cublasLt); otherwise the same
 * functions say that this build has no cuBLASLt.
 *
 * Row-major (PyTorch) to column-major (cuBLAS), as torch does it:
 * D (M x N row-major) is D^T (N x M column-major) = B^T A^T, so cuBLASLt's
 * first operand is B (N x K after op: op N on row-major K x N memory,
 * op T on column-major B), its second A (op N: row-major M x K memory is
 * K x M column-major), m = N, n = M.  FP8 needs op T on the first operand:
 * B column-major (b_colmajor), as torch._scaled_mm requires.
 */
#include "mf_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mf_gemm_check(const mf_gemm_desc *d)
{
    if (!d)
        return "no descriptor";
    if (d->m < 1 || d->n < 1 || d->k < 1)
        return "M, N and K must be at least 1";
    if (d->m > (1LL << 31) - 1 || d->n > (1LL << 31) - 1 || d->k > (1LL << 31) - 1)
        return "M, N and K must be below 2^31";
    if (d->a != d->b)
        return "A and B must have the same format";
    switch (d->a) {
    case MF_FMT_F16:
    case MF_FMT_BF16:
        if (d->d != d->a && d->d != MF_FMT_F32)
            return "f16/bf16 inputs give an output of the same format or f32";
        break;
    case MF_FMT_TF32:
    case MF_FMT_F32:
        if (d->d != MF_FMT_F32)
            return "f32/tf32 inputs give an f32 output";
        break;
    case MF_FMT_E4M3:
    case MF_FMT_E5M2:
        if (d->d != MF_FMT_F32 && d->d != MF_FMT_BF16 && d->d != MF_FMT_F16)
            return "fp8 inputs give an f32, bf16 or f16 output (torch._scaled_mm's out_dtype)";
        if (!d->b_colmajor)
            return "fp8 needs B column-major (cuBLASLt's TN layout, as torch._scaled_mm)";
        if (d->k % 16)
            return "fp8 needs K a multiple of 16 (cuBLASLt's alignment, as torch._scaled_mm)";
        break;
    default:
        return "input format must be f16, bf16, tf32, f32, e4m3 or e5m2";
    }
    if (d->fast_accum && d->a != MF_FMT_E4M3 && d->a != MF_FMT_E5M2)
        return "fast_accum applies to fp8 inputs only";
    return NULL;
}

#ifndef MMAFUZZ_HAVE_CUBLASLT

/* ------------------------------------------------ a build without cuBLASLt */

static const char no_lt[] = "this build has no cuBLASLt device (the CUDA layer is not built: configure with a CUDA "
                            "toolkit and a GPU, or -DMMAFUZZ_CUDA_TARGETS=sm_90a)";

static void say(char *err, size_t n)
{
    if (err && n)
        snprintf(err, n, "%s", no_lt);
}

mf_gemm *mf_gemm_open(int device, char *err, size_t errlen)
{
    (void)device;
    say(err, errlen);
    return NULL;
}
void mf_gemm_close(mf_gemm *h) { (void)h; }
void mf_gemm_gpu(const mf_gemm *h, char *name, size_t nlen, char *sm, size_t slen, char *driver, size_t dlen,
                 char *runtime, size_t rlen)
{
    (void)h;
    if (nlen) *name = 0;
    if (slen) *sm = 0;
    if (dlen) *driver = 0;
    if (rlen) *runtime = 0;
}
int mf_gemm_algos(mf_gemm *h, const mf_gemm_desc *desc, mf_gemm_algo *out, int max, mf_gemm_config *cfg, char *err,
                  size_t errlen)
{
    (void)h, (void)desc, (void)out, (void)max, (void)cfg;
    say(err, errlen);
    return -1;
}
int mf_gemm_run(mf_gemm *h, const mf_gemm_desc *desc, int algo_index, const void *dA, const void *dB, void *dD,
                void *stream, char *err, size_t errlen)
{
    (void)h, (void)desc, (void)algo_index, (void)dA, (void)dB, (void)dD, (void)stream;
    say(err, errlen);
    return -1;
}
int mf_gemm_run_host(mf_gemm *h, const mf_gemm_desc *desc, int algo_index, const void *A, const void *B, void *D,
                     char *err, size_t errlen)
{
    (void)h, (void)desc, (void)algo_index, (void)A, (void)B, (void)D;
    say(err, errlen);
    return -1;
}
void *mf_gemm_alloc(mf_gemm *h, size_t bytes, char *err, size_t errlen)
{
    (void)h, (void)bytes;
    say(err, errlen);
    return NULL;
}
void mf_gemm_free(mf_gemm *h, void *dptr) { (void)h, (void)dptr; }
int mf_gemm_upload(mf_gemm *h, void *dptr, const void *src, size_t bytes, char *err, size_t errlen)
{
    (void)h, (void)dptr, (void)src, (void)bytes;
    say(err, errlen);
    return -1;
}
int mf_gemm_download(mf_gemm *h, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen)
{
    (void)h, (void)dst, (void)dptr, (void)bytes;
    say(err, errlen);
    return -1;
}
int mf_gemm_sync(mf_gemm *h, void *stream, char *err, size_t errlen)
{
    (void)h, (void)stream;
    say(err, errlen);
    return -1;
}

#else

/* ------------------------------------------------------------- cuBLASLt */

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "cublaslt_names.h"   /* generated from cublasLt.h: mf_lt_tiles, mf_lt_stages */

enum { DEFAULT_WORKSPACE = 32 << 20 };   /* torch's cuBLASLt workspace on Hopper */

struct mf_gemm {
    int device;
    cublasLtHandle_t lt;
    void *workspace;
    size_t workspace_size;
    float *one;               /* device 1.0f: the FP8 scale pointers */
    /* the set-up of the last descriptor and its heuristic list */
    int have;
    mf_gemm_desc desc;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulHeuristicResult_t res[MF_GEMM_MAX_ALGOS];
    int nres;
    char gpu[256], sm[16];
};

#define LT(call, what)                                                                                   \
    do {                                                                                                 \
        cublasStatus_t st_ = (call);                                                                     \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                              \
            snprintf(err, errlen, "%s: %s (%d)", what, cublasLtGetStatusString(st_), (int)st_);          \
            return -1;                                                                                   \
        }                                                                                                \
    } while (0)
#define RT(call, what)                                                                                   \
    do {                                                                                                 \
        cudaError_t ce_ = (call);                                                                        \
        if (ce_ != cudaSuccess) {                                                                        \
            snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(ce_));                              \
            return -1;                                                                                   \
        }                                                                                                \
    } while (0)

static cudaDataType lt_type(mf_format f)
{
    switch (f) {
    case MF_FMT_F16: return CUDA_R_16F;
    case MF_FMT_BF16: return CUDA_R_16BF;
    case MF_FMT_E4M3: return CUDA_R_8F_E4M3;
    case MF_FMT_E5M2: return CUDA_R_8F_E5M2;
    default: return CUDA_R_32F;   /* F32, TF32 */
    }
}

static size_t fmt_bytes(mf_format f)
{
    return f == MF_FMT_E4M3 || f == MF_FMT_E5M2 ? 1 : f == MF_FMT_F16 || f == MF_FMT_BF16 ? 2 : 4;
}

static const char *lt_name(const mf_lt_name *t, unsigned id)
{
    for (; t->name; t++)
        if (t->id == id)
            return t->name;
    return NULL;
}

static const char *compute_name(int32_t c)
{
    switch (c) {
    case CUBLAS_COMPUTE_32F: return "32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32: return "32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_PEDANTIC: return "32F_PEDANTIC";
    case CUBLAS_COMPUTE_32F_FAST_16F: return "32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF: return "32F_FAST_16BF";
    default: return "other";
    }
}

mf_gemm *mf_gemm_open(int device, char *err, size_t errlen)
{
    int n = 0;
    cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce != cudaSuccess || n == 0) {
        snprintf(err, errlen, "no CUDA GPU here (cudaGetDeviceCount: %s)",
                 ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
        return NULL;
    }
    if (device < 0 || device >= n) {
        snprintf(err, errlen, "no CUDA GPU %d here (%d present)", device, n);
        return NULL;
    }
    mf_gemm *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->device = device;
    struct cudaDeviceProp p;
    if ((ce = cudaSetDevice(device)) != cudaSuccess || (ce = cudaGetDeviceProperties(&p, device)) != cudaSuccess) {
        snprintf(err, errlen, "GPU %d: %s", device, cudaGetErrorString(ce));
        free(h);
        return NULL;
    }
    snprintf(h->gpu, sizeof h->gpu, "%s", p.name);
    snprintf(h->sm, sizeof h->sm, "%d%d", p.major, p.minor);
    cublasStatus_t st = cublasLtCreate(&h->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublasLtCreate: %s", cublasLtGetStatusString(st));
        free(h);
        return NULL;
    }
    float one = 1.0f;
    if ((ce = cudaMalloc((void **)&h->one, sizeof one)) != cudaSuccess ||
        (ce = cudaMemcpy(h->one, &one, sizeof one, cudaMemcpyHostToDevice)) != cudaSuccess) {
        snprintf(err, errlen, "GPU %d: %s", device, cudaGetErrorString(ce));
        mf_gemm_close(h);
        return NULL;
    }
    return h;
}

static void drop_setup(mf_gemm *h)
{
    if (h->op)
        cublasLtMatmulDescDestroy(h->op);
    if (h->la)
        cublasLtMatrixLayoutDestroy(h->la);
    if (h->lb)
        cublasLtMatrixLayoutDestroy(h->lb);
    if (h->ld)
        cublasLtMatrixLayoutDestroy(h->ld);
    h->op = NULL;
    h->la = h->lb = h->ld = NULL;
    h->have = 0;
    h->nres = 0;
}

void mf_gemm_close(mf_gemm *h)
{
    if (!h)
        return;
    cudaSetDevice(h->device);
    drop_setup(h);
    if (h->workspace)
        cudaFree(h->workspace);
    if (h->one)
        cudaFree(h->one);
    if (h->lt)
        cublasLtDestroy(h->lt);
    free(h);
}

void mf_gemm_gpu(const mf_gemm *h, char *name, size_t nlen, char *sm, size_t slen, char *driver, size_t dlen,
                 char *runtime, size_t rlen)
{
    int dv = 0, rv = 0;
    cudaDriverGetVersion(&dv);
    cudaRuntimeGetVersion(&rv);
    snprintf(name, nlen, "%s", h ? h->gpu : "");
    snprintf(sm, slen, "%s", h ? h->sm : "");
    snprintf(driver, dlen, "%d.%d", dv / 1000, dv % 1000 / 10);
    snprintf(runtime, rlen, "%d.%d", rv / 1000, rv % 1000 / 10);
}

/* Descriptors and the heuristic's list for *d, made anew (setup below
 * keeps them while d does not change, and drops what a failure left). */
static int setup_new(mf_gemm *h, const mf_gemm_desc *d, char *err, size_t errlen)
{
    RT(cudaSetDevice(h->device), "cudaSetDevice");
    int fp8 = d->a == MF_FMT_E4M3 || d->a == MF_FMT_E5M2;
    cublasComputeType_t ct = d->a == MF_FMT_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    LT(cublasLtMatmulDescCreate(&h->op, ct, CUDA_R_32F), "cublasLtMatmulDescCreate");
    cublasOperation_t ta = d->b_colmajor ? CUBLAS_OP_T : CUBLAS_OP_N, tb = CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(h->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
    LT(cublasLtMatmulDescSetAttribute(h->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
    if (fp8) {
        int8_t fast = (int8_t)(d->fast_accum != 0);
        LT(cublasLtMatmulDescSetAttribute(h->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "FAST_ACCUM");
        const void *one = h->one;
        LT(cublasLtMatmulDescSetAttribute(h->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &one, sizeof one),
           "A_SCALE_POINTER");
        LT(cublasLtMatmulDescSetAttribute(h->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &one, sizeof one),
           "B_SCALE_POINTER");
    }
    uint64_t M = (uint64_t)d->m, N = (uint64_t)d->n, K = (uint64_t)d->k;
    cudaDataType ti = lt_type(d->a), to = lt_type(d->d);
    /* cuBLASLt's A = our B: K x N row-major is N x K column-major (ld N);
     * column-major B is K x N column-major (ld K), op T. */
    if (d->b_colmajor)
        LT(cublasLtMatrixLayoutCreate(&h->la, ti, K, N, (int64_t)K), "layout of B");
    else
        LT(cublasLtMatrixLayoutCreate(&h->la, ti, N, K, (int64_t)N), "layout of B");
    LT(cublasLtMatrixLayoutCreate(&h->lb, ti, K, M, (int64_t)K), "layout of A");
    LT(cublasLtMatrixLayoutCreate(&h->ld, to, N, M, (int64_t)N), "layout of D");

    size_t ws = d->workspace ? d->workspace : DEFAULT_WORKSPACE;
    if (h->workspace_size < ws) {
        if (h->workspace)
            cudaFree(h->workspace);
        h->workspace = NULL;
        h->workspace_size = 0;
        RT(cudaMalloc(&h->workspace, ws), "workspace");
        h->workspace_size = ws;
    }
    cublasLtMatmulPreference_t pref;
    LT(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                             sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS && d->reduction_mask)
        st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                  &d->reduction_mask, sizeof d->reduction_mask);
    int n = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(h->lt, h->op, h->la, h->lb, h->ld, h->ld, pref, MF_GEMM_MAX_ALGOS,
                                            h->res, &n);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || n < 1) {
        snprintf(err, errlen, "cublasLtMatmulAlgoGetHeuristic: %s",
                 st != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(st) : "no algorithm for this call");
        return -1;
    }
    h->nres = n;
    return 0;
}

static int desc_equal(const mf_gemm_desc *x, const mf_gemm_desc *y)
{
    return x->m == y->m && x->n == y->n && x->k == y->k && x->a == y->a && x->b == y->b && x->d == y->d &&
           x->b_colmajor == y->b_colmajor && x->fast_accum == y->fast_accum &&
           x->reduction_mask == y->reduction_mask && x->workspace == y->workspace;
}

static int setup(mf_gemm *h, const mf_gemm_desc *d, char *err, size_t errlen)
{
    const char *why = mf_gemm_check(d);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (h->have && desc_equal(&h->desc, d))
        return 0;
    drop_setup(h);
    if (setup_new(h, d, err, errlen)) {
        drop_setup(h);
        return -1;
    }
    h->desc = *d;
    h->have = 1;
    return 0;
}

static void config_u32(const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoConfigAttributes_t attr, uint32_t *out)
{
    size_t w = 0;
    uint32_t v = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(a, attr, &v, sizeof v, &w) == CUBLAS_STATUS_SUCCESS)
        *out = v;
}

static void config_u16(const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoConfigAttributes_t attr, uint32_t *out)
{
    size_t w = 0;
    uint16_t v = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(a, attr, &v, sizeof v, &w) == CUBLAS_STATUS_SUCCESS)
        *out = v;
}

int mf_gemm_algos(mf_gemm *h, const mf_gemm_desc *desc, mf_gemm_algo *out, int max, mf_gemm_config *cfg, char *err,
                  size_t errlen)
{
    if (setup(h, desc, err, errlen))
        return -1;
    int n = h->nres < max ? h->nres : max;
    for (int i = 0; i < n; i++) {
        const cublasLtMatmulAlgo_t *a = &h->res[i].algo;
        mf_gemm_algo *o = &out[i];
        memset(o, 0, sizeof *o);
        o->index = i;
        uint32_t id = 0, sk = 1;
        config_u32(a, CUBLASLT_ALGO_CONFIG_ID, &id);
        o->algo_id = (int32_t)id;
        config_u32(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &o->tile_id);
        config_u32(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &o->stages_id);
        config_u32(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk);
        o->splitk_num = (int32_t)sk;
        config_u32(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &o->reduction_scheme);
        config_u32(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &o->cta_swizzling);
        config_u32(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &o->custom_option);
        config_u16(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &o->inner_shape_id);
        config_u16(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &o->cluster_shape_id);
        size_t w = 0;
        uint64_t impl = 0;
        if (cublasLtMatmulAlgoCapGetAttribute(a, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &impl, sizeof impl, &w) ==
            CUBLAS_STATUS_SUCCESS)
            o->numerical_impl = impl;
        o->workspace = h->res[i].workspaceSize;
        o->waves = h->res[i].wavesCount;
        const char *t = lt_name(mf_lt_tiles, o->tile_id), *s = lt_name(mf_lt_stages, o->stages_id);
        if (t)
            snprintf(o->tile, sizeof o->tile, "%s", t);
        else
            snprintf(o->tile, sizeof o->tile, "id%u", o->tile_id);
        if (s)
            snprintf(o->stages, sizeof o->stages, "%s", s);
        else
            snprintf(o->stages, sizeof o->stages, "id%u", o->stages_id);
    }
    if (cfg) {
        memset(cfg, 0, sizeof *cfg);
        size_t w = 0;
        int32_t ct = 0, stp = 0;
        int8_t fast = 0;
        cublasLtMatmulDescGetAttribute(h->op, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &ct, sizeof ct, &w);
        cublasLtMatmulDescGetAttribute(h->op, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &stp, sizeof stp, &w);
        if (desc->a == MF_FMT_E4M3 || desc->a == MF_FMT_E5M2) {
            cublasLtMatmulDescGetAttribute(h->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast, &w);
            cfg->has_scales = 1;
        }
        cfg->compute_type = ct;
        cfg->scale_type = stp;
        cfg->fast_accum = fast;
        snprintf(cfg->compute, sizeof cfg->compute, "%s", compute_name(ct));
        size_t v = cublasLtGetVersion();
        snprintf(cfg->library, sizeof cfg->library, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    }
    return n;
}

int mf_gemm_run(mf_gemm *h, const mf_gemm_desc *desc, int algo_index, const void *dA, const void *dB, void *dD,
                void *stream, char *err, size_t errlen)
{
    if (setup(h, desc, err, errlen))
        return -1;
    if (algo_index < 0 || algo_index >= h->nres) {
        snprintf(err, errlen, "algorithm %d: the heuristic gave %d for this call (0 to %d)", algo_index, h->nres,
                 h->nres - 1);
        return -1;
    }
    float alpha = 1.0f, beta = 0.0f;
    /* cuBLASLt's A is our B, its B our A; C = D (beta 0: not read) */
    LT(cublasLtMatmul(h->lt, h->op, &alpha, dB, h->la, dA, h->lb, &beta, dD, h->ld, dD, h->ld,
                      &h->res[algo_index].algo, h->workspace, h->workspace_size, (cudaStream_t)stream),
       "cublasLtMatmul");
    return 0;
}

int mf_gemm_run_host(mf_gemm *h, const mf_gemm_desc *desc, int algo_index, const void *A, const void *B, void *D,
                     char *err, size_t errlen)
{
    const char *why = mf_gemm_check(desc);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    RT(cudaSetDevice(h->device), "cudaSetDevice");
    size_t sa = (size_t)desc->m * (size_t)desc->k * fmt_bytes(desc->a);
    size_t sb = (size_t)desc->k * (size_t)desc->n * fmt_bytes(desc->b);
    size_t sd = (size_t)desc->m * (size_t)desc->n * fmt_bytes(desc->d);
    void *dA = NULL, *dB = NULL, *dD = NULL;
    int rc = -1;
    cudaError_t ce;
    if ((ce = cudaMalloc(&dA, sa)) != cudaSuccess || (ce = cudaMalloc(&dB, sb)) != cudaSuccess ||
        (ce = cudaMalloc(&dD, sd)) != cudaSuccess || (ce = cudaMemcpy(dA, A, sa, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (ce = cudaMemcpy(dB, B, sb, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (ce = cudaMemset(dD, 0, sd)) != cudaSuccess) {
        snprintf(err, errlen, "GPU memory for A, B, D (%zu + %zu + %zu bytes): %s", sa, sb, sd, cudaGetErrorString(ce));
        goto out;
    }
    if (mf_gemm_run(h, desc, algo_index, dA, dB, dD, NULL, err, errlen))
        goto out;
    if ((ce = cudaDeviceSynchronize()) != cudaSuccess || (ce = cudaMemcpy(D, dD, sd, cudaMemcpyDeviceToHost)) != cudaSuccess) {
        snprintf(err, errlen, "after cublasLtMatmul: %s", cudaGetErrorString(ce));
        goto out;
    }
    rc = 0;
out:
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    return rc;
}

void *mf_gemm_alloc(mf_gemm *h, size_t bytes, char *err, size_t errlen)
{
    void *p = NULL;
    cudaError_t ce = cudaSetDevice(h->device);
    if (ce == cudaSuccess)
        ce = cudaMalloc(&p, bytes);
    if (ce != cudaSuccess) {
        snprintf(err, errlen, "cudaMalloc(%zu): %s", bytes, cudaGetErrorString(ce));
        return NULL;
    }
    return p;
}

void mf_gemm_free(mf_gemm *h, void *dptr)
{
    (void)h;
    if (dptr)
        cudaFree(dptr);
}

int mf_gemm_upload(mf_gemm *h, void *dptr, const void *src, size_t bytes, char *err, size_t errlen)
{
    RT(cudaSetDevice(h->device), "cudaSetDevice");
    RT(cudaMemcpy(dptr, src, bytes, cudaMemcpyHostToDevice), "copy to the GPU");
    return 0;
}

int mf_gemm_download(mf_gemm *h, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen)
{
    RT(cudaSetDevice(h->device), "cudaSetDevice");
    RT(cudaMemcpy(dst, dptr, bytes, cudaMemcpyDeviceToHost), "copy from the GPU");
    return 0;
}

int mf_gemm_sync(mf_gemm *h, void *stream, char *err, size_t errlen)
{
    RT(cudaSetDevice(h->device), "cudaSetDevice");
    if (stream)
        RT(cudaStreamSynchronize((cudaStream_t)stream), "cudaStreamSynchronize");
    else
        RT(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return 0;
}

#endif /* MMAFUZZ_HAVE_CUBLASLT */

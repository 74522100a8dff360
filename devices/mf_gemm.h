/*
 * mf_gemm.h - a whole GEMM call through cuBLASLt, as a device (docs/kernels.md,
 * "cuBLASLt from C").  Runs D = A x B of given M, N, K and formats with the
 * algorithm cuBLASLt's heuristic picks, or another of the heuristic's list,
 * and reads each algorithm's configuration (tile, split-K number, reduction
 * scheme, stages, CTA swizzling, custom option) and the matmul descriptor's
 * FP8 attributes as evidence for the kernel model's structure.
 *
 * Layout as PyTorch calls it: A row-major M x K; B row-major K x N
 * (torch.matmul) or column-major, i.e. stored N x K row-major
 * (nn.functional.linear's weight, torch._scaled_mm's second operand, and
 * what cuBLASLt requires of FP8); D row-major M x N.  alpha = 1, beta = 0
 * (C is not read), as the kernel model assumes.
 *
 * The functions exist in every build; without the CUDA layer (or without a
 * GPU) mf_gemm_open fails with a message saying so, and the CLI exits with
 * its skip status.  Plain C ABI: no CUDA header is needed to include this.
 */
#ifndef MF_GEMM_H
#define MF_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "mmafuzz_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most algorithms of the heuristic's list that mf_gemm_algos returns. */
#define MF_GEMM_MAX_ALGOS 8

/* One GEMM call. */
typedef struct mf_gemm_desc {
    int64_t m, n, k;
    /* Input formats (a = b): MF_FMT_F16, MF_FMT_BF16, MF_FMT_TF32 (f32 data,
     * CUBLAS_COMPUTE_32F_FAST_TF32: torch's allow_tf32), MF_FMT_F32 (f32
     * data and compute, no tensor cores), MF_FMT_E4M3, MF_FMT_E5M2 (FP8:
     * b_colmajor must be 1, scales of 1 through the scale pointers). */
    mf_format a, b;
    /* Output format: MF_FMT_F16, MF_FMT_BF16 or MF_FMT_F32 (FP8 inputs: F32
     * or BF16, as torch._scaled_mm's out_dtype). */
    mf_format d;
    int b_colmajor;          /* 0: B row-major K x N; 1: B column-major (N x K rows) */
    int fast_accum;          /* FP8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM (use_fast_accum) */
    uint32_t reduction_mask; /* CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK; 0: any (the default) */
    size_t workspace;        /* workspace bytes offered to the heuristic and the call; 0: 32 MiB */
} mf_gemm_desc;

/* What one algorithm of the heuristic's list is (cublasLtMatmulAlgoConfigGetAttribute
 * and cublasLtMatmulAlgoCapGetAttribute; the enums' numbers are cublasLt.h's). */
typedef struct mf_gemm_algo {
    int index;               /* place in the heuristic's list (0: the heuristic's choice) */
    int32_t algo_id;         /* CUBLASLT_ALGO_CONFIG_ID */
    uint32_t tile_id;        /* CUBLASLT_ALGO_CONFIG_TILE_ID (cublasLtMatmulTile_t) */
    uint32_t stages_id;      /* CUBLASLT_ALGO_CONFIG_STAGES_ID (cublasLtMatmulStages_t) */
    int32_t splitk_num;      /* CUBLASLT_ALGO_CONFIG_SPLITK_NUM: K slices (1: no split-K) */
    uint32_t reduction_scheme; /* CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME (cublasLtReductionScheme_t) */
    uint32_t cta_swizzling;  /* CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING */
    uint32_t custom_option;  /* CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION */
    uint32_t inner_shape_id; /* CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID */
    uint32_t cluster_shape_id; /* CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID */
    uint64_t numerical_impl; /* CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS (HMMA/FMA, accumulator, inputs) */
    size_t workspace;        /* the heuristic's workspaceSize for it */
    float waves;             /* the heuristic's wavesCount */
    char tile[32];           /* tile_id as text ("64x64"; "undefined"), from cublasLt.h's names */
    char stages[32];         /* stages_id as text ("64x3"; "undefined") */
} mf_gemm_algo;

/* The descriptor's attributes as cuBLASLt holds them after set-up. */
typedef struct mf_gemm_config {
    int32_t compute_type;    /* CUBLASLT_MATMUL_DESC_COMPUTE_TYPE (cublasComputeType_t) */
    int32_t scale_type;      /* CUBLASLT_MATMUL_DESC_SCALE_TYPE (cudaDataType) */
    int32_t fast_accum;      /* CUBLASLT_MATMUL_DESC_FAST_ACCUM as read back */
    int has_scales;          /* A/B scale pointers set (FP8: scales of 1.0f) */
    char compute[32];        /* compute_type as text ("32F_FAST_TF32") */
    char library[32];        /* cublasLtGetVersion as "13.0.0" */
} mf_gemm_config;

typedef struct mf_gemm mf_gemm;   /* a cuBLASLt handle on one GPU */

/* Open GPU `device` (CUDA ordinal).  @return a handle, or NULL with why in
 * err (no CUDA layer in this build, no GPU, driver error). */
mf_gemm *mf_gemm_open(int device, char *err, size_t errlen);
void mf_gemm_close(mf_gemm *h);
/* "NVIDIA H200" and "90" (compute capability) of the handle's GPU; driver
 * and runtime versions as "13.0". */
void mf_gemm_gpu(const mf_gemm *h, char *name, size_t nlen, char *sm, size_t slen, char *driver, size_t dlen,
                 char *runtime, size_t rlen);

/* @return NULL when *desc is one the backend runs, else what is wrong
 * (checked without a GPU). */
const char *mf_gemm_check(const mf_gemm_desc *desc);

/* The heuristic's algorithms for *desc (cublasLtMatmulAlgoGetHeuristic,
 * at most `max` <= MF_GEMM_MAX_ALGOS), with their attributes, into out[];
 * the descriptor's attributes into *cfg (may be NULL).
 * @return how many (>= 1), or -1 with why in err (no algorithm, bad desc). */
int mf_gemm_algos(mf_gemm *h, const mf_gemm_desc *desc, mf_gemm_algo *out, int max, mf_gemm_config *cfg,
                  char *err, size_t errlen);

/* Run the GEMM once with algorithm algo_index of the heuristic's list, on
 * DEVICE pointers: dA (M x K row-major), dB (K x N row-major, or N x K rows
 * when b_colmajor), dD (M x N row-major), elements of the formats' widths
 * (mf_tile_elem_bytes).  `stream` is a cudaStream_t (NULL: the default
 * stream).  Returns after the call is queued; synchronise the stream before
 * reading dD.  @return 0, or -1 with why in err. */
int mf_gemm_run(mf_gemm *h, const mf_gemm_desc *desc, int algo_index, const void *dA, const void *dB, void *dD,
                void *stream, char *err, size_t errlen);

/* The same on HOST pointers: copies A and B to the GPU, runs, waits and
 * copies D back.  @return 0, or -1 with why in err. */
int mf_gemm_run_host(mf_gemm *h, const mf_gemm_desc *desc, int algo_index, const void *A, const void *B, void *D,
                     char *err, size_t errlen);

/* Device memory for a GEMM loop that makes its operands on the GPU.
 * @return NULL with why in err on failure. */
void *mf_gemm_alloc(mf_gemm *h, size_t bytes, char *err, size_t errlen);
void mf_gemm_free(mf_gemm *h, void *dptr);
/* Copies between host and device memory (synchronous), and waiting for a
 * stream (NULL: the device).  @return 0, or -1 with why in err. */
int mf_gemm_upload(mf_gemm *h, void *dptr, const void *src, size_t bytes, char *err, size_t errlen);
int mf_gemm_download(mf_gemm *h, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen);
int mf_gemm_sync(mf_gemm *h, void *stream, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MF_GEMM_H */

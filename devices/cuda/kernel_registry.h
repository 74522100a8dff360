/*
 * kernel_registry.h - the generated list of CUDA wrappers.  gen_wrappers
 * writes the wrappers of each compilation target (sm_75 ... sm_120a) in
 * parts, wrappers_<target>_<P>.cu, compiled side by side; each part defines
 * mf_cuda_kernels_<target>_<P>[], one entry per (table row, variant) it
 * holds, ending with an entry whose instr is NULL.
 */
#ifndef MMAFUZZ_CUDA_KERNEL_REGISTRY_H
#define MMAFUZZ_CUDA_KERNEL_REGISTRY_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mf_cuda_kernel {
    const char *instr;   /* table name "hopper/wgmma.m64n8k16.f32.f16.f16"; NULL ends a list */
    const char *variant; /* "" or a wgmma variant ("n256", "a_reg", "n256,a_reg") */
    const char *symbol;  /* the kernel's name in the SASS */
    const void *fn;      /* host handle of the __global__ function */
    int threads;         /* block size */
    int tiles_per_block; /* tiles a block works on at once (warps or warpgroups) */
    int smem;            /* dynamic shared memory per block, bytes */
} mf_cuda_kernel;

/* Arguments of every wrapper kernel: ntiles tiles in the ABI layout of
 * mf_device.h, already on the device. */
typedef struct mf_kargs {
    const void *A, *B, *C;
    void *D;
    unsigned long long ntiles;
    const void *SA;   /* sparse rows (mma.sp): the metadata, n_meta bytes per row of A;
                         block-scaled rows: the scales of A, n_scales bytes per row; else unused */
    const void *SB;   /* block-scaled rows: the scales of B, n_scales bytes per column; else unused */
} mf_kargs;

/* One compilation target ("sm_90a") and the lists of its parts (NULL ends
 * them); together they hold every wrapper of the target once. */
typedef struct mf_cuda_target {
    const char *name;
    const mf_cuda_kernel *const *parts;
} mf_cuda_target;

extern const mf_cuda_target mf_cuda_targets[];
extern const int mf_cuda_target_count;

#ifdef __cplusplus
}
#endif
#endif

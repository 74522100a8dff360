/*
 * mfma_kernel.h - the generic MFMA wrapper kernel (HIP device code).
 *
 * One wavefront of 64 lanes computes `blocks` consecutive ABI tiles with one
 * MFMA instruction: each lane gathers its fragments of A, B and C through
 * the layouts (mfma_layout.h, passed by value from the host), issues the
 * builtin once, and scatters D.  Values travel as raw bit patterns: the
 * only arithmetic on them is the MFMA itself.  Lanes of tiles past ntiles
 * read zeros and store nothing.
 *
 * Built with -nogpulib -nohipwrapperinc: no HIP header and no device
 * library is needed, so hipcc (ROCm 5.2, gfx908/gfx90a) and clang-19
 * (gfx942) compile the same source.  gen_mfma writes one MF_MFMA_KERNEL
 * line per table row.
 */
#ifndef MMAFUZZ_HIP_MFMA_KERNEL_H
#define MMAFUZZ_HIP_MFMA_KERNEL_H

#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif

#include "mfma_layout.h"

/* Operand types of the __builtin_amdgcn_mfma_* builtins (BuiltinsAMDGPU.def). */
typedef float mf_v2f __attribute__((ext_vector_type(2)));
typedef float mf_v4f __attribute__((ext_vector_type(4)));
typedef float mf_v16f __attribute__((ext_vector_type(16)));
typedef float mf_v32f __attribute__((ext_vector_type(32)));
typedef double mf_v4d __attribute__((ext_vector_type(4)));
typedef __fp16 mf_v4h __attribute__((ext_vector_type(4)));
typedef short mf_v2s __attribute__((ext_vector_type(2)));
typedef short mf_v4s __attribute__((ext_vector_type(4)));

#define MF_WAVES_PER_GROUP 4

/* Gather the E values of `lane` (element type T, bit patterns) from tiles
 * tile0.. of `base` and return them as the builtin's operand type V. */
template <typename T, typename V, int E>
__device__ static inline V mf_gather(const T *base, const mf_tv_layout &L, uint32_t lane,
                                     unsigned long long tile0, unsigned long long ntiles, uint32_t tile)
{
    static_assert(sizeof(V) == sizeof(T) * E, "fragment size differs from the builtin operand");
    T raw[E];
    for (int v = 0; v < E; v++) {
        uint32_t off = mf_tv_offset(&L, lane, (uint32_t)v);
        raw[v] = tile0 + off / tile < ntiles ? base[tile0 * tile + off] : (T)0;
    }
    V out;
    __builtin_memcpy(&out, raw, sizeof out);
    return out;
}

/* Scatter the E values of `lane` held in `val` into tiles tile0.. of `base`. */
template <typename T, typename V, int E>
__device__ static inline void mf_scatter(T *base, const mf_tv_layout &L, uint32_t lane, unsigned long long tile0,
                                         unsigned long long ntiles, uint32_t tile, V val)
{
    static_assert(sizeof(V) == sizeof(T) * E, "fragment size differs from the builtin result");
    T raw[E];
    __builtin_memcpy(raw, &val, sizeof raw);
    for (int v = 0; v < E; v++) {
        uint32_t off = mf_tv_offset(&L, lane, (uint32_t)v);
        if (tile0 + off / tile < ntiles)
            base[tile0 * tile + off] = raw[v];
    }
}

/* One wrapper: NAME(A, B, C, D, ntiles, layouts), MF_WAVES_PER_GROUP
 * wavefronts per work-group, wavefront w computing tiles w*blocks...
 * TA/VA/EA: A and B element storage, builtin operand type, values per lane;
 * TD/VD/ED: the same for C and D. */
#define MF_MFMA_KERNEL(NAME, BUILTIN, TA, VA, EA, TD, VD, ED)                                                  \
    extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(64 * MF_WAVES_PER_GROUP,             \
                                                                           64 * MF_WAVES_PER_GROUP)))          \
    NAME(const TA *A, const TA *B, const TD *C, TD *D, unsigned long long ntiles, mf_mfma_layouts L)            \
    {                                                                                                          \
        uint32_t tid = __builtin_amdgcn_workitem_id_x();                                                       \
        uint32_t lane = tid % 64;                                                                              \
        unsigned long long wave =                                                                              \
            (unsigned long long)__builtin_amdgcn_workgroup_id_x() * MF_WAVES_PER_GROUP + tid / 64;             \
        unsigned long long tile0 = wave * L.blocks;                                                            \
        VA a = mf_gather<TA, VA, EA>(A, L.a, lane, tile0, ntiles, L.a_tile);                                   \
        VA b = mf_gather<TA, VA, EA>(B, L.b, lane, tile0, ntiles, L.b_tile);                                   \
        VD c = mf_gather<TD, VD, ED>(C, L.cd, lane, tile0, ntiles, L.cd_tile);                                 \
        VD d = BUILTIN(a, b, c, 0, 0, 0);                                                                      \
        mf_scatter<TD, VD, ED>(D, L.cd, lane, tile0, ntiles, L.cd_tile, d);                                    \
    }

#endif

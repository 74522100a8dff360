/*
 * mf_portable.h - what the model (model/) and the case-generation library
 * (gen/) need to compile both as host C11 and, from the same sources, as
 * CUDA device code (devices/cuda/model_device.cuh, which defines
 * MF_DEVICE_BUILD and includes the .c files inside namespace mfd).  Used by
 * the model and the generator library and nowhere else.
 *
 *   MF_HD         marks a function of the mf_eval / gen_tile path: __device__
 *                 in the device build under nvcc, nothing otherwise (host
 *                 C and C++, and the device build compiled by a host C++
 *                 compiler for the CPU test).  The host library never gets
 *                 device code: its tables live in host memory.
 *   MF_DEVTAB     on a table that device code reads: __device__ in the
 *                 device build under nvcc (a host table is not readable
 *                 there), nothing otherwise.
 *   MF_CONSTRUCTOR  a table builder run before main on the host; in the
 *                 device build under nvcc the same function runs from an
 *                 initialization kernel instead (model_device.cuh).
 *   MF_TABLE_DECLS  1 where a header may declare a table (extern) before its
 *                 definition: everywhere but the device build under nvcc,
 *                 which (one translation unit, no -rdc) cannot declare a
 *                 __device__ variable before defining it; there the headers
 *                 reach the tables through functions defined beside them.
 *   mf_clz64(x)   leading zeros of a nonzero 64-bit x, on both sides.
 *   mf_popc32(x)  the number of one bits of a 32-bit x, on both sides.
 *
 * The macros sit outside the include guard: model_device.cuh includes this
 * header again (guards undefined) after defining MF_DEVICE_BUILD, and they
 * then take their device meaning.
 */
#include <stdint.h>

#undef MF_HD
#undef MF_DEVTAB
#undef MF_CONSTRUCTOR
#undef MF_TABLE_DECLS
#if defined(MF_DEVICE_BUILD) && defined(__CUDACC__)
#define MF_HD __device__
#define MF_DEVTAB __device__
#define MF_CONSTRUCTOR
#define MF_TABLE_DECLS 0
#else
#define MF_HD
#define MF_DEVTAB
#define MF_TABLE_DECLS 1
#if defined(__GNUC__)
#define MF_CONSTRUCTOR __attribute__((constructor))
#else
#error "mmafuzz: the model builds its tables in constructors (GCC/Clang)"
#endif
#endif

#ifndef MMAFUZZ_PORTABLE_H
#define MMAFUZZ_PORTABLE_H
/* Leading zeros of x (x != 0). */
MF_HD static inline int mf_clz64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}
/* One bits of x. */
MF_HD static inline int mf_popc32(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return __popc(x);
#else
    return __builtin_popcount(x);
#endif
}
#endif

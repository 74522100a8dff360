/*
 * model_device.cuh - the reference model (mf_eval's general scalar path, every
 * family) and the case-generation library (gen_tile, every generator and
 * mutator) as CUDA device code, compiled from the SAME C sources as the host
 * library: no second model.
 *
 * Include it in exactly one translation unit (it defines functions).  Under
 * nvcc everything lands in namespace mfd as __device__ code and __device__
 * tables; compiled by a host C++ compiler (tests/model/test_device_model.cpp)
 * the same configuration becomes plain host code, which the CPU test checks
 * against the host library.  The host library's declarations (::mf_eval,
 * ::gen_tile, ...) come first, at global scope, so a file can use both.
 *
 * What differs from the host library (model/mf_portable.h, MF_DEVICE_BUILD):
 *   - no decode tables and no other load-time tables of the model: values are
 *     decoded from their fields (same results, tested);
 *   - no vector-extension fast paths (model/lanes.h, tile.c, eval_cases.c);
 *   - no tracing (MF_TRACE compiles to nothing), no I/O, no name lookups;
 *   - T-FDPA/ST-FDPA rows reach their per-format chunk function through a
 *     switch (no table of function pointers), and F16-emu (K = 16, 32) calls
 *     the chunk code directly with constant lengths (no indirect call);
 *     device code unrolls constant chunk lengths for same-format pairs only
 *     (compile time);
 *   - sparse rows of the table's shapes gather their kept values into
 *     arrays of constant length and call those entries (model/sparse.c,
 *     mf_sparse_fixed) instead of evaluating a second mf_case through
 *     mf_eval; integer sparse rows sum their kept products in place;
 *   - the generators' format layouts and special-value lists
 *     (rv_layouts, rv_special_*) are __device__ tables filled by
 *     mfd::rv_init_tables(); under nvcc call mfd_device_init() (below) once
 *     per device before the first gen_tile.
 *
 * Device code dereferences, of the structures it is given:
 *   mf_eval / mf_output_equal (const mf_instr *in, const mf_case *cs):
 *     every scalar field of *in (never in->name or in->qualifier); of *cs,
 *     c, a[0..K-1], b[0..K-1], and sa[], sb[] [0..n_scales-1] for block-scaled rows.
 *   gen_tile (const gen_ctx *g):
 *     g->in (a device pointer to an mf_instr), g->in->name (a device string:
 *     its FNV-1a hash seeds the tile's stream; it must be the row's full
 *     name, "hopper/mma...."), the scalar fields of *g->in; g->m, n, k,
 *     seed, mix; g->A, B, C (device buffers), g->SA, SB (device buffers or
 *     NULL); for the mutate generator only (nview > 0 and its weight):
 *     g->view (a device array of nview device pointers) and view[i]->cs
 *     (view[i]->in is never read).
 */
#ifndef MMAFUZZ_MODEL_DEVICE_CUH
#define MMAFUZZ_MODEL_DEVICE_CUH

/* System headers first, at global scope: the sources include them again
 * inside the namespace, where their guards keep them out. */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The host library's declarations (global scope, C linkage). */
#include "../../model/mmafuzz_model.h"
#include "../../model/mmafuzz_kernel.h"
#include "../../gen/mmafuzz_gen.h"

/* The device configuration: the project headers once more, inside mfd. */
#define MF_DEVICE_BUILD 1
#undef MMAFUZZ_PORTABLE_H
#undef MMAFUZZ_MODEL_H
#undef MMAFUZZ_KERNEL_H
#undef MMAFUZZ_MODEL_INTERNAL_H
#undef MMAFUZZ_GEN_H
#undef MMAFUZZ_GEN_RNG_H
#undef MMAFUZZ_GEN_VALUES_H

namespace mfd {
#include "../../model/format.c"
#include "../../model/round.c"
#include "../../model/family_tfdpa_fast.c"   /* before family_tfdpa.c: F16-emu calls its chunk_core */
#include "../../model/family_tfdpa.c"
#include "../../model/family_fma.c"
#include "../../model/family_amd.c"
#include "../../model/family_int.c"
#include "../../model/eval.c"
#include "../../model/sparse.c"
#include "../../model/kernel.c"
#include "../../gen/gen_values.c"
#include "../../gen/gen_int.c"
#include "../../gen/gen_tile.c"
#include "../../gen/gen_mutate.c"
} /* namespace mfd */

/* mfd::mf_prod_packs (the format pairs whose products the model packs: fp8)
 * as a constant expression, for template arguments and host code (the
 * product table's users: devices/cuda/verify.cu, model_bench.cu).
 * tests/model/test_device_model.cpp holds it against mfd::mf_prod_packs on
 * every pair of formats. */
#if defined(__CUDACC__)
__host__ __device__
#endif
constexpr bool mfd_prod_packs(int fa, int fb)
{
    return (fa == mfd::MF_FMT_E4M3 || fa == mfd::MF_FMT_E5M2) && (fb == mfd::MF_FMT_E4M3 || fb == mfd::MF_FMT_E5M2);
}

#if defined(__CUDACC__)
/* One thread fills the generators' device tables (mfd::rv_init_tables). */
__global__ void mfd_init_tables_kernel(void) { mfd::rv_init_tables(); }

/* The product table of fp8 formats fa, fb (mfd_prod_packs) into t: the
 * model's mf_prod_pack of every pair of input bytes, index a | b << 8, 65536
 * entries (as_f16: F16-emu's decoding).  Any grid. */
__global__ void mfd_prod_table_kernel(int fa, int fb, int as_f16, unsigned short *t)
{
    for (unsigned x = blockIdx.x * blockDim.x + threadIdx.x; x < 65536u; x += gridDim.x * blockDim.x)
        t[x] = (unsigned short)mfd::mf_prod_pack((mfd::mf_format)fa, (mfd::mf_format)fb, as_f16, x & 0xFF, x >> 8);
}

/* The per-thread stack (cudaLimitStackSize) that mf_eval's general path needs
 * in device code.  mf_eval reaches the chunk functions through pointers and a
 * sparse row evaluates its kept products through mf_eval again, so ptxas
 * cannot size the stack; its frames (nvcc -Xptxas -v, CUDA 13.0, sm_90a,
 * mf_case holding K = 128): the general check kernel 2208 bytes,
 * mf_eval_trace 8984, mf_eval_sparse 2840, a chunk function up to 1400.  A
 * sparse row off sparse_fixed's shapes (a model variant) whose kept
 * products hold a NaN or an Inf goes kernel ->
 * mf_eval -> mf_eval_trace -> mf_eval_sparse -> mf_eval -> mf_eval_trace ->
 * chunk: about 24.6 KB.  With 8 KiB every sparse row stopped on an illegal
 * address (H200).  The driver reserves it for every thread that can be
 * resident: 32 KiB x 2048 threads x 132 SMs = 8.9 GB of an H100's 80. */
#define MFD_STACK_BYTES 32768

/* Fill the device tables of the current device; call once per device before
 * the first mfd::gen_tile.  @return the launch's error (cudaSuccess). */
static inline cudaError_t mfd_device_init(cudaStream_t stream)
{
    mfd_init_tables_kernel<<<1, 1, 0, stream>>>();
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaStreamSynchronize(stream);
}
#endif

/* Back to the host meaning of the portability macros for what follows. */
#undef MF_DEVICE_BUILD
#include "../../model/mf_portable.h"

#endif /* MMAFUZZ_MODEL_DEVICE_CUH */

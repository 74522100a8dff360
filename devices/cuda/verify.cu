/*
 * verify.cu - verification on the GPU itself (verify.h, mf_device_verify_tiles).
 *
 * One chunk of a call (about 2^25 cases) is these kernels on one stream:
 *   1. generation, the case-generation library's own code compiled for the
 *      device (model_device.cuh), into the chunk's A, B, C arrays: the same
 *      bits the host would generate.  vpick_kernel derives each tile's
 *      stream and draws its generator (gen_pick), the tiles are grouped by
 *      generator (vscan_kernel, vscatter_kernel; VOrder puts first the
 *      generators whose elements can be drawn one at a time), velem_kernel
 *      writes those tiles' rows one thread per word (gen_part_elem), and
 *      vpart_kernel runs the other tiles' independent parts (gen_run_part:
 *      phase 0 the rows of A and columns of B, phase 1 the rows of C), one
 *      thread per part, so that the threads of a warp run the same
 *      generator on neighbouring rows;
 *   2. the instruction's wrapper kernel (kernels.cuh), as mf_device_run_tiles
 *      launches it, writing D;
 *   3. the check: one thread per case evaluates the model (the model's C
 *      sources compiled for the device) and compares with D under the
 *      instruction's NaN rule; a disagreement takes a slot of the hit buffer
 *      by an atomic counter (all are counted, the first hits_cap kept).
 *      vfixed_kernel, for the shapes of its table, calls the model's
 *      fixed-shape entry with the formats and lengths as constants and the
 *      operands in registers (fp8 products looked up in a table of the
 *      model's packed products, mfd_prod_table_kernel); vcheck_kernel (mf_eval on an
 *      mf_case) checks every other row.
 * Two streams alternate chunks, so that one chunk's kernels fill the GPU
 * while the other's finish.  A GPU takes the call's chunks in turn with the
 * other GPUs of the call (VgpuShared.next), at most two in flight, so
 * several GPUs stay busy whatever their speed.
 */
#include "model_device.cuh"
#include "verify.h"
#include "mf_kcheck.h"

/* The host library's answer to "does this row take the fast T-FDPA path
 * whole" (model/internal.h; C linkage): a chunk function, or NULL. */
extern "C" int (*mf_t_fdpa_plan(const mf_instr *in))(const mf_instr *, mf_format, uint64_t, const uint64_t *,
                                                       const uint64_t *, int, int, uint64_t *);

#include <atomic>
#include <chrono>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

namespace {

const int kSlots = 2;

struct VSlot {
    cudaStream_t stream;
    unsigned char *buf[5];  /* A, B, C, D of one chunk, and a sparse row's metadata (the ABI's SA) */
    size_t cap[5];
    /* grouping the chunk's tiles by generator: per tile its generator, its
     * stream after the draw, and the order of the tiles; per generator a
     * count, a start and a cursor */
    unsigned char *kind;
    unsigned long long *rng;
    unsigned *perm;
    unsigned *count;        /* 3 x GEN_COUNT: count, start, cursor */
    size_t tiles_cap;
    cudaEvent_t ev[4];      /* MMAFUZZ_VERIFY_STAGES: before generation, instruction, check, after */
    int timed;              /* a timed chunk is in flight on this slot */
    int row;                /* its row of the stage table (Vgpu.st_row) */
    unsigned long long cases;  /* its cases */
};

/* MMAFUZZ_VERIFY_STAGES=1: each stage's time per instruction row, summed over its chunks */
const int kStageRows = 64;
struct VStageRow {
    const mf_instr *in;
    double ms[3];
    unsigned long long cases;
};

/* Everything the generation and check kernels read, passed by value. */
struct VParams {
    mfd::mf_instr in;      /* the instruction run (its NaN rule compares) */
    mfd::mf_instr model;   /* the row the model evaluates */
    mfd::gen_ctx g;        /* g.in: the device copy of in; buffers: the chunk's */
    mfd::gen_prep prep;    /* gen_prepare of g (worked out on the host: formats' constants, the name's hash) */
    unsigned long long base, stride, first, ntiles;  /* chunk tile t is campaign tile base + stride * (first + t) */
    int m, n, k;
    int ea, eb, ec, ed;
    const unsigned char *D;  /* the chunk's outputs, as the wrapper wrote them */
    mf_verify_hit *hits;
    unsigned long long *count;
    unsigned long long cap;
    const unsigned short *tab;   /* the fp8 fixed-shape checks' product table (mfd_prod_table_kernel), else NULL */
};

/* The campaign tile number of the chunk's tile t. */
__device__ __forceinline__ unsigned long long vtile(const VParams &p, unsigned t)
{
    return p.base + p.stride * (p.first + t);
}

/* The plans (gen_plan_tile) of the n tiles perm[u0 .. u0+n) into splan[0 ..
 * n), one by each of the block's first n threads; the caller then waits at
 * a barrier for them. */
__device__ __forceinline__ void vplan_tiles(const VParams &p, const mfd::gen_prep *prep, const unsigned char *kind,
                                            const unsigned long long *rng, const unsigned *perm, unsigned u0,
                                            unsigned n, mfd::gen_plan *splan)
{
    if (threadIdx.x < n) {
        const unsigned t = perm[u0 + threadIdx.x];
        mfd::gen_rng r;
        r.s = rng[t];
        mfd::gen_plan_tile(&p.g, prep, (mfd::gen_kind)kind[t], &r, vtile(p, t), &splan[threadIdx.x]);
    }
}

__device__ __forceinline__ unsigned long long vld(const unsigned char *p, size_t idx, int es)
{
    switch (es) {
    case 1: return p[idx];
    case 2: return ((const unsigned short *)p)[idx];
    case 4: return ((const unsigned int *)p)[idx];
    default: return ((const unsigned long long *)p)[idx];
    }
}

__global__ void __launch_bounds__(256) vpick_kernel(const __grid_constant__ VParams p, unsigned char *kind,
                                                    unsigned long long *rng, unsigned *count)
{
    const unsigned step = gridDim.x * blockDim.x;
    for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < (unsigned)p.ntiles; t += step) {
        mfd::gen_rng r;
        mfd::gen_kind k = mfd::gen_pick_keyed(&p.g, p.prep.key, vtile(p, t), &r);
        kind[t] = (unsigned char)k;
        rng[t] = r.s;
        atomicAdd(&count[k], 1u);
    }
}

/* The order of the generators' groups of tiles in a chunk (perm): first the
 * generators whose every role is generated element by element (velem_kernel),
 * then those whose rows of A and columns of B are, then the rest; n_all and
 * n_ab count the first two groups of generators. */
struct VOrder {
    unsigned char kind[mfd::GEN_COUNT];
    int n_all, n_ab;
};

/* count[]: per generator its tiles' count, start and cursor (3 x GEN_COUNT),
 * then the number of leading tiles of perm generated element by element for C
 * (kElemC) and for A and B (kElemAB). */
const int kElemC = 3 * mfd::GEN_COUNT, kElemAB = 3 * mfd::GEN_COUNT + 1, kCountLen = 3 * mfd::GEN_COUNT + 2;

/* One thread: the start of each generator's tiles in the order o (count[0..G) -> start, cursor), and the
 * leading tiles of the element-by-element generators. */
__global__ void vscan_kernel(unsigned *count, VOrder o)
{
    unsigned at = 0;
    for (int q = 0; q < mfd::GEN_COUNT; q++) {
        const int k = o.kind[q];
        count[mfd::GEN_COUNT + k] = count[2 * mfd::GEN_COUNT + k] = at;
        at += count[k];
        if (q + 1 == o.n_all)
            count[kElemC] = at;
        if (q + 1 == o.n_ab)
            count[kElemAB] = at;
    }
}

__global__ void __launch_bounds__(256) vscatter_kernel(unsigned ntiles, const unsigned char *kind, unsigned *count,
                                                       unsigned *perm)
{
    const unsigned step = gridDim.x * blockDim.x;
    for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < ntiles; t += step)
        perm[atomicAdd(&count[2 * mfd::GEN_COUNT + kind[t]], 1u)] = t;
}

/* Threads of a vpart_kernel block, and the plans (gen_plan) a block holds
 * at once: the parts of its 128 threads span at most 128 / parts + 1 tiles,
 * 17 for the smallest tiles of the table (M, N >= 8). */
const int kPartThreads = 128, kPartMin = 8, kPlanSlots = kPartThreads / kPartMin + 1;

/* mutate's working cases in the part kernel's shared memory (gen_run_part_scratch):
 * 2K + 1 values a thread, interleaved by thread, for rows of K up to
 * kMutKMax (66,560 bytes a block at K = 32); other rows' cases stay in local
 * memory.  There a warp's 32 cases (16.6 KB at K = 32) overflowed L1, and
 * the mutators' dependent loads and stores (permute's swaps, the copy of the
 * saved case, the stores of the rows) went to L2 (ncu, H100). */
const int kMutKMax = 32;
__host__ __device__ constexpr size_t vmut_bytes(int k) { return (size_t)(2 * k + 1) * kPartThreads * 8; }

/* Parts lo .. lo+parts-1 of one phase of generation (gen_run_part_planned):
 * thread q of the launch runs part lo + q % parts of the chunk's tile
 * perm[q / parts], so that the threads of a warp run parts of the same tile
 * (or of tiles of the same generator) and write neighbouring rows.  Phase 0
 * is launched as its rows of A, then its columns of B (the parts are
 * independent), so that a warp runs one role's code.  Each tile's plan (its
 * per-K exponents, gen_plan_tile) is worked out once, by one thread of the
 * block, into shared memory, where the tile's threads read it, and the
 * formats' constants (gen_prep) are copied there once per block: worked out
 * again in every part thread, in local memory, they made the part kernels
 * wait on L2 (ncu, H200: 68-81% of L2 throughput, a 2864-byte stack frame).
 * Fewer than kPartMin parts a tile (not in the table today): every thread
 * works out its own plan (gen_run_part_prep), the same bytes.  mut: the
 * launch has vmut_bytes(K) of dynamic shared memory for mutate's cases. */
__global__ void __launch_bounds__(kPartThreads) vpart_kernel(const __grid_constant__ VParams p,
                                                             const unsigned char *kind,
                                                             const unsigned long long *rng, const unsigned *perm,
                                                             const unsigned *count, int skip, int phase,
                                                             unsigned lo, unsigned parts, int mut)
{
    __shared__ mfd::gen_prep sprep;
    __shared__ mfd::gen_plan splan[kPlanSlots];
    extern __shared__ unsigned long long vmut[];   /* thread t's value q at vmut[t + q * blockDim.x] */
    /* the tiles perm[0 .. count[skip]) are velem_kernel's (skip < 0: none) */
    if (skip >= 0)
        perm += count[skip];
    /* a chunk's tiles times parts (at most M + N) stays below 2^32 (vgpu_chunk_tiles) */
    const unsigned nt = (unsigned)p.ntiles - (skip >= 0 ? count[skip] : 0u);
    const unsigned total = nt * parts, step = gridDim.x * blockDim.x;
    if (parts < (unsigned)kPartMin) {
        for (unsigned q = blockIdx.x * blockDim.x + threadIdx.x; q < total; q += step) {
            const unsigned t = perm[q / parts], part = q - (q / parts) * parts;
            mfd::gen_rng r;
            r.s = rng[t];
            mfd::gen_run_part_prep(&p.g, &p.prep, (mfd::gen_kind)kind[t], &r, vtile(p, t), (size_t)t, phase,
                                   (int)(lo + part));
        }
        return;
    }
    if (threadIdx.x == 0)
        sprep = p.prep;
    __syncthreads();
    /* the bounds of this loop are the block's: every thread reaches both barriers */
    for (unsigned base = blockIdx.x * blockDim.x; base < total; base += step) {
        const unsigned u0 = base / parts, end = total - base < blockDim.x ? total : base + blockDim.x;
        vplan_tiles(p, &sprep, kind, rng, perm, u0, (end - 1) / parts - u0 + 1, splan);   /* <= kPlanSlots */
        __syncthreads();
        const unsigned q = base + threadIdx.x;
        if (q < total) {
            const unsigned u = q / parts, t = perm[u], part = q - u * parts;
            mfd::gen_rng r;
            r.s = rng[t];
            mfd::gen_run_part_scratch(&p.g, &splan[u - u0], (mfd::gen_kind)kind[t], &r, vtile(p, t), (size_t)t,
                                      phase, (int)(lo + part), mut ? (uint64_t *)vmut + threadIdx.x : NULL,
                                      blockDim.x);
        }
        __syncthreads();
    }
}

/* Threads of a velem_kernel block; a tile takes at least kElemMin of them
 * (vgpu_run sends a role with fewer to vpart_kernel).  A block plans its
 * tiles for kElemRounds words a thread at a time, so its threads' words
 * span at most kElemPlans tiles: the plans are one thread's work each, and
 * the block's other threads wait for them at a barrier (ncu, H100: with one
 * word a thread between the barriers, 27-30% of the element kernels' stall
 * samples). */
const int kElemThreads = 256, kElemMin = 16, kElemRounds = 4;
const int kElemPlans = kElemRounds * kElemThreads / kElemMin + 1;

/* Elements q0 .. q0+per-1 of a part of generator KIND (a constant, so that
 * gen_part_elem's switch folds and what it reads of the plan and the format
 * is read once for the loop), ES bytes each, packed little-endian into the
 * 16 bytes (lo, hi): each element enters at the top and the word shifts
 * down by ES bytes, by constant shifts. */
template <int KIND, unsigned ES>
__device__ __forceinline__ void velem_elems(const VParams &p, const mfd::gen_plan *pl, const mfd::gen_rng &pr,
                                            unsigned long long tile, int phase, int part, unsigned q0,
                                            unsigned per, unsigned long long &lo, unsigned long long &hi)
{
    constexpr unsigned SH = 8 * ES;
    for (unsigned e = 0; e < per; e++) {
        const unsigned long long x =
            mfd::gen_part_elem(&p.g, pl, (mfd::gen_kind)KIND, &pr, tile, phase, part, (int)(q0 + e));
        if (SH == 64) {
            lo = hi;
            hi = x;
        } else {
            lo = lo >> (SH % 64) | hi << ((64 - SH) % 64);
            hi = hi >> (SH % 64) | x << ((64 - SH) % 64);
        }
    }
}

/* One role of the tiles perm[0 .. count[which]) (their generators' elements
 * one at a time: gen_elem_roles, gen_part_elem), one thread per word of
 * `per` consecutive elements of ES bytes (16 or 8 bytes, or one element
 * where a row is not a whole number of words): role 0 the rows of A, 1 the
 * columns of B, 2 the rows of C, each `rows` parts of `len` elements.  The
 * threads of a warp write neighbouring words, and no thread walks a row
 * draw by draw: the part kernels' threads each wrote a row of their own,
 * a warp's store touching 32 sectors, and waited on their draws in turn
 * (ncu, H100).  Each tile's plan is worked out once by one thread of the
 * block, into shared memory, as in vpart_kernel. */
template <unsigned ES>
__global__ void __launch_bounds__(kElemThreads) velem_kernel(const __grid_constant__ VParams p,
                                                             const unsigned char *kind,
                                                             const unsigned long long *rng, const unsigned *perm,
                                                             const unsigned *count, int which, int role,
                                                             unsigned rows, unsigned len, unsigned per)
{
    __shared__ mfd::gen_prep sprep;
    __shared__ mfd::gen_plan splan[kElemPlans];
    const unsigned words = len / per, tpt = rows * words, total = count[which] * tpt;
    const unsigned span = kElemRounds * blockDim.x, step = gridDim.x * span;
    const int phase = role == 2;
    const unsigned part0 = role == 1 ? (unsigned)p.m : 0u;
    unsigned char *const base = (unsigned char *)(role == 0 ? p.g.A : role == 1 ? p.g.B : p.g.C);
    /* the per elements end in the top ES * per bytes of (lo, hi): shifted down by r bits at the end */
    const unsigned r = 128 - 8 * ES * per;
    if (threadIdx.x == 0)
        sprep = p.prep;
    __syncthreads();
    /* the bounds of this loop are the block's: every thread reaches both barriers */
    for (unsigned b0 = blockIdx.x * span; b0 < total; b0 += step) {
        const unsigned u0 = b0 / tpt, end = total - b0 < span ? total : b0 + span;
        vplan_tiles(p, &sprep, kind, rng, perm, u0, (end - 1) / tpt - u0 + 1, splan);   /* <= kElemPlans */
        __syncthreads();
        for (unsigned rd = 0; rd < (unsigned)kElemRounds; rd++) {
            const unsigned q = b0 + rd * blockDim.x + threadIdx.x;
            if (q >= total)
                break;
            const unsigned u = q / tpt, w = q - u * tpt, row = w / words, word = w - row * words;
            const unsigned t = perm[u];
            const unsigned long long tile = vtile(p, t);
            const int part = (int)(part0 + row);
            mfd::gen_rng tr;
            tr.s = rng[t];
            const mfd::gen_rng pr = mfd::gen_part_stream(&p.g, &tr, phase, part);
            const mfd::gen_plan *pl = &splan[u - u0];
            unsigned long long lo = 0, hi = 0;   /* bytes 0-7 and 8-15 of the word */
            switch (kind[t]) {   /* the generators of the table; velem runs those of gen_elem_roles */
#define MF_GENERATOR(E, name, weight, needs_pool, help)                                                             \
    case mfd::GEN_##E:                                                                                              \
        velem_elems<mfd::GEN_##E, ES>(p, pl, pr, tile, phase, part, word * per, per, lo, hi);                       \
        break;
#include "../../gen/generators.def"
#undef MF_GENERATOR
            default: break;
            }
            if (r >= 64) {
                lo = hi >> (r - 64);
                hi = 0;
            } else if (r) {
                lo = lo >> r | hi << (64 - r);
                hi >>= r;
            }
            unsigned char *dst = base + (((size_t)t * rows + row) * len + (size_t)word * per) * ES;
            switch (ES * per) {
            case 16: *(ulonglong2 *)dst = make_ulonglong2(lo, hi); break;
            case 8: *(unsigned long long *)dst = lo; break;
            case 4: *(unsigned *)dst = (unsigned)lo; break;
            case 2: *(unsigned short *)dst = (unsigned short)lo; break;
            default: *dst = (unsigned char)lo; break;
            }
        }
        __syncthreads();
    }
}

/* velem_kernel's instance for elements of es bytes (1, 2, 4 or 8). */
typedef void (*VElemFn)(VParams, const unsigned char *, const unsigned long long *, const unsigned *,
                        const unsigned *, int, int, unsigned, unsigned, unsigned);
VElemFn velem_for(unsigned es)
{
    return es == 1 ? velem_kernel<1> : es == 2 ? velem_kernel<2> : es == 4 ? velem_kernel<4> : velem_kernel<8>;
}

/* Compare one case's output d with the model's mv under the instruction's
 * NaN rule; a disagreement takes a slot of the hit buffer. */
__device__ __forceinline__ void vcompare(const VParams &p, unsigned t, unsigned i, unsigned j, unsigned long long d,
                                         unsigned long long mv)
{
    if (d != mv && !mfd::mf_output_equal(&p.in, d, mv)) {
        unsigned long long s = atomicAdd(p.count, 1ull);
        if (s < p.cap) {
            mf_verify_hit h;
            h.tile = vtile(p, t);
            h.i = i;
            h.j = j;
            h.dev = d;
            h.model = mv;
            p.hits[s] = h;
        }
    }
}

/* The general check of one case (mf_eval through an mf_case in local memory). */
__device__ __forceinline__ unsigned long long veval_general(const VParams &p, unsigned t, unsigned i, unsigned j)
{
    const unsigned char *A = (const unsigned char *)p.g.A, *B = (const unsigned char *)p.g.B,
                        *C = (const unsigned char *)p.g.C;
    mfd::mf_case cs;
    const size_t ar = ((size_t)t * p.m + i) * (size_t)p.k, bc = ((size_t)t * p.n + j) * (size_t)p.k;
    for (int q = 0; q < p.k; q++) {
        cs.a[q] = vld(A, ar + q, p.ea);
        cs.b[q] = vld(B, bc + q, p.eb);
    }
    cs.c = vld(C, ((size_t)t * p.m + i) * (size_t)p.n + j, p.ec);
    if (p.model.sparse)   /* the row of A's metadata, n_meta bytes (the ABI's SA of a sparse row) */
        for (int q = 0; q < p.model.n_meta; q++)
            cs.meta[q] = ((const unsigned char *)p.g.SA)[((size_t)t * p.m + i) * (size_t)p.model.n_meta + q];
    return mfd::mf_eval(&p.model, &cs);
}

/* At most 128 registers (two blocks a multiprocessor), as before the sparse
 * rows' fixed-length path (model/sparse.c) took mf_eval to 255. */
__global__ void __launch_bounds__(256, 2) vcheck_kernel(const __grid_constant__ VParams p)
{
    /* a chunk holds fewer than 2^32 cases (vgpu_chunk_tiles): 32-bit index arithmetic */
    const unsigned mn = (unsigned)p.m * (unsigned)p.n, total = (unsigned)p.ntiles * mn;
    const unsigned step = gridDim.x * blockDim.x;
    for (unsigned idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        const unsigned t = idx / mn, o = idx - t * mn;
        const unsigned i = o / (unsigned)p.n, j = o - i * (unsigned)p.n;
        const unsigned long long d = vld(p.D, idx, p.ed);
        vcompare(p, t, i, j, d, veval_general(p, t, i, j));
    }
}

/* ---- the fixed-shape checks: the model's own fixed-shape entries
 * (mf_t_fdpa_fixed, mf_f16_emu_fixed) with the row's input formats, K and
 * chunk length as constants, the operands loaded from the tile
 * straight into registers: no mf_case in local memory, no indirect call.
 * One instance per shape of the table below; a row of another shape, or one
 * whose fields take the general path (wgmma's operand forms, a T-FDPA row
 * without a fast plan), is checked by vcheck_kernel. */

enum VFam { VF_TFDPA, VF_F16EMU };

__host__ __device__ constexpr int vbytes(int f)
{
    return f == mfd::MF_FMT_F64 ? 8 : (f == mfd::MF_FMT_F32 || f == mfd::MF_FMT_TF32) ? 4
           : (f == mfd::MF_FMT_F16 || f == mfd::MF_FMT_BF16) ? 2 : 1;
}

/* K elements of E bytes at p (16-byte aligned, K * E a multiple of 16) into out[]. */
template <int E, int K>
__device__ __forceinline__ void vload_row(const unsigned char *p, uint64_t (&out)[K])
{
    static_assert((K * E) % 16 == 0, "fixed-shape rows are whole 16-byte words");
    constexpr int W = K * E / 16;
    unsigned w32[4 * W];
#pragma unroll
    for (int q = 0; q < W; q++) {
        const uint4 v = __ldg((const uint4 *)p + q);
        w32[4 * q] = v.x;
        w32[4 * q + 1] = v.y;
        w32[4 * q + 2] = v.z;
        w32[4 * q + 3] = v.w;
    }
#pragma unroll
    for (int q = 0; q < K; q++) {
        if (E == 8)
            out[q] = (uint64_t)w32[2 * q] | (uint64_t)w32[2 * q + 1] << 32;
        else if (E == 4)
            out[q] = w32[q];
        else if (E == 2)
            out[q] = (w32[q / 2] >> (16 * (q % 2))) & 0xFFFFu;
        else
            out[q] = (w32[q / 4] >> (8 * (q % 4))) & 0xFFu;
    }
}

/* Blocks of 256 threads per multiprocessor a fixed-shape kernel is compiled
 * for: at most 65536 / (256 * blocks) registers per thread.  Two (128
 * registers): with one block (8 warps, the 160-195 registers the k32 shapes
 * took before the product table) the F16-emu kernel issued in 22% of
 * cycles, its warps waiting mostly for instruction fetch (ncu, H100); 16
 * warps share the fetches.  Three (80 registers, up to 128 bytes spilled)
 * for the shapes that read the product table (tab): their warps wait on its
 * lookups, and 24 warps hide more of that (H100: the fp8 mma rows 3-5%
 * faster than with two).  VFIXED_MINB=N overrides (measurements). */
__host__ __device__ constexpr int vfixed_minb(bool tab)
{
#ifdef VFIXED_MINB
    return (void)tab, VFIXED_MINB;
#else
    return tab ? 3 : 2;
#endif
}

/* The product table of the fp8 shapes (the model's mf_prod_pack): an entry
 * per pair of input bytes, index a | b << 8, 16 bits each, one copy a GPU
 * and pair of formats in global memory (mfd_prod_table_kernel), read through L1.  One
 * lookup replaces decoding both inputs of a product for every output that
 * reads them.  Measured (H100, ncu, a chunk of 2^25 cases of
 * mma.m16n8k32.f32.e4m3.e4m3.f32): the check took 4,351 us decoding, 3,349
 * with this table, 3,660 with a copy in each block's shared memory (128 KiB:
 * one block of 512 threads a multiprocessor), which also made the fp8 rows
 * 3% slower overall than this one. */
constexpr int kTabBytes = 65536 * 2;   /* mfd_prod_table_kernel's entries, 16 bits each */

/* The shapes that read it: the format pairs the model packs (mfd_prod_packs,
 * model_device.cuh); the table is filled by mfd_prod_table_kernel. */

template <int FAM, int FA, int FB, int K, int L>
__global__ void __launch_bounds__(256, vfixed_minb(mfd_prod_packs(FA, FB))) vfixed_kernel(const __grid_constant__ VParams p)
{
    /* compiled for sm_90 only, where it was measured: each shape costs a minute of ptxas per target, and the
     * host launches it only on a GPU of compute capability 9.0 (vfixed_for) */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 900
    constexpr int EA = vbytes(FA), EB = vbytes(FB);
    constexpr bool TAB = mfd_prod_packs(FA, FB);
    const mfd::mf_instr *md = &p.model;
    const unsigned mn = (unsigned)p.m * (unsigned)p.n, total = (unsigned)p.ntiles * mn;
    const unsigned step = gridDim.x * blockDim.x;
    const unsigned char *A = (const unsigned char *)p.g.A, *B = (const unsigned char *)p.g.B,
                        *C = (const unsigned char *)p.g.C, *D = p.D;
    /* No barrier between cases.  One per case, so that a block's warps ran the unrolled code together and
     * shared its instruction fetches, had made the k32 F16-emu check 1.3x faster when its warps waited on
     * fetch two thirds of the time (the code was 100 KB); with the product table (the k32 shapes 30-55 KB)
     * the warps waited at the barrier for the block's slowest case instead, a lane with a NaN or Inf or an
     * unusual alignment holding up eight warps: H100, same call, 30 s each over the 40 rows, 9.53/9.60e9/s
     * with the barrier, 10.24/10.34e9/s without (every row 1.01-1.09x). */
    for (unsigned base = blockIdx.x * blockDim.x; base < total; base += step) {
        const unsigned idx = base + threadIdx.x;
        if (idx >= total)
            continue;
        const unsigned t = idx / mn, o = idx - t * mn;
        const unsigned i = o / (unsigned)p.n, j = o - i * (unsigned)p.n;
        uint64_t a[K], b[K];
        vload_row<EA, K>(A + ((size_t)t * p.m + i) * (size_t)(K * EA), a);
        vload_row<EB, K>(B + ((size_t)t * p.n + j) * (size_t)(K * EB), b);
        uint32_t w[K];
        if (TAB) {
#pragma unroll
            for (int q = 0; q < K; q++)
                w[q] = __ldg(p.tab + ((unsigned)a[q] | (unsigned)b[q] << 8));
        }
        const unsigned long long c = vld(C, idx, p.ec), d = vld(D, idx, p.ed);
        unsigned long long mv;
        if (FAM == VF_TFDPA)   /* the accumulator's format at run time: a uniform branch */
            mv = mfd::mf_t_fdpa_fixed(md, (mfd::mf_format)FA, (mfd::mf_format)FB, md->fc, md->fd, a, b,
                                      TAB ? w : NULL, c, K, L);
        else
            mv = mfd::mf_f16_emu_fixed(md, (mfd::mf_format)FA, (mfd::mf_format)FB, a, b, TAB ? w : NULL, c, K);
        vcompare(p, t, i, j, d, mv);
    }
#endif
}

/* The f64 FMA chains (MF_FMA_CHAIN, every format f64, no operand forms):
 * what mf_eval computes for them (mf_eval_trace -> mf_eval_fma_chain ->
 * mf_fma_chain_fixed with the row's K at run time: the loop, not unrolled),
 * the operands read straight from the tile, whose f64 elements are the
 * uint64_t words the model takes: no mf_case in local memory. */
__global__ void __launch_bounds__(256) vfma_kernel(const __grid_constant__ VParams p)
{
    const unsigned mn = (unsigned)p.m * (unsigned)p.n, total = (unsigned)p.ntiles * mn;
    const unsigned step = gridDim.x * blockDim.x;
    const uint64_t *A = (const uint64_t *)p.g.A, *B = (const uint64_t *)p.g.B, *C = (const uint64_t *)p.g.C,
                   *D = (const uint64_t *)p.D;
    for (unsigned idx = blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        const unsigned t = idx / mn, o = idx - t * mn;
        const unsigned i = o / (unsigned)p.n, j = o - i * (unsigned)p.n;
        const uint64_t *a = A + ((size_t)t * p.m + i) * (size_t)p.k, *b = B + ((size_t)t * p.n + j) * (size_t)p.k;
        const unsigned long long mv = mfd::mf_fma_chain_fixed(mfd::MF_FMT_F64, a, b, __ldg((const unsigned long long *)C + idx), p.k);
        vcompare(p, t, i, j, __ldg((const unsigned long long *)D + idx), mv);
    }
}

/* The shapes with a fixed-shape check: (family, A and B formats, K, chunk
 * length L of the model row; L is K for F16-emu, whose passes are fixed):
 * the dense floating-point hopper rows, either accumulator.  Not the f64 FMA
 * chains: unrolled, their 128-bit steps ran at a third of the general
 * kernel's rate (H100). */
#define VFIXED_SHAPES(X)                                                                                          \
    X(VF_TFDPA, TF32, TF32, 8, 8) X(VF_TFDPA, TF32, TF32, 4, 4) X(VF_TFDPA, F16, F16, 16, 16)                     \
    X(VF_TFDPA, F16, F16, 8, 8) X(VF_TFDPA, BF16, BF16, 16, 16) X(VF_TFDPA, BF16, BF16, 8, 8)                     \
    VFIXED_FP8(X, E4M3, E4M3) VFIXED_FP8(X, E4M3, E5M2) VFIXED_FP8(X, E5M2, E4M3) VFIXED_FP8(X, E5M2, E5M2)
#define VFIXED_FP8(X, A, B) X(VF_TFDPA, A, B, 32, 32) X(VF_F16EMU, A, B, 32, 32) X(VF_F16EMU, A, B, 16, 16)

struct VFixedShape {
    int fam, fa, fb, k, l;
    void (*fn)(VParams);
    int tab;   /* reads the product table (VParams.tab) */
};

#define VFIXED_ENTRY(FAM, A, B, K, L)                                                                             \
    {FAM, mfd::MF_FMT_##A, mfd::MF_FMT_##B, K, L, vfixed_kernel<FAM, mfd::MF_FMT_##A, mfd::MF_FMT_##B, K, L>,       \
     mfd_prod_packs(mfd::MF_FMT_##A, mfd::MF_FMT_##B)},
const VFixedShape vfixed_shapes[] = {VFIXED_SHAPES(VFIXED_ENTRY)};

/* The fixed-shape check of (instruction, model row) on a GPU of compute
 * capability cc (major * 10 + minor), or NULL: the row's fields must take the
 * path the fixed-shape entry computes, as mf_eval decides it (a T-FDPA row
 * with a fast plan; an F16-emu row whose f16 step has one), asked of the host
 * library's mf_t_fdpa_plan. */
const VFixedShape *vfixed_for(const mf_instr *in, const mf_instr *model, int cc)
{
    static const VFixedShape fma = {0, MF_FMT_F64, MF_FMT_F64, 0, 0, vfma_kernel, 0};
    if (cc != 90 || in->sparse || model->sparse)   /* sparse rows: the general check reads the metadata */
        return NULL;
    int fam;
    mf_instr h = *model;
    if (model->family == MF_FMA_CHAIN) {   /* the f64 chains: vfma_kernel */
        const int f64 = model->fa == MF_FMT_F64 && model->fb == MF_FMT_F64 && model->fc == MF_FMT_F64 &&
                        model->fd == MF_FMT_F64;
        const int same = in->fa == model->fa && in->fb == model->fb && in->fc == model->fc &&
                         in->fd == model->fd && in->k == model->k;
        return f64 && same && !model->neg_a && !model->neg_b && !model->no_c && model->k <= MF_KMAX
                   ? &fma : NULL;
    }
    switch (model->family) {
    case MF_T_FDPA: fam = VF_TFDPA; break;
    case MF_F16_EMU:   /* the HMMA.16816 step of mf_eval_f16_emu */
        fam = VF_F16EMU;
        h.fa = h.fb = MF_FMT_F16;
        h.fc = h.fd;
        h.family = MF_T_FDPA;
        break;
    default: return NULL;
    }
    if (!mf_t_fdpa_plan(&h))
        return NULL;
    if (model->fa != in->fa || model->fb != in->fb || model->fc != in->fc || model->fd != in->fd ||
        model->k != in->k)
        return NULL;
    const int l = fam == VF_TFDPA ? model->L : model->k;
    for (const VFixedShape &s : vfixed_shapes)
        if (s.fam == fam && s.fa == (int)model->fa && s.fb == (int)model->fb && s.k == model->k && s.l == l)
            return &s;
    return NULL;
}

} /* namespace */

struct Vgpu {
    int ordinal, sms;
    int cc;                     /* compute capability, major * 10 + minor (the fixed-shape checks: 90) */
    int mut_grid, mut_k;        /* vpart_kernel's grid with mutate's cases of K = mut_k in shared memory */
    int pick_grid, run_grid, elem_grid[4], chk_grid;  /* blocks of a whole-GPU launch of each kernel (elem_grid:
                                                        * velem_kernel's, by log2 of the element bytes) */
    VSlot slot[kSlots];
    int ready;                  /* streams created */
    unsigned turn;
    mfd::mf_instr *d_in;        /* the device copy of the instruction row */
    char *d_name;               /* its name (the generators hash it) */
    mf_verify_hit *d_hits;
    size_t hits_cap;
    unsigned long long *d_count;
    unsigned short *d_tab[2][2][2];   /* product tables by (A e5m2, B e5m2, F16-emu), made on first use */
    /* the pool's device copy, kept until (instruction, view_version, nview) changes */
    mfd::gen_saved_case *d_pool;
    const mfd::gen_saved_case **d_view;
    size_t pool_cap;
    const mf_instr *pool_in;
    unsigned long long pool_version;
    size_t pool_n;
    int pool_valid;
    mfd::gen_saved_case *pool_stage;   /* its host staging (upload_inputs), stage_cap entries */
    const mfd::gen_saved_case **view_stage;
    size_t stage_cap;
    /* this call */
    unsigned long long cases;
    double seconds;
    /* MMAFUZZ_VERIFY_STAGES=1: milliseconds of each stage (generation, instruction, model and comparison),
     * summed over the chunks, printed when the device is closed */
    int stages;
    int check_gen;              /* MMAFUZZ_VERIFY_CHECK_GEN=1: check_generation on each call's first chunk */
    int elem;                   /* generation element by element where it can (velem_kernel); MMAFUZZ_VERIFY_ELEM=0: not */
    double stage_ms[3];
    unsigned long long stage_chunks;
    VStageRow st_row[kStageRows];   /* per row (the first kStageRows rows timed; the totals count all) */
    int st_rows;
};

#define VCK(call)                                                                                                 \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) {                                                                                  \
            *what = #call;                                                                                        \
            return e_;                                                                                            \
        }                                                                                                         \
    } while (0)

Vgpu *vgpu_new(int ordinal, int sms)
{
    Vgpu *v = (Vgpu *)calloc(1, sizeof *v);
    if (v) {
        v->ordinal = ordinal;
        v->sms = sms;
    }
    return v;
}

void vgpu_forget(Vgpu *v)
{
    int ordinal = v->ordinal, sms = v->sms;
    mfd::gen_saved_case *ps = v->pool_stage;   /* host memory: kept */
    const mfd::gen_saved_case **vs = v->view_stage;
    size_t cap = v->stage_cap;
    memset(v, 0, sizeof *v);
    v->ordinal = ordinal;
    v->sms = sms;
    v->pool_stage = ps;
    v->view_stage = vs;
    v->stage_cap = cap;
}

/* Add the stage times of the slot's finished chunk. */
static void stage_add(Vgpu *v, VSlot *s)
{
    if (!s->timed)
        return;
    for (int q = 0; q < 3; q++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, s->ev[q], s->ev[q + 1]) == cudaSuccess) {
            v->stage_ms[q] += ms;
            if (s->row >= 0)
                v->st_row[s->row].ms[q] += ms;
        }
    }
    if (s->row >= 0)
        v->st_row[s->row].cases += s->cases;
    v->stage_chunks++;
    s->timed = 0;
}

void vgpu_free(Vgpu *v)
{
    if (!v)
        return;
    cudaSetDevice(v->ordinal);
    if (v->stages && v->stage_chunks) {
        double all = v->stage_ms[0] + v->stage_ms[1] + v->stage_ms[2];
        fprintf(stderr, "cuda:%d verify stages over %llu chunks: generation %.1f ms (%.0f%%), instruction %.1f ms "
                        "(%.0f%%), model and comparison %.1f ms (%.0f%%)\n", v->ordinal, v->stage_chunks,
                v->stage_ms[0], 100 * v->stage_ms[0] / all, v->stage_ms[1], 100 * v->stage_ms[1] / all,
                v->stage_ms[2], 100 * v->stage_ms[2] / all);
        /* per row: picoseconds of GPU time per case in each stage (chunks of the two streams overlap, so the
         * sum is above the wall time per case; the shares are what to compare) */
        for (int r = 0; r < v->st_rows; r++) {
            const VStageRow *w = &v->st_row[r];
            const double c = w->cases ? (double)w->cases : 1.0, ps = 1e9 / c;
            fprintf(stderr, "cuda:%d stage ps/case %-52s generation %7.1f instruction %6.1f check %7.1f (%llu cases)\n",
                    v->ordinal, w->in->name, w->ms[0] * ps, w->ms[1] * ps, w->ms[2] * ps, w->cases);
        }
    }
    for (int s = 0; s < kSlots; s++) {
        if (v->slot[s].stream)
            cudaStreamSynchronize(v->slot[s].stream);
        for (int q = 0; q < 5; q++)
            if (v->slot[s].buf[q])
                cudaFree(v->slot[s].buf[q]);
        void *grp[] = {v->slot[s].kind, v->slot[s].rng, v->slot[s].perm, v->slot[s].count};
        for (void *b : grp)
            if (b)
                cudaFree(b);
        if (v->slot[s].stream)
            cudaStreamDestroy(v->slot[s].stream);
    }
    void *bufs[] = {v->d_in, v->d_name, v->d_hits, v->d_count, v->d_pool, (void *)v->d_view};
    for (void *b : bufs)
        if (b)
            cudaFree(b);
    for (auto &by_b : v->d_tab)
        for (auto &by_emu : by_b)
            for (unsigned short *t : by_emu)
                if (t)
                    cudaFree(t);
    free(v->pool_stage);
    free((void *)v->view_stage);
    free(v);
}

unsigned long long vgpu_chunk_tiles(const mf_instr *in, int m, int n, int k)
{
    const size_t mn = (size_t)m * (size_t)n;
    const size_t tile_bytes = (size_t)m * k * mf_abi_elem_bytes(in->fa) + (size_t)n * k * mf_abi_elem_bytes(in->fb) +
                              mn * (mf_abi_elem_bytes(in->fc) + mf_abi_elem_bytes(in->fd));
    /* MMAFUZZ_VERIFY_CHUNK=L (16..30): about 2^L cases per chunk instead (measurements) */
    int lg = 25;
    const char *env = getenv("MMAFUZZ_VERIFY_CHUNK");
    if (env && atoi(env) >= 16 && atoi(env) <= 30)
        lg = atoi(env);
    unsigned long long t = ((unsigned long long)1 << lg) / mn;
    if (t * tile_bytes > ((size_t)1 << 30))
        t = ((size_t)1 << 30) / tile_bytes;
    return t ? t : 1;
}

/* Make the slot's buffer q hold `bytes` (the slot's stream is idle). */
static cudaError_t ensure(VSlot *s, int q, size_t bytes)
{
    if (s->cap[q] >= bytes)
        return cudaSuccess;
    if (s->buf[q])
        cudaFree(s->buf[q]);
    s->buf[q] = NULL;
    s->cap[q] = 0;
    cudaError_t e = cudaMalloc((void **)&s->buf[q], bytes);
    if (e == cudaSuccess)
        s->cap[q] = bytes;
    return e;
}

/* The device copies of the instruction row (name included) and of the pool. */
static cudaError_t upload_inputs(Vgpu *v, const mf_verify_req *rq, const char **what)
{
    if (!v->d_in) {
        VCK(cudaMalloc((void **)&v->d_in, sizeof *v->d_in));
        VCK(cudaMalloc((void **)&v->d_name, 256));
        VCK(cudaMalloc((void **)&v->d_count, sizeof *v->d_count));
    }
    mfd::mf_instr row;
    static_assert(sizeof row == sizeof *rq->in, "the device-code model's mf_instr is the host's");
    memcpy(&row, rq->in, sizeof row);
    char name[256];
    snprintf(name, sizeof name, "%s", rq->in->name);
    row.name = v->d_name;
    row.qualifier = v->d_name;
    VCK(cudaMemcpy(v->d_name, name, sizeof name, cudaMemcpyHostToDevice));
    VCK(cudaMemcpy(v->d_in, &row, sizeof row, cudaMemcpyHostToDevice));
    if (v->hits_cap < rq->hits_cap || !v->d_hits) {
        if (v->d_hits)
            cudaFree(v->d_hits);
        v->d_hits = NULL;
        v->hits_cap = 0;
        VCK(cudaMalloc((void **)&v->d_hits, (rq->hits_cap ? rq->hits_cap : 1) * sizeof *v->d_hits));
        v->hits_cap = rq->hits_cap;
    }
    VCK(cudaMemset(v->d_count, 0, sizeof *v->d_count));
    if (v->pool_valid && v->pool_in == rq->in && v->pool_version == rq->view_version && v->pool_n == rq->nview)
        return cudaSuccess;
    v->pool_valid = 0;
    if (rq->nview > v->pool_cap) {
        if (v->d_pool)
            cudaFree(v->d_pool);
        if (v->d_view)
            cudaFree((void *)v->d_view);
        v->d_pool = NULL;
        v->d_view = NULL;
        v->pool_cap = 0;
        VCK(cudaMalloc((void **)&v->d_pool, rq->nview * sizeof *v->d_pool));
        VCK(cudaMalloc((void **)&v->d_view, rq->nview * sizeof *v->d_view));
        v->pool_cap = rq->nview;
    }
    if (rq->nview) {
        /* staged in host arrays kept from call to call: the pool changes with the instruction, every call of a
         * run over several, and fresh arrays of some megabytes a call cost their page faults each time */
        if (rq->nview > v->stage_cap) {
            free(v->pool_stage);
            free(v->view_stage);
            v->pool_stage = (mfd::gen_saved_case *)malloc(rq->nview * sizeof *v->pool_stage);
            v->view_stage = (const mfd::gen_saved_case **)malloc(rq->nview * sizeof *v->view_stage);
            v->stage_cap = v->pool_stage && v->view_stage ? rq->nview : 0;
            if (!v->stage_cap) {
                *what = "staging the mutation pool (host memory)";
                return cudaErrorMemoryAllocation;
            }
        }
        mfd::gen_saved_case *cases = v->pool_stage;
        const mfd::gen_saved_case **ptrs = v->view_stage;
        static_assert(sizeof(mfd::mf_case) == sizeof(mf_case), "the device-code model's mf_case is the host's");
        for (size_t q = 0; q < rq->nview; q++) {
            cases[q].in = v->d_in;
            memcpy(&cases[q].cs, &rq->view[q]->cs, sizeof(mf_case));
            ptrs[q] = v->d_pool + q;
        }
        VCK(cudaMemcpy(v->d_pool, cases, rq->nview * sizeof *v->d_pool, cudaMemcpyHostToDevice));
        VCK(cudaMemcpy((void *)v->d_view, ptrs, rq->nview * sizeof *v->d_view, cudaMemcpyHostToDevice));
    }
    v->pool_in = rq->in;
    v->pool_version = rq->view_version;
    v->pool_n = rq->nview;
    v->pool_valid = 1;
    return cudaSuccess;
}

/* MMAFUZZ_VERIFY_CHECK_GEN=1 (a self-check, for tests): the first tiles of a
 * call's first chunk, as the GPU generated them, against the host's gen_tile
 * of the same request.  @return 0 if equal, else 1 with what differs on
 * stderr. */
static int check_generation(const mf_verify_req *rq, int m, int n, int k, unsigned long long first,
                            unsigned long long ntiles, unsigned char *const dev[5], const size_t per_tile[5])
{
    const mf_instr *in = rq->in;
    /* the chunk's arrays (VSlot.buf) but D, which generation does not write */
    const size_t len[5] = {per_tile[0], per_tile[1], per_tile[2], 0, per_tile[4]};
    const size_t nt = ntiles < 1024 ? (size_t)ntiles : 1024;
    std::vector<unsigned char> got[5], want[5];
    for (int a = 0; a < 5; a++) {
        got[a].assign(nt * len[a] + 1, 0);
        want[a].assign(nt * len[a] + 1, 0);
        if (len[a] && cudaMemcpy(got[a].data(), dev[a], nt * len[a], cudaMemcpyDeviceToHost) != cudaSuccess)
            return 1;
    }
    ::gen_ctx g;
    memset(&g, 0, sizeof g);
    g.in = in;
    g.m = m;
    g.n = n;
    g.k = k;
    g.seed = rq->seed;
    g.mix = rq->mix;
    g.view = rq->view;
    g.nview = rq->nview;
    g.A = want[0].data();
    g.B = want[1].data();
    g.C = want[2].data();
    g.SA = in->sparse ? want[4].data() : NULL;
    static const char *const name[5] = {"A", "B", "C", "D", "SA"};
    for (size_t t = 0; t < nt; t++) {
        const unsigned long long tile = rq->tile_base + rq->tile_stride * (first + t);
        const ::gen_kind kind = ::gen_tile(&g, tile, t);
        for (int a = 0; a < 5; a++)
            if (len[a] && memcmp(got[a].data() + t * len[a], want[a].data() + t * len[a], len[a])) {
                fprintf(stderr, "MMAFUZZ_VERIFY_CHECK_GEN: %s, tile %llu (generator %s): %s generated on the GPU "
                        "differs from the host's\n", in->name, tile, ::gen_name(kind), name[a]);
                return 1;
            }
    }
    return 0;
}

cudaError_t vgpu_run(Vgpu *v, VgpuShared *sh, const VgpuKernel *kern, const char **what)
{
    const mf_verify_req *rq = sh->rq;
    auto t0 = std::chrono::steady_clock::now();
    v->cases = 0;
    v->seconds = 0;
    VCK(cudaSetDevice(v->ordinal));
    if (!v->ready) {
        const char *st = getenv("MMAFUZZ_VERIFY_STAGES");
        v->stages = st && !strcmp(st, "1");
        const char *el = getenv("MMAFUZZ_VERIFY_ELEM"), *cg = getenv("MMAFUZZ_VERIFY_CHECK_GEN");
        v->elem = !(el && !strcmp(el, "0"));
        v->check_gen = cg && !strcmp(cg, "1");
        for (int s = 0; s < kSlots; s++) {
            VCK(cudaStreamCreateWithFlags(&v->slot[s].stream, cudaStreamNonBlocking));
            for (int q = 0; q < 4 && v->stages; q++)
                VCK(cudaEventCreate(&v->slot[s].ev[q]));
        }
        VCK(mfd_device_init(v->slot[0].stream));  /* the generators' device tables */
        int major = 0, minor = 0;
        VCK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, v->ordinal));
        VCK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, v->ordinal));
        v->cc = major * 10 + minor;
        /* the general check's calls: room for the deepest path (MFD_STACK_BYTES, model_device.cuh) */
        VCK(cudaDeviceSetLimit(cudaLimitStackSize, MFD_STACK_BYTES));
        /* no shared memory: all of it as L1, which holds the threads' cases and the model's arrays (local memory;
         * measured with ncu on an H100: the check kernel waited on L1TEX misses) */
        VCK(cudaFuncSetAttribute(vcheck_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
        int per = 0;
        VCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, vpick_kernel, 256, 0));
        v->pick_grid = v->sms * (per > 0 ? per : 1);
        VCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, vpart_kernel, kPartThreads, 0));
        v->run_grid = v->sms * (per > 0 ? per : 1);
        VCK(cudaFuncSetAttribute(vpart_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)vmut_bytes(kMutKMax)));
        for (unsigned q = 0; q < 4; q++) {   /* velem_kernel's instances, by element bytes 1, 2, 4, 8 */
            VCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, velem_for(1u << q), kElemThreads, 0));
            v->elem_grid[q] = v->sms * (per > 0 ? per : 1);
        }
        VCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, vcheck_kernel, 256, 0));
        v->chk_grid = v->sms * (per > 0 ? per : 1);
        v->ready = 1;
    }
    cudaError_t e = upload_inputs(v, rq, what);
    if (e != cudaSuccess)
        return e;
    /* the check kernel: the fixed-shape one of this (instruction, model row), else the general one */
    const VFixedShape *fixed = vfixed_for(rq->in, rq->model, v->cc);
    const unsigned short *tab = NULL;
    if (fixed && fixed->tab) {   /* the shape's product table, made on first use */
        const int as_f16 = rq->model->family == MF_F16_EMU;
        unsigned short **t = &v->d_tab[rq->model->fa == MF_FMT_E5M2][rq->model->fb == MF_FMT_E5M2][as_f16];
        if (!*t) {
            VCK(cudaMalloc((void **)t, kTabBytes));
            mfd_prod_table_kernel<<<64, 256>>>((int)rq->model->fa, (int)rq->model->fb, as_f16, *t);
            VCK(cudaGetLastError());
            VCK(cudaDeviceSynchronize());
        }
        tab = *t;
    }
    const void *chk_fn = fixed ? (const void *)fixed->fn : (const void *)vcheck_kernel;
    int chk_grid = v->chk_grid;
    if (fixed) {
        /* no shared memory: all of it as L1 (the product table, the spilled registers of the fixed-shape
         * kernels) */
        VCK(cudaFuncSetAttribute(chk_fn, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
        int per = 0;
        VCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, chk_fn, 256, 0));
        chk_grid = v->sms * (per > 0 ? per : 1);
    }
    const mf_instr *in = rq->in;
    VParams p;
    memset(&p, 0, sizeof p);
    memcpy(&p.in, in, sizeof p.in);
    memcpy(&p.model, rq->model, sizeof p.model);
    p.in.name = p.in.qualifier = p.model.name = p.model.qualifier = v->d_name;
    p.m = sh->m;
    p.n = sh->n;
    p.k = sh->k;
    p.ea = (int)mf_abi_elem_bytes(in->fa);
    p.eb = (int)mf_abi_elem_bytes(in->fb);
    p.ec = (int)mf_abi_elem_bytes(in->fc);
    p.ed = (int)mf_abi_elem_bytes(in->fd);
    p.base = rq->tile_base;
    p.stride = rq->tile_stride;
    p.hits = v->d_hits;
    p.count = v->d_count;
    p.tab = tab;
    p.cap = rq->hits_cap;
    p.g.in = v->d_in;
    p.g.m = sh->m;
    p.g.n = sh->n;
    p.g.k = sh->k;
    p.g.seed = rq->seed;
    memcpy(&p.g.mix, &rq->mix, sizeof p.g.mix);
    p.g.view = rq->nview ? v->d_view : NULL;
    p.g.nview = rq->nview;
    ::gen_ctx hg;   /* the tile shape, for the parts of each generation phase; the batch's gen_prep */
    memset(&hg, 0, sizeof hg);
    hg.in = rq->in;
    hg.m = sh->m;
    hg.n = sh->n;
    hg.k = sh->k;
    ::gen_prep hp;
    ::gen_prepare(&hg, &hp);
    static_assert(sizeof hp == sizeof p.prep, "the device-code gen_prep is the host's");
    memcpy(&p.prep, &hp, sizeof hp);
    /* generation element by element (velem_kernel): per role (A rows, B columns, C rows) its parts, their
     * elements, bytes and elements per thread; a role whose tiles take fewer than kElemMin threads stays with
     * the part kernel; the generators ordered (VOrder) so that the element-by-element tiles lead */
    struct { unsigned rows, len, es, per; int ok; } er[3];
    const mf_format efmt[3] = {in->fa, in->fb, in->fc};
    for (int r = 0; r < 3; r++) {
        er[r].rows = (unsigned)(r == 1 ? sh->n : sh->m);
        er[r].len = (unsigned)(r == 2 ? sh->n : sh->k);
        er[r].es = (unsigned)mf_abi_elem_bytes(efmt[r]);
        /* words of 16 bytes where the tile still has kElemMin threads of them, else of 8, else elements */
        const unsigned row_bytes = er[r].len * er[r].es;
        er[r].per = 1;
        for (unsigned w = 16; w >= 8 && er[r].per == 1; w /= 2)
            if (er[r].es < w && row_bytes % w == 0 && er[r].rows * (row_bytes / w) >= (unsigned)kElemMin)
                er[r].per = w / er[r].es;
        er[r].ok = v->elem && er[r].rows * (er[r].len / er[r].per) >= (unsigned)kElemMin;
    }
    VOrder order;
    {
        int n = 0;
        unsigned roles[mfd::GEN_COUNT];
        for (int k = 0; k < mfd::GEN_COUNT; k++) {
            unsigned m = ::gen_elem_roles(&hg, &hp, (::gen_kind)k);
            roles[k] = (m & GEN_ELEM_A) && (m & GEN_ELEM_B) && er[0].ok && er[1].ok
                           ? ((m & GEN_ELEM_C) && er[2].ok ? 2u : 1u) : 0u;
        }
        for (unsigned lv = 3; lv-- > 0;) {
            for (int k = 0; k < mfd::GEN_COUNT; k++)
                if (roles[k] == lv)
                    order.kind[n++] = (unsigned char)k;
            if (lv == 2)
                order.n_all = n;
            if (lv == 1)
                order.n_ab = n;
        }
    }
    const size_t mn = (size_t)sh->m * (size_t)sh->n;
    const size_t per_tile[5] = {(size_t)sh->m * sh->k * p.ea, (size_t)sh->n * sh->k * p.eb, mn * p.ec, mn * p.ed,
                                in->sparse ? (size_t)sh->m * in->n_meta : 0};
    std::atomic<unsigned long long> *next = reinterpret_cast<std::atomic<unsigned long long> *>(&sh->next);
    for (;;) {
        unsigned long long c = next->fetch_add(1);
        if (c >= sh->nchunks)
            break;
        VSlot *s = &v->slot[v->turn++ % kSlots];
        VCK(cudaStreamSynchronize(s->stream));  /* at most two chunks in flight per GPU */
        stage_add(v, s);
        unsigned long long lo = c * sh->chunk_tiles, nt = rq->ntiles - lo < sh->chunk_tiles ? rq->ntiles - lo
                                                                                            : sh->chunk_tiles;
        for (int q = 0; q < 5; q++)
            if (per_tile[q])
                VCK(ensure(s, q, sh->chunk_tiles * per_tile[q] + 16));
        if (s->tiles_cap < sh->chunk_tiles) {
            void *bufs[] = {s->kind, s->rng, s->perm, s->count};
            for (void *b : bufs)
                if (b)
                    cudaFree(b);
            s->kind = NULL;
            s->rng = NULL;
            s->perm = NULL;
            s->count = NULL;
            s->tiles_cap = 0;
            VCK(cudaMalloc((void **)&s->kind, sh->chunk_tiles));
            VCK(cudaMalloc((void **)&s->rng, sh->chunk_tiles * sizeof *s->rng));
            VCK(cudaMalloc((void **)&s->perm, sh->chunk_tiles * sizeof *s->perm));
            VCK(cudaMalloc((void **)&s->count, kCountLen * sizeof *s->count));
            s->tiles_cap = sh->chunk_tiles;
        }
        p.first = rq->first + lo;
        p.ntiles = nt;
        p.g.A = s->buf[0];
        p.g.B = s->buf[1];
        p.g.C = s->buf[2];
        /* rows with scales are not verified here (mf_device_can_verify); a sparse row's metadata is SA */
        p.g.SA = in->sparse ? s->buf[4] : NULL;
        p.g.SB = NULL;
        p.D = s->buf[3];
        if (v->stages) {
            s->row = -1;
            for (int r = 0; r < v->st_rows && s->row < 0; r++)
                if (v->st_row[r].in == in)
                    s->row = r;
            if (s->row < 0 && v->st_rows < kStageRows) {
                s->row = v->st_rows++;
                v->st_row[s->row].in = in;
            }
            s->cases = nt * mn;
            VCK(cudaEventRecord(s->ev[0], s->stream));
        }
        VCK(cudaMemsetAsync(s->count, 0, kCountLen * sizeof *s->count, s->stream));   /* no leading tiles: 0 */
        vpick_kernel<<<v->pick_grid, 256, 0, s->stream>>>(p, s->kind, s->rng, s->count);
        vscan_kernel<<<1, 1, 0, s->stream>>>(s->count, order);
        vscatter_kernel<<<v->pick_grid, 256, 0, s->stream>>>((unsigned)nt, s->kind, s->count, s->perm);
        for (int phase = 0; phase < 2; phase++) {
            const unsigned parts = (unsigned)::gen_part_count(&hg, phase);
            /* phase 0: rows of A (parts 0 .. M-1), then columns of B (M .. M+N-1) */
            const unsigned split = phase == 0 && parts == (unsigned)(sh->m + sh->n) ? (unsigned)sh->m : parts;
            /* the leading tiles element by element, the others part by part */
            const int skip = phase == 0 ? (order.n_ab ? kElemAB : -1) : (order.n_all ? kElemC : -1);
            for (int r = phase == 0 ? 0 : 2; skip >= 0 && r < (phase == 0 ? 2 : 3); r++)
                velem_for(er[r].es)<<<v->elem_grid[__builtin_ctz(er[r].es)], kElemThreads, 0, s->stream>>>(
                    p, s->kind, s->rng, s->perm, s->count, skip, r, er[r].rows, er[r].len, er[r].per);
            /* phase 0 of a dense row without scales: mutate's cases in shared memory */
            const size_t mvals = ::gen_mutate_scratch_values(in);
            const int mut = phase == 0 && sh->k <= kMutKMax && mvals;
            const size_t smem = mut ? mvals * kPartThreads * 8 : 0;
            if (mut && v->mut_k != sh->k) {
                int per = 0;
                VCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, vpart_kernel, kPartThreads, smem));
                v->mut_grid = v->sms * (per > 0 ? per : 1);
                v->mut_k = sh->k;
            }
            const int grid = mut ? v->mut_grid : v->run_grid;
            vpart_kernel<<<grid, kPartThreads, smem, s->stream>>>(p, s->kind, s->rng, s->perm, s->count, skip, phase,
                                                                  0, split, mut);
            if (split < parts)
                vpart_kernel<<<grid, kPartThreads, smem, s->stream>>>(p, s->kind, s->rng, s->perm, s->count, skip,
                                                                      phase, split, parts - split, mut);
        }
        VCK(cudaGetLastError());
        if (v->check_gen && c == 0) {
            VCK(cudaStreamSynchronize(s->stream));
            if (check_generation(rq, sh->m, sh->n, sh->k, p.first, nt, s->buf, per_tile)) {
                *what = "MMAFUZZ_VERIFY_CHECK_GEN: the GPU's tiles differ from the host's";
                return cudaErrorUnknown;
            }
        }
        mf_kargs ka = {s->buf[0], s->buf[1], s->buf[2], s->buf[3], nt, in->sparse ? s->buf[4] : NULL};
        void *args[1] = {&ka};
        unsigned long long blocks = (nt + (unsigned long long)kern->k->tiles_per_block - 1) /
                                    (unsigned long long)kern->k->tiles_per_block;
        unsigned grid = (unsigned)(blocks < (unsigned long long)kern->grid ? blocks : (unsigned long long)kern->grid);
        if (v->stages)
            VCK(cudaEventRecord(s->ev[1], s->stream));
        VCK(cudaLaunchKernel(kern->k->fn, dim3(grid), dim3((unsigned)kern->k->threads), args, (size_t)kern->k->smem,
                             s->stream));
        if (v->stages)
            VCK(cudaEventRecord(s->ev[2], s->stream));
        void *pargs[1] = {&p};
        VCK(cudaLaunchKernel(chk_fn, dim3((unsigned)chk_grid), dim3(256), pargs, 0, s->stream));
        if (v->stages) {
            VCK(cudaEventRecord(s->ev[3], s->stream));
            s->timed = 1;
        }
        v->cases += nt * mn;
    }
    for (int s = 0; s < kSlots; s++) {
        VCK(cudaStreamSynchronize(v->slot[s].stream));
        stage_add(v, &v->slot[s]);
    }
    VCK(cudaGetLastError());
    v->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return cudaSuccess;
}

cudaError_t vgpu_collect(Vgpu *v, std::vector<mf_verify_hit> *out, size_t cap, unsigned long long *found,
                         unsigned long long *cases, double *seconds)
{
    const char *what_ = NULL;
    const char **what = &what_;
    VCK(cudaSetDevice(v->ordinal));
    unsigned long long n = 0;
    VCK(cudaMemcpy(&n, v->d_count, sizeof n, cudaMemcpyDeviceToHost));
    size_t take = n < cap ? (size_t)n : cap;
    if (take > v->hits_cap)
        take = v->hits_cap;
    const size_t at = out->size();
    out->resize(at + take);
    if (take)
        VCK(cudaMemcpy(out->data() + at, v->d_hits, take * sizeof(mf_verify_hit), cudaMemcpyDeviceToHost));
    *found = n;
    *cases = v->cases;
    *seconds = v->seconds;
    return cudaSuccess;
}

/* Whole GEMM calls against the kernel model (devices/mf_kcheck.h). */
#include "kernel_check.cuh"

/*
 * layout.h - fragment layouts of the NVIDIA matrix instructions, as data.
 *
 * A fragment layout says where element e of thread `lane` of a warp sits in
 * an operand tile.  Every layout the PTX ISA gives for mma.sync and wgmma
 * register fragments has the same linear form (PTX ISA "Matrix fragments for
 * mma.m16n8k*" and "Register fragments and shared memory matrix layouts" of
 * wgmma; shared/DOMAIN.md section 8):
 *
 *   groupID = lane >> 2, tig = lane % 4, warp = warp index in the warpgroup
 *   row = g_row*groupID + t_row*tig + w_row*warp + sum_b bit_b(e) * row_step[b]
 *   col = g_col*groupID + t_col*tig +              sum_b bit_b(e) * col_step[b]
 *
 * for e = 0 .. 2^nbits - 1.  One generic load/store loop in the kernels reads
 * these numbers; tests/cuda checks that each layout is a bijection onto its
 * tile.  Rows and columns are those of the PTX matrix: A is M x K, B is K x N,
 * C and D are M x N.
 *
 * The header is C and compiles for host and device.
 */
#ifndef MMAFUZZ_CUDA_LAYOUT_H
#define MMAFUZZ_CUDA_LAYOUT_H

#include "mmafuzz_model.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MF_LAYOUT_MAXBITS 8

typedef struct mf_frag_layout {
    int8_t g_row, g_col, t_row, t_col, w_row;
    int8_t nbits;                        /* 2^nbits elements per thread */
    int16_t row_step[MF_LAYOUT_MAXBITS]; /* added when bit b of e is set */
    int16_t col_step[MF_LAYOUT_MAXBITS];
} mf_frag_layout;

/* Position (row, col) of element e of thread (warp, lane). */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline void mf_frag_pos(const mf_frag_layout *L, int warp, int lane, int e, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    int r = L->g_row * g + L->t_row * t + L->w_row * warp, c = L->g_col * g + L->t_col * t;
    for (int b = 0; b < L->nbits; b++)
        if ((e >> b) & 1) {
            r += L->row_step[b];
            c += L->col_step[b];
        }
    *row = r;
    *col = c;
}

/* Which PTX form wraps a table row. */
typedef enum mf_ptx_kind {
    MF_PTX_NONE = 0,  /* no wrapper: the row stays model-only here */
    MF_PTX_MMA_SYNC,  /* mma.sync.aligned, one warp per tile */
    MF_PTX_WGMMA,     /* wgmma.mma_async, one warpgroup per tile (sm_90a) */
    MF_PTX_MMA_SP,    /* mma.sp.sync.aligned / mma.sp::ordered_metadata.sync.aligned,
                         one warp per tile: A packed (M x K/2), a metadata register */
    MF_PTX_WGMMA_SP,  /* wgmma.mma_async.sp, one warpgroup per tile (sm_90a): A packed
                         (M x K/2) in shared memory or registers, a metadata register */
    MF_PTX_TCGEN05    /* tcgen05.mma.cta_group::1 (sm_100a, sm_103a), one CTA of 128
                         threads per tile: A and B in shared memory, D in tensor memory,
                         block scales (block-scaled kinds) in tensor memory; issued by
                         one thread, completion through tcgen05.commit to an mbarrier */
} mf_ptx_kind;

/* Sparse mma and wgmma (PTX ISA 9.7.14.6 "Sparse matrix storage", "Matrix
 * fragments for sparse mma"; 9.7.15.6.2 for wgmma.sp, which shows the same
 * metadata figures for each warp's 16 rows): the 32-bit metadata register,
 * as data.  Each thread of a quad (groupID g) holds 32 bits, a nibble per
 * group of K (4 positions; tf32 2, s4/u4 8), and the sparsity selector `sel`
 * picks which threads of the quad are read.  Where nibble `grp` (K order) of
 * row r (r = g or g + 8; wgmma.sp: of the warp's 16 rows) sits:
 *
 *   tig = sel*sel_tig + (r >= 8)*hi_tig + (grp / run)*run_tig
 *   bit = (r >= 8)*hi_bit + 4*(grp % run)
 *
 * Two families, measured on hardware for mma.sp (devices/cuda/NOTES.md,
 * table in layout.c): f16/bf16/tf32 put rows g and g+8 in one thread (bits
 * 0-15 and 16-31, four groups each, a second thread for groups 4-7; 8
 * nibbles: "threads T0/T1" with selector 0, T2/T3 with 1); the 8- and 4-bit
 * types (s8/u8, s4/u4, e4m3/e5m2) give each row a thread of its own, eight
 * groups in bits 0-31 (tig 2*sel: row g, 2*sel + 1: row g+8; with 16 groups
 * a row, selector 0, tig 0/1 hold groups 0-7, tig 2/3 groups 8-15: the PTX
 * figures' "columns 0-31" and "32-63").  wgmma.sp takes, for each warp, the
 * layout of the mma.sp of the same types and nibbles a row (f16/bf16 k32 and
 * tf32 k16: m16n8k32 f16 / m16n8k16 tf32; fp8 and s8/u8 k64: m16n8k64;
 * CuTe's SM90 sparse GMMA ELayout_64x64 agrees for the latter), not yet
 * probed on hardware (`test_gpu layout` does). */
typedef struct mf_sp_meta_layout {
    int8_t sel_tig;  /* tig added per selector step */
    int8_t hi_tig;   /* tig added for rows 8..15 */
    int8_t hi_bit;   /* bit offset added for rows 8..15 */
    int8_t run;      /* consecutive groups of a row in one thread */
    int8_t run_tig;  /* tig added per run of groups */
} mf_sp_meta_layout;

/* Lane and bit of nibble `grp` of row `row` (0..15, the warp's) under
 * selector sel. */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline void mf_sp_meta_pos(const mf_sp_meta_layout *L, int sel, int row, int grp, int *lane, int *bit)
{
    int hi = row >= 8;
    *lane = (row & 7) * 4 + sel * L->sel_tig + hi * L->hi_tig + (grp / L->run) * L->run_tig;
    *bit = hi * L->hi_bit + 4 * (grp % L->run);
}

/* The logical K position of packed column pc of a row of A whose metadata
 * nibbles are meta[] (PTX ISA "Sparse matrix storage": packed element i of a
 * group is the one its i-th index names; tf32: one element per pair, the
 * pair's first for 0x4, second for 0xE; s4/u4: four packed elements per
 * group of 8, the pair the first index names then the pair of the second;
 * sp_group = 4, 2 or 8). */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline int mf_sp_logical_col(int sp_group, const unsigned char *meta, int pc)
{
    if (sp_group == 2)
        return 2 * pc + (int)((meta[pc] & 3) >> 1);
    if (sp_group == 8) {
        int g = pc >> 2, j = pc & 3;
        return 8 * g + 2 * (int)((meta[g] >> (2 * (j >> 1))) & 3) + (j & 1);
    }
    int g = pc >> 1, i = pc & 1;
    return 4 * g + (int)((meta[g] >> (2 * i)) & 3);
}

/* A variant of a wgmma row: N (8 or 256), where A comes from, and the
 * operand forms (variants "neg_a", "neg_b", "neg_ab": imm-scale-a/b = -1;
 * "no_c": scale-d = 0, D = A*B; each with N = 8 and A from shared memory).
 * wgmma.sp rows take the same, and the sparsity selector "sel1" (N = 8, A
 * from shared memory) where PTX allows it. */
typedef struct mf_variant {
    int n;      /* tile N */
    int a_reg;  /* 1: A from registers, 0: A from shared memory */
    int neg_a, neg_b, no_c;
    int trans_a, trans_b; /* imm-trans-a/b = 1: the operand MN-major in shared memory */
    int sel;    /* mma.sp, wgmma.sp: the sparsity selector (an immediate; variants "sel1".."sel3",
                   default 0) */
} mf_variant;

/* Everything the kernels need to know about one (row, variant). */
typedef struct mf_wrap_shape {
    mf_ptx_kind kind;
    int m, n, k;
    int threads;             /* 32 (mma.sync) or 128 (wgmma) */
    int a_in_regs;           /* A is a register fragment (always for mma.sync) */
    mf_frag_layout a, b, cd; /* b unused for wgmma (B always from shared memory); mma.sp and
                                wgmma.sp: a over the packed A (M x K/2), b over the logical K */
    int n_meta;              /* mma.sp, wgmma.sp: metadata nibbles per row of A; else 0 */
    mf_sp_meta_layout meta;  /* where the metadata register holds them (mf_sp_meta_pos;
                                wgmma.sp: each warp's 16 rows) */
    int sp_group;            /* K positions per nibble (4, tf32 2, s4/u4 8) */
    int sel;                 /* the sparsity selector */
    /* tcgen05 (MF_PTX_TCGEN05; 0 otherwise): */
    uint32_t idesc;          /* the 32-bit instruction descriptor (mf_tcgen05_idesc) */
    int scale_vec;           /* block-scaled kinds: scales a row (scale_vec::1X/2X/4X); else 0 */
    int a_bits, b_bits;      /* bits of an A / B element in shared memory */
    int a_pad, b_pad;        /* 1: sub-byte elements of kind::f8f6f4 / mxf8f6f4, 16 to a
                                16-byte slot (mf_tcgen05_row_bit) */
    int tmem_cols;           /* tensor-memory columns the CTA allocates */
} mf_wrap_shape;

/* The variants of an mma.sp row beyond the default (selector 0): "sel1",
 * "sel2", "sel3" where PTX allows them (NULL-terminated list of all three;
 * mf_sp_sel_ok says which a row takes). */
extern const char *const mf_sp_variants[];
/* @return 1 if sparse row `in` takes selector `sel`: 0..3 where a row's
 * metadata needs one thread per quad (m16n8k16 f16/bf16, m16n8k8 tf32), 0..1
 * where it needs two (m16n8k32, m16n8k16 tf32, m16n8k64 s4/u4), 0 where it
 * needs all four (m16n8k64 s8/u8, m16n8k128 s4/u4). */
int mf_sp_sel_ok(const mf_instr *in, int sel);

/* The PTX form of row `in`, or MF_PTX_NONE with a reason in *why. */
mf_ptx_kind mf_ptx_kind_of(const mf_instr *in, const char **why);

/* Parse a variant name for row `in`: NULL or "" (default: the table's N, A
 * from shared memory for wgmma), "n256", "a_reg", "n256,a_reg", and the
 * operand forms "neg_a", "neg_b", "neg_ab", "no_c" (mf_variant_form_ok).
 * @return 0, or -1 if `in` has no such variant. */
int mf_variant_parse(const mf_instr *in, const char *variant, mf_variant *out);

/* The variants every wgmma row is built in (NULL-terminated). */
extern const char *const mf_wgmma_variants[];
/* The variants a wgmma.sp row is built in beyond the operand forms: those of
 * mf_wgmma_variants, then "sel1" where the row takes selector 1
 * (NULL-terminated). */
const char *const *mf_wgmma_sp_variants(const mf_instr *in);
/* The operand-form variants ("neg_a", "neg_b", "neg_ab", "no_c", "trans_a",
 * "trans_b", "trans_ab"; NULL-terminated); a row is built in those
 * mf_variant_form_ok accepts. */
extern const char *const mf_wgmma_form_variants[];
/* @return 1 if wgmma row `in` takes form variant `variant`: "no_c" every row,
 * the negations only floating-point rows (integer wgmma has no imm-scale),
 * the transpositions only f16/bf16 rows (PTX: imm-trans-a/b for .f16/.bf16). */
int mf_variant_form_ok(const mf_instr *in, const char *variant);
/* @return 1 if `variant` changes what the instruction computes (the
 * negations and no_c; a transposition only moves data). */
int mf_variant_changes_arithmetic(const char *variant);

/* The model's row for `in` in `variant`: a copy of *in with the operand
 * forms set (mmafuzz_model.h: neg_a, neg_b, no_c; no_c_neg_zero = 0, the
 * hypothesis).  @return 0, or -1 if `in` has no such variant. */
int mf_variant_model_row(const mf_instr *in, const char *variant, mf_instr *out);

/* Shape and fragment layouts of row `in` in variant v.
 * @return 0, or -1 when the row has no wrapper or the variant is unknown. */
int mf_wrap_shape_of(const mf_instr *in, const mf_variant *v, mf_wrap_shape *out);

/* The PTX instruction text of a row, e.g.
 * "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" or
 * "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16".
 * @return 0, or -1 if the row has no wrapper or buf is too small. */
int mf_ptx_text(const mf_instr *in, const mf_variant *v, char *buf, size_t len);

/* The SASS opcode prefix that the wrapper of row `in` must contain
 * (e.g. "HMMA.16816.F32", "HGMMA.64x8x16.F32", "QGMMA.64x8x32.F32.E4M3.E4M3",
 * "DMMA.8x8x4"), written into buf.  @return 0, or -1 for rows without a wrapper. */
int mf_sass_expect(const mf_instr *in, const mf_variant *v, char *buf, size_t len);

/* mma.sp and wgmma.sp rows: the sparsity selector the wrapper's HMMA.SP
 * (HGMMA.SP: its immediate before "gsb0"; QGMMA.SP and IGMMA.SP show none, "-")
 * must show as its last immediate, written into buf as "sel=0xN", plus ",SHFL" when ptxas
 * moves the metadata between threads itself: ptxas 13.0 for sm_100a and
 * sm_120a compiles plain `.sp` with f16 operands (not bf16, tf32 or
 * ::ordered_metadata) into SHFL.IDX / PRMT / SEL on the metadata and the
 * packed A, then HMMA.SP with selector 0, whatever the selector
 * (cuobjdump of the wrappers; the advisory it prints for `.sp` speaks of
 * reduced performance on such architectures); likewise every integer `.sp`
 * there, and s4/u4 `::ordered_metadata` (two IMMA.SP on unpacked int8).
 * "-" for other rows.
 * @return 0, or -1 if buf is too small. */
int mf_sass_sp_selector(const mf_instr *in, const mf_variant *v, char *buf, size_t len);

/* wgmma operands in shared memory, no swizzle, K-major (PTX ISA "Shared
 * Memory Matrix Layout", canonical layout ((8,m),(T,2k)):((1T,SBO),(1,LBO))):
 * the tile is cut into core matrices of 8 rows x 16 bytes, each stored as 128
 * contiguous bytes; core matrices follow each other along K (LBO = 128 bytes),
 * then along M or N (SBO = 128 * K-groups).  Byte offset of element
 * (row, k) of a rows x K operand of elem_bytes-byte elements: */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline unsigned mf_wgmma_smem_offset(int row, int k, int kbytes, int elem_bytes)
{
    int kgroups = kbytes / 16, kb = k * elem_bytes;
    return (unsigned)(((row >> 3) * kgroups + (kb >> 4)) * 128 + (row & 7) * 16 + (kb & 15));
}

/* wgmma.sp: the shared-memory A is the packed M x K/2 matrix (PTX ISA
 * 9.7.15.6.3: "The matrix A is stored in the packed format Mx(K/2)"; for the
 * descriptor and the register form alike), in the layout of a dense A of
 * K/2: K/2 * elem bytes = 32 bytes a row, as every dense wgmma A; B is the
 * dense K x N of the logical K (64 bytes a row K-major: four core matrices
 * along K, LBO = 128 bytes apart, SBO = 512).  Both through the functions
 * here and below. */
/* Leading and stride byte offsets matching mf_wgmma_smem_offset. */
#define MF_WGMMA_LBO(kbytes) 128u
#define MF_WGMMA_SBO(kbytes) (128u * (unsigned)((kbytes) / 16))

/* The transposed (MN-major) operand of imm-trans-a/b = 1, no swizzle (PTX ISA
 * "Shared Memory Matrix Layout", canonical MN-major layout
 * ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) in elements, T = 16 bytes of
 * elements): a core matrix is 8 K positions x 16 bytes along M or N (T
 * elements contiguous), stored as 128 contiguous bytes; core matrices follow
 * each other along K (LBO = 128 bytes), then along M or N (SBO = 128 * K/8).
 * Byte offset of element (row, k) (row along M or N) of a rows x K operand of
 * elem_bytes-byte elements: */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline unsigned mf_wgmma_smem_offset_mn(int row, int k, int K, int elem_bytes)
{
    int T = 16 / elem_bytes;
    return (unsigned)(((row / T) * (K / 8) + (k >> 3)) * 128 + (k & 7) * 16 + (row % T) * elem_bytes);
}
#define MF_WGMMA_MN_LBO(K) 128u
#define MF_WGMMA_MN_SBO(K) (128u * (unsigned)((K) / 8))

/* The 64-bit shared-memory matrix descriptor of wgmma (PTX ISA "Matrix
 * Descriptor Format"; DOMAIN section 8): start address, LBO and SBO each
 * (x & 0x3FFFF) >> 4, base offset 0, no swizzle. */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline uint64_t mf_wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32);
}

/* ------------------------------------------------------------ tcgen05 */

/* tcgen05.mma (PTX ISA 9.7.16, "TensorCore 5th Generation Family
 * Instructions"), cta_group::1, A and B from shared memory, D in tensor
 * memory.  Written from the PTX ISA text; built and disassembled here, not
 * yet run on a B200 or B300 (docs/new-gpu.md).
 *
 * The .kind of a row (its types are not part of the PTX text: they sit in
 * the instruction descriptor): "f16" (f16/bf16 A and B), "tf32", "f8f6f4"
 * (e4m3, e5m2, e3m2, e2m3, e2m1, A and B independent), "mxf8f6f4" (those
 * with ue8m0 scales, a scale per 32 K: scale_vec::1X), "mxf4" (e2m1 K = 64,
 * ue8m0 per 32: scale_vec::2X) and "mxf4nvf4" (e2m1 K = 64, ue8m0 or ue4m3
 * per 16: scale_vec::4X).  NULL for other rows. */
const char *mf_tcgen05_kind(const mf_instr *in);

/* The 32-bit instruction descriptor of row `in` at tile M x N (PTX ISA
 * "Instruction descriptor", the tables for .kind::f16/tf32/f8f6f4/i8 and for
 * the block-scaled kinds): bits 4-5 D type (F16 0, F32 1; block-scaled: the
 * scale-B id, 0), 7-9 A type, 10-12 B type (kind::f16: F16 0, BF16 1;
 * kind::tf32: 2; kind::f8f6f4 and mxf8f6f4: E4M3 0, E5M2 1, E2M3 3, E3M2 4,
 * E2M1 5; mxf4/mxf4nvf4: E2M1 1), 13/14 negate A/B (0), 15/16 transpose A/B
 * (0: K-major), 17-22 N >> 3, 23 scale type (block-scaled: UE4M3 0, UE8M0
 * 1), 24-28 M >> 4, 29-30 scale-A id (0); dense, no saturation.
 * @return the descriptor, or 0 when `in` has no tcgen05 kind. */
uint32_t mf_tcgen05_idesc(const mf_instr *in, int m, int n);

/* An operand row in shared memory is 32 bytes of K (tf32 K = 8, f16 16, the
 * 8/6/4-bit types of kind::f8f6f4 32, e2m1 of mxf4 64): the K-major, no-swizzle
 * canonical layout of mf_wgmma_smem_offset with 32 bytes a row (LBO = 128,
 * SBO = 256).  Within a row, element k's bit `bit` is at bit position
 * mf_tcgen05_row_bit; sub-byte elements of kind::f8f6f4 and mxf8f6f4 are in
 * the "unpacked" shared-memory form (PTX ISA "Packing format for sub-byte
 * types"): 16 elements packed low bits first into the first 12 (e3m2, e2m3)
 * or 8 (e2m1) bytes of each 16-byte slot, the rest padding (`padded` = 1);
 * mxf4 and mxf4nvf4 take e2m1 packed two to a byte, low nibble first. */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline int mf_tcgen05_row_bit(int k, int bit, int bits, int padded)
{
    return padded ? (k / 16) * 128 + (k % 16) * bits + bit : k * bits + bit;
}

/* The inverse: the element whose bit *bit is at bit position p of a row, or
 * -1 for a padding bit. */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline int mf_tcgen05_row_elem(int p, int bits, int padded, int *bit)
{
    if (padded) {
        int slot = p / 128, o = p % 128;
        if (o >= 16 * bits)
            return -1;
        *bit = o % bits;
        return slot * 16 + o / bits;
    }
    *bit = p % bits;
    return p / bits;
}

#define MF_TCGEN05_ROW_BYTES 32
#define MF_TCGEN05_LBO 128u
#define MF_TCGEN05_SBO 256u

/* The shared-memory matrix descriptor of tcgen05 (PTX ISA "Shared memory
 * descriptor" of tcgen05; DOMAIN section 8): as wgmma's (start address, LBO,
 * SBO each (x & 0x3FFFF) >> 4 at bits 0, 16, 32), plus the fixed constant
 * 0b001 at bits 46-48; base offset 0, absolute LBO mode 0, no swizzle (bits
 * 61-63 = 0). */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline uint64_t mf_tcgen05_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo)
{
    return mf_wgmma_desc(smem_addr, lbo, sbo) | ((uint64_t)1 << 46);
}

/* D in tensor memory (PTX ISA "Data path layout organization", cta_group::1):
 * M = 128: D row r at lane r, column c at column c; read with
 * tcgen05.ld.32x32b.x8 (warp w reaches lanes 32w..32w+31: thread t of warp w
 * holds row 32w + t, register i column i), N = 8.
 * M = 64: D row r at lane 32*(r / 16) + r % 16 (16 lanes of each warp's
 * quarter); read with tcgen05.ld.16x256b.x1: thread t of warp w holds in
 * register i lane 32w + t/4 + 8*(i/2), column 2*(t%4) + i%2, i.e. row
 * 16w + t/4 + 8*(i/2): the wgmma D fragment.  Every element is a 32-bit
 * word; an f16 D in its low 16 bits.  The layouts are mf_wrap_shape.cd. */

/* Block scales in tensor memory (PTX ISA "Matrix fragments for
 * tcgen05.mma.block_scale": scale factor A and B): the scales of row r of A
 * (column r of B) are one 32-bit word, scale of K block j in byte j (1X: one
 * byte, 2X: two, 4X: four), at column r / 32 of the scale area and lane r %
 * 32 of each of the four 32-lane quarters (the same word in all four).
 * Written by each warp into its own quarter with tcgen05.st.32x32b.x1. */
#if defined(__CUDACC__)
__host__ __device__
#endif
static inline void mf_tcgen05_sf_pos(int r, int *col, int *lane)
{
    *col = r / 32;
    *lane = r % 32;
}
#define MF_TCGEN05_SFA_COL 32   /* columns of the allocation: D at 0, scales of A, of B */
#define MF_TCGEN05_SFB_COL 64

#ifdef __cplusplus
}
#endif
#endif

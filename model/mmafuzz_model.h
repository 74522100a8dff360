/*
 * mmafuzz_model.h - bit-accurate reference model of GPU matrix-multiply-accumulate
 * instructions (NVIDIA mma/wgmma/tcgen05, AMD mfma).
 *
 * The model is a pure C11 library: no I/O, no host floating-point arithmetic.
 * Every value is a bit pattern; every step is integer arithmetic, so results do
 * not depend on the host's rounding mode, FTZ/DAZ flags or compiler options.
 *
 * The unit of evaluation is one output element of an MMA:
 *     d = f(c, a[0..K-1], b[0..K-1] [, sa[], sb[]])
 * (shared/DOMAIN.md section 1).  A whole instruction is described by one row of
 * the instruction table (instr_table.def), which the device layers and the
 * harness read as well.
 */
#ifndef MMAFUZZ_MODEL_H
#define MMAFUZZ_MODEL_H

#include "mf_portable.h"

#include <stddef.h>
#include <stdint.h>

/* C linkage for C++ callers of the host library; not in the device build
 * (devices/cuda/model_device.cuh), whose names live in namespace mfd. */
#if defined(__cplusplus) && !defined(MF_DEVICE_BUILD)
extern "C" {
#endif

#define MF_VERSION "0.1.0"

/* ---------------------------------------------------------------- formats */

/* Number formats (DOMAIN section 2).  Order is part of the ABI of the device
 * layers; append only. */
typedef enum mf_format {
    MF_FMT_NONE = 0,
    MF_FMT_F64,
    MF_FMT_F32,
    MF_FMT_TF32,     /* 32-bit container, top 19 bits used */
    MF_FMT_F16,
    MF_FMT_BF16,
    MF_FMT_E4M3,     /* OCP e4m3 "fn": no inf, NaN = S.1111.111 */
    MF_FMT_E5M2,
    MF_FMT_E4M3FNUZ, /* AMD fp8: bias 8, NaN = 0x80, no -0 */
    MF_FMT_E5M2FNUZ, /* AMD bf8: bias 16, NaN = 0x80, no -0 */
    MF_FMT_E3M2,     /* fp6 */
    MF_FMT_E2M3,     /* fp6 */
    MF_FMT_E2M1,     /* fp4 */
    MF_FMT_UE8M0,    /* scale: 2^(x-127), 0xFF = NaN */
    MF_FMT_UE4M3,    /* scale: e4m3 with the top bit ignored, 0x7F = NaN */
    /* integers (two's complement or unsigned; exp_bits = frac_bits = 0) */
    MF_FMT_S8,
    MF_FMT_U8,
    MF_FMT_S4,
    MF_FMT_U4,
    MF_FMT_B1,       /* 32 single-bit values packed in one 32-bit element, bit i =
                        K position 32*element + i (mf_format_lanes) */
    MF_FMT_S32,      /* integer accumulator */
    MF_FMT_COUNT
} mf_format;

typedef struct mf_format_info {
    const char *name;   /* "f16", "e4m3", ... as in instruction names */
    uint8_t bits;       /* storage bits (32 for tf32) */
    uint8_t hex_width;  /* hex digits in a .vec file */
    uint8_t exp_bits;
    uint8_t frac_bits;  /* fraction bits actually used (10 for tf32) */
    int16_t bias;
    uint8_t has_sign;
    uint8_t has_inf;
} mf_format_info;

/* The format descriptions, indexed by mf_format. */
#if MF_TABLE_DECLS
extern const mf_format_info mf_format_table[MF_FMT_COUNT];
#else
MF_HD const mf_format_info *mf_format_row(unsigned f);   /* &mf_format_table[f] (format.c) */
#endif

/* @return the description of format f (f < MF_FMT_COUNT). */
MF_HD static inline const mf_format_info *mf_format_get(mf_format f)
{
#if MF_TABLE_DECLS
    return &mf_format_table[(unsigned)f < MF_FMT_COUNT ? f : MF_FMT_NONE];
#else
    return mf_format_row((unsigned)f < MF_FMT_COUNT ? f : MF_FMT_NONE);
#endif
}
/* @return 1 for the integer formats (s8, u8, s4, u4, b1, s32). */
MF_HD static inline int mf_format_is_int(mf_format f)
{
    return f >= MF_FMT_S8 && f <= MF_FMT_S32;
}

/* @return how many values of the instruction's K one element of format f
 * holds: 32 for b1 (a case holds K/32 words of b1), 1 otherwise. */
MF_HD static inline int mf_format_lanes(mf_format f)
{
    return f == MF_FMT_B1 ? 32 : 1;
}

/* @return the format named `name` ("bf16"), or MF_FMT_NONE. */
mf_format mf_format_by_name(const char *name);

/* Class of a decoded value. */
enum { MF_CLS_ZERO = 0, MF_CLS_FINITE = 1, MF_CLS_INF = 2, MF_CLS_NAN = 3 };

/* A decoded value: (-1)^sign * sig * 2^(exp - frac_bits).  For finite
 * nonzero values sig includes the hidden bit; subnormals are held at the
 * minimum exponent 1-bias with sig < 2^frac_bits (DOMAIN section 2). */
typedef struct mf_value {
    uint64_t sig;
    int32_t exp;
    uint8_t sign;
    uint8_t cls;
} mf_value;

/* Decode the bit pattern x of format f.  Bits above the format's width are
 * ignored; tf32 ignores its low 13 bits, ue4m3 its top bit. */
MF_HD mf_value mf_decode(mf_format f, uint64_t x);

/* --------------------------------------------------------- architectures */

/* The architectures, one per row of arch_table.def (in its order). */
typedef enum mf_arch {
#define MF_ARCH(ID, ...) MF_ARCH_##ID,
#include "arch_table.def"
#undef MF_ARCH
    MF_ARCH_COUNT
} mf_arch;

typedef enum mf_vendor { MF_VENDOR_NVIDIA, MF_VENDOR_AMD } mf_vendor;

/* Sign of a fused (T-FDPA family) sum that rounds to zero. */
typedef enum mf_zero_rule {
    MF_ZERO_SUM_SIGN, /* the sum's sign: -0 for a negative sum (IEEE, MMA-Sim 2.0.2) */
    MF_ZERO_PLUS      /* +0 whatever the sign (H100; MMA-Sim 2.1.1 on every NVIDIA arch) */
} mf_zero_rule;

/* How outputs that are NaN compare (shared/VECTORS.md "Comparing"). */
typedef enum mf_nan_rule {
    MF_NAN_PAYLOAD, /* the canonical NaN bits must match (FP64 outputs excepted) */
    MF_NAN_ANY      /* any NaN equals any NaN */
} mf_nan_rule;

/* What a rule of an architecture rests on (docs/findings.md). */
typedef enum mf_evidence {
    MF_EV_NONE = 0,    /* the rule does not apply */
    MF_EV_PEER = 1,    /* MMA-Sim 2.1.1 alone */
    MF_EV_PEER_KM = 2, /* MMA-Sim 2.1.1 and the Khattak-Mikaitis models */
    MF_EV_HW = 3,      /* measured on hardware by this project */
    MF_EV_HYP = 4      /* a hypothesis: the nearest measured architecture's value
                          (model/arch_hypotheses.def) */
} mf_evidence;

/* One row of arch_table.def. */
typedef struct mf_arch_info {
    const char *name;          /* "hopper" */
    mf_vendor vendor;
    const char *target;        /* compilation target of its rows ("sm_90a", "gfx942"); NULL if none */
    const char *cuda_archs;    /* CMAKE_CUDA_ARCHITECTURES values of the target ("80;86"), "" if not CUDA */
    const char *hip_target;    /* "gfx942", "" if not HIP */
    const char *no_target_why; /* why target is NULL ("" otherwise) */
    mf_zero_rule zero;
    mf_evidence zero_ev;
    mf_nan_rule nan;
    mf_evidence nan_ev;
    int16_t e_zero_f16;        /* e_zero of T-FDPA rows with an f16 output (D) */
    mf_evidence e_zero_f16_ev;
    int16_t e_zero_f32;        /* e_zero of T-FDPA rows with an f32 output (D) */
    const char *cuda_cc;       /* compute capabilities run as this arch ("8.0 8.6", "10.*"), "" if none */
} mf_arch_info;

/* The architecture table, indexed by mf_arch. */
extern const mf_arch_info mf_arch_table[MF_ARCH_COUNT];

/* @return the row of architecture a, or NULL when a >= MF_ARCH_COUNT. */
const mf_arch_info *mf_arch_get(mf_arch a);
const char *mf_arch_name(mf_arch a);
/* @return the arch named `name`, or MF_ARCH_COUNT. */
mf_arch mf_arch_by_name(const char *name);
/* @return 1 for AMD architectures (the vendor column of the table). */
int mf_arch_is_amd(mf_arch a);
/* @return the NVIDIA arch whose cuda_cc names compute capability major.minor,
 * or MF_ARCH_COUNT. */
mf_arch mf_arch_by_cuda_cc(int major, int minor);
/* Write the names of the architectures of `vendor` (an mf_vendor; -1: all),
 * ", "-separated, into buf (for messages).  @return buf. */
char *mf_arch_list(int vendor, char *buf, size_t len);
/* "hw", "MMA-Sim 2.1.1", "MMA-Sim 2.1.1 + Khattak-Mikaitis", "-" */
const char *mf_evidence_name(mf_evidence e);

/* ------------------------------------------------------------- families */

/* Arithmetic families (DOMAIN section 3; names as in MMA-Sim v2). */
typedef enum mf_family {
    MF_T_FDPA,       /* truncated fused dot-product-add, NVIDIA */
    MF_ST_FDPA,      /* block-scaled T-FDPA (MX, K=32) */
    MF_GST_FDPA,     /* grouped block-scaled (e2m1 K=64) */
    MF_FMA_CHAIN,    /* c <- fma(a_k, b_k, c), IEEE RNE */
    MF_E_FDPA,       /* AMD CDNA1 f16/bf16: exact sum, one RNE rounding */
    MF_FTZ_MUL_ADD,  /* AMD CDNA2 f16/bf16 */
    MF_TR_FDPA,      /* AMD CDNA3 xf32/f16/bf16 */
    MF_GTR_FDPA,     /* AMD CDNA3 fp8/bf8 */
    MF_F16_EMU,      /* fp8 mma.sync on sm_90/sm_100: fp8->f16, two chained
                        HMMA.16816 from zero, then an IEEE add of c */
    MF_INT_DOT,      /* integer mma/wgmma: exact dot product plus c in s32, wrapping
                        modulo 2^32, or clamped with .satfinite; b1: popcounts
                        (family_int.c; flags in X: MF_INT_*) */
    MF_FAMILY_COUNT
} mf_family;

const char *mf_family_name(mf_family f);

/* Output conversion rho (DOMAIN section 3, T-FDPA step 6). */
typedef enum mf_rho {
    MF_RZ_FP32,   /* normalize into binary32, truncate to 23 bits */
    MF_RZ_E8M13,  /* normalize into binary32, truncate to 13 bits */
    MF_RNE_FP16,  /* round to nearest even into binary16 */
    MF_RNE,       /* round to nearest even into D's format (FMA, AMD) */
    /* directed roundings into D's format: no table row uses them; they are
     * the output-rounding variants of `mmafuzz triage` and `fit` */
    MF_RZ,        /* toward zero into D's format */
    MF_RD,        /* toward minus infinity into D's format */
    MF_RU,        /* toward plus infinity into D's format */
    MF_RHO_COUNT
} mf_rho;

const char *mf_rho_name(mf_rho r);

/* X of an MF_INT_DOT row: flags. */
#define MF_INT_SATFINITE 1 /* .satfinite: clamp to [INT32_MIN, INT32_MAX] instead of wrapping */
#define MF_INT_XOR 2       /* b1 .xor.popc (else .and.popc) */

/* Structured sparsity of A (mma.sp, PTX ISA "Sparse matrix storage"). */
typedef enum mf_sparse {
    MF_DENSE = 0,
    MF_SP = 1,          /* mma.sp.sync: the metadata's two indices of a group in either order */
    MF_SP_ORDERED = 2,  /* mma.sp::ordered_metadata.sync: the indices in increasing order */
    MF_SP_WGMMA = 3     /* wgmma.mma_async.sp: two distinct indices in either order, for every
                           type (PTX ISA 9.7.15.6.1: no increasing-only rule, fp8 included) */
} mf_sparse;

/* How the model treats a sparse row's products: the hypothesis and the
 * alternatives of the variant catalogue (harness/refine).  Set only in
 * modified copies of a row; 0 (the hypothesis) in the table. */
typedef enum mf_sp_model {
    MF_SPM_KEPT = 0,     /* HYPOTHESIS: the dense arithmetic on the K/2 kept products, in
                            K order, chunks of L kept products */
    MF_SPM_META_ORDER,   /* (a) the kept products in metadata order (as the packed A lists them) */
    MF_SPM_LOGICAL_CHUNKS, /* (b) chunks of sp_L logical K positions, each summing the kept
                            products it contains */
    MF_SPM_DENSE_LOGICAL,  /* (c) the dense model on the logical dense row (pruned positions
                            are zero products), chunks of sp_L */
    MF_SPM_COUNT
} mf_sp_model;

/* How much the row is backed by data. */
typedef enum mf_status {
    MF_HYPOTHESIS = 0, /* no recording or peer output yet */
    MF_PEER = 1,       /* agrees with the peer model's vectors */
    MF_HW = 2,         /* agrees with hardware recordings */
    MF_PEER_HW = 3     /* both */
} mf_status;

/* ------------------------------------------------------ instruction table */

typedef struct mf_instr {
    const char *name;      /* "hopper/mma.m16n8k16.f32.f16.f16.f32" */
    const char *qualifier; /* the part after the slash */
    mf_arch arch;
    uint16_t m, n, k;
    mf_format fa, fb, fc, fd;
    mf_format fs;          /* scale format, MF_FMT_NONE if not block-scaled */
    uint16_t block;        /* K elements per scale; 0 if not block-scaled */
    mf_family family;
    int16_t F;             /* fraction bits kept when aligning (T/ST/GST/TR/GTR) */
    int16_t L;             /* chunk length L = min(K, L_max) */
    int16_t e_zero;        /* exponent given to zero terms (T/ST/GST/F16_EMU) */
    int16_t x;             /* P (FTZ-Mul-Add), G (GST), F2 (TR/GTR); else 0 */
    mf_rho rho;
    mf_status status;
    uint8_t nan_any;       /* 1: any NaN equals any NaN (FP64, and the arch's NaN
                              rule, arch_table.def) */
    uint8_t zero_plus;     /* 1: a fused sum that rounds to zero gives +0, whatever
                              its sign (the arch's zero rule, arch_table.def) */
    uint16_t n_scales;     /* K / block, or 0 */
    /* Forms of wgmma's immediate operands, set only in modified copies of a
     * row (layout.h's variants "neg_a", "neg_b", "neg_ab", "no_c"); 0 in the
     * table.  HYPOTHESES until measured on hardware (docs/coverage.md). */
    uint8_t neg_a, neg_b;  /* imm-scale-a/b = -1: every a (b) negated (sign bit flipped) */
    uint8_t no_c;          /* scale-d = 0: D = A*B, c not read; the sum is what c = +0 gives
                              (measured on an H100, docs/findings.md) */
    uint8_t no_c_neg_zero; /* with no_c, the refuted alternative instead: no term for c, and
                              -0 when every product is -0 (kept for test_gpu forms to count) */
    /* Sparse rows (mma.sp, wgmma.sp): A is 2:4 sparse along K (tf32: 1:2; s4/u4: 4:8
     * by pairs).  k is the logical K; a case holds the logical dense row of A
     * (zeros at the pruned positions) and one metadata nibble per group
     * (mf_case.meta). */
    uint8_t sparse;        /* mf_sparse */
    uint8_t sp_group;      /* logical K positions one metadata nibble covers: 4, tf32 2,
                              s4/u4 8 (each index names a pair of elements) */
    uint8_t n_meta;        /* metadata nibbles per row of A: k / sp_group */
    uint8_t sp_model;      /* mf_sp_model; 0 in the table */
    int16_t sp_L;          /* chunk length over logical K positions (alternatives b, c):
                              the dense instruction's L at the logical K */
} mf_instr;

/* The one instruction table, in architecture order. */
extern const mf_instr mf_instr_table[];
extern const size_t mf_instr_count;

/* @return the row named exactly `name` ("arch/qualifier"), or NULL. */
const mf_instr *mf_instr_find(const char *name);
/* The arithmetic forms of wgmma's immediate operands (the `.vec` key
 * `form=` of an `instr` line, docs/vec-format.md): "neg_a", "neg_b", "neg_ab"
 * (imm-scale-a/b = -1; floating-point rows) and "no_c" (scale-d = 0; every
 * row).  Fill *out with a copy of *in with that form's fields set (neg_a,
 * neg_b, no_c; no_c_neg_zero = 0, as measured).  @return 0, or -1 when `in`
 * (a wgmma row, not a copy with forms already) has no such form. */
int mf_instr_with_form(const mf_instr *in, const char *form, mf_instr *out);
/* The forms are numbered 1 .. MF_INSTR_FORMS (0: none). */
enum { MF_INSTR_FORMS = 4 };
/* @return the number of the form of a row (its neg_a, neg_b, no_c fields), 0 for none. */
int mf_instr_form_index(const mf_instr *in);
/* @return the name of form number i (1 .. MF_INSTR_FORMS), NULL otherwise. */
const char *mf_instr_form_name_at(int i);
/* @return the name of the form of a row, NULL for a row without one. */
const char *mf_instr_form_name(const mf_instr *in);

/* @return the row of architecture `a` with the qualifier of `in` (`in`
 * itself when a is its own), or NULL when a has no such instruction. */
const mf_instr *mf_instr_on_arch(const mf_instr *in, mf_arch a);
/* Fill `out` with up to `max` known names closest to `name` (edit distance).
 * @return how many were written. */
size_t mf_instr_closest(const char *name, const mf_instr **out, size_t max);
/* @return 1 if `name` matches the shell-style glob `pattern` (* ? [..]). */
int mf_glob_match(const char *pattern, const char *name);

/* ------------------------------------------------------------------ cases */

#define MF_KMAX 128  /* largest K of any instruction (the logical K of sparse s4/u4 m16n8k128) */
#define MF_KMAX_FLOAT 64 /* largest K of a row with floating-point A: the floating-point families'
                            working arrays are this long (device code keeps them on its stack);
                            only integer rows reach MF_KMAX (tests/model/test_arch_table.c) */
#define MF_SMAX 4    /* largest number of scale blocks per row */
#define MF_MMAX (MF_KMAX / 2) /* largest number of metadata nibbles per row (sparse rows) */

/* One dot-product-accumulate case, every value a bit pattern.  K is the
 * row's k: elements, not values (a b1 element packs 32 values along K, so the
 * b1 rows' k is the PTX K / 32 and K = 128 or 256 fits). */
typedef struct mf_case {
    uint64_t c;
    uint64_t a[MF_KMAX];
    uint64_t b[MF_KMAX];
    uint64_t sa[MF_SMAX];
    uint64_t sb[MF_SMAX];
    /* sparse rows only (mf_instr.sparse): the metadata of the row of A, one
     * PTX nibble per group of sp_group logical K positions, group 0 first:
     * bits 0-1 the first index, bits 2-3 the second (positions in the group
     * of 4; for tf32 0x4 keeps the pair's first element, 0xE its second; for
     * s4/u4 each index names a pair of the group of 8: index i keeps
     * elements 2i and 2i+1).  Dense rows never read it. */
    uint8_t meta[MF_MMAX];
} mf_case;

/* 1 if sparse row `in` takes only increasing metadata indices: every
 * ::ordered_metadata row, and the fp8 mma.sp rows for plain .sp too (PTX ISA
 * 9.7.14.6.1 "Sparse matrix storage": for .e4m3/.e5m2 the six increasing
 * nibbles are "the meaningful values", whatever the form).  wgmma.sp
 * (9.7.15.6.1) has no such rule, for fp8 neither. */
MF_HD static inline int mf_sparse_sorted_only(const mf_instr *in)
{
    return in->sparse == MF_SP_ORDERED ||
           (in->sparse == MF_SP && (in->fa == MF_FMT_E4M3 || in->fa == MF_FMT_E5M2));
}

/* @return 1 if nibble v is legal metadata for sparse row `in` (PTX ISA
 * "Sparse matrix storage": two distinct indices; increasing for
 * ::ordered_metadata and fp8; tf32 only 0x4 and 0xE; s4/u4 as 2:4, the
 * indices naming pairs). */
MF_HD static inline int mf_sparse_meta_ok(const mf_instr *in, unsigned v)
{
    unsigned i0 = v & 3, i1 = (v >> 2) & 3;
    if (v > 15)
        return 0;
    if (in->sp_group == 2)
        return v == 0x4 || v == 0xE;
    return i0 != i1 && (!mf_sparse_sorted_only(in) || i0 < i1);
}

#define MF_SP_KEPT_MAX 4 /* kept positions of one group, at most (s4/u4: two pairs) */

/* The logical K positions nibble v of group g keeps, in metadata order:
 * pos[0], pos[1] (2:4), pos[0] alone (tf32), or the pair of the first index
 * then the pair of the second (s4/u4: pos[0..3]).  @return how many (1, 2
 * or 4). */
MF_HD static inline int mf_sparse_group_kept(const mf_instr *in, int g, unsigned v, int pos[MF_SP_KEPT_MAX])
{
    if (in->sp_group == 2) {
        pos[0] = 2 * g + (int)((v & 3) >> 1);
        return 1;
    }
    if (in->sp_group == 8) {
        int p0 = 8 * g + 2 * (int)(v & 3), p1 = 8 * g + 2 * (int)((v >> 2) & 3);
        pos[0] = p0;
        pos[1] = p0 + 1;
        pos[2] = p1;
        pos[3] = p1 + 1;
        return 4;
    }
    pos[0] = 4 * g + (int)(v & 3);
    pos[1] = 4 * g + (int)((v >> 2) & 3);
    return 2;
}

/* 1 if logical position q of row `in` is kept by the metadata of cs. */
MF_HD static inline int mf_sparse_is_kept(const mf_instr *in, const mf_case *cs, int q)
{
    int pos[MF_SP_KEPT_MAX], g = q / in->sp_group;
    int n = mf_sparse_group_kept(in, g, cs->meta[g], pos);
    for (int i = 0; i < n; i++)
        if (pos[i] == q)
            return 1;
    return 0;
}

/* Put a sparse case in canonical form: every pruned position of a set to
 * +0.  No-op for dense rows. */
MF_HD static inline void mf_sparse_canon(const mf_instr *in, mf_case *cs)
{
    if (!in->sparse)
        return;
    for (int q = 0; q < in->k; q++)
        if (!mf_sparse_is_kept(in, cs, q))
            cs->a[q] = 0;
}

/* For producers of cases that know no metadata (fit's random and mutated
 * cases): each illegal nibble of sparse row `in` becomes the row's first
 * legal one (PTX ISA: 0x4, indices 0 and 1), and every pruned position of a
 * +0.  (Dense: nothing.) */
MF_HD static inline void mf_sparse_legalize(const mf_instr *in, mf_case *cs)
{
    if (!in->sparse)
        return;
    unsigned first = 0;
    while (first < 15 && !mf_sparse_meta_ok(in, first))
        first++;
    for (int q = 0; q < in->n_meta; q++)
        if (!mf_sparse_meta_ok(in, cs->meta[q]))
            cs->meta[q] = (uint8_t)first;
    mf_sparse_canon(in, cs);
}

/* Check a case of sparse row `in`: every nibble legal, every pruned position
 * of a zero (+0).  @return 0, or -1 with the reason in *why.  (Dense: 0.) */
MF_HD static inline int mf_sparse_check(const mf_instr *in, const mf_case *cs, const char **why)
{
    if (!in->sparse)
        return 0;
    for (int g = 0; g < in->n_meta; g++)
        if (!mf_sparse_meta_ok(in, cs->meta[g])) {
            *why = in->sp_group == 2 ? "a tf32 metadata nibble must be 4 or e"
                   : mf_sparse_sorted_only(in) ? "metadata indices must differ and increase (::ordered_metadata, fp8 mma.sp)"
                                                 : "the two metadata indices of a group must differ";
            return -1;
        }
    for (int q = 0; q < in->k; q++)
        if (cs->a[q] != 0 && !mf_sparse_is_kept(in, cs, q)) {
            *why = "a value of a at a position the metadata prunes is not +0";
            return -1;
        }
    return 0;
}

/* --------------------------------------------------------------- tracing */

/* An optional sink for a human-readable account of each arithmetic step.
 * The model calls `line` with one NUL-terminated line at a time.  Pass NULL
 * to mf_eval_trace for no tracing (mf_eval never traces). */
typedef struct mf_trace {
    void (*line)(void *ctx, const char *text);
    void *ctx;
} mf_trace;

/* ---------------------------------------------------------------- eval */

/* Evaluate one output element of instruction `in` on case `cs`.
 * `in` is a table row or a modified copy of one: only the fields of *in are
 * read (nothing is looked up by row position or by name).
 * @return d as a bit pattern of in->fd. */
MF_HD uint64_t mf_eval(const mf_instr *in, const mf_case *cs);

/* Same as mf_eval, with an account of each step written to `tr` (may be NULL). */
MF_HD uint64_t mf_eval_trace(const mf_instr *in, const mf_case *cs, const mf_trace *tr);

/* Compare an output d against an expected value under the instruction's NaN
 * rule (shared/VECTORS.md "Comparing").  @return 1 if they agree. */
MF_HD int mf_output_equal(const mf_instr *in, uint64_t got, uint64_t expected);

/* ------------------------------------------------------------------ tiles */

/* A tile is every output of one M x N x K multiply-accumulate, stored in the
 * canonical layout that the device layers use too: each element a bit
 * pattern in mf_tile_elem_bytes(format) bytes (1, 2, 4 or 8; the low bits
 * used), tiles one after another:
 *   A   M x K  row-major        (row i: the a[] of output row i)
 *   B   N x K  column-major     (column j: its K values contiguous)
 *   C   M x N  row-major;  D   M x N  row-major (written)
 *   SA  M x S, SB  N x S        (S = n_scales; NULL when 0)
 *   sparse rows (mma.sp, wgmma.sp): SA is the metadata, M x n_meta bytes, one
 *   mf_case.meta nibble a byte; SB unused (NULL); A holds the logical dense
 *   rows (the model reads a pruned position as +0)
 * mf_eval_tiles gives every output exactly what mf_eval gives it; it is
 * faster because rows and columns are decoded once per tile and T-FDPA rows
 * evaluate several outputs at a time. */
MF_HD static inline size_t mf_tile_elem_bytes(mf_format f)
{
    int bits = mf_format_get(f)->bits;
    return bits > 32 ? 8 : bits > 16 ? 4 : bits > 8 ? 2 : 1;
}

/* Element idx of a tile array of es-byte elements (es from mf_tile_elem_bytes;
 * hot loops look it up once and pass it in). */
MF_HD static inline uint64_t mf_elem_get(size_t es, const void *base, size_t idx)
{
    switch (es) {
    case 8: return ((const uint64_t *)base)[idx];
    case 4: return ((const uint32_t *)base)[idx];
    case 2: return ((const uint16_t *)base)[idx];
    default: return ((const uint8_t *)base)[idx];
    }
}

MF_HD static inline void mf_elem_set(size_t es, void *base, size_t idx, uint64_t v)
{
    switch (es) {
    case 8: ((uint64_t *)base)[idx] = v; break;
    case 4: ((uint32_t *)base)[idx] = (uint32_t)v; break;
    case 2: ((uint16_t *)base)[idx] = (uint16_t)v; break;
    default: ((uint8_t *)base)[idx] = (uint8_t)v; break;
    }
}
void mf_eval_tiles(const mf_instr *in, int m, int n, int k, size_t ntiles, const void *A, const void *B,
                   const void *C, const void *SA, const void *SB, void *D);

/* Evaluate n independent cases of row `in` (a table row, or a copy of one
 * with other parameters), each exactly what mf_eval gives it, in the
 * canonical element widths (mf_tile_elem_bytes):
 *   A n x K, B n x K (case i: its K values contiguous), C n, D n (written),
 *   SA n x S, SB n x S (S = in->n_scales; NULL when 0); sparse rows: SA
 *   n x n_meta bytes of metadata (as mf_eval_tiles).
 * T-FDPA rows run several cases at a time, special values included. */
void mf_eval_cases(const mf_instr *in, size_t n, const void *A, const void *B, const void *C, const void *SA,
                   const void *SB, void *D);

/* @return 1 if bit pattern x of format f is a NaN. */
MF_HD int mf_is_nan(mf_format f, uint64_t x);

#if defined(__cplusplus) && !defined(MF_DEVICE_BUILD)
}
#endif
#endif /* MMAFUZZ_MODEL_H */

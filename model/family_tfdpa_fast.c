/*
 * family_tfdpa_fast.c - the hot path of T-FDPA / ST-FDPA for chunks whose
 * inputs are all finite (shared/DOMAIN.md section 3, steps 2-6).
 *
 * It computes exactly what t_fdpa_chunk in family_tfdpa.c computes, with the
 * operand decoding specialized per (A format, B format) pair so that the
 * compiler folds each format's constants, and with a 64-bit rounding step.
 * A chunk holding a NaN or Inf returns "not handled" and takes the general
 * path.  tests/model checks both paths against the same recorded vectors.
 */
#include "internal.h"
#ifndef MF_DEVICE_BUILD
#include "lanes.h"
#else
#define MULTI_ISA   /* one build in device code */
#endif

/* The fields of an input format as dec_in reads them: the value is the
 * bits (x >> shift) & mask, ebits of exponent with bias, fbits of fraction;
 * inf_nan 1: the top exponent is Inf/NaN, 2: S.1111.111 is NaN (e4m3), 0:
 * neither; bad: not a fast-path format.  Constant-folded per format; a
 * caller whose format is known only at run time works it out once per
 * chunk (chunk_core_as) instead of once per input. */
typedef struct in_fmt {
    uint32_t mask;
    int shift, ebits, fbits, bias, inf_nan, bad;
} in_fmt;

MF_HD static inline __attribute__((always_inline)) in_fmt in_fmt_of(mf_format f)
{
    in_fmt p = {0, 0, 1, 1, 0, 0, 0};
    switch (f) {
    case MF_FMT_TF32: p.mask = 0x7FFFF; p.shift = 13; p.ebits = 8; p.fbits = 10; p.bias = 127; p.inf_nan = 1; break;
    case MF_FMT_F16: p.mask = 0xFFFF; p.ebits = 5; p.fbits = 10; p.bias = 15; p.inf_nan = 1; break;
    case MF_FMT_BF16: p.mask = 0xFFFF; p.ebits = 8; p.fbits = 7; p.bias = 127; p.inf_nan = 1; break;
    case MF_FMT_E5M2: p.mask = 0xFF; p.ebits = 5; p.fbits = 2; p.bias = 15; p.inf_nan = 1; break;
    case MF_FMT_E4M3: p.mask = 0xFF; p.ebits = 4; p.fbits = 3; p.bias = 7; p.inf_nan = 2; break;
    case MF_FMT_E3M2: p.mask = 0x3F; p.ebits = 3; p.fbits = 2; p.bias = 3; p.inf_nan = 0; break;
    case MF_FMT_E2M3: p.mask = 0x3F; p.ebits = 2; p.fbits = 3; p.bias = 1; p.inf_nan = 0; break;
    case MF_FMT_E2M1: p.mask = 0xF; p.ebits = 2; p.fbits = 1; p.bias = 1; p.inf_nan = 0; break;
    default: p.bad = 1; break;  /* not a fast-path format */
    }
    return p;
}

/* Decode a finite-or-special value of an input format of fields p.  *sig
 * gets the significand (hidden bit included, 0 for zero), *exp the
 * exponent, and the return value is nonzero for NaN or Inf. */
MF_HD static inline __attribute__((always_inline)) int dec_in_p(in_fmt p, uint64_t x, uint32_t *sig, int *exp,
                                                               uint32_t *sign)
{
    if (p.bad) {
        *sig = 0; *exp = 0; *sign = 0;
        return 1;
    }
    const uint32_t v = (uint32_t)(x >> p.shift) & p.mask;
    uint32_t e = (v >> p.fbits) & ((1u << p.ebits) - 1);
    uint32_t m = v & ((1u << p.fbits) - 1);
    *sign = (v >> (p.ebits + p.fbits)) & 1;
    *sig = m | ((uint32_t)(e != 0) << p.fbits);
    *exp = (int)(e ? e : 1) - p.bias;
    if (p.inf_nan == 1)
        return e == (1u << p.ebits) - 1;
    if (p.inf_nan == 2)  /* e4m3: S.1111.111 is NaN */
        return (v & 0x7F) == 0x7F;
    return 0;
}

/* dec_in_p of format f. */
MF_HD static inline __attribute__((always_inline)) int dec_in(mf_format f, uint64_t x, uint32_t *sig, int *exp,
                                                        uint32_t *sign)
{
    return dec_in_p(in_fmt_of(f), x, sig, exp, sign);
}

/* Class of an input value (MF_CLS_*) for the special-value step; sign in *sign. */
MF_HD static inline __attribute__((always_inline)) int cls_in(mf_format f, uint64_t x, uint32_t *sign)
{
    uint32_t sig, g;
    int exp;
    const in_fmt p = in_fmt_of(f);
    int special = dec_in_p(p, x, &sig, &exp, &g);
    *sign = g;
    if (!special)
        return sig ? MF_CLS_FINITE : MF_CLS_ZERO;
    if (f == MF_FMT_E4M3)
        return MF_CLS_NAN;
    /* IEEE-style: the fraction bits tell NaN from Inf (hidden bit masked) */
    return (sig & ((1u << p.fbits) - 1)) ? MF_CLS_NAN : MF_CLS_INF;
}

/* The special-value flags of one product: bit 0 NaN (a NaN input, or Inf
 * times zero), bit 1 +Inf, bit 2 -Inf; 0 when neither input is NaN or Inf. */
#define MF_PROD_NAN 1u
#define MF_PROD_PINF 2u
#define MF_PROD_NINF 4u
#define MF_PROD_FLAGS (MF_PROD_NAN | MF_PROD_PINF | MF_PROD_NINF)
MF_HD static inline __attribute__((always_inline)) uint32_t prod_special_flags(mf_format fa, mf_format fb,
                                                                             uint64_t x, uint64_t y)
{
    uint32_t ga, gb;
    const int ca = cls_in(fa, x, &ga), cb = cls_in(fb, y, &gb);
    if (ca == MF_CLS_NAN || cb == MF_CLS_NAN)
        return MF_PROD_NAN;
    if (ca == MF_CLS_INF || cb == MF_CLS_INF) {
        if (ca == MF_CLS_ZERO || cb == MF_CLS_ZERO)
            return MF_PROD_NAN;
        return ga ^ gb ? MF_PROD_NINF : MF_PROD_PINF;
    }
    return 0;
}

/* T-FDPA step 1 for a chunk that holds a NaN or an Inf (inputs or c), from
 * its products' flags (prod_special_flags ORed together): any NaN or 0*Inf
 * gives NaN, +Inf with -Inf gives NaN, else that Inf. */
MF_HD static inline __attribute__((always_inline)) uint64_t special_of_flags(mf_format fc, uint64_t c, uint32_t fl)
{
    int nan = (fl & MF_PROD_NAN) != 0, pinf = (fl & MF_PROD_PINF) != 0, ninf = (fl & MF_PROD_NINF) != 0;
    const int bits = fc == MF_FMT_F32 ? 32 : 16, fbits = fc == MF_FMT_F32 ? 23 : 10;
    uint64_t v = c & (bits == 32 ? 0xFFFFFFFFu : 0xFFFFu);
    uint64_t emask = ((UINT64_C(1) << (bits - 1 - fbits)) - 1) << fbits;
    if ((v & emask) == emask) {
        if (v & ((UINT64_C(1) << fbits) - 1))
            nan = 1;
        else if (v >> (bits - 1))
            ninf = 1;
        else
            pinf = 1;
    }
    if (nan || (pinf && ninf))
        return UINT64_MAX;  /* the caller packs the NaN of D's format */
    return ninf ? 1 : 2;    /* -Inf or +Inf */
}

/* special_of_flags of the chunk's inputs.  in_registers (a constant): a and
 * b are the caller's arrays of constant length, and the loop unrolls (a
 * dynamic index would move them to local memory); else it stays a loop
 * (unrolled over operands in memory it made the e5m2 chunks, whose NaN/Inf
 * step is common, half as fast on the GPU). */
MF_HD static inline __attribute__((always_inline)) uint64_t special_result(mf_format fa, mf_format fb, mf_format fc,
                                                                     uint64_t c, const uint64_t *a,
                                                                     const uint64_t *b, int L, const int in_registers)
{
    uint32_t fl = 0;
    if (in_registers) {
        MF_UNROLL
        for (int k = 0; k < L; k++)
            fl |= prod_special_flags(fa, fb, a[k], b[k]);
    } else {
        for (int k = 0; k < L; k++)
            fl |= prod_special_flags(fa, fb, a[k], b[k]);
    }
    return special_of_flags(fc, c, fl);
}

/* Convert S * 2^q (S signed) with rho, in 64 bits (mf_round64); a sum that
 * rounds to zero is +0 where the hardware says so (zero_plus, instr_table.c). */
MF_HD static inline __attribute__((always_inline)) uint64_t round_fast(int64_t S, int q, mf_rho rho, int zero_plus)
{
    int sign = S < 0;
    uint64_t mag = sign ? (uint64_t)0 - (uint64_t)S : (uint64_t)S;
    uint64_t d = rho == MF_RZ_FP32    ? mf_round64(sign, mag, q, 23, 23, 8, MF_RM_RZ)
                 : rho == MF_RZ_E8M13 ? mf_round64(sign, mag, q, 13, 23, 8, MF_RM_RZ)
                                      : mf_round64(sign, mag, q, 10, 10, 5, MF_RM_RNE);  /* RNE-FP16 */
    if (zero_plus && (d << 1) << (rho == MF_RNE_FP16 ? 48 : 32) == 0)
        d = 0;
    return d;
}

/* An fp8 input (e4m3 or e5m2) decoded as the f16 it converts to exactly
 * (F16-emu: ptxas converts fp8 to f16 before HMMA.16816): what
 * dec_in(MF_FMT_F16, fp8_f16_fields(f, x)) gives, without building the f16.
 * e5m2 is the top byte of an f16; an e4m3 subnormal m * 2^-9 is an f16
 * normal, its significand normalized to the hidden bit 2^10. */
MF_HD static inline __attribute__((always_inline)) int dec_fp8_as_f16(mf_format f, uint64_t x, uint32_t *sig,
                                                                     int *exp, uint32_t *sign)
{
    const uint32_t v = (uint32_t)x & 0xFF;
    *sign = v >> 7;
    if (f == MF_FMT_E5M2) {
        const uint32_t e = (v >> 2) & 0x1F, m = v & 3;
        *sig = (m | ((uint32_t)(e != 0) << 2)) << 8;
        *exp = (int)(e ? e : 1) - 15;
        return e == 0x1F;
    }
    const uint32_t e = (v >> 3) & 0xF, m = v & 7;
    const int p = m ? 63 - mf_clz64(m) : 0;   /* the subnormal's leading bit */
    *sig = e ? (8u | m) << 7 : m << (10 - p);
    *exp = e ? (int)e - 7 : p - 9;
    return (v & 0x7F) == 0x7F;
}

/* One product of a chunk, before e_sab and e_zero: the significand product
 * *sig, the exponent sum *exp, the sign *neg; *special gets 1 ORed in when
 * either input is NaN or Inf (then the other fields are not read).
 * as_f16: the fp8 inputs decoded as the f16 they convert to (F16-emu).  (An
 * accumulated flag, not a returned one: the device compiler keeps the OR
 * chain in predicates, 6% fewer instructions in the f16 checks.) */
MF_HD static inline __attribute__((always_inline)) void prod_term_p(mf_format fa, mf_format fb, in_fmt pa, in_fmt pb,
                                                                   int as_f16, uint64_t x, uint64_t y, uint32_t *sig,
                                                                   int32_t *exp, uint32_t *neg, uint32_t *special)
{
    uint32_t sa, sb, ga, gb;
    int ea, eb;
    if (as_f16) {
        *special |= (uint32_t)dec_fp8_as_f16(fa, x, &sa, &ea, &ga);
        *special |= (uint32_t)dec_fp8_as_f16(fb, y, &sb, &eb, &gb);
    } else {
        *special |= (uint32_t)dec_in_p(pa, x, &sa, &ea, &ga);
        *special |= (uint32_t)dec_in_p(pb, y, &sb, &eb, &gb);
    }
    *sig = sa * sb;
    *exp = ea + eb;
    *neg = ga ^ gb;
}

/* prod_term_p with the formats' fields worked out here. */
MF_HD static inline __attribute__((always_inline)) void prod_term(mf_format fa, mf_format fb, int as_f16, uint64_t x,
                                                                 uint64_t y, uint32_t *sig, int32_t *exp,
                                                                 uint32_t *neg, uint32_t *special)
{
    prod_term_p(fa, fb, in_fmt_of(fa), in_fmt_of(fb), as_f16, x, y, sig, exp, neg, special);
}

/* ---- products packed in 16 bits (the GPU's product table)
 *
 * Two fp8 inputs have 65,536 pairs, so the GPU's fixed-shape check looks
 * each product term up in a table (devices/cuda/verify.cu) instead of
 * decoding both inputs for every output that reads them.  An entry is the
 * prod_term of the pair, packed:
 *   bits 0-7    the significand product, shifted right by MF_PROD_SHIFT
 *               (as_f16: every f16 an fp8 converts to has its significand
 *               in bits 7-10, so a product's low 14 bits are zero);
 *   bits 8-13   the exponent sum + 32 (-28 to 30 for e4m3 and e5m2);
 *   bit 14      the sign of the product;
 *   bit 15      NaN or Inf among the two inputs; bits 0-14 are then the
 *               product's prod_special_flags, which the chunk's NaN/Inf
 *               step ORs together instead of decoding the inputs again.
 * tests/model/test_device_model.cpp unpacks every entry of every fp8
 * format pair, both ways of decoding, against the product of the host
 * library's mf_decode of the two inputs. */
#define MF_PROD_SHIFT(as_f16) ((as_f16) ? 14 : 0)

/* 1 when the products of formats fa, fb pack (fp8 pairs). */
MF_HD static inline int mf_prod_packs(mf_format fa, mf_format fb)
{
    return (fa == MF_FMT_E4M3 || fa == MF_FMT_E5M2) && (fb == MF_FMT_E4M3 || fb == MF_FMT_E5M2);
}

MF_HD static inline __attribute__((always_inline)) uint32_t mf_prod_pack(mf_format fa, mf_format fb, int as_f16,
                                                                        uint64_t x, uint64_t y)
{
    uint32_t sig, neg, special = 0;
    int32_t exp;
    prod_term(fa, fb, as_f16, x, y, &sig, &exp, &neg, &special);
    if (special)
        return UINT32_C(1) << 15 | prod_special_flags(fa, fb, x, y);
    return sig >> MF_PROD_SHIFT(as_f16) | (uint32_t)(exp + 32) << 8 | neg << 14;
}

/* prod_term of a packed entry w. */
MF_HD static inline __attribute__((always_inline)) uint32_t mf_prod_unpack(uint32_t w, int as_f16, uint32_t *sig,
                                                                          int32_t *exp, uint32_t *neg)
{
    *sig = (w & 0xFF) << MF_PROD_SHIFT(as_f16);
    *exp = (int32_t)((w >> 8) & 0x3F) - 32;
    *neg = (w >> 14) & 1;
    return w >> 15;
}

/* The specialized chunk: returns 0 and *d when handled, 1 on NaN/Inf.
 * Every aligned term fits in 32 bits: a product significand has
 * 2*(fbits+1) bits and fr = 2*fbits fraction bits, so shifted to F fraction
 * bits it is below 2^(F+2); the fast path requires fr <= F <= 29.
 * packed: NULL, or the chunk's products as mf_prod_pack entries (fp8
 * inputs), read instead of decoding a and b (which the NaN/Inf step still
 * reads).  in_registers (a constant): special_result's. */
MF_HD static inline __attribute__((always_inline)) int chunk_core_as(const mf_instr *in, mf_format fa, mf_format fb,
                                                               mf_format fc, uint64_t c, const uint64_t *a,
                                                               const uint64_t *b, int L, int e_sab, int as_f16,
                                                               const uint32_t *packed, const int in_registers,
                                                               uint64_t *d)
{
    uint32_t psig[MF_KMAX_FLOAT];
    int32_t pexp[MF_KMAX_FLOAT];
    uint32_t pneg[MF_KMAX_FLOAT];
    uint32_t special = 0;
    const int e_zero = in->e_zero;
    const in_fmt pa = in_fmt_of(fa), pb = in_fmt_of(fb);   /* once a chunk when the formats are not constants */
    int32_t e_max = -100000;
    MF_UNROLL
    for (int k = 0; k < L; k++) {
        uint32_t p, g;
        int32_t e;
        if (packed)
            special |= mf_prod_unpack(packed[k], as_f16, &p, &e, &g);
        else
            prod_term_p(fa, fb, pa, pb, as_f16, a[k], b[k], &p, &e, &g, &special);
        e = p ? e + e_sab : e_zero;  /* zero products take e_zero */
        psig[k] = p;
        pexp[k] = e;
        pneg[k] = g;
        e_max = e > e_max ? e : e_max;
    }
    /* c: f32 or f16 */
    uint32_t cs, cneg;
    int ce, cfr, cspecial;
    if (fc == MF_FMT_F32) {
        uint32_t v = (uint32_t)c, e = (v >> 23) & 0xFF;
        cneg = v >> 31;
        cs = (v & 0x7FFFFF) | ((uint32_t)(e != 0) << 23);
        ce = (int)(e ? e : 1) - 127;
        cfr = 23;
        cspecial = e == 0xFF;
    } else {
        uint32_t v = (uint32_t)c & 0xFFFF, e = (v >> 10) & 0x1F;
        cneg = v >> 15;
        cs = (v & 0x3FF) | ((uint32_t)(e != 0) << 10);
        ce = (int)(e ? e : 1) - 15;
        cfr = 10;
        cspecial = e == 0x1F;
    }
    if (special | (uint32_t)cspecial) {
        uint64_t r;
        if (packed) {   /* the products' flags are in their entries (mf_prod_pack) */
            uint32_t fl = 0;
            MF_UNROLL
            for (int k = 0; k < L; k++)
                fl |= packed[k] >> 15 ? packed[k] & MF_PROD_FLAGS : 0u;
            r = special_of_flags(fc, c, fl);
        } else {
            r = special_result(fa, fb, fc, c, a, b, L, in_registers);
        }
        int ob = in->rho == MF_RNE_FP16 ? 16 : 32, of = in->rho == MF_RNE_FP16 ? 10 : 23;
        uint64_t inf = ((UINT64_C(1) << (ob - 1 - of)) - 1) << of;
        if (r == UINT64_MAX)  /* canonical NaN: 0x7FFFFFFF / 0x7FFF (DOMAIN section 3) */
            *d = (UINT64_C(1) << (ob - 1)) - 1;
        else
            *d = inf | (r == 1 ? UINT64_C(1) << (ob - 1) : 0);
        return 0;
    }
    if (cs == 0)
        ce = e_zero;
    e_max = ce > e_max ? ce : e_max;
    /* align to e_max, truncate toward zero to F fraction bits, sum exactly */
    const int F = in->F;
    const int up = F - (as_f16 ? 20 : pa.fbits + pb.fbits);  /* >= 0, checked by the caller */
    int64_t S = 0;
    MF_UNROLL
    for (int k = 0; k < L; k++) {
        uint32_t dist = (uint32_t)(e_max - pexp[k]);
        dist = dist > 31 ? 31 : dist;
        int32_t t = (int32_t)((psig[k] << up) >> dist);
        int32_t neg = -(int32_t)pneg[k];
        S += (int64_t)((t ^ neg) - neg);
    }
    {
        int r = (e_max - ce) + cfr - F;
        uint64_t t = r <= 0 ? (uint64_t)cs << -r : (r > 63 ? 0 : (uint64_t)cs >> r);
        int64_t neg = -(int64_t)cneg;
        S += ((int64_t)t ^ neg) - neg;
    }
    *d = round_fast(S, e_max - F, in->rho, in->zero_plus);
    return 0;
}

/* chunk_core_as on inputs of formats fa, fb as they are (the T-FDPA rows). */
MF_HD static inline __attribute__((always_inline)) int chunk_core(const mf_instr *in, mf_format fa, mf_format fb,
                                                            mf_format fc, uint64_t c, const uint64_t *a,
                                                            const uint64_t *b, int L, int e_sab, uint64_t *d)
{
    return chunk_core_as(in, fa, fb, fc, c, a, b, L, e_sab, 0, NULL, 0, d);
}

/* A whole T-FDPA dot product of K inputs in chunks of L, every chunk through
 * chunk_core (the first accumulating into c of format fc, the later ones into
 * D's format fd), for a row whose plan is not NULL (plan_of: T-FDPA, no
 * forms, fast_ok for fc and fd).  The same chunks as mf_t_fdpa_fast; for
 * callers that pass formats and lengths as constants, so that the decoding
 * folds and the terms stay in registers (the GPU's fixed-shape check,
 * devices/cuda/verify.cu).  packed: NULL, or the K products as mf_prod_pack
 * entries (fp8 inputs, as_f16 0). */
MF_HD static inline __attribute__((always_inline)) uint64_t mf_t_fdpa_fixed(const mf_instr *in, mf_format fa,
                                                                           mf_format fb, mf_format fc, mf_format fd,
                                                                           const uint64_t *a, const uint64_t *b,
                                                                           const uint32_t *packed, uint64_t c,
                                                                           const int K, const int L)
{
    MF_UNROLL
    for (int k0 = 0; k0 < K; k0 += L)
        chunk_core_as(in, fa, fb, k0 == 0 ? fc : fd, c, a + k0, b + k0, L, 0, 0, packed ? packed + k0 : NULL, 1,
                      &c);
    return c;
}

#define FAST_FORMATS(X) X(TF32) X(F16) X(BF16) X(E5M2) X(E4M3) X(E3M2) X(E2M3) X(E2M1)

/* One function per (A, B) format pair. */
/* Device code unrolls the constant chunk lengths of same-format pairs only:
 * unrolling all 64 pairs makes the device build take minutes. */
#ifdef MF_DEVICE_BUILD
#define UNROLL_PAIR(A, B) (MF_FMT_##A == MF_FMT_##B)
#else
#define UNROLL_PAIR(A, B) 1
#endif
#define PAIR_FN(A, B)                                                                                        \
    MULTI_ISA MF_HD static int chunk_##A##_##B(const mf_instr *in, mf_format fc, uint64_t c, const uint64_t *a,              \
                               const uint64_t *b, int L, int e_sab, uint64_t *d)                             \
    {                                                                                                        \
        if (!UNROLL_PAIR(A, B))                                                                              \
            return chunk_core(in, MF_FMT_##A, MF_FMT_##B, fc, c, a, b, L, e_sab, d);                         \
        switch (L) { /* constant chunk lengths unroll fully */                                              \
        case 16: return chunk_core(in, MF_FMT_##A, MF_FMT_##B, fc, c, a, b, 16, e_sab, d);                   \
        case 8: return chunk_core(in, MF_FMT_##A, MF_FMT_##B, fc, c, a, b, 8, e_sab, d);                     \
        case 32: return chunk_core(in, MF_FMT_##A, MF_FMT_##B, fc, c, a, b, 32, e_sab, d);                   \
        default: return chunk_core(in, MF_FMT_##A, MF_FMT_##B, fc, c, a, b, L, e_sab, d);                    \
        }                                                                                                    \
    }
#define PAIRS_WITH(A) FAST_FORMATS_B(A)
#define FAST_FORMATS_B(A) PAIR_FN(A, TF32) PAIR_FN(A, F16) PAIR_FN(A, BF16) PAIR_FN(A, E5M2) PAIR_FN(A, E4M3) \
    PAIR_FN(A, E3M2) PAIR_FN(A, E2M3) PAIR_FN(A, E2M1)
#define DEFINE_ROW(A) PAIRS_WITH(A)
FAST_FORMATS(DEFINE_ROW)

typedef mf_chunk_fn chunk_fn;

#ifndef MF_DEVICE_BUILD
#define ENTRY(A, B) [MF_FMT_##A][MF_FMT_##B] = chunk_##A##_##B,
#define ENTRIES_B(A) ENTRY(A, TF32) ENTRY(A, F16) ENTRY(A, BF16) ENTRY(A, E5M2) ENTRY(A, E4M3) ENTRY(A, E3M2) \
    ENTRY(A, E2M3) ENTRY(A, E2M1)
static const chunk_fn chunk_table[MF_FMT_COUNT][MF_FMT_COUNT] = {FAST_FORMATS(ENTRIES_B)};
#define CHUNK_FN(fa, fb) chunk_table[fa][fb]
#else
/* Device code: the same functions chosen by a switch (C++ has no array
 * designators, and the table would have to live in device memory). */
#define CHUNK_CASE(A, B) case MF_FMT_##B: return chunk_##A##_##B;
#define CHUNK_CASES_A(A)                                                                                     \
    case MF_FMT_##A:                                                                                         \
        switch (fb) {                                                                                        \
            CHUNK_CASE(A, TF32) CHUNK_CASE(A, F16) CHUNK_CASE(A, BF16) CHUNK_CASE(A, E5M2) CHUNK_CASE(A, E4M3) \
            CHUNK_CASE(A, E3M2) CHUNK_CASE(A, E2M3) CHUNK_CASE(A, E2M1)                                      \
        default: return NULL;                                                                                \
        }
MF_HD static chunk_fn chunk_for(mf_format fa, mf_format fb)
{
    switch (fa) {
        FAST_FORMATS(CHUNK_CASES_A)
    default: return NULL;
    }
}
#define CHUNK_FN(fa, fb) chunk_for(fa, fb)
#endif

MF_HD static inline int fast_ok(const mf_instr *in, mf_format fc)
{
    /* the specialized pairs are the non-NULL entries of chunk_table */
    int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    return CHUNK_FN(in->fa, in->fb) && in->F >= fr && in->F <= 29 &&
           (fc == MF_FMT_F32 || fc == MF_FMT_F16) &&
           (in->rho == MF_RZ_FP32 || in->rho == MF_RZ_E8M13 || in->rho == MF_RNE_FP16);
}

MF_HD int mf_t_fdpa_chunk_fast(const mf_instr *in, mf_format fc, uint64_t c, const uint64_t *a, const uint64_t *b, int L,
                         int e_sab, uint64_t *d)
{
    if (!fast_ok(in, fc))
        return 1;
    return CHUNK_FN(in->fa, in->fb)(in, fc, c, a, b, L, e_sab, d);
}

/* The specialized chunk function of a row when the whole dot product can
 * take the fast path (T-FDPA, no scales), else NULL: from the row's fields
 * alone. */
MF_HD static chunk_fn plan_of(const mf_instr *in)
{
    return in->family == MF_T_FDPA && !mf_row_has_forms(in) && fast_ok(in, in->fc) && fast_ok(in, in->fd) ? CHUNK_FN(in->fa, in->fb) : NULL;
}

#ifndef MF_DEVICE_BUILD
/* The plans of the table rows, filled once at load time; read-only
 * afterwards, so threads share it safely.  Sized from the table itself. */
enum {
    TABLE_ROWS = 0
#define MF_INSTR(...) +1
#include "instr_table.def"
#undef MF_INSTR
};
static chunk_fn row_plan[TABLE_ROWS];

__attribute__((constructor)) static void build_row_plans(void)
{
    for (size_t i = 0; i < mf_instr_count && i < TABLE_ROWS; i++)
        row_plan[i] = plan_of(&mf_instr_table[i]);
}

#endif

MF_HD mf_chunk_fn mf_t_fdpa_plan(const mf_instr *in)
{
#ifdef MF_DEVICE_BUILD
    return plan_of(in);   /* device code: no table of plans (and no host table rows) */
#else
    uintptr_t p = (uintptr_t)in, t = (uintptr_t)mf_instr_table;
    if (p >= t && p < t + mf_instr_count * sizeof *in && (p - t) % sizeof *in == 0)
        return row_plan[(p - t) / sizeof *in];   /* a table row: its plan */
    return plan_of(in);   /* a modified copy of a row (model variants): worked out from its fields */
#endif
}

MF_HD int mf_t_fdpa_fast(const mf_instr *in, const mf_case *cs, uint64_t *d)
{
    chunk_fn fn = mf_t_fdpa_plan(in);
    if (!fn)
        return 1;
    if (in->L == in->k)
        return fn(in, in->fc, cs->c, cs->a, cs->b, in->k, 0, d);
    uint64_t c = cs->c;
    mf_format fc = in->fc;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        if (fn(in, fc, c, cs->a + k0, cs->b + k0, in->L, 0, &c))
            return 1;
        fc = in->fd;
    }
    *d = c;
    return 0;
}

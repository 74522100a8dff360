/*
 * internal.h - helpers shared by the model's source files; not installed.
 *
 * Conventions: a "term" is an exact value (-1)^sign * mag * 2^exp held in
 * integers; mag is an unsigned 128-bit integer.  Rounding takes such a term,
 * with any lost low bits folded into a sticky bit by the caller.
 */
#ifndef MMAFUZZ_MODEL_INTERNAL_H
#define MMAFUZZ_MODEL_INTERNAL_H

#include "mmafuzz_model.h"
#include "mf_portable.h"

#include <stdio.h>

typedef unsigned __int128 mf_u128;

/* MF_UNROLL before a loop whose trip count is a constant once inlined (the
 * fixed-shape entries below): device code unrolls it fully, so that the
 * per-term arrays stay in registers; the host compilers decide themselves. */
#undef MF_UNROLL
#undef MF_COLD
/* MF_COLD on a rarely taken general step called from unrolled code: device
 * code keeps it out of line (a call instead of one copy per unrolled step). */
#if defined(MF_DEVICE_BUILD) && defined(__CUDACC__)
#define MF_UNROLL _Pragma("unroll")
#define MF_COLD __noinline__
#else
#define MF_UNROLL
#define MF_COLD
#endif

/* Decode tables (format.c): entry = sig | (exp+512) << 16 | cls << 26 |
 * sign << 28, for formats of 16 bits or fewer except tf32 (else NULL).
 * Host only: built by a constructor; device code decodes from the fields
 * (mf_decode_fast, mf_dec_word), with the same results. */
#ifndef MF_DEVICE_BUILD
extern const uint32_t *mf_dec_tab[MF_FMT_COUNT];
extern uint32_t mf_dec_mask[MF_FMT_COUNT];
#endif

/* A decoded value packed as a decode-table word (the layout above). */
MF_HD static inline uint32_t mf_dec_pack(mf_value v)
{
    return (uint32_t)v.sig | ((uint32_t)(v.exp + 512) << 16) | ((uint32_t)v.cls << 26) | ((uint32_t)v.sign << 28);
}

/* An IEEE-style value: fraction in the low fbits, then ebits of exponent
 * (bias as given), then the sign; ieee_specials: the top exponent is Inf/NaN
 * (they decode to sig 0, exp 0).  mf_decode's decoder for every format, and
 * inline here so that constant fields fold. */
MF_HD static inline mf_value mf_decode_ieee(uint64_t x, int ebits, int fbits, int bias, int ieee_specials)
{
    mf_value v;
    uint64_t frac = x & ((UINT64_C(1) << fbits) - 1);
    int e = (int)((x >> fbits) & ((1u << ebits) - 1));
    v.sign = (uint8_t)((x >> (fbits + ebits)) & 1);
    if (ieee_specials && e == (1 << ebits) - 1) {
        v.cls = frac ? MF_CLS_NAN : MF_CLS_INF;
        v.sig = 0;
        v.exp = 0;
        return v;
    }
    if (e == 0) {
        v.sig = frac;
        v.exp = 1 - bias;
        v.cls = frac ? MF_CLS_FINITE : MF_CLS_ZERO;
        return v;
    }
    v.sig = frac | (UINT64_C(1) << fbits);
    v.exp = e - bias;
    v.cls = MF_CLS_FINITE;
    return v;
}

/* mf_decode through the tables where they exist, binary32 from its fields.
 * Same results. */
MF_HD static inline mf_value mf_decode_fast(mf_format f, uint64_t x)
{
    if (f == MF_FMT_F32)
        return mf_decode_ieee(x & 0xFFFFFFFFu, 8, 23, 127, 1);
#ifdef MF_DEVICE_BUILD
    return mf_decode(f, x);   /* no tables in device code */
#else
    const uint32_t *t = mf_dec_tab[f];
    if (t) {
        uint32_t w = t[x & mf_dec_mask[f]];
        mf_value v;
        v.sig = w & 0xFFFF;
        v.exp = (int32_t)((w >> 16) & 0x3FF) - 512;
        v.cls = (uint8_t)((w >> 26) & 3);
        v.sign = (uint8_t)((w >> 28) & 1);
        return v;
    }
    return mf_decode(f, x);
#endif
}

/* The decode-table word of x in format f (a format that has a table): the
 * table's entry on the host, the same word from mf_decode in device code. */
MF_HD static inline uint32_t mf_dec_word(mf_format f, uint64_t x)
{
#ifdef MF_DEVICE_BUILD
    return mf_dec_pack(mf_decode(f, x));
#else
    return mf_dec_tab[f][x & mf_dec_mask[f]];
#endif
}

/* Rounding directions used by the families. */
typedef enum mf_rmode {
    MF_RM_RNE, /* nearest, ties to even */
    MF_RM_RZ,  /* toward zero */
    MF_RM_RD,  /* toward minus infinity */
    MF_RM_RU   /* toward plus infinity */
} mf_rmode;

/* @return the number of significant bits of x (0 for x == 0). */
MF_HD static inline int mf_bitlen128(mf_u128 x)
{
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    if (hi)
        return 128 - mf_clz64(hi);
    return lo ? 64 - mf_clz64(lo) : 0;
}

/* x >> n with every shifted-out 1 folded into bit 0 ("jamming"). */
MF_HD static inline mf_u128 mf_shr_jam128(mf_u128 x, int n)
{
    if (n <= 0)
        return x;
    if (n >= 128)
        return x != 0;
    return (x >> n) | ((x & (((mf_u128)1 << n) - 1)) != 0);
}

/* Round (-1)^sign * mag * 2^exp to `prec` fraction bits with minimum
 * exponent emin (values below 2^emin keep the quantum 2^(emin-prec):
 * gradual underflow).  mag may be 0.
 * On return *sig is the rounded significand (< 2^(prec+1), hidden bit
 * included for normal results) and *e the exponent of its leading bit
 * position, i.e. the value is sig * 2^(*e - prec). */
MF_HD void mf_round_sig(int sign, mf_u128 mag, int exp, int prec, int emin, mf_rmode rm,
                  uint64_t *sig, int *e);

/* Round and pack into binary16/32/64 (out is MF_FMT_F16/F32/F64), keeping
 * `prec` fraction bits (prec <= the format's).  A result whose exponent
 * exceeds the format's maximum becomes +-Inf, under every mode (DOMAIN
 * section 3, T-FDPA step 6).  A zero magnitude gives a zero of `sign`. */
MF_HD uint64_t mf_round_pack(mf_format out, int sign, mf_u128 mag, int exp, int prec, mf_rmode rm);

/* Round (-1)^sign * mag * 2^q (mag a nonzero 64-bit magnitude, any low bits
 * already jammed) to an IEEE format given by its fields: prec fraction bits
 * kept (<= fbits), fbits stored fraction bits, exponent bits ebits.  RNE, RZ,
 * RD or RU; a result above the largest exponent becomes Inf under every mode.
 * The 64-bit twin of mf_round_pack, for the hot paths. */
MF_HD static inline uint64_t mf_round64(int sign, uint64_t mag, int q, int prec, int fbits, int ebits, mf_rmode rm)
{
    const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias;
    const uint64_t sgn = (uint64_t)(sign != 0) << (ebits + fbits);
    if (mag == 0)
        return sgn;
    int top = q + 63 - mf_clz64(mag);
    int eff = top < emin ? emin : top;
    int shift = eff - prec - q;
    uint64_t sig;
    if (shift <= 0) {
        sig = mag << -shift;
    } else {
        uint64_t kept = shift > 63 ? 0 : mag >> shift;
        uint64_t rem = shift > 63 ? mag : mag & ((UINT64_C(1) << shift) - 1);
        sig = kept;
        if (rem) {
            if (rm == MF_RM_RNE) {
                if (shift <= 64) {
                    uint64_t half = UINT64_C(1) << (shift - 1);
                    sig += rem > half || (rem == half && (kept & 1));
                }
            } else if ((rm == MF_RM_RD && sign) || (rm == MF_RM_RU && !sign)) {
                sig++;
            }
        }
        if (sig >> (prec + 1)) {
            sig >>= 1;
            eff++;
        }
    }
    if (sig == 0)
        return sgn;
    if (eff > emax)
        return sgn | ((UINT64_C(1) << ebits) - 1) << fbits;
    uint64_t biased = (sig >> prec) ? (uint64_t)(eff + bias) : 0;
    return sgn | (biased << fbits) | ((sig & ((UINT64_C(1) << prec) - 1)) << (fbits - prec));
}

/* A 128-bit magnitude folded to 64 bits with the lost bits jammed into bit 0:
 * *q is adjusted so that the value (up to the sticky bit) is unchanged. */
MF_HD static inline uint64_t mf_jam64(mf_u128 m, int *q)
{
    uint64_t hi = (uint64_t)(m >> 64);
    if (!hi)
        return (uint64_t)m;
    int sh = 64 - mf_clz64(hi) + 1;  /* keep 63 bits: sh is 2..65 */
    *q += sh;
    return (uint64_t)(m >> sh) | (uint64_t)((m & (((mf_u128)1 << sh) - 1)) != 0);
}

/* Bit patterns of special outputs of format f (F16/F32/F64). */
MF_HD uint64_t mf_pack_inf(mf_format f, int sign);
MF_HD uint64_t mf_pack_zero(mf_format f, int sign);
MF_HD uint64_t mf_canonical_nan(mf_format f);

/* IEEE addition x + y in format f (F16/F32/F64), round to nearest even,
 * subnormals honoured. */
MF_HD uint64_t mf_ieee_add(mf_format f, uint64_t x, uint64_t y);

/* mf_ieee_add for binary32 (x, y are binary32 bit patterns). */
MF_HD uint64_t mf_f32_add(uint32_t x, uint32_t y);

/* Exact sum of two terms, normalized and jammed so that rounding the result
 * to <= 120 bits is exact.  Either mag may be 0.  The sum of exactly
 * cancelling terms is returned with mag 0 and sign 0. */
MF_HD void mf_add_terms(int s1, mf_u128 m1, int e1, int s2, mf_u128 m2, int e2,
                  int *s, mf_u128 *m, int *e);

/* Family evaluators: one chunk or the whole dot product, as each family
 * needs.  `tr` may be NULL. */
MF_HD uint64_t mf_eval_t_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
MF_HD uint64_t mf_eval_gst_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
MF_HD uint64_t mf_eval_f16_emu(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
/* e4m3 or e5m2 (f) to f16 bits, indexed by the fp8 byte: exact; NaN -> 0x7FFF.
 * (Host only: a table built at load time.) */
#ifndef MF_DEVICE_BUILD
const uint16_t *mf_fp8_f16_table(mf_format f);
#endif
/* The f16 bits of fp8 byte x of format f (e4m3 or e5m2): the table's entry
 * on the host, worked out in device code (family_tfdpa.c). */
MF_HD uint16_t mf_fp8_f16(mf_format f, uint64_t x);
/* F16-emu's two HMMA passes (mf_eval_f16_emu): pass p takes the k with
 * ((k >> 1) & 1) == p; k's place when the passes lie one after the other,
 * half = K/2 positions each. */
MF_HD static inline int mf_f16_emu_pos(int k, int half)
{
    return ((k >> 1) & 1) * half + ((k >> 2) << 1) + (k & 1);
}
MF_HD uint64_t mf_eval_int_dot(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
/* Two's complement (or unsigned) value of the bits of x in integer format f. */
MF_HD static inline int64_t mf_int_value(mf_format f, uint64_t x)
{
    const mf_format_info *fi = mf_format_get(f);
    const uint64_t mask = (UINT64_C(1) << fi->bits) - 1;
    x &= mask;
    if (fi->has_sign && ((x >> (fi->bits - 1)) & 1))
        return (int64_t)x - (int64_t)(mask + 1);
    return (int64_t)x;
}
/* MF_INT_DOT's last step: the exact dot product `dot` plus c (the bits of
 * the case's c; none with no_c), wrapped modulo 2^32 or (.satfinite)
 * clamped to s32. */
MF_HD uint64_t mf_int_dot_finish(const mf_instr *in, int64_t dot, uint64_t c, const mf_trace *tr);
/* @return 1 if row `in` (a modified copy) sets one of wgmma's operand forms
 * (neg_a, neg_b, no_c), or is sparse: only the general path models them. */
MF_HD static inline int mf_row_has_forms(const mf_instr *in)
{
    return in->neg_a || in->neg_b || in->no_c || in->sparse;
}
/* Sparse rows (sparse.c): the kept products evaluated by the dense row's
 * family (mf_sp_model says how). */
MF_HD uint64_t mf_eval_sparse(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
MF_HD uint64_t mf_eval_fma_chain(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
MF_HD uint64_t mf_eval_e_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
MF_HD uint64_t mf_eval_ftz_mul_add(const mf_instr *in, const mf_case *cs, const mf_trace *tr);
MF_HD uint64_t mf_eval_tr_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr);

/* The all-finite fast path of one T-FDPA/ST-FDPA chunk (family_tfdpa_fast.c).
 * @return 0 with *d set, or 1 when the chunk holds NaN/Inf or its formats are
 * not specialized: then the caller takes the general path. */
MF_HD int mf_t_fdpa_chunk_fast(const mf_instr *in, mf_format fc, uint64_t c, const uint64_t *a, const uint64_t *b, int L,
                         int e_sab, uint64_t *d);

/* The specialized chunk function of a row (a table row or a modified copy of
 * one) that can take the all-finite T-FDPA path whole, or NULL
 * (family_tfdpa_fast.c). */
typedef int (*mf_chunk_fn)(const mf_instr *, mf_format, uint64_t, const uint64_t *, const uint64_t *, int, int,
                           uint64_t *);
MF_HD mf_chunk_fn mf_t_fdpa_plan(const mf_instr *in);

/* Whole T-FDPA dot product on the fast path (no scales).  @return 0 with *d,
 * or 1 if any chunk needs the general path (the caller then starts over). */
MF_HD int mf_t_fdpa_fast(const mf_instr *in, const mf_case *cs, uint64_t *d);

/* Trace a line only when tracing: keeps the formatting and the call out of
 * the untraced hot paths.  Device code has no formatting (vsnprintf): there
 * the arguments are only type-checked, never evaluated. */
#ifdef MF_DEVICE_BUILD
template <typename... T> static inline void mf_trace_unused(const T &...) {}
#define MF_TRACE(tr, ...) ((void)sizeof((mf_trace_unused((tr), __VA_ARGS__), 0)))
#else
#define MF_TRACE(tr, ...)                                                                                    \
    do {                                                                                                     \
        if (tr)                                                                                              \
            mf_tracef((tr), __VA_ARGS__);                                                                    \
    } while (0)

/* printf-style trace line; does nothing when tr is NULL.  (Host only.) */
void mf_tracef(const mf_trace *tr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#endif

#endif /* MMAFUZZ_MODEL_INTERNAL_H */

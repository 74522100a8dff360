/*
 * round.c - rounding and packing of exact integer terms into binary formats,
 * and exact two-term addition.  Every family finishes through these.
 */
#include "internal.h"

#include <stdarg.h>

MF_HD void mf_round_sig(int sign, mf_u128 mag, int exp, int prec, int emin, mf_rmode rm,
                  uint64_t *sig, int *e)
{
    if (mag == 0) {
        *sig = 0;
        *e = emin;
        return;
    }
    int top = exp + mf_bitlen128(mag) - 1;   /* exponent of the leading bit */
    int eff = top < emin ? emin : top;
    int shift = (eff - prec) - exp;          /* quantum is 2^(eff-prec) */
    uint64_t s;
    if (shift <= 0) {
        s = (uint64_t)(mag << -shift);       /* exact; fits in prec+1 bits */
    } else {
        mf_u128 kept, rem, half;
        if (shift >= 128) {
            kept = 0;
            rem = mag;
            half = shift == 128 ? (mf_u128)1 << 127 : 0;  /* 0: beyond reach */
        } else {
            kept = mag >> shift;
            rem = mag & (((mf_u128)1 << shift) - 1);
            half = (mf_u128)1 << (shift - 1);
        }
        s = (uint64_t)kept;
        if (rem) {
            switch (rm) {
            case MF_RM_RNE:
                /* shift > 128: mag < 2^128 < half of the quantum */
                if (shift <= 128 && (rem > half || (rem == half && (s & 1))))
                    s++;
                break;
            case MF_RM_RZ:
                break;
            case MF_RM_RD:
                if (sign)
                    s++;
                break;
            case MF_RM_RU:
                if (!sign)
                    s++;
                break;
            }
        }
    }
    if (s >> (prec + 1)) {                   /* carried into a new bit */
        s >>= 1;
        eff++;
    }
    *sig = s;
    *e = eff;
}

MF_HD uint64_t mf_pack_zero(mf_format f, int sign)
{
    const mf_format_info *fi = mf_format_get(f);
    return (uint64_t)(sign != 0) << (fi->bits - 1);
}

MF_HD uint64_t mf_pack_inf(mf_format f, int sign)
{
    const mf_format_info *fi = mf_format_get(f);
    uint64_t expmask = ((UINT64_C(1) << fi->exp_bits) - 1) << fi->frac_bits;
    return mf_pack_zero(f, sign) | expmask;
}

MF_HD uint64_t mf_canonical_nan(mf_format f)
{
    /* DOMAIN section 3, T-FDPA step 7: 0x7FFFFFFF (f32), 0x7FFF (f16). */
    const mf_format_info *fi = mf_format_get(f);
    return (UINT64_C(1) << (fi->bits - 1)) - 1;
}

MF_HD uint64_t mf_round_pack(mf_format out, int sign, mf_u128 mag, int exp, int prec, mf_rmode rm)
{
    const mf_format_info *fi = mf_format_get(out);
    int emin = 1 - fi->bias, emax = fi->bias;
    uint64_t sig;
    int e;
    mf_round_sig(sign, mag, exp, prec, emin, rm, &sig, &e);
    if (sig == 0)
        return mf_pack_zero(out, sign);
    if (e > emax)
        return mf_pack_inf(out, sign);
    uint64_t biased = (sig >> prec) ? (uint64_t)(e + fi->bias) : 0;  /* subnormal */
    uint64_t frac = (sig & ((UINT64_C(1) << prec) - 1)) << (fi->frac_bits - prec);
    return mf_pack_zero(out, sign) | (biased << fi->frac_bits) | frac;
}

MF_HD void mf_add_terms(int s1, mf_u128 m1, int e1, int s2, mf_u128 m2, int e2,
                  int *s, mf_u128 *m, int *e)
{
    if (m1 == 0 || m2 == 0) {
        if (m1 == 0) {
            s1 = s2;
            m1 = m2;
            e1 = e2;
        }
        *s = m1 ? s1 : 0;
        *m = m1;
        *e = e1;
        return;
    }
    /* Normalize both so that the leading bit sits at bit 125; then the
     * larger-exponent one is X, the other is aligned to it with jamming. */
    int n1 = 125 - (mf_bitlen128(m1) - 1), n2 = 125 - (mf_bitlen128(m2) - 1);
    m1 <<= n1;
    e1 -= n1;
    m2 <<= n2;
    e2 -= n2;
    if (e2 > e1 || (e2 == e1 && m2 > m1)) {
        int ts = s1, te = e1;
        mf_u128 tm = m1;
        s1 = s2; m1 = m2; e1 = e2;
        s2 = ts; m2 = tm; e2 = te;
    }
    m2 = mf_shr_jam128(m2, e1 - e2);
    if (s1 == s2) {
        *m = m1 + m2;
        *s = s1;
    } else {
        *m = m1 - m2;
        *s = *m ? s1 : 0;
    }
    *e = e1;
}

/* Decode an F16/F32/F64 value into a term; returns its class. */
MF_HD static int ieee_term(mf_format f, uint64_t x, int *sign, mf_u128 *mag, int *exp)
{
    mf_value v = mf_decode_fast(f, x);
    *sign = v.sign;
    *mag = v.sig;
    *exp = v.exp - mf_format_get(f)->frac_bits;
    return v.cls;
}

/* IEEE addition for binary16/binary32 in 64-bit integers. */
MF_HD static inline __attribute__((always_inline)) uint64_t ieee_add_small(uint64_t x, uint64_t y, const int ebits,
                                                                     const int fbits)
{
    const uint64_t emask = (UINT64_C(1) << ebits) - 1, fmask = (UINT64_C(1) << fbits) - 1;
    const int sbit = ebits + fbits, bias = (int)(emask >> 1);
    const mf_format f = ebits == 5 ? MF_FMT_F16 : MF_FMT_F32;
    uint64_t ex = (x >> fbits) & emask, ey = (y >> fbits) & emask;
    int sx = (int)(x >> sbit) & 1, sy = (int)(y >> sbit) & 1;
    if (ex == emask || ey == emask) {
        int nx = ex == emask && (x & fmask), ny = ey == emask && (y & fmask);
        if (nx || ny || (ex == emask && ey == emask && sx != sy))
            return mf_canonical_nan(f);
        return mf_pack_inf(f, ex == emask ? sx : sy);
    }
    uint64_t ax = x & ((UINT64_C(1) << sbit) - 1), ay = y & ((UINT64_C(1) << sbit) - 1);
    if (ax == 0 && ay == 0)
        return mf_pack_zero(f, sx & sy);      /* -0 + -0 = -0, else +0 */
    if (ax < ay) {                            /* |x| >= |y| from here */
        uint64_t t = ax; ax = ay; ay = t;
        t = ex; ex = ey; ey = t;
        int ts = sx; sx = sy; sy = ts;
    }
    uint64_t mx = (ax & fmask) | (ex ? fmask + 1 : 0), my = (ay & fmask) | (ey ? fmask + 1 : 0);
    int dx = ex ? (int)ex : 1, dy = ey ? (int)ey : 1;
    int d = dx - dy;
    mx <<= 32;                                /* 32 guard bits */
    my <<= 32;
    if (d > 63)
        my = my != 0;
    else if (d > 0)
        my = (my >> d) | ((my & ((UINT64_C(1) << d) - 1)) != 0);
    uint64_t m = sx == sy ? mx + my : mx - my;
    if (m == 0)
        return mf_pack_zero(f, 0);            /* exact cancellation: +0 */
    return mf_round64(sx, m, dx - bias - fbits - 32, fbits, fbits, ebits, MF_RM_RNE);
}

MF_HD uint64_t mf_f32_add(uint32_t x, uint32_t y)
{
    return ieee_add_small(x, y, 8, 23);
}

MF_HD uint64_t mf_ieee_add(mf_format f, uint64_t x, uint64_t y)
{
    if (f == MF_FMT_F32)
        return ieee_add_small(x & 0xFFFFFFFFu, y & 0xFFFFFFFFu, 8, 23);
    if (f == MF_FMT_F16)
        return ieee_add_small(x & 0xFFFF, y & 0xFFFF, 5, 10);
    int sx, sy, ex, ey;
    mf_u128 mx, my;
    int cx = ieee_term(f, x, &sx, &mx, &ex);
    int cy = ieee_term(f, y, &sy, &my, &ey);
    if (cx == MF_CLS_NAN || cy == MF_CLS_NAN)
        return mf_canonical_nan(f);
    if (cx == MF_CLS_INF || cy == MF_CLS_INF) {
        if (cx == MF_CLS_INF && cy == MF_CLS_INF && sx != sy)
            return mf_canonical_nan(f);
        return mf_pack_inf(f, cx == MF_CLS_INF ? sx : sy);
    }
    if (cx == MF_CLS_ZERO && cy == MF_CLS_ZERO)
        return mf_pack_zero(f, sx & sy);
    int s, e;
    mf_u128 m;
    mf_add_terms(sx, mx, ex, sy, my, ey, &s, &m, &e);
    return mf_round_pack(f, s, m, e, mf_format_get(f)->frac_bits, MF_RM_RNE);
}

#ifndef MF_DEVICE_BUILD  /* host only: no formatting in device code (MF_TRACE) */
void mf_tracef(const mf_trace *tr, const char *fmt, ...)
{
    if (!tr || !tr->line)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tr->line(tr->ctx, buf);
}
#endif

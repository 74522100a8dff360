/*
 * family_fma.c - FMA chain (shared/DOMAIN.md section 3): FP64 DMMA on NVIDIA,
 * f32/f64 MFMA on AMD.  c <- fma(a_k, b_k, c) for k = 0..K-1 in order, each
 * an exact fused multiply-add rounded once to nearest even, in integers.
 */
#include "internal.h"

/* IEEE fma(a, b, c) in binary64 (ebits 11, fbits 52) or binary32 (8, 23),
 * round to nearest even, in integers. */
MF_HD static MF_COLD uint64_t ieee_fma(uint64_t a, uint64_t b, uint64_t c, const int ebits, const int fbits)
{
    const mf_format f = fbits == 52 ? MF_FMT_F64 : MF_FMT_F32;
    const uint64_t emask = (UINT64_C(1) << ebits) - 1, fmask = (UINT64_C(1) << fbits) - 1;
    const int sbit = ebits + fbits, bias = (int)(emask >> 1);
    uint64_t ea = (a >> fbits) & emask, eb = (b >> fbits) & emask, ec = (c >> fbits) & emask;
    uint64_t ma = a & fmask, mb = b & fmask, mc = c & fmask;
    int sp = (int)((a ^ b) >> sbit) & 1, sc = (int)(c >> sbit) & 1;
    if (ea == emask || eb == emask || ec == emask) {
        if ((ea == emask && ma) || (eb == emask && mb) || (ec == emask && mc))
            return mf_canonical_nan(f);
        if (ea == emask || eb == emask) {
            if ((ea == 0 && ma == 0) || (eb == 0 && mb == 0))
                return mf_canonical_nan(f);                 /* 0 * Inf */
            if (ec == emask && sc != sp)
                return mf_canonical_nan(f);                 /* Inf - Inf */
            return mf_pack_inf(f, sp);
        }
        return mf_pack_inf(f, sc);
    }
    int zp = (ea == 0 && ma == 0) || (eb == 0 && mb == 0);
    int zc = ec == 0 && mc == 0;
    if (zp)  /* exact zero product: the result is c, with IEEE zero-sign rules */
        return zc ? mf_pack_zero(f, sp & sc) : c;
    ma |= ea ? fmask + 1 : 0;
    mb |= eb ? fmask + 1 : 0;
    mc |= ec ? fmask + 1 : 0;
    int qa = (ea ? (int)ea : 1) - bias - fbits, qb = (eb ? (int)eb : 1) - bias - fbits;
    int qc = (ec ? (int)ec : 1) - bias - fbits;
    mf_u128 mp = (mf_u128)ma * mb;
    int qp = qa + qb;
    int s, e;
    mf_u128 m;
    if (zc) {
        s = sp;
        m = mp;
        e = qp;
    } else {
        mf_add_terms(sp, mp, qp, sc, mc, qc, &s, &m, &e);
        if (m == 0)
            return mf_pack_zero(f, 0);                      /* exact cancellation: +0 */
    }
    uint64_t m64 = mf_jam64(m, &e);
    return mf_round64(s, m64, e, fbits, fbits, ebits, MF_RM_RNE);
}

/* The all-finite fast paths.  Both take the exact product and c as two
 * terms normalized to the same leading-bit position, add them with the
 * smaller one shifted right and jammed (its lost bits folded into a sticky
 * bit, which is enough: when the shift is 2 or more the sum keeps its
 * leading bit within one place, so the sticky bit stays below the rounding
 * bit; when it is 0 or 1 nothing is lost, since the product's low bits and
 * c's low bits are zeros after normalization), and round once to nearest
 * even.  They decline (return 1) for NaN/Inf operands, a zero operand, and
 * results that are subnormal: ieee_fma handles those. */

/* binary32: terms in 64 bits with their leading bit at bit 61. */
MF_HD static inline int fma_f32_fast(uint32_t a, uint32_t b, uint32_t c, uint64_t *d)
{
    uint32_t ea = (a >> 23) & 0xFF, eb = (b >> 23) & 0xFF, ec = (c >> 23) & 0xFF;
    /* NaN/Inf (0xFF) and zero/subnormal (0) operands: general path */
    if ((uint8_t)(ea - 1) >= 0xFE || (uint8_t)(eb - 1) >= 0xFE || (uint8_t)(ec - 1) >= 0xFE)
        return 1;
    uint64_t mp = (uint64_t)((a & 0x7FFFFF) | 0x800000) * ((b & 0x7FFFFF) | 0x800000); /* [2^46, 2^48) */
    int hp = (int)(mp >> 47);                       /* 1 when the product reached 2^47 */
    mp <<= 15 - hp;                                  /* leading bit at 61 */
    int tp = (int)ea + (int)eb - 254 + hp;           /* exponent of the product's leading bit */
    uint64_t mc = (uint64_t)((c & 0x7FFFFF) | 0x800000) << 38;
    int tc = (int)ec - 127;
    uint32_t sp = (a ^ b) >> 31, sc = c >> 31;
    /* x: the larger magnitude.  The magnitudes compare as (exponent,
     * significand) keys; the product's low 14 bits are zeros, and selects
     * through masks keep this free of unpredictable branches. */
    uint64_t kp = ((uint64_t)(tp + 512) << 48) | (mp >> 14), kc = ((uint64_t)(tc + 512) << 48) | (mc >> 14);
    uint64_t pbig = 0 - (uint64_t)(kp >= kc), diff = mp ^ mc;
    uint64_t mx = mc ^ (diff & pbig), my = mp ^ (diff & pbig);
    int tx = pbig ? tp : tc, dist = pbig ? tp - tc : tc - tp;
    uint32_t sx = pbig ? sp : sc;
    dist = dist > 63 ? 63 : dist;
    uint64_t lost = my & ((UINT64_C(1) << dist) - 1);
    my = (my >> dist) | (lost != 0);
    uint64_t neg = 0 - (uint64_t)(sp ^ sc);
    uint64_t m = mx + ((my ^ neg) - neg);            /* mx - my when the signs differ */
    if (m == 0) {
        *d = 0;                                      /* exact cancellation: +0 */
        return 0;
    }
    int lz = mf_clz64(m);                     /* 1 (carry) or more */
    int e = tx + 2 - lz;                             /* exponent of the sum's leading bit */
    if (e < -126)
        return 1;                                    /* subnormal result */
    m <<= lz;                                        /* leading bit at 63 */
    uint64_t kept = m >> 40, rest = m & ((UINT64_C(1) << 40) - 1);
    kept += (rest + (kept & 1) + (UINT64_C(1) << 39) - 1) >> 40;   /* nearest, ties to even */
    /* kept is 2^23..2^24: adding it to the exponent field minus one carries
     * a rounding overflow into the exponent */
    uint64_t bits = ((uint64_t)(e + 126) << 23) + kept;
    if (bits >= UINT64_C(0xFF) << 23)
        bits = UINT64_C(0xFF) << 23;                 /* overflow: Inf */
    *d = ((uint64_t)sx << 31) | bits;
    return 0;
}

/* binary64: terms in 128 bits with their leading bit at bit 125. */
MF_HD static inline int fma_f64_fast(uint64_t a, uint64_t b, uint64_t c, uint64_t *d)
{
    const uint64_t fmask = (UINT64_C(1) << 52) - 1, hidden = UINT64_C(1) << 52;
    uint32_t ea = (a >> 52) & 0x7FF, eb = (b >> 52) & 0x7FF, ec = (c >> 52) & 0x7FF;
    if (ea - 1 >= 0x7FE || eb - 1 >= 0x7FE || ec - 1 >= 0x7FE)
        return 1;  /* NaN/Inf, zero or subnormal operand: general path */
    mf_u128 mp = (mf_u128)((a & fmask) | hidden) * ((b & fmask) | hidden);   /* [2^104, 2^106) */
    int hp = (int)(mp >> 105);
    mp <<= 21 - hp;
    int tp = (int)ea + (int)eb - 2046 + hp;
    mf_u128 mc = (mf_u128)((c & fmask) | hidden) << 73;
    int tc = (int)ec - 1023;
    uint64_t sp = (a ^ b) >> 63, sc = c >> 63;
    /* as in fma_f32_fast: the product's low 20 bits are zeros */
    mf_u128 kp = ((mf_u128)(uint64_t)(tp + 4096) << 106) | (mp >> 20);
    mf_u128 kc = ((mf_u128)(uint64_t)(tc + 4096) << 106) | (mc >> 20);
    mf_u128 pbig = 0 - (mf_u128)(kp >= kc), diff = mp ^ mc;
    mf_u128 mx = mc ^ (diff & pbig), my = mp ^ (diff & pbig);
    int tx = pbig ? tp : tc, dist = pbig ? tp - tc : tc - tp;
    uint64_t sx = pbig ? sp : sc;
    dist = dist > 127 ? 127 : dist;
    mf_u128 lost = my & (((mf_u128)1 << dist) - 1);
    my = (my >> dist) | (lost != 0);
    mf_u128 neg = 0 - (mf_u128)(sp ^ sc);
    mf_u128 m = mx + ((my ^ neg) - neg);
    if (m == 0) {
        *d = 0;
        return 0;
    }
    uint64_t hi = (uint64_t)(m >> 64);
    int lz = hi ? mf_clz64(hi) : 64 + mf_clz64((uint64_t)m);
    int e = tx + 2 - lz;
    if (e < -1022)
        return 1;  /* subnormal result */
    m <<= lz;
    uint64_t top = (uint64_t)(m >> 64) | ((uint64_t)m != 0);   /* leading bit at 63, sticky in bit 0 */
    uint64_t kept = top >> 11, rest = top & 0x7FF;
    kept += (rest + (kept & 1) + 0x3FF) >> 11;   /* nearest, ties to even */
    uint64_t bits = ((uint64_t)(e + 1022) << 52) + kept;
    if (bits >= UINT64_C(0x7FF) << 52)
        bits = UINT64_C(0x7FF) << 52;
    *d = (sx << 63) | bits;
    return 0;
}

/* Once c is NaN every later step gives the canonical NaN, and once it is
 * Inf a finite product leaves it unchanged: only Inf/NaN operands then need
 * the general path.  @return 1 when a or b (fields ebits/fbits) is Inf/NaN. */
MF_HD static inline int inf_nan_operand(uint64_t a, uint64_t b, const int ebits, const int fbits)
{
    const uint64_t emask = (UINT64_C(1) << ebits) - 1;
    return ((a >> fbits) & emask) == emask || ((b >> fbits) & emask) == emask;
}

/* The untraced FMA chain of K steps from operand arrays: each step through
 * the fast FMA when its operands allow, else the general one (out of line in
 * device code: MF_COLD).  A caller passing constant fd and K gets it
 * unrolled; measured on an H100, the unrolled f64 chain of K = 16 ran at a
 * third of the rate of the loop, so the GPU's check keeps the loop
 * (mf_eval_fma_chain, the row's K at run time). */
MF_HD static inline __attribute__((always_inline)) uint64_t mf_fma_chain_fixed(mf_format fd, const uint64_t *av,
                                                                               const uint64_t *bv, uint64_t c,
                                                                               const int K)
{
    if (fd == MF_FMT_F64) {
        MF_UNROLL
        for (int k = 0; k < K; k++) {
            uint64_t a = av[k], b = bv[k];
            if (((c >> 52) & 0x7FF) == 0x7FF) {
                if (c << 12)
                    return mf_canonical_nan(MF_FMT_F64);  /* NaN c: NaN to the end */
                if (!inf_nan_operand(a, b, 11, 52))
                    continue;
            }
            if (fma_f64_fast(a, b, c, &c))
                c = ieee_fma(a, b, c, 11, 52);
        }
        return c;
    }
    uint64_t c32 = c & 0xFFFFFFFFu;
    MF_UNROLL
    for (int k = 0; k < K; k++) {
        uint32_t a = (uint32_t)av[k], b = (uint32_t)bv[k];
        if (((c32 >> 23) & 0xFF) == 0xFF) {
            if (c32 & 0x7FFFFF)
                return mf_canonical_nan(MF_FMT_F32);
            if (!inf_nan_operand(a, b, 8, 23))
                continue;
        }
        if (fma_f32_fast(a, b, (uint32_t)c32, &c32))
            c32 = ieee_fma(a, b, (uint32_t)c32, 8, 23);
    }
    return c32;
}

MF_HD uint64_t mf_eval_fma_chain(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    uint64_t c = cs->c;
    const int w = mf_format_get(in->fd)->hex_width;
    if (!tr)
        return mf_fma_chain_fixed(in->fd, cs->a, cs->b, c, in->k);
    /* traced: every step through the general path */
    for (int k = 0; k < in->k; k++) {
        uint64_t d = in->fd == MF_FMT_F64 ? ieee_fma(cs->a[k], cs->b[k], c, 11, 52)
                                          : ieee_fma(cs->a[k] & 0xFFFFFFFFu, cs->b[k] & 0xFFFFFFFFu, c & 0xFFFFFFFFu, 8, 23);
        MF_TRACE(tr, "fma(a[%d]=0x%0*llx, b[%d]=0x%0*llx, c=0x%0*llx) = 0x%0*llx", k, w,
                 (unsigned long long)cs->a[k], k, w, (unsigned long long)cs->b[k], w,
                 (unsigned long long)c, w, (unsigned long long)d);
        c = d;
    }
    return c;
}

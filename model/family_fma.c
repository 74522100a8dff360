/*
 * family_fma.c - FMA chain (shared/DOMAIN.md section 3): FP64 DMMA on NVIDIA,
 * f32/f64 MFMA on AMD.  c <- fma(a_k, b_k, c) for k = 0..K-1 in order, each
 * an exact fused multiply-add rounded once to nearest even, in integers.
 */
#include "internal.h"

/* IEEE fma(a, b, c) in binary64 (ebits 11, fbits 52) or binary32 (8, 23),
 * round to nearest even, in integers. */
static inline uint64_t ieee_fma(uint64_t a, uint64_t b, uint64_t c, const int ebits, const int fbits)
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

uint64_t mf_eval_fma_chain(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    uint64_t c = cs->c;
    const int w = mf_format_get(in->fd)->hex_width;
    for (int k = 0; k < in->k; k++) {
        uint64_t d = in->fd == MF_FMT_F64 ? ieee_fma(cs->a[k], cs->b[k], c, 11, 52)
                                          : ieee_fma(cs->a[k] & 0xFFFFFFFFu, cs->b[k] & 0xFFFFFFFFu, c & 0xFFFFFFFFu, 8, 23);
        if (tr)
            MF_TRACE(tr, "fma(a[%d]=0x%0*llx, b[%d]=0x%0*llx, c=0x%0*llx) = 0x%0*llx", k, w,
                      (unsigned long long)cs->a[k], k, w, (unsigned long long)cs->b[k], w,
                      (unsigned long long)c, w, (unsigned long long)d);
        c = d;
    }
    return c;
}

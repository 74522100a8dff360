/*
 * family_fma.c - FMA chain (shared/DOMAIN.md section 3): FP64 DMMA on NVIDIA,
 * f32/f64 MFMA on AMD.  c <- fma(a_k, b_k, c) for k = 0..K-1 in order, each
 * an exact fused multiply-add rounded once to nearest even, in integers.
 */
#include "internal.h"

/* IEEE fma(a, b, c) in format f (F32 or F64), round to nearest even. */
static uint64_t ieee_fma(mf_format f, uint64_t a, uint64_t b, uint64_t c)
{
    const int fr = mf_format_get(f)->frac_bits;
    mf_value va = mf_decode_fast(f, a), vb = mf_decode_fast(f, b), vc = mf_decode_fast(f, c);
    int sp = va.sign ^ vb.sign;
    if (va.cls == MF_CLS_NAN || vb.cls == MF_CLS_NAN || vc.cls == MF_CLS_NAN)
        return mf_canonical_nan(f);
    if (va.cls == MF_CLS_INF || vb.cls == MF_CLS_INF) {
        if (va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO)
            return mf_canonical_nan(f);                 /* 0 * Inf */
        if (vc.cls == MF_CLS_INF && vc.sign != sp)
            return mf_canonical_nan(f);                 /* Inf - Inf */
        return mf_pack_inf(f, sp);
    }
    if (vc.cls == MF_CLS_INF)
        return mf_pack_inf(f, vc.sign);
    if (va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO) {
        /* exact zero product: the result is c, with IEEE zero-sign rules */
        if (vc.cls == MF_CLS_ZERO)
            return mf_pack_zero(f, sp & vc.sign);
        return c;
    }
    mf_u128 mp = (mf_u128)va.sig * vb.sig;
    int ep = va.exp + vb.exp - 2 * fr;
    int s, e;
    mf_u128 m;
    if (vc.cls == MF_CLS_ZERO) {
        s = sp;
        m = mp;
        e = ep;
    } else {
        mf_add_terms(sp, mp, ep, vc.sign, vc.sig, vc.exp - fr, &s, &m, &e);
    }
    return mf_round_pack(f, s, m, e, fr, MF_RM_RNE);  /* exact cancellation gives +0 */
}

uint64_t mf_eval_fma_chain(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    uint64_t c = cs->c;
    const int w = mf_format_get(in->fd)->hex_width;
    for (int k = 0; k < in->k; k++) {
        uint64_t d = ieee_fma(in->fd, cs->a[k], cs->b[k], c);
        if (tr)
            MF_TRACE(tr, "fma(a[%d]=0x%0*llx, b[%d]=0x%0*llx, c=0x%0*llx) = 0x%0*llx", k, w,
                      (unsigned long long)cs->a[k], k, w, (unsigned long long)cs->b[k], w,
                      (unsigned long long)c, w, (unsigned long long)d);
        c = d;
    }
    return c;
}

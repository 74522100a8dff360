/*
 * eval.c - evaluation entry points: dispatch on the instruction's family,
 * and the output comparison rule.
 */
#include "internal.h"

/* The case with every a (neg_a) and every b (neg_b) negated: the sign bit of
 * each float value flipped (wgmma's imm-scale-a/b = -1; a hypothesis). */
MF_HD static uint64_t eval_negated(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    mf_instr r = *in;
    mf_case t = *cs;
    r.neg_a = r.neg_b = 0;
    const int sa = mf_format_get(in->fa)->bits - 1, sb = mf_format_get(in->fb)->bits - 1;
    for (int k = 0; k < in->k; k++) {
        if (in->neg_a && mf_format_get(in->fa)->has_sign && !mf_format_is_int(in->fa))
            t.a[k] ^= UINT64_C(1) << sa;
        if (in->neg_b && mf_format_get(in->fb)->has_sign && !mf_format_is_int(in->fb))
            t.b[k] ^= UINT64_C(1) << sb;
    }
    MF_TRACE(tr, "imm-scale:%s%s: the sign of every such input flipped", in->neg_a ? " a = -1" : "",
             in->neg_b ? " b = -1" : "");
    return mf_eval_trace(&r, &t, tr);
}

MF_HD uint64_t mf_eval_trace(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    if (in->sparse)
        return mf_eval_sparse(in, cs, tr);
    if (in->neg_a || in->neg_b)
        return eval_negated(in, cs, tr);
    switch (in->family) {
    case MF_T_FDPA:
    case MF_ST_FDPA:
        return mf_eval_t_fdpa(in, cs, tr);
    case MF_GST_FDPA:
        return mf_eval_gst_fdpa(in, cs, tr);
    case MF_F16_EMU:
        return mf_eval_f16_emu(in, cs, tr);
    case MF_FMA_CHAIN:
        return mf_eval_fma_chain(in, cs, tr);
    case MF_E_FDPA:
        return mf_eval_e_fdpa(in, cs, tr);
    case MF_FTZ_MUL_ADD:
        return mf_eval_ftz_mul_add(in, cs, tr);
    case MF_TR_FDPA:
    case MF_GTR_FDPA:
        return mf_eval_tr_fdpa(in, cs, tr);
    case MF_INT_DOT:
        return mf_eval_int_dot(in, cs, tr);
    default:
        return mf_canonical_nan(in->fd);
    }
}

/* The hot entry: rows whose chunks are all finite take the specialized T-FDPA
 * path; everything else (and every traced call) takes the general one. */
MF_HD uint64_t mf_eval(const mf_instr *in, const mf_case *cs)
{
    uint64_t d;
    if (mf_row_has_forms(in))
        return mf_eval_trace(in, cs, NULL);
    mf_chunk_fn fn = mf_t_fdpa_plan(in);
    if (fn && in->L == in->k) {  /* one chunk: call it directly */
        if (fn(in, in->fc, cs->c, cs->a, cs->b, in->k, 0, &d) == 0)
            return d;
    } else if (fn && mf_t_fdpa_fast(in, cs, &d) == 0) {
        return d;
    }
    return mf_eval_trace(in, cs, NULL);
}

MF_HD int mf_output_equal(const mf_instr *in, uint64_t got, uint64_t expected)
{
    const mf_format_info *fi = mf_format_get(in->fd);
    uint64_t mask = fi->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << fi->bits) - 1;
    got &= mask;
    expected &= mask;
    if (in->nan_any && mf_is_nan(in->fd, got) && mf_is_nan(in->fd, expected))
        return 1;
    return got == expected;
}

/*
 * eval.c - evaluation entry points: dispatch on the instruction's family,
 * and the output comparison rule.
 */
#include "internal.h"

MF_HD uint64_t mf_eval_trace(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
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
    default:
        return mf_canonical_nan(in->fd);
    }
}

/* The hot entry: rows whose chunks are all finite take the specialized T-FDPA
 * path; everything else (and every traced call) takes the general one. */
MF_HD uint64_t mf_eval(const mf_instr *in, const mf_case *cs)
{
    uint64_t d;
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

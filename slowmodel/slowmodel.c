/*
 * slowmodel.c - dispatch by family, and the comparison rule of
 * shared/VECTORS.md.
 */
#include "slow_internal.h"

uint64_t slow_eval(const mf_instr *in, const mf_case *cs)
{
    switch (in->family) {
    case MF_FMA_CHAIN: return sm_eval_fma_chain(in, cs);
    case MF_INT_DOT: return sm_eval_int(in, cs);
    case MF_E_FDPA:
    case MF_FTZ_MUL_ADD:
    case MF_TR_FDPA:
    case MF_GTR_FDPA: return sm_eval_amd(in, cs);
    default: return sm_eval_nvidia(in, cs);
    }
}

int slow_output_equal(const mf_instr *in, uint64_t got, uint64_t expected)
{
    if (got == expected)
        return 1;
    if (!in->nan_any)
        return 0;
    sm_val g = sm_decode(in->fd, got), e = sm_decode(in->fd, expected);
    return g.cls == SM_NAN && e.cls == SM_NAN;
}

/*
 * fma.c - the FMA chain (shared/DOMAIN.md section 3): c <- fma(a_k, b_k, c)
 * for k = 0..K-1 in order, each an exact product-sum rounded to nearest even.
 */
#include "slow_internal.h"

uint64_t sm_eval_fma_chain(const mf_instr *in, const mf_case *cs)
{
    uint64_t c = cs->c;
    for (int k = 0; k < in->k; k++)
        c = sm_ieee_fma(in->fc, cs->a[k], in->fa, cs->b[k], c);
    return c;
}

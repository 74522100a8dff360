/*
 * slowmodel.h - a slow, independent second implementation of the
 * arithmetic families of shared/DOMAIN.md section 3, written from that
 * description alone (it shares no code with model/), to check the model the
 * way TestFloat's slowfloat checks SoftFloat.
 *
 * Every value is held exactly (exact.h) and rounded only where DOMAIN.md says
 * the hardware rounds.  It reads an instruction's parameters (family, F, L,
 * e_zero, X, rho, formats) from the instruction table row it is given, and
 * nothing else from the model.
 */
#ifndef MMAFUZZ_SLOWMODEL_H
#define MMAFUZZ_SLOWMODEL_H

#include "mmafuzz_model.h"

/* Evaluate one output element of instruction `in` on case `cs`.
 * @return d as a bit pattern of in->fd (NaN as the canonical NaN). */
uint64_t slow_eval(const mf_instr *in, const mf_case *cs);

/* Compare under shared/VECTORS.md "Comparing": bits exactly, except that
 * any NaN equals any NaN where in->nan_any.  @return 1 if they agree. */
int slow_output_equal(const mf_instr *in, uint64_t got, uint64_t expected);

#endif

/*
 * slow_internal.h - pieces shared by the slow model's files: the number
 * formats as shared/DOMAIN.md section 2 tabulates them, and rounding of an
 * exact value into an output format.
 */
#ifndef MMAFUZZ_SLOW_INTERNAL_H
#define MMAFUZZ_SLOW_INTERNAL_H

#include "exact.h"
#include "slowmodel.h"

/* Class of a decoded value. */
enum { SM_ZERO, SM_FINITE, SM_INF, SM_NAN };

/* A decoded input: value = (-1)^neg * sig * 2^(exp - p), where exp is the
 * exponent of the leading bit position for normal numbers and 1 - bias for
 * subnormals (DOMAIN section 2), p the number of fraction bits. */
typedef struct sm_val {
    int cls;
    int neg;
    uint64_t sig;
    int exp;
    int p;
} sm_val;

/* Decode bit pattern x of format f (DOMAIN section 2). */
sm_val sm_decode(mf_format f, uint64_t x);

/* The exact value of a finite or zero decoded input. */
void sm_value(sm_num *out, const sm_val *v);

/* The exact product of two finite or zero decoded inputs. */
void sm_product(sm_num *out, const sm_val *a, const sm_val *b);

/* Round x into output format f (F16, F32 or F64) keeping `prec` fraction
 * bits (at most the format's), subnormals honoured: the quantum is
 * 2^(max(floor(log2|x|), 1 - bias) - prec).  A rounded magnitude of 2^(emax+1)
 * or more gives Inf, under every mode (DOMAIN section 3, T-FDPA step 6).
 * A zero x gives a zero whose sign is zero_neg. */
uint64_t sm_round_pack(mf_format f, const sm_num *x, int prec, sm_mode mode, int zero_neg);

/* Output bit patterns of f (F16, F32 or F64). */
uint64_t sm_inf(mf_format f, int neg);
uint64_t sm_nan(mf_format f); /* 0x7FFF, 0x7FFFFFFF (DOMAIN 3 step 7), f64 all ones but the sign */
int sm_frac_bits(mf_format f);
int sm_bias(mf_format f);

/* IEEE-754 operations in f (F32 or F16): exact result rounded to nearest
 * even, special values per IEEE-754 (NaN results canonical as sm_nan). */
uint64_t sm_ieee_add(mf_format f, uint64_t x, uint64_t y);
uint64_t sm_ieee_fma(mf_format f, uint64_t a, mf_format fab, uint64_t b, uint64_t c);

/* Family evaluators. */
uint64_t sm_eval_nvidia(const mf_instr *in, const mf_case *cs);
uint64_t sm_eval_amd(const mf_instr *in, const mf_case *cs);
uint64_t sm_eval_fma_chain(const mf_instr *in, const mf_case *cs);
uint64_t sm_eval_int(const mf_instr *in, const mf_case *cs);

#endif

/*
 * exact.h - exact binary fixed-point numbers for the slow model.
 *
 * Every value that the families of shared/DOMAIN.md section 3 handle is a
 * dyadic rational: an integer times a power of two.  The slow model holds each
 * one as a wide two's complement integer counting units of 2^-SM_FRAC, wide
 * enough that nothing it computes is ever rounded by the representation:
 * the smallest quantity is a product of two f64 subnormals (2^-2148), the
 * largest a sum of 64 products of two f64 maxima (< 2^2055).
 *
 * Deliberately simple and slow: one limb at a time, no tricks.
 */
#ifndef MMAFUZZ_SLOW_EXACT_H
#define MMAFUZZ_SLOW_EXACT_H

#include <stdint.h>

#define SM_FRAC 2176            /* the lowest bit weighs 2^-SM_FRAC */
#define SM_LIMBS 136            /* 32-bit limbs: 4352 bits in all */
#define SM_TOP (SM_LIMBS * 32 - SM_FRAC - 2) /* |x| < 2^SM_TOP always */

typedef struct sm_num {
    uint32_t w[SM_LIMBS]; /* two's complement, least significant limb first */
} sm_num;

typedef enum sm_mode {
    SM_RNE, /* to nearest, ties to even */
    SM_RZ,  /* toward zero */
    SM_RD   /* toward minus infinity */
} sm_mode;

/* x = 0. */
void sm_zero(sm_num *x);
/* x = (-1)^neg * m * 2^e exactly.  Aborts if the value is out of range
 * (a bug of the slow model, never of its input). */
void sm_set(sm_num *x, int neg, uint64_t m, int e);
/* x = (-1)^neg * (hi * 2^64 + lo) * 2^e exactly (a 128-bit magnitude). */
void sm_set128(sm_num *x, int neg, uint64_t hi, uint64_t lo, int e);
/* x = x * m (m < 2^32), exactly. */
void sm_mul_small(sm_num *x, uint32_t m);
/* x = x * 2^s exactly (aborts if a set bit would leave the range). */
void sm_scale2(sm_num *x, int s);
/* x = x + y. */
void sm_add(sm_num *x, const sm_num *y);
/* x = -x. */
void sm_neg(sm_num *x);
/* @return -1, 0 or 1. */
int sm_sign(const sm_num *x);
/* @return floor(log2 |x|); x must not be 0. */
int sm_ilog2(const sm_num *x);
/* Round x to an integer multiple of 2^q in the given mode. */
void sm_round(sm_num *x, int q, sm_mode mode);
/* @return |x| / 2^q; x must be a multiple of 2^q and |x| / 2^q < 2^64. */
uint64_t sm_mag(const sm_num *x, int q);

#endif

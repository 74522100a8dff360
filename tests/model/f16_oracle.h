/*
 * f16_oracle.h - binary16 conversions done by the CPU's F16C instructions
 * (VCVTPH2PS, VCVTPS2PH with round-to-nearest-even), as an oracle independent
 * of the model.  Used instead of _Float16, which not every compiler here has.
 */
#ifndef MMAFUZZ_TEST_F16_ORACLE_H
#define MMAFUZZ_TEST_F16_ORACLE_H

#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>

__attribute__((target("f16c"))) static inline float oracle_h2f(uint16_t h)
{
    return _cvtsh_ss(h);
}

/* float -> binary16, round to nearest even (one correct rounding). */
__attribute__((target("f16c"))) static inline uint16_t oracle_f2h(float f)
{
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}

/* @return 1 if the CPU has F16C (the tests skip otherwise). */
static inline int oracle_have_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));  /* CPUID.1:ECX.F16C */
}

#endif

/*
 * test_rounding.c - the model's integer rounding and IEEE operations against
 * the host's IEEE arithmetic, used here as an independent oracle:
 *   - the FMA-chain family (f64 and f32) against the C library's fma/fmaf,
 *     which are correctly rounded (round to nearest even);
 *   - mf_round_pack to binary16/32/64 against the compiler's conversions from
 *     an exact double or long double (binary16: the CPU's F16C conversion
 *     from an exact float), under round-to-nearest and (binary32)
 *     round-toward-zero;
 *   - mf_ieee_add against host addition in binary16 and binary32.
 * Inputs: random bits, narrow exponent windows (cancellation), subnormals and
 * special values, from a fixed seed.
 * Usage: test_rounding checks all but binary16 (no F16C needed);
 * test_rounding --f16 checks binary16 too, and exits 77 (CTest's skip) on a
 * CPU without F16C.  Both draw the same inputs.
 */
#include "f16_oracle.h"
#include "internal.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"

static uint64_t rng = 0x0123456789ABCDEFull;
static uint64_t next(void) { return test_random(&rng); }

static int with_f16;  /* --f16: the binary16 checks too (the F16C oracle) */

/* A binary64 bit pattern: random bits, a narrow exponent window, a
 * subnormal, or a special value. */
static uint64_t gen_f64(void)
{
    static const uint64_t specials[] = {0, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                        0x7FF8000000000000ull, 1, 0x000FFFFFFFFFFFFFull, 0x7FEFFFFFFFFFFFFFull,
                                        0x3FF0000000000000ull, 0xBFF0000000000000ull};
    uint64_t r = next();
    switch (r & 7) {
    case 0: return specials[(r >> 8) % 10];
    case 1: return next() & 0x800FFFFFFFFFFFFFull;  /* subnormal */
    case 2: case 3: case 4: return (next() & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1013 + (r >> 8) % 20) << 52);
    default: return next();
    }
}

static uint32_t gen_f32(void)
{
    static const uint32_t specials[] = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                        1, 0x007FFFFFu, 0x7F7FFFFFu, 0x3F800000u, 0xBF800000u};
    uint64_t r = next();
    switch (r & 7) {
    case 0: return specials[(r >> 8) % 10];
    case 1: return (uint32_t)next() & 0x807FFFFFu;
    case 2: case 3: case 4: return ((uint32_t)next() & 0x807FFFFFu) | ((uint32_t)(117 + (r >> 8) % 20) << 23);
    default: return (uint32_t)next();
    }
}

static double d_of(uint64_t x) { double d; memcpy(&d, &x, 8); return d; }
static float f_of(uint32_t x) { float f; memcpy(&f, &x, 4); return f; }
static uint64_t bits_d(double d) { uint64_t x; memcpy(&x, &d, 8); return x; }
static uint32_t bits_f(float f) { uint32_t x; memcpy(&x, &f, 4); return x; }

static void test_fma_chain(void)
{
    const mf_instr *f64 = mf_instr_find("cdna2/mfma.f64_16x16x4f64");
    const mf_instr *f32 = mf_instr_find("cdna1/mfma.f32_16x16x4f32");
    CHECK(f64 && f32, "FMA-chain rows missing");
    if (!f64 || !f32)
        return;
    mf_case cs;
    for (int n = 0; n < 200000; n++) {
        memset(&cs, 0, sizeof cs);
        cs.c = gen_f64();
        double want = d_of(cs.c);
        for (int k = 0; k < 4; k++) {
            cs.a[k] = gen_f64();
            cs.b[k] = gen_f64();
            want = fma(d_of(cs.a[k]), d_of(cs.b[k]), want);
        }
        uint64_t got = mf_eval(f64, &cs);
        CHECK(mf_output_equal(f64, got, bits_d(want)), "f64 fma chain c=%016llx a0=%016llx b0=%016llx: got %016llx want %016llx",
              (unsigned long long)cs.c, (unsigned long long)cs.a[0], (unsigned long long)cs.b[0],
              (unsigned long long)got, (unsigned long long)bits_d(want));
        memset(&cs, 0, sizeof cs);
        cs.c = gen_f32();
        float wf = f_of((uint32_t)cs.c);
        for (int k = 0; k < 4; k++) {
            cs.a[k] = gen_f32();
            cs.b[k] = gen_f32();
            wf = fmaf(f_of((uint32_t)cs.a[k]), f_of((uint32_t)cs.b[k]), wf);
        }
        got = mf_eval(f32, &cs);
        CHECK(mf_output_equal(f32, got, bits_f(wf)), "f32 fma chain c=%08llx: got %08llx want %08x",
              (unsigned long long)cs.c, (unsigned long long)got, bits_f(wf));
    }
}

/* Single fused multiply-adds close to cancellation (c = -(a*b) as the host
 * rounds it, with its last bits perturbed), where the alignment and sticky
 * bits of the model's fast paths matter most; the other three products of
 * the K=4 rows are -0 * 0, which leaves c unchanged under IEEE rules. */
static void test_fma_cancellation(void)
{
    const mf_instr *f64 = mf_instr_find("cdna2/mfma.f64_16x16x4f64");
    const mf_instr *f32 = mf_instr_find("cdna1/mfma.f32_16x16x4f32");
    if (!f64 || !f32)
        return;
    mf_case cs;
    for (int n = 0; n < 500000; n++) {
        memset(&cs, 0, sizeof cs);
        for (int k = 1; k < 4; k++)
            cs.a[k] = 0x8000000000000000ull;
        cs.a[0] = gen_f64();
        cs.b[0] = gen_f64();
        cs.c = bits_d(-(d_of(cs.a[0]) * d_of(cs.b[0]))) ^ (next() & 0x3F);
        double want = fma(d_of(cs.a[0]), d_of(cs.b[0]), d_of(cs.c));
        uint64_t got = mf_eval(f64, &cs);
        CHECK(mf_output_equal(f64, got, bits_d(want)), "f64 fma a=%016llx b=%016llx c=%016llx: got %016llx want %016llx",
              (unsigned long long)cs.a[0], (unsigned long long)cs.b[0], (unsigned long long)cs.c,
              (unsigned long long)got, (unsigned long long)bits_d(want));
        for (int k = 1; k < 4; k++)
            cs.a[k] = 0x80000000u;
        cs.a[0] = gen_f32();
        cs.b[0] = gen_f32();
        cs.c = bits_f(-(f_of((uint32_t)cs.a[0]) * f_of((uint32_t)cs.b[0]))) ^ (next() & 0x3F);
        float wf = fmaf(f_of((uint32_t)cs.a[0]), f_of((uint32_t)cs.b[0]), f_of((uint32_t)cs.c));
        got = mf_eval(f32, &cs);
        CHECK(mf_output_equal(f32, got, bits_f(wf)), "f32 fma a=%08llx b=%08llx c=%08llx: got %08llx want %08x",
              (unsigned long long)cs.a[0], (unsigned long long)cs.b[0], (unsigned long long)cs.c,
              (unsigned long long)got, bits_f(wf));
    }
}

static void test_round_pack(void)
{
    for (int n = 0; n < 300000; n++) {
        int sign = (int)(next() & 1);
        uint64_t mag = next() >> (next() % 64);
        if (!mag)
            mag = 1;
        int exp = (int)(next() % 420) - 260;
        /* a value exact in long double (64-bit significand) */
        long double v = ldexpl((long double)mag, exp);
        if (sign)
            v = -v;
        /* binary32 and binary16, round to nearest even (the host default) */
        uint32_t want32 = bits_f((float)v);
        uint64_t got32 = mf_round_pack(MF_FMT_F32, sign, mag, exp, 23, MF_RM_RNE);
        CHECK(got32 == want32, "RNE f32 %c%llx*2^%d: got %08llx want %08x", sign ? '-' : '+',
              (unsigned long long)mag, exp, (unsigned long long)got32, want32);
        uint64_t want64 = bits_d((double)v);
        uint64_t got64 = mf_round_pack(MF_FMT_F64, sign, mag, exp, 52, MF_RM_RNE);
        CHECK(got64 == want64, "RNE f64 %c%llx*2^%d: got %016llx want %016llx", sign ? '-' : '+',
              (unsigned long long)mag, exp, (unsigned long long)got64, (unsigned long long)want64);
        if (with_f16 && mag < (1ull << 24) && exp >= -100 && exp <= 40) {  /* exact in float: one rounding to f16 */
            uint16_t want16 = oracle_f2h((float)v);
            uint64_t got16 = mf_round_pack(MF_FMT_F16, sign, mag, exp, 10, MF_RM_RNE);
            CHECK(got16 == want16, "RNE f16 %c%llx*2^%d: got %04llx want %04x", sign ? '-' : '+',
                  (unsigned long long)mag, exp, (unsigned long long)got16, want16);
        }
        /* binary32, toward zero, below the overflow threshold */
        if (fabsl(v) < 0x1p128L) {
            fesetround(FE_TOWARDZERO);
            volatile long double vv = v;
            uint32_t wantz = bits_f((float)vv);
            fesetround(FE_TONEAREST);
            uint64_t gotz = mf_round_pack(MF_FMT_F32, sign, mag, exp, 23, MF_RM_RZ);
            CHECK(gotz == wantz, "RZ f32 %c%llx*2^%d: got %08llx want %08x", sign ? '-' : '+',
                  (unsigned long long)mag, exp, (unsigned long long)gotz, wantz);
        } else {
            /* DOMAIN section 3: at or above the threshold, Inf even under RZ */
            uint64_t gotz = mf_round_pack(MF_FMT_F32, sign, mag, exp, 23, MF_RM_RZ);
            CHECK(gotz == (sign ? 0xFF800000u : 0x7F800000u), "RZ overflow %c%llx*2^%d", sign ? '-' : '+',
                  (unsigned long long)mag, exp);
        }
    }
}

static void test_ieee_add(void)
{
    for (int n = 0; n < 300000; n++) {
        uint32_t x = gen_f32(), y = gen_f32();
        float s = f_of(x) + f_of(y);
        uint64_t got = mf_ieee_add(MF_FMT_F32, x, y);
        int ok = isnan(s) ? mf_is_nan(MF_FMT_F32, got) : got == bits_f(s);
        CHECK(ok, "f32 add %08x + %08x: got %08llx want %08x", x, y, (unsigned long long)got, bits_f(s));
        uint16_t hx = (uint16_t)next(), hy = (uint16_t)(next() % 3 == 0 ? hx ^ 0x8000 : next());
        if (!with_f16)
            continue;
        /* binary32 has 24 >= 2*11+2 bits, so rounding the sum to float and then
         * to f16 equals one correct rounding (double rounding is innocuous) */
        float fs = oracle_h2f(hx) + oracle_h2f(hy);
        uint16_t hs = oracle_f2h(fs);
        got = mf_ieee_add(MF_FMT_F16, hx, hy);
        ok = isnan(fs) ? mf_is_nan(MF_FMT_F16, got) : got == hs;
        CHECK(ok, "f16 add %04x + %04x: got %04llx want %04x", hx, hy, (unsigned long long)got, hs);
    }
}

int main(int argc, char **argv)
{
    with_f16 = argc > 1 && !strcmp(argv[1], "--f16");
    if (with_f16 && !oracle_have_f16c()) {
        printf("this CPU has no F16C instructions: the binary16 checks are skipped\n");
        return 77;
    }
    test_fma_chain();
    test_fma_cancellation();
    test_round_pack();
    test_ieee_add();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("FMA chains, rounding and IEEE additions%s agree with the host's IEEE arithmetic\n",
           with_f16 ? " (binary16 included)" : " (binary16: --f16)");
    return 0;
}

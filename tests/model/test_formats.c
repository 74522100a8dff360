/*
 * test_formats.c - every bit pattern of every format of 16 bits or fewer
 * (and every tf32 pattern) decoded by the model, against expectations computed
 * independently of it:
 *   f16, e5m2   the CPU's F16C conversion (e5m2 is the top byte of an f16);
 *   bf16, tf32  the host's binary32 (bf16 is the top half of an f32);
 *   e4m3, fnuz, fp6, fp4, ue8m0, ue4m3
 *               a direct transcription of shared/DOMAIN.md section 2 in double
 *               arithmetic, plus the anchor values the formats' specifications
 *               give (largest finite, smallest subnormal, NaN patterns) and the
 *               e2m1 value list of DOMAIN.
 * Every format is also checked to be strictly increasing over its positive
 * patterns, which no decoding mistake of exponent or fraction survives.
 * Host floating point is used here as an oracle only; the model uses none.
 * Usage: test_formats checks every format but f16 and e5m2 (no F16C
 * needed); test_formats --f16 checks them all, and exits 77 (CTest's skip)
 * on a CPU without F16C.
 */
#include "f16_oracle.h"
#include "mmafuzz_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"

/* The model's value as a double (exact for every format here), NAN/INFINITY
 * for the specials. */
static double model_value(mf_format f, uint64_t x)
{
    mf_value v = mf_decode(f, x);
    if (v.cls == MF_CLS_NAN)
        return NAN;
    if (v.cls == MF_CLS_INF)
        return v.sign ? -INFINITY : INFINITY;
    double m = ldexp((double)v.sig, v.exp - mf_format_get(f)->frac_bits);
    return v.sign ? -m : m;
}

static int same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* DOMAIN section 2, transcribed: sign, e exponent bits, m fraction bits, bias;
 * subnormals at exponent 1-bias. */
static double domain_value(uint32_t x, int ebits, int mbits, int bias, int has_sign)
{
    uint32_t m = x & ((1u << mbits) - 1);
    uint32_t e = (x >> mbits) & ((1u << ebits) - 1);
    int s = has_sign ? (int)((x >> (mbits + ebits)) & 1) : 0;
    double v = e ? ldexp(1.0 + ldexp(m, -mbits), (int)e - bias) : ldexp(ldexp(m, -mbits), 1 - bias);
    return s ? -v : v;
}

static double f16_oracle(uint32_t x)
{
    return (double)oracle_h2f((uint16_t)x);
}

static double f32_oracle(uint32_t x)
{
    float f;
    memcpy(&f, &x, 4);
    return (double)f;
}

static void check_monotonic(mf_format f, uint32_t npos)
{
    double prev = -1;
    for (uint32_t x = 0; x < npos; x++) {
        double v = model_value(f, x);
        if (isnan(v))
            continue;
        CHECK(v > prev || (x == 0 && v == 0), "%s: pattern %#x (%g) not above the previous (%g)",
              mf_format_get(f)->name, x, v, prev);
        prev = v;
    }
}

int main(int argc, char **argv)
{
    int with_f16 = argc > 1 && !strcmp(argv[1], "--f16");
    if (with_f16 && !oracle_have_f16c()) {
        printf("this CPU has no F16C instructions: the f16 and e5m2 checks are skipped\n");
        return 77;
    }
    /* f16: all 65536 patterns against the F16C conversion */
    for (uint32_t x = 0; with_f16 && x < 0x10000; x++)
        CHECK(same(model_value(MF_FMT_F16, x), f16_oracle(x)), "f16 %#06x", x);
    check_monotonic(MF_FMT_F16, 0x7C01);
    /* bf16: the top half of a binary32 */
    for (uint32_t x = 0; x < 0x10000; x++)
        CHECK(same(model_value(MF_FMT_BF16, x), f32_oracle(x << 16)), "bf16 %#06x", x);
    check_monotonic(MF_FMT_BF16, 0x7F81);
    /* tf32: every pattern of the top 19 bits, low 13 bits set to junk that
     * the format ignores (DOMAIN section 2) */
    for (uint32_t x = 0; x < (1u << 19); x++) {
        uint32_t bits = (x << 13) | ((x * 2654435761u) & 0x1FFF);
        double want = f32_oracle(x << 13);
        CHECK(same(model_value(MF_FMT_TF32, bits), want), "tf32 %#010x", bits);
    }
    /* e5m2: the top byte of an f16 */
    for (uint32_t x = 0; with_f16 && x < 0x100; x++)
        CHECK(same(model_value(MF_FMT_E5M2, x), f16_oracle(x << 8)), "e5m2 %#04x", x);
    check_monotonic(MF_FMT_E5M2, 0x7D);
    /* e4m3 (OCP fn): no Inf, NaN only S.1111.111; max 448, min subnormal 2^-9 */
    for (uint32_t x = 0; x < 0x100; x++) {
        double want = (x & 0x7F) == 0x7F ? NAN : domain_value(x, 4, 3, 7, 1);
        CHECK(same(model_value(MF_FMT_E4M3, x), want), "e4m3 %#04x", x);
    }
    CHECK(model_value(MF_FMT_E4M3, 0x7E) == 448.0, "e4m3 max");
    CHECK(model_value(MF_FMT_E4M3, 0x01) == ldexp(1, -9), "e4m3 min subnormal");
    check_monotonic(MF_FMT_E4M3, 0x7F);
    /* fnuz: 0x80 is the only NaN, no -0, no Inf; bias 8 and 16 */
    for (uint32_t x = 0; x < 0x100; x++) {
        CHECK(same(model_value(MF_FMT_E4M3FNUZ, x), x == 0x80 ? NAN : domain_value(x, 4, 3, 8, 1)),
              "e4m3fnuz %#04x", x);
        CHECK(same(model_value(MF_FMT_E5M2FNUZ, x), x == 0x80 ? NAN : domain_value(x, 5, 2, 16, 1)),
              "e5m2fnuz %#04x", x);
    }
    CHECK(model_value(MF_FMT_E4M3FNUZ, 0x7F) == 240.0, "e4m3fnuz max");
    CHECK(model_value(MF_FMT_E5M2FNUZ, 0x7F) == 57344.0, "e5m2fnuz max");
    CHECK(model_value(MF_FMT_E5M2FNUZ, 0x01) == ldexp(1, -17), "e5m2fnuz min subnormal");
    check_monotonic(MF_FMT_E4M3FNUZ, 0x80);
    check_monotonic(MF_FMT_E5M2FNUZ, 0x80);
    /* fp6 and fp4: no Inf, no NaN */
    for (uint32_t x = 0; x < 0x40; x++) {
        CHECK(same(model_value(MF_FMT_E3M2, x), domain_value(x, 3, 2, 3, 1)), "e3m2 %#04x", x);
        CHECK(same(model_value(MF_FMT_E2M3, x), domain_value(x, 2, 3, 1, 1)), "e2m3 %#04x", x);
    }
    CHECK(model_value(MF_FMT_E3M2, 0x1F) == 28.0, "e3m2 max");
    CHECK(model_value(MF_FMT_E2M3, 0x1F) == 7.5, "e2m3 max");
    check_monotonic(MF_FMT_E3M2, 0x20);
    check_monotonic(MF_FMT_E2M3, 0x20);
    static const double e2m1_values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};  /* DOMAIN section 2 */
    for (uint32_t x = 0; x < 0x10; x++) {
        double want = (x & 8) ? -e2m1_values[x & 7] : e2m1_values[x & 7];
        CHECK(same(model_value(MF_FMT_E2M1, x), want), "e2m1 %#x", x);
    }
    /* scales: ue8m0 = 2^(x-127), 0xFF NaN; ue4m3 = e4m3 with the top bit ignored, 0x7F NaN */
    for (uint32_t x = 0; x < 0x100; x++) {
        CHECK(same(model_value(MF_FMT_UE8M0, x), x == 0xFF ? NAN : ldexp(1, (int)x - 127)), "ue8m0 %#04x", x);
        uint32_t y = x & 0x7F;
        CHECK(same(model_value(MF_FMT_UE4M3, x), y == 0x7F ? NAN : domain_value(y, 4, 3, 7, 0)), "ue4m3 %#04x", x);
    }
    /* every format's NaN test agrees with its decoding */
    for (int f = 1; f < MF_FMT_COUNT; f++) {
        int bits = mf_format_get((mf_format)f)->bits;
        uint32_t n = bits >= 16 ? 0x10000 : 1u << bits;
        for (uint32_t x = 0; x < n; x++)
            CHECK(mf_is_nan((mf_format)f, x) == isnan(model_value((mf_format)f, x)), "%s %#x is_nan",
                  mf_format_get((mf_format)f)->name, x);
    }
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("%s: every pattern decodes as expected\n", with_f16 ? "all formats" : "all formats but f16 and e5m2 (--f16)");
    return 0;
}

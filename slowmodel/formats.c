/*
 * formats.c - decoding inputs and rounding outputs, from the table of
 * shared/DOMAIN.md section 2 (written out again here, independently of
 * model/format.c).
 */
#include "slow_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* How a format encodes its special values. */
enum {
    SP_IEEE,  /* all-ones exponent: Inf (fraction 0) or NaN */
    SP_FN,    /* e4m3 "fn": only S.1111.111 is NaN, no Inf */
    SP_FNUZ,  /* AMD fp8/bf8: only 0x80 is NaN, no Inf, no -0 */
    SP_NONE,  /* fp6, fp4: every pattern is a number */
    SP_UE8M0, /* 2^(x-127), 0xFF NaN */
    SP_UE4M3  /* e4m3 without sign (top bit ignored), 0x7F NaN */
};

typedef struct spec {
    int exp_bits, frac_bits, bias, special;
} spec;

/* DOMAIN section 2: exponent bits, fraction bits, bias, specials. */
static spec spec_of(mf_format f)
{
    switch (f) {
    case MF_FMT_F64: return (spec){11, 52, 1023, SP_IEEE};
    case MF_FMT_F32: return (spec){8, 23, 127, SP_IEEE};
    case MF_FMT_TF32: return (spec){8, 10, 127, SP_IEEE}; /* bits 31..13 of the container */
    case MF_FMT_F16: return (spec){5, 10, 15, SP_IEEE};
    case MF_FMT_BF16: return (spec){8, 7, 127, SP_IEEE};
    case MF_FMT_E4M3: return (spec){4, 3, 7, SP_FN};
    case MF_FMT_E5M2: return (spec){5, 2, 15, SP_IEEE};
    case MF_FMT_E4M3FNUZ: return (spec){4, 3, 8, SP_FNUZ};
    case MF_FMT_E5M2FNUZ: return (spec){5, 2, 16, SP_FNUZ};
    case MF_FMT_E3M2: return (spec){3, 2, 3, SP_NONE};
    case MF_FMT_E2M3: return (spec){2, 3, 1, SP_NONE};
    case MF_FMT_E2M1: return (spec){2, 1, 1, SP_NONE};
    case MF_FMT_UE8M0: return (spec){8, 0, 127, SP_UE8M0};
    case MF_FMT_UE4M3: return (spec){4, 3, 7, SP_UE4M3};
    default: break;
    }
    fprintf(stderr, "slow model: no such format %d\n", (int)f);
    abort();
}

int sm_frac_bits(mf_format f) { return spec_of(f).frac_bits; }
int sm_bias(mf_format f) { return spec_of(f).bias; }

sm_val sm_decode(mf_format f, uint64_t x)
{
    spec s = spec_of(f);
    sm_val v = {SM_FINITE, 0, 0, 0, s.frac_bits};
    if (f == MF_FMT_TF32)
        x >>= 13;                       /* tensor cores read the top 19 bits */
    if (s.special == SP_UE8M0) {
        x &= 0xFF;
        if (x == 0xFF)
            v.cls = SM_NAN;
        v.sig = 1;
        v.exp = (int)x - 127;
        return v;
    }
    int has_sign = s.special != SP_UE4M3;
    if (s.special == SP_UE4M3) {
        x &= 0x7F;                      /* the top bit is ignored */
        if (x == 0x7F) {
            v.cls = SM_NAN;
            return v;
        }
    }
    int width = has_sign + s.exp_bits + s.frac_bits;
    x &= width == 64 ? ~(uint64_t)0 : ((uint64_t)1 << width) - 1;
    uint64_t frac = x & (((uint64_t)1 << s.frac_bits) - 1);
    int biased = (int)((x >> s.frac_bits) & ((1u << s.exp_bits) - 1));
    int max_biased = (1 << s.exp_bits) - 1;
    v.neg = has_sign ? (int)(x >> (width - 1)) : 0;
    if (s.special == SP_IEEE && biased == max_biased) {
        v.cls = frac ? SM_NAN : SM_INF;
        return v;
    }
    if (s.special == SP_FN && biased == max_biased && frac == ((uint64_t)1 << s.frac_bits) - 1) {
        v.cls = SM_NAN;
        return v;
    }
    if (s.special == SP_FNUZ && x == ((uint64_t)1 << (width - 1))) {
        v.cls = SM_NAN;
        return v;
    }
    if (biased == 0) {
        v.exp = 1 - s.bias;             /* subnormals sit at the minimum exponent */
        v.sig = frac;
        if (!frac)
            v.cls = SM_ZERO;
        return v;
    }
    v.exp = biased - s.bias;
    v.sig = frac | ((uint64_t)1 << s.frac_bits);
    return v;
}

void sm_value(sm_num *out, const sm_val *v)
{
    if (v->cls == SM_ZERO)
        sm_zero(out);
    else
        sm_set(out, v->neg, v->sig, v->exp - v->p);
}

void sm_product(sm_num *out, const sm_val *a, const sm_val *b)
{
    unsigned __int128 m = (unsigned __int128)a->sig * b->sig;
    if (a->cls == SM_ZERO || b->cls == SM_ZERO)
        m = 0;
    sm_set128(out, a->neg ^ b->neg, (uint64_t)(m >> 64), (uint64_t)m, a->exp - a->p + b->exp - b->p);
}

static int out_bits(mf_format f)
{
    return f == MF_FMT_F64 ? 64 : f == MF_FMT_F32 ? 32 : 16;
}

uint64_t sm_inf(mf_format f, int neg)
{
    spec s = spec_of(f);
    uint64_t e = ((uint64_t)1 << s.exp_bits) - 1;
    return ((uint64_t)neg << (out_bits(f) - 1)) | (e << s.frac_bits);
}

uint64_t sm_nan(mf_format f)
{
    int n = out_bits(f);
    return n == 64 ? ~(uint64_t)0 >> 1 : ((uint64_t)1 << (n - 1)) - 1;
}

uint64_t sm_round_pack(mf_format f, const sm_num *x, int prec, sm_mode mode, int zero_neg)
{
    spec s = spec_of(f);
    uint64_t sign_bit = (uint64_t)1 << (out_bits(f) - 1);
    int sg = sm_sign(x);
    if (sg == 0)
        return zero_neg ? sign_bit : 0;
    int neg = sg < 0;
    int emin = 1 - s.bias, emax = s.bias;
    int e = sm_ilog2(x);
    if (e < emin)
        e = emin;
    sm_num y = *x;
    sm_round(&y, e - prec, mode);
    if (sm_sign(&y) == 0)
        return neg ? sign_bit : 0;      /* rounded to zero keeps the sign */
    int ey = sm_ilog2(&y);
    if (ey > emax)
        return sm_inf(f, neg);
    uint64_t bits;
    if (ey < emin)
        bits = sm_mag(&y, emin - s.frac_bits);                 /* subnormal */
    else
        bits = ((uint64_t)(ey + s.bias) << s.frac_bits) |
               (sm_mag(&y, ey - s.frac_bits) - ((uint64_t)1 << s.frac_bits));
    return (neg ? sign_bit : 0) | bits;
}

uint64_t sm_ieee_add(mf_format f, uint64_t x, uint64_t y)
{
    sm_val a = sm_decode(f, x), b = sm_decode(f, y);
    if (a.cls == SM_NAN || b.cls == SM_NAN)
        return sm_nan(f);
    if (a.cls == SM_INF && b.cls == SM_INF)
        return a.neg == b.neg ? sm_inf(f, a.neg) : sm_nan(f);
    if (a.cls == SM_INF)
        return sm_inf(f, a.neg);
    if (b.cls == SM_INF)
        return sm_inf(f, b.neg);
    sm_num va, vb;
    sm_value(&va, &a);
    sm_value(&vb, &b);
    sm_add(&va, &vb);
    /* an exact zero sum is -0 only when both addends are -0 (IEEE 754 6.3) */
    int zero_neg = a.cls == SM_ZERO && b.cls == SM_ZERO && a.neg && b.neg;
    return sm_round_pack(f, &va, spec_of(f).frac_bits, SM_RNE, zero_neg);
}

uint64_t sm_ieee_fma(mf_format f, uint64_t x, mf_format fab, uint64_t y, uint64_t z)
{
    sm_val a = sm_decode(fab, x), b = sm_decode(fab, y), c = sm_decode(f, z);
    if (a.cls == SM_NAN || b.cls == SM_NAN || c.cls == SM_NAN)
        return sm_nan(f);
    int p_inf = a.cls == SM_INF || b.cls == SM_INF;
    if (p_inf && (a.cls == SM_ZERO || b.cls == SM_ZERO))
        return sm_nan(f);               /* 0 x Inf */
    int p_neg = a.neg ^ b.neg;
    if (p_inf && c.cls == SM_INF && p_neg != c.neg)
        return sm_nan(f);               /* Inf - Inf */
    if (p_inf)
        return sm_inf(f, p_neg);
    if (c.cls == SM_INF)
        return sm_inf(f, c.neg);
    sm_num p, vc;
    sm_product(&p, &a, &b);
    sm_value(&vc, &c);
    int p_zero = sm_sign(&p) == 0;
    sm_add(&p, &vc);
    int zero_neg = p_zero && c.cls == SM_ZERO && p_neg && c.neg;
    return sm_round_pack(f, &p, spec_of(f).frac_bits, SM_RNE, zero_neg);
}

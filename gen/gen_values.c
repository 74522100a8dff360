/*
 * gen_values.c - value construction and classification per format
 * (shared/DOMAIN.md section 2 gives every layout below).  Generation code:
 * no I/O, no allocation, nothing of libc beyond string.h.
 */
#include "gen_values.h"

#include <string.h>

MF_DEVTAB rv_layout rv_layouts[MF_FMT_COUNT];
#define layouts rv_layouts
MF_DEVTAB uint64_t rv_special_list[MF_FMT_COUNT][RV_SPECIALS_MAX];
MF_DEVTAB uint32_t rv_special_count[MF_FMT_COUNT];

#if !MF_TABLE_DECLS
MF_HD const rv_layout *rv_layout_row(unsigned f)
{
    return &rv_layouts[f];
}
#endif

/* Filled before main runs, so that threads only ever read the tables (in
 * device code: once, by an initialization kernel, before any generation). */
MF_CONSTRUCTOR MF_HD void rv_init_tables(void)
{
    for (int f = 1; f < MF_FMT_COUNT; f++) {
        const mf_format_info *fi = mf_format_get((mf_format)f);
        rv_layout *L = &layouts[f];
        L->bits = fi->bits;
        L->ebits = fi->exp_bits;
        L->fbits = fi->frac_bits;
        L->low = f == MF_FMT_TF32 ? 13 : 0;
        L->exp_shift = L->fbits + L->low;
        L->sign_shift = fi->has_sign ? L->exp_shift + L->ebits : -1;
        L->bias = fi->bias;
        L->mask = fi->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << fi->bits) - 1;
        uint32_t Emax_field = (1u << L->ebits) - 1;
        uint64_t fmax = (UINT64_C(1) << L->fbits) - 1;
        L->emin = 1 - L->bias;
        if (fi->has_inf) {  /* IEEE: all-ones exponent is Inf/NaN */
            L->emax = (int)Emax_field - 1 - L->bias;
            L->max_frac_at_emax = fmax;
        } else if (f == MF_FMT_E4M3 || f == MF_FMT_UE4M3) {  /* S.1111.111 is NaN */
            L->emax = (int)Emax_field - L->bias;
            L->max_frac_at_emax = fmax - 1;
        } else if (f == MF_FMT_UE8M0) {  /* 2^(x-127), 0xFF NaN */
            L->emin = -127;
            L->emax = 127;
            L->max_frac_at_emax = 0;
        } else if (mf_format_is_int((mf_format)f)) {  /* integers: no fields; two's complement, no sign bit to flip */
            L->sign_shift = -1;
            L->emin = L->emax = 0;
            L->max_frac_at_emax = 0;
        } else {  /* fnuz, fp6, fp4: every exponent finite */
            L->emax = (int)Emax_field - L->bias;
            L->max_frac_at_emax = fmax;
        }
    }
    for (int f = 1; f < MF_FMT_COUNT; f++)
        rv_special_count[f] = (uint32_t)rv_specials((mf_format)f, rv_special_list[f], RV_SPECIALS_MAX);
}

MF_HD void rv_unpack(mf_format f, uint64_t x, int *sign, uint32_t *E, uint64_t *frac)
{
    const rv_layout *L = rv_get(f);
    *sign = L->sign_shift >= 0 ? (int)((x >> L->sign_shift) & 1) : 0;
    *E = (uint32_t)((x >> L->exp_shift) & ((UINT64_C(1) << L->ebits) - 1));
    *frac = (x >> L->low) & ((UINT64_C(1) << L->fbits) - 1);
}

MF_HD static uint64_t fix_zero(mf_format f, uint64_t x)
{
    if ((f == MF_FMT_E4M3FNUZ || f == MF_FMT_E5M2FNUZ) && x == 0x80)
        return 0;  /* no -0: 0x80 is the NaN */
    return x;
}

MF_HD uint64_t rv_max_finite(mf_format f, int sign)
{
    const rv_layout *L = rv_get(f);
    if (f == MF_FMT_UE8M0)
        return 0xFE;
    return rv_pack(f, sign, (uint32_t)(L->emax + L->bias), L->max_frac_at_emax);
}

MF_HD uint64_t rv_make_slow(mf_format f, int sign, int e, uint64_t frac)
{
    const rv_layout *L = rv_get(f);
    if (f == MF_FMT_UE8M0)
        return (uint64_t)(e < -127 ? 0 : e > 127 ? 254 : e + 127);
    frac &= (UINT64_C(1) << L->fbits) - 1;
    if (e > L->emax || (e == L->emax && frac > L->max_frac_at_emax))
        return rv_max_finite(f, sign);
    if (e >= L->emin)
        return rv_pack(f, sign, (uint32_t)(e + L->bias), frac);
    /* subnormal: the significand 1.frac shifted right by emin - e */
    int sh = L->emin - e;
    uint64_t sig = frac | (UINT64_C(1) << L->fbits);
    uint64_t sub = sh > 63 ? 0 : sig >> sh;
    if (sub == 0)
        sub = 1;
    return fix_zero(f, rv_pack(f, sign, 0, sub));
}

MF_HD uint64_t rv_from_sig(mf_format f, int sign, uint64_t sig, int exp)
{
    if (sig == 0)
        return fix_zero(f, rv_pack(f, sign, 0, 0));
    const rv_layout *L = rv_get(f);
    int p = 63 - mf_clz64(sig);  /* leading bit position */
    uint64_t frac;
    if (p >= L->fbits)
        frac = (sig >> (p - L->fbits)) & ((UINT64_C(1) << L->fbits) - 1);
    else
        frac = (sig << (L->fbits - p)) & ((UINT64_C(1) << L->fbits) - 1);
    return rv_make(f, sign, p + exp, frac);
}

MF_HD uint64_t rv_negate(mf_format f, uint64_t x)
{
    const rv_layout *L = rv_get(f);
    if (L->sign_shift < 0)
        return x;
    if ((f == MF_FMT_E4M3FNUZ || f == MF_FMT_E5M2FNUZ) && (x & 0x7F) == 0)
        return x;
    return x ^ (UINT64_C(1) << L->sign_shift);
}

MF_HD int rv_is_zero(mf_format f, uint64_t x) { return mf_decode(f, x).cls == MF_CLS_ZERO; }

MF_HD int rv_is_finite_nonzero(mf_format f, uint64_t x) { return mf_decode(f, x).cls == MF_CLS_FINITE; }

MF_HD size_t rv_specials(mf_format f, uint64_t *out, size_t max)
{
    const rv_layout *L = rv_get(f);
    const mf_format_info *fi = mf_format_get(f);
    uint64_t v[40];
    size_t n = 0;
    uint64_t fmax = (UINT64_C(1) << L->fbits) - 1;
    uint32_t Eall = (1u << L->ebits) - 1;
    if (f == MF_FMT_UE8M0) {
        uint64_t s[] = {0x00, 0x01, 0x7E, 0x7F, 0x80, 0xFD, 0xFE, 0xFF};
        memcpy(v, s, sizeof s);
        n = sizeof s / sizeof s[0];
    } else if (mf_format_is_int(f)) {
        /* 0, 1, all ones (-1 or the largest unsigned), the top bit (the most
         * negative, or 2^(bits-1)), the largest signed, 2 */
        uint64_t top = UINT64_C(1) << (L->bits - 1);
        uint64_t s[] = {0, 1, L->mask, top, top - 1, 2};
        memcpy(v, s, sizeof s);
        n = sizeof s / sizeof s[0];
    } else {
        v[n++] = 0;                                        /* +0 */
        v[n++] = fix_zero(f, rv_pack(f, 1, 0, 0));         /* -0 */
        if (L->fbits) {
            v[n++] = rv_pack(f, 0, 0, 1);                  /* smallest subnormal */
            v[n++] = rv_pack(f, 1, 0, 1);
            v[n++] = rv_pack(f, 0, 0, fmax);               /* largest subnormal */
        }
        v[n++] = rv_pack(f, 0, 1, 0);                      /* smallest normal */
        v[n++] = rv_make(f, 0, 0, 0);                      /* 1 */
        v[n++] = rv_make(f, 1, 0, 0);                      /* -1 */
        v[n++] = rv_make(f, 0, 1, 0);                      /* 2 */
        v[n++] = rv_make(f, 0, -1, 0);                     /* 1/2 */
        v[n++] = rv_make(f, 0, L->emax, 0);                /* largest power of two */
        v[n++] = rv_max_finite(f, 0);
        v[n++] = rv_max_finite(f, 1);
        if (fi->has_inf) {
            v[n++] = rv_pack(f, 0, Eall, 0);               /* +Inf */
            v[n++] = rv_pack(f, 1, Eall, 0);               /* -Inf */
            v[n++] = rv_pack(f, 0, Eall, UINT64_C(1) << (L->fbits - 1));  /* quiet NaN */
            v[n++] = rv_pack(f, 1, Eall, UINT64_C(1) << (L->fbits - 1));
            v[n++] = rv_pack(f, 0, Eall, 1);               /* signalling NaN, payload 1 */
            v[n++] = rv_pack(f, 0, Eall, fmax);            /* all-ones payload */
            if (L->low)  /* tf32: payload only in the ignored low bits (read as Inf) */
                v[n++] = rv_pack(f, 0, Eall, 0) | 1;
        } else if (f == MF_FMT_E4M3 || f == MF_FMT_UE4M3) {
            v[n++] = 0x7F;
            if (f == MF_FMT_E4M3)
                v[n++] = 0xFF;
        } else if (f == MF_FMT_E4M3FNUZ || f == MF_FMT_E5M2FNUZ) {
            v[n++] = 0x80;
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < n && w < max; i++) {
        int dup = 0;
        for (size_t j = 0; j < w; j++)
            dup |= out[j] == (v[i] & L->mask);
        if (!dup)
            out[w++] = v[i] & L->mask;
    }
    return w;
}

/* Sign-magnitude bit pattern to an ordered integer (adjacent values differ by 1). */
MF_HD static int64_t ordered(mf_format f, uint64_t x)
{
    const rv_layout *L = rv_get(f);
    if (L->sign_shift < 0)
        return (int64_t)x;
    uint64_t mag = x & ((UINT64_C(1) << L->sign_shift) - 1);
    mag >>= L->low;
    return ((x >> L->sign_shift) & 1) ? -(int64_t)mag : (int64_t)mag;
}

MF_HD const char *rv_signature(mf_format fd, uint64_t dev, uint64_t model)
{
    mf_value a = mf_decode(fd, dev), b = mf_decode(fd, model);
    if ((a.cls == MF_CLS_NAN) != (b.cls == MF_CLS_NAN))
        return "nan-vs-number";
    if (a.cls == MF_CLS_NAN)
        return "nan-payload";
    if (a.cls == MF_CLS_INF || b.cls == MF_CLS_INF)
        return "inf";
    if (a.cls == MF_CLS_ZERO && b.cls == MF_CLS_ZERO)
        return "zero-sign";
    if (a.cls != MF_CLS_ZERO && b.cls != MF_CLS_ZERO && a.sign != b.sign)
        return "sign";
    int64_t d = ordered(fd, dev) - ordered(fd, model);
    return (d == 1 || d == -1) ? "last-bit-rounding" : "ulp>1";
}

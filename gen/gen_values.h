/*
 * gen_values.h - building and classifying values of each number format from
 * their fields (sign, exponent, fraction), for the generators, the mutators
 * and the minimizer.  The field layouts are derived from the model's format
 * table (mf_format_table; shared/DOMAIN.md section 2) and nowhere else;
 * everything here is integer arithmetic on bit patterns.
 */
#ifndef MMAFUZZ_GEN_VALUES_H
#define MMAFUZZ_GEN_VALUES_H

#include "gen_rng.h"
#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

/* Field layout of a format's storage: value bits are
 *   sign << sign_shift | E << exp_shift | frac << low   (low: ignored bits, 13 for tf32).
 * Scale formats (ue8m0, ue4m3) have no sign; ue4m3's ignored top bit is not modelled here. */
typedef struct rv_layout {
    int bits, ebits, fbits, low;
    int sign_shift; /* -1 when unsigned */
    int exp_shift;
    int bias;
    int emin;       /* exponent of the smallest normal: 1 - bias (ue8m0: -127) */
    int emax;       /* exponent of the largest finite value */
    uint64_t max_frac_at_emax; /* fraction field of the largest finite value */
    uint64_t mask;  /* all storage bits */
} rv_layout;

/* The layout of every format, derived from mf_format_table at program start
 * (gen_values.c; read-only afterwards, so threads share it). */
#if MF_TABLE_DECLS
extern rv_layout rv_layouts[MF_FMT_COUNT];
#else
MF_HD const rv_layout *rv_layout_row(unsigned f);   /* &rv_layouts[f] (gen_values.c) */
#endif

/* The special values of every format (rv_specials), listed at program start. */
#define RV_SPECIALS_MAX 40
#if MF_TABLE_DECLS
extern uint64_t rv_special_list[MF_FMT_COUNT][RV_SPECIALS_MAX];
extern uint32_t rv_special_count[MF_FMT_COUNT];
#endif

/* Fill rv_layouts, rv_special_list and rv_special_count from the format
 * table.  On the host it runs before main; device code runs it once from
 * an initialization kernel (devices/cuda/model_device.cuh). */
MF_HD void rv_init_tables(void);

/* @return the layout of format f (f a real format). */
MF_HD static inline const rv_layout *rv_get(mf_format f)
{
#if MF_TABLE_DECLS
    return &rv_layouts[(unsigned)f < MF_FMT_COUNT ? f : MF_FMT_F32];
#else
    return rv_layout_row((unsigned)f < MF_FMT_COUNT ? f : MF_FMT_F32);
#endif
}

/* Pack fields into a bit pattern of layout L (no checks). */
MF_HD static inline uint64_t rv_pack_in(const rv_layout *L, int sign, uint32_t E, uint64_t frac)
{
    uint64_t x = ((uint64_t)E << L->exp_shift) | (frac << L->low);
    if (L->sign_shift >= 0 && sign)
        x |= UINT64_C(1) << L->sign_shift;
    return x & L->mask;
}
MF_HD static inline uint64_t rv_pack(mf_format f, int sign, uint32_t E, uint64_t frac)
{
    return rv_pack_in(rv_get(f), sign, E, frac);
}
/* Unpack a bit pattern into fields. */
MF_HD void rv_unpack(mf_format f, uint64_t x, int *sign, uint32_t *E, uint64_t *frac);

/* A finite value: sign, exponent e of the leading bit, fraction pattern
 * `frac` (fbits wide, below the leading 1).  e below emin gives a subnormal
 * (the pattern shifted right, truncated; at least the smallest subnormal),
 * e above emax gives the largest finite value.  Formats without -0 (fnuz)
 * return +0 for a negative zero. */
MF_HD uint64_t rv_make_slow(mf_format f, int sign, int e, uint64_t frac);
/* rv_make with f's layout at hand (L == rv_get(f), or a copy of it). */
MF_HD static inline uint64_t rv_make_in(const rv_layout *L, mf_format f, int sign, int e, uint64_t frac)
{
    frac &= (UINT64_C(1) << L->fbits) - 1;
    /* the common case inline: a normal value of a format with a sign */
    if (e >= L->emin && e < L->emax && f != MF_FMT_UE8M0)
        return rv_pack_in(L, sign, (uint32_t)(e + L->bias), frac);
    return rv_make_slow(f, sign, e, frac);
}
MF_HD static inline uint64_t rv_make(mf_format f, int sign, int e, uint64_t frac)
{
    return rv_make_in(rv_get(f), f, sign, e, frac);
}

/* The value sig * 2^exp (sig > 0) truncated toward zero into format f
 * (clamped to the largest finite / smallest subnormal, as rv_make). */
MF_HD uint64_t rv_from_sig(mf_format f, int sign, uint64_t sig, int exp);

/* The value x of format f with its sign flipped; formats without -0
 * (e4m3fnuz, e5m2fnuz) keep 0 and their NaN 0x80, unsigned formats keep x. */
MF_HD uint64_t rv_negate(mf_format f, uint64_t x);

/* +0 of format f (all formats: the all-zero pattern). */
MF_HD static inline uint64_t rv_zero(void) { return 0; }
/* Largest finite value of format f with the given sign. */
MF_HD uint64_t rv_max_finite(mf_format f, int sign);

/* Fill out[] with the special values of format f: zeros, infinities,
 * several NaN payloads, smallest and largest subnormal, smallest normal,
 * largest finite, +-1 and a few powers of two.  @return how many (<= max). */
MF_HD size_t rv_specials(mf_format f, uint64_t *out, size_t max);

/* @return 1 if x is finite and not zero in format f. */
MF_HD int rv_is_finite_nonzero(mf_format f, uint64_t x);
/* @return 1 if x is +0 or -0. */
MF_HD int rv_is_zero(mf_format f, uint64_t x);

/* Signature class of a disagreement between two outputs of format fd
 * (device, model): "nan-vs-number", "nan-payload", "inf", "zero-sign",
 * "sign", "last-bit-rounding" (one unit in the last place apart) or "ulp>1". */
MF_HD const char *rv_signature(mf_format fd, uint64_t dev, uint64_t model);

#endif

/*
 * casegen.c - boundary-rich input tiles (casegen.h).
 *
 * Values are built from their fields (sign, exponent, fraction) with the
 * format descriptions of the model (DOMAIN section 2); no host floating point.
 */
#include "casegen.h"
#include "mf_device.h"

#include <string.h>

uint64_t mf_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

const char *mf_mix_name(mf_mix m)
{
    static const char *const names[MF_MIX_COUNT] = {"random", "special", "subnormal", "cancel",
                                                    "align",  "overflow", "zero-sign", "mixed"};
    return (unsigned)m < MF_MIX_COUNT ? names[m] : "?";
}

typedef struct gen {
    uint64_t s;
} gen;

static uint64_t rnd(gen *g) { return mf_splitmix64(&g->s); }
static int rint_(gen *g, int lo, int hi) { return lo + (int)(rnd(g) % (uint64_t)(hi - lo + 1)); }

/* Field layout of a format: tf32 keeps f32's positions (top 19 bits used). */
typedef struct fmt {
    mf_format f;
    int width, eb, fb, fshift, bias, has_inf, has_sign, no_inf_nan_top; /* e4m3: top exponent finite */
} fmt;

static fmt fmt_of(mf_format f)
{
    const mf_format_info *i = mf_format_get(f);
    fmt x = {f, i->bits, i->exp_bits, i->frac_bits, 0, i->bias, i->has_inf, i->has_sign, 0};
    if (f == MF_FMT_TF32)
        x.fshift = 13;
    x.no_inf_nan_top = !i->has_inf;
    return x;
}

static int emax_field(const fmt *x) { return (1 << x->eb) - (x->no_inf_nan_top ? 1 : 2); }

/* Pack sign, biased exponent field and fraction. */
static uint64_t pack(const fmt *x, int sign, int efield, uint64_t frac)
{
    uint64_t fmask = x->fb >= 64 ? ~0ull : ((1ull << x->fb) - 1);
    uint64_t v = ((uint64_t)efield << (x->fb + x->fshift)) | ((frac & fmask) << x->fshift);
    if (sign && x->has_sign)
        v |= 1ull << (x->width - 1);
    /* e4m3-style formats: S.1111.111 is NaN; keep finite values finite */
    if (x->no_inf_nan_top && efield == emax_field(x) && (frac & fmask) == fmask && x->f != MF_FMT_E2M1 &&
        x->f != MF_FMT_E3M2 && x->f != MF_FMT_E2M3)
        v &= ~(1ull << x->fshift);
    return v;
}

static uint64_t frac_rand(gen *g, const fmt *x) { return rnd(g) & (x->fb >= 64 ? ~0ull : ((1ull << x->fb) - 1)); }

static uint64_t width_mask(const fmt *x) { return x->width >= 64 ? ~0ull : ((1ull << x->width) - 1); }

/* A normal value with unbiased exponent e (clamped into the format's range). */
static uint64_t normal(gen *g, const fmt *x, int e, int sign)
{
    int ef = e + x->bias;
    if (ef < 1)
        ef = 1;
    if (ef > emax_field(x))
        ef = emax_field(x);
    return pack(x, sign, ef, frac_rand(g, x));
}

static uint64_t subnormal(gen *g, const fmt *x, int sign)
{
    uint64_t fr = frac_rand(g, x);
    if (!fr)
        fr = 1;
    if (rnd(g) & 1) /* many leading zeros */
        fr >>= rint_(g, 0, x->fb - 1);
    return pack(x, sign, 0, fr ? fr : 1);
}

static uint64_t special(gen *g, const fmt *x)
{
    int sign = (int)(rnd(g) & 1);
    uint64_t fm = x->fb >= 64 ? ~0ull : ((1ull << x->fb) - 1);
    switch (rint_(g, 0, 9)) {
    case 0: return pack(x, sign, 0, 0);                                   /* +-0 */
    case 1:                                                               /* +-Inf (or max) */
        return x->has_inf ? pack(x, sign, emax_field(x) + 1, 0) : pack(x, sign, emax_field(x), fm);
    case 2:                                                               /* NaN */
        if (x->has_inf)
            return pack(x, sign, emax_field(x) + 1, (frac_rand(g, x) | 1));
        return (x->f == MF_FMT_E4M3) ? (sign ? 0xFF : 0x7F) : pack(x, sign, emax_field(x), fm);
    case 3: return pack(x, sign, emax_field(x), fm);                      /* max finite */
    case 4: return pack(x, sign, 1, 0);                                   /* min normal */
    case 5: return pack(x, sign, 0, 1);                                   /* min subnormal */
    case 6: return pack(x, sign, 0, fm);                                  /* max subnormal */
    case 7: return pack(x, sign, x->bias, 0);                             /* +-1 */
    case 8: return pack(x, sign, x->bias, fm);                            /* 2 - ulp */
    default: return pack(x, sign, x->bias - 1, fm);                       /* 1 - ulp/2 */
    }
}

/* Largest unbiased exponent of a finite value. */
static int emax(const fmt *x) { return emax_field(x) - x->bias; }

typedef struct tile_ctx {
    const mf_instr *in;
    fmt fa, fb, fc;
    int m, n, k;
} tile_ctx;

/* One element of class `cls` for the mixed mix. */
static uint64_t any_class(gen *g, const fmt *x)
{
    switch (rint_(g, 0, 5)) {
    case 0: return rnd(g) & width_mask(x);
    case 1: return special(g, x);
    case 2: return subnormal(g, x, (int)(rnd(g) & 1));
    case 3: return normal(g, x, rint_(g, -3, 3), (int)(rnd(g) & 1));
    case 4: return normal(g, x, rint_(g, 1 - x->bias, emax(x)), (int)(rnd(g) & 1));
    default: return pack(x, (int)(rnd(g) & 1), 0, 0);
    }
}

static void gen_tile(const tile_ctx *t, gen *g, mf_mix mix, void *A, void *B, void *C, size_t ta)
{
    const mf_instr *in = t->in;
    int m = t->m, n = t->n, k = t->k;
    size_t abase = ta * (size_t)m * k, bbase = ta * (size_t)n * k, cbase = ta * (size_t)m * n;
    int F = in->F > 0 ? in->F : 53;
    int base = 0, eshift = 0;
    if (mix == MF_MIX_ALIGN) {
        /* largest product near 2^(2*base); others F-2..F+2 binades below */
        base = rint_(g, -2, 2);
        int room = emax(&t->fa) + emax(&t->fb) - 1;
        if (2 * base > room)
            base = room / 2;
    }
    if (mix == MF_MIX_OVERFLOW) {
        /* a*b around the output's largest binade; inputs may not reach it */
        int target = emax(&t->fc);
        eshift = target / 2;
    }
    /* A: rows of k values; B: columns of k values */
    for (int pass = 0; pass < 2; pass++) {
        const fmt *x = pass ? &t->fb : &t->fa;
        int rows = pass ? n : m;
        for (int r = 0; r < rows; r++)
            for (int kk = 0; kk < k; kk++) {
                uint64_t v;
                int sign = (int)(rnd(g) & 1);
                switch (mix) {
                case MF_MIX_RANDOM: v = rnd(g) & width_mask(x); break;
                case MF_MIX_SPECIAL:
                    v = (rnd(g) % (uint64_t)(2 * k)) == 0 ? special(g, x) : normal(g, x, rint_(g, -2, 2), sign);
                    break;
                case MF_MIX_SUBNORMAL:
                    v = (rnd(g) & 1) ? subnormal(g, x, sign) : normal(g, x, 1 - x->bias + rint_(g, 0, 3), sign);
                    break;
                case MF_MIX_CANCEL: v = normal(g, x, rint_(g, -3, 3), sign); break;
                case MF_MIX_ALIGN:
                    if (pass)
                        v = normal(g, x, 0, sign); /* b in [1,2) */
                    else if (kk == 0)
                        v = normal(g, x, 2 * base, sign);
                    else
                        v = normal(g, x, 2 * base - F + rint_(g, -2, 2) - (rnd(g) & 1), sign);
                    break;
                case MF_MIX_OVERFLOW: v = normal(g, x, eshift - rint_(g, 0, 2), sign); break;
                case MF_MIX_ZERO_SIGN:
                    v = (rnd(g) & 1) ? pack(x, sign, 0, 0) : normal(g, x, rint_(g, -2, 2), sign);
                    break;
                default: v = any_class(g, x); break;
                }
                if (pass)
                    mf_abi_set(in->fb, B, bbase + (size_t)r * k + kk, v);
                else
                    mf_abi_set(in->fa, A, abase + (size_t)r * k + kk, v);
            }
    }
    if (mix == MF_MIX_CANCEL || mix == MF_MIX_ZERO_SIGN) {
        /* pairs (2p, 2p+1): a' = -a, b' = b, so the products cancel exactly;
         * for CANCEL, then flip the last fraction bit of a few elements */
        uint64_t asign = 1ull << (t->fa.width - 1);
        for (int p = 0; p + 1 < k; p += 2) {
            for (int r = 0; r < m; r++) {
                uint64_t v = mf_abi_get(in->fa, A, abase + (size_t)r * k + p) ^ asign;
                if (mix == MF_MIX_CANCEL && rint_(g, 0, 7) == 0)
                    v ^= 1ull << t->fa.fshift;
                mf_abi_set(in->fa, A, abase + (size_t)r * k + p + 1, v);
            }
            for (int r = 0; r < n; r++)
                mf_abi_set(in->fb, B, bbase + (size_t)r * k + p + 1, mf_abi_get(in->fb, B, bbase + (size_t)r * k + p));
        }
    }
    for (int i = 0; i < m * n; i++) {
        const fmt *x = &t->fc;
        int sign = (int)(rnd(g) & 1);
        uint64_t v;
        switch (mix) {
        case MF_MIX_RANDOM: v = rnd(g) & width_mask(x); break;
        case MF_MIX_SPECIAL: v = rint_(g, 0, 3) == 0 ? special(g, x) : normal(g, x, rint_(g, -2, 4), sign); break;
        case MF_MIX_SUBNORMAL: v = (rnd(g) & 1) ? subnormal(g, x, sign) : pack(x, sign, 0, 0); break;
        case MF_MIX_CANCEL: v = rint_(g, 0, 2) ? normal(g, x, rint_(g, -30, 0), sign) : pack(x, sign, 0, 0); break;
        case MF_MIX_ALIGN: v = normal(g, x, 2 * base + 1 - F + rint_(g, -2, 2), sign); break;
        case MF_MIX_OVERFLOW: v = rint_(g, 0, 3) ? normal(g, x, emax(x) - rint_(g, 0, 1), sign) : special(g, x); break;
        case MF_MIX_ZERO_SIGN: v = pack(x, sign, 0, 0); break;
        default: v = any_class(g, x); break;
        }
        mf_abi_set(in->fc, C, cbase + (size_t)i, v);
    }
}

void mf_casegen_tiles(const mf_instr *in, int m, int n, int k, uint64_t seed, uint64_t first, size_t ntiles, void *A,
                      void *B, void *C, void *SA, void *SB)
{
    tile_ctx t = {in, fmt_of(in->fa), fmt_of(in->fb), fmt_of(in->fc), m, n, k};
    for (size_t i = 0; i < ntiles; i++) {
        uint64_t idx = first + i;
        gen g = {seed * 0xD1B54A32D192ED03ull ^ (idx + 1) * 0x9E3779B97F4A7C15ull};
        rnd(&g);
        gen_tile(&t, &g, (mf_mix)(idx % MF_MIX_COUNT), A, B, C, i);
        if (in->n_scales && SA && SB) {
            /* scales near 2^0, some extreme */
            fmt fs = fmt_of(in->fs);
            for (int r = 0; r < m * in->n_scales; r++)
                mf_abi_set(in->fs, SA, i * (size_t)m * in->n_scales + (size_t)r,
                           rint_(&g, 0, 15) ? normal(&g, &fs, rint_(&g, -3, 3), 0) : rnd(&g) & width_mask(&fs));
            for (int r = 0; r < n * in->n_scales; r++)
                mf_abi_set(in->fs, SB, i * (size_t)n * in->n_scales + (size_t)r,
                           rint_(&g, 0, 15) ? normal(&g, &fs, rint_(&g, -3, 3), 0) : rnd(&g) & width_mask(&fs));
        }
    }
}

/*
 * fuzz_input.c - fuzz_model's input layout and format-aware mutations.
 */
#include "fuzz_input.h"

#include <string.h>

static const mf_instr *rows[1024];
static size_t nrows;

static int in_group(const mf_instr *in, const char *group)
{
    if (!group || !*group || !strcmp(group, "all"))
        return 1;
    switch (in->family) {
    case MF_T_FDPA:
    case MF_ST_FDPA:
    case MF_GST_FDPA:
    case MF_F16_EMU: return !strcmp(group, "nvidia");
    case MF_E_FDPA:
    case MF_FTZ_MUL_ADD:
    case MF_TR_FDPA:
    case MF_GTR_FDPA: return !strcmp(group, "amd");
    case MF_FMA_CHAIN: return !strcmp(group, "fma");
    default: return 0;
    }
}

size_t fz_select(const char *group, const char *pattern)
{
    nrows = 0;
    for (size_t i = 0; i < mf_instr_count && nrows < sizeof rows / sizeof rows[0]; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (in_group(in, group) && (!pattern || !*pattern || mf_glob_match(pattern, in->name)))
            rows[nrows++] = in;
    }
    return nrows;
}

size_t fz_count(void) { return nrows; }
const mf_instr *fz_row(size_t i) { return rows[i]; }

size_t fz_index_of(const mf_instr *in)
{
    for (size_t i = 0; i < nrows; i++)
        if (rows[i] == in)
            return i;
    return 0;
}

uint64_t fz_mask(mf_format f, uint64_t x)
{
    int bits = mf_format_get(f)->bits;
    return bits >= 64 ? x : x & (((uint64_t)1 << bits) - 1);
}

uint64_t fz_negate(mf_format f, uint64_t x)
{
    const mf_format_info *fi = mf_format_get(f);
    if (!fi->has_sign)
        return x;
    if ((f == MF_FMT_E4M3FNUZ || f == MF_FMT_E5M2FNUZ) && (x & 0x7F) == 0)
        return x;  /* no -0: 0x00 and the NaN 0x80 have no negation */
    return x ^ ((uint64_t)1 << (fi->bits - 1));
}

static uint64_t get8(const uint8_t *d, size_t size, size_t pos)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | (pos + (size_t)i < size ? d[pos + (size_t)i] : 0);
    return v;
}

static void put8(uint8_t *d, size_t pos, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        d[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}

const mf_instr *fz_decode(const uint8_t *data, size_t size, mf_case *cs)
{
    memset(cs, 0, sizeof *cs);
    if (!nrows)
        return NULL;
    /* the index counts rows of the whole table, so that an input means the
       same case whichever rows are fuzzed; an unselected row maps to one
       of the selected ones */
    unsigned idx = size >= 2 ? (unsigned)data[0] | (unsigned)data[1] << 8 : size ? data[0] : 0;
    const mf_instr *in = &mf_instr_table[idx % mf_instr_count];
    if (fz_index_of(in) == 0 && rows[0] != in)
        in = rows[idx % nrows];
    size_t pos = 2;
    cs->c = fz_mask(in->fc, get8(data, size, pos));
    pos += 8;
    for (int k = 0; k < in->k; k++, pos += 8)
        cs->a[k] = fz_mask(in->fa, get8(data, size, pos));
    for (int k = 0; k < in->k; k++, pos += 8)
        cs->b[k] = fz_mask(in->fb, get8(data, size, pos));
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        cs->sa[s] = fz_mask(in->fs, get8(data, size, pos));
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        cs->sb[s] = fz_mask(in->fs, get8(data, size, pos));
    return in;
}

size_t fz_encode(const mf_instr *in, const mf_case *cs, uint8_t *out, size_t max)
{
    uint8_t buf[FZ_MAX_SIZE];
    size_t idx = (size_t)(in - mf_instr_table), pos = 2;
    buf[0] = (uint8_t)idx;
    buf[1] = (uint8_t)(idx >> 8);
    put8(buf, pos, cs->c);
    pos += 8;
    for (int k = 0; k < in->k; k++, pos += 8)
        put8(buf, pos, cs->a[k]);
    for (int k = 0; k < in->k; k++, pos += 8)
        put8(buf, pos, cs->b[k]);
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        put8(buf, pos, cs->sa[s]);
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        put8(buf, pos, cs->sb[s]);
    if (pos > max)
        pos = max;
    memcpy(out, buf, pos);
    return pos;
}

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Bit position of the fraction's lowest used bit (tf32 keeps its top 19). */
static int frac_shift(mf_format f) { return f == MF_FMT_TF32 ? 13 : 0; }

/* A special or boundary value of format f (DOMAIN section 2): zeros,
 * smallest and largest subnormals, smallest normal, one, the largest
 * exponent field with fraction 0, 1 or all ones (Inf, NaN, or the largest
 * finite values of formats without Inf). */
static uint64_t special_value(mf_format f, uint64_t *rnd)
{
    const mf_format_info *fi = mf_format_get(f);
    int sh = frac_shift(f);
    uint64_t frac_all = (((uint64_t)1 << fi->frac_bits) - 1) << sh;
    uint64_t exp_one = (uint64_t)1 << (fi->frac_bits + sh);
    uint64_t exp_all = (((uint64_t)1 << fi->exp_bits) - 1) * exp_one;
    uint64_t v;
    switch (next(rnd) % 10) {
    case 0: v = 0; break;
    case 1: v = (uint64_t)1 << sh; break;                /* smallest subnormal */
    case 2: v = frac_all; break;                         /* largest subnormal */
    case 3: v = exp_one; break;                          /* smallest normal */
    case 4: v = fi->bias > 0 ? (uint64_t)fi->bias * exp_one : exp_one; break; /* one */
    case 5: v = exp_all; break;                          /* Inf, or a large value */
    case 6: v = exp_all | frac_all; break;               /* NaN, or the largest value */
    case 7: v = exp_all | ((uint64_t)1 << sh); break;    /* a NaN with payload 1 */
    case 8: v = (exp_all - exp_one) | frac_all; break;   /* largest finite of IEEE formats */
    default: v = fz_mask(f, next(rnd)); break;
    }
    if (fi->has_sign && (next(rnd) & 1))
        v = fz_negate(f, v);
    return fz_mask(f, v);
}

/* Pick one operand of (in, cs): its address and format. */
static uint64_t *pick(const mf_instr *in, mf_case *cs, uint64_t *rnd, mf_format *f)
{
    int n = 1 + 2 * in->k + 2 * in->n_scales;
    int i = (int)(next(rnd) % (uint64_t)n);
    if (i == 0) {
        *f = in->fc;
        return &cs->c;
    }
    i--;
    if (i < in->k) {
        *f = in->fa;
        return &cs->a[i];
    }
    i -= in->k;
    if (i < in->k) {
        *f = in->fb;
        return &cs->b[i];
    }
    i -= in->k;
    *f = in->fs;
    return i < in->n_scales ? &cs->sa[i] : &cs->sb[i - in->n_scales];
}

void fz_mutate(const mf_instr **inp, mf_case *cs, uint64_t *rnd)
{
    const mf_instr *in = *inp;
    mf_format f;
    uint64_t *v = pick(in, cs, rnd, &f);
    const mf_format_info *fi = mf_format_get(f);
    int sh = frac_shift(f);
    switch (next(rnd) % 8) {
    case 0:
    case 1: /* a special value swapped in */
        *v = special_value(f, rnd);
        break;
    case 2: { /* exponent nudged by +-1 */
        uint64_t one = (uint64_t)1 << (fi->frac_bits + sh);
        *v = fz_mask(f, (next(rnd) & 1) ? *v + one : *v - one);
        break;
    }
    case 3: /* last fraction bits flipped */
        *v = fz_mask(f, *v ^ (((uint64_t)1 << (next(rnd) % 3 + 1)) - 1) << sh);
        break;
    case 4: { /* K permuted: two products swap places */
        int i = (int)(next(rnd) % (uint64_t)in->k), j = (int)(next(rnd) % (uint64_t)in->k);
        uint64_t ta = cs->a[i], tb = cs->b[i];
        cs->a[i] = cs->a[j];
        cs->b[i] = cs->b[j];
        cs->a[j] = ta;
        cs->b[j] = tb;
        break;
    }
    case 5: { /* a product copied with its sign flipped: near-cancellation */
        int i = (int)(next(rnd) % (uint64_t)in->k), j = (int)(next(rnd) % (uint64_t)in->k);
        cs->a[j] = fz_negate(in->fa, cs->a[i]);
        cs->b[j] = cs->b[i];
        break;
    }
    case 6: { /* another row of the same family */
        size_t n = fz_count(), start = (size_t)(next(rnd) % n);
        for (size_t t = 0; t < n; t++) {
            const mf_instr *o = fz_row((start + t) % n);
            if (o->family == in->family && o != in) {
                mf_case tmp = *cs;
                memset(cs, 0, sizeof *cs);
                cs->c = fz_mask(o->fc, tmp.c);
                for (int k = 0; k < o->k; k++) {
                    cs->a[k] = fz_mask(o->fa, tmp.a[k % in->k]);
                    cs->b[k] = fz_mask(o->fb, tmp.b[k % in->k]);
                }
                for (int s = 0; s < o->n_scales; s++) {
                    cs->sa[s] = fz_mask(o->fs, in->n_scales ? tmp.sa[s % in->n_scales] : 127);
                    cs->sb[s] = fz_mask(o->fs, in->n_scales ? tmp.sb[s % in->n_scales] : 127);
                }
                *inp = o;
                break;
            }
        }
        break;
    }
    default: /* random bits */
        *v = fz_mask(f, next(rnd));
        break;
    }
}

/*
 * gen_int.c - the generators of generators.def for the integer and
 * single-bit rows (formats s8, u8, s4, u4, b1 with an s32 accumulator;
 * model/family_int.c).  Each generator keeps its meaning:
 *   uniform   random bits;
 *   window    small magnitudes (|x| <= 1, 3, 7 or 15) and small c;
 *   cancel    c = -(A.B) + delta (|delta| <= 2) for every output;
 *   special   the extremes of each format (MIN, MAX, 0, +-1) and of s32;
 *   boundary  c at INT32_MAX - A.B + delta or INT32_MIN - A.B + delta, so
 *             that the sum crosses the s32 range by a few units (wrap versus
 *             .satfinite), and A, B at their extremes (largest |A.B|);
 *   table     bit patterns: 0, 1, all ones, top bit, alternating, random;
 *   zero      A.B = 0 (zero rows or columns) with c = 0, or c = -(A.B).
 * b1 words: random, all ones, all zeros, one bit, alternating.  `mutate` is
 * the common one (gen_tile.c).  Generation code: no I/O, no allocation.
 */
#include "gen_int.h"

#define IA(i, kk) ((slot * (size_t)g->m + (size_t)(i)) * (size_t)g->k + (size_t)(kk))
#define IB(j, kk) ((slot * (size_t)g->n + (size_t)(j)) * (size_t)g->k + (size_t)(kk))
#define IC(i, j) ((slot * (size_t)g->m + (size_t)(i)) * (size_t)g->n + (size_t)(j))

/* Value range of an integer input format (b1: a 32-bit word, unsigned). */
MF_HD static void int_range(mf_format f, int64_t *lo, int64_t *hi)
{
    const mf_format_info *fi = mf_format_get(f);
    if (fi->has_sign) {
        *lo = -(INT64_C(1) << (fi->bits - 1));
        *hi = (INT64_C(1) << (fi->bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = (INT64_C(1) << fi->bits) - 1;
    }
}

MF_HD static uint64_t int_bits(mf_format f, int64_t v)
{
    return (uint64_t)v & ((UINT64_C(1) << mf_format_get(f)->bits) - 1);
}

MF_HD static int64_t int_val(mf_format f, uint64_t x)
{
    const mf_format_info *fi = mf_format_get(f);
    x &= (UINT64_C(1) << fi->bits) - 1;
    if (fi->has_sign && ((x >> (fi->bits - 1)) & 1))
        return (int64_t)x - (INT64_C(1) << fi->bits);
    return (int64_t)x;
}

/* A value of input format f drawn for generator `kind`. */
MF_HD static uint64_t int_draw(mf_format f, gen_kind kind, gen_rng *r, int w)
{
    int64_t lo, hi;
    int_range(f, &lo, &hi);
    const uint64_t mask = (UINT64_C(1) << mf_format_get(f)->bits) - 1;
    if (f == MF_FMT_B1) {
        switch (kind == GEN_UNIFORM ? 0 : rng_below(r, 6)) {
        case 1: return mask;
        case 2: return 0;
        case 3: return UINT64_C(1) << rng_below(r, 32);
        case 4: return UINT64_C(0x55555555) << rng_below(r, 2);
        default: return rng_next(r) & mask;
        }
    }
    switch (kind) {
    case GEN_WINDOW:
    case GEN_CANCEL:
        return int_bits(f, rng_range(r, lo < 0 ? -w : 0, w));
    case GEN_SPECIAL:
    case GEN_BOUNDARY: {
        const int64_t s[5] = {lo, hi, 0, 1, lo < 0 ? -1 : hi - 1};
        uint32_t x = rng_below(r, kind == GEN_BOUNDARY ? 8 : 5);
        return int_bits(f, x < 5 ? s[x] : x == 5 ? lo : hi); /* boundary: extremes 5 times in 8 */
    }
    case GEN_TABLE: {
        const uint64_t top = UINT64_C(1) << (mf_format_get(f)->bits - 1);
        const uint64_t p[6] = {0, 1, mask, top, UINT64_C(0x5555555555555555) & mask, top | 1};
        uint32_t x = rng_below(r, 8);
        return x < 6 ? p[x] : rng_next(r) & mask;
    }
    default:
        return rng_next(r) & mask;
    }
}

/* An s32 accumulator for generator `kind` (uniform, window, special, table). */
MF_HD static int64_t c_draw(gen_kind kind, gen_rng *r, int w)
{
    const int64_t lo = -(INT64_C(1) << 31), hi = (INT64_C(1) << 31) - 1;
    switch (kind) {
    case GEN_WINDOW: return rng_range(r, -w * 64, w * 64);
    case GEN_SPECIAL: {
        const int64_t s[8] = {lo, hi, 0, -1, 1, lo + 1, hi - 1, 1 << 16};
        return s[rng_below(r, 8)];
    }
    default: return int_val(MF_FMT_S32, rng_next(r));
    }
}

/* The exact A.B of output (i, j) of the tile, as the model computes it. */
MF_HD static int64_t tile_dot(const gen_ctx *g, size_t slot, int i, int j)
{
    const mf_instr *in = g->in;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb);
    int64_t dot = 0;
    for (int q = 0; q < g->k; q++) {
        uint64_t a = mf_elem_get(ea, g->A, IA(i, q)), b = mf_elem_get(eb, g->B, IB(j, q));
        if (in->fa == MF_FMT_B1) {
            uint32_t wv = (in->x & MF_INT_XOR) ? (uint32_t)(a ^ b) : (uint32_t)(a & b);
            dot += mf_popc32(wv);
        } else {
            dot += int_val(in->fa, a) * int_val(in->fb, b);
        }
    }
    return dot;
}

/* The integer tile's plan, drawn from a copy of the tile stream. */
typedef struct int_plan {
    int w;                /* the magnitude window of window and cancel */
    uint32_t zero_rows;   /* zero: bit i & 31 zeroes row i of A, bit (j + 16) & 31 column j of B */
} int_plan;

MF_HD static int_plan int_plan_of(const gen_rng *tile_rng, gen_kind kind)
{
    gen_rng pr = *tile_rng;
    const int windows[4] = {1, 3, 7, 15};
    int_plan p;
    p.w = windows[rng_below(&pr, 4)];
    /* zero: some rows of A or columns of B all zero */
    p.zero_rows = kind == GEN_ZERO ? (uint32_t)rng_next(&pr) : 0;
    return p;
}

/* Parts first .. last-1 of phase `phase` (mmafuzz_gen.h: gen_run_part) of
 * an integer tile, all of one kind: rows of A, columns of B or rows of C. */
MF_HD static void int_parts(const gen_ctx *g, size_t slot, const int_plan *p, const gen_rng *tile_rng, gen_kind kind,
                            int phase, int first, int last)
{
    const mf_instr *in = g->in;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc);
    const int w = p->w;
    const uint32_t zero_rows = p->zero_rows;
    const int64_t lo = -(INT64_C(1) << 31), hi = (INT64_C(1) << 31) - 1;
    for (int part = first; part < last; part++) {
        gen_rng rs = rng_split(tile_rng, (uint64_t)phase << 32 | (uint32_t)part), *r = &rs;
        if (phase == 0 && part < g->m) {
            const int i = part;
            for (int q = 0; q < g->k; q++)
                mf_elem_set(ea, g->A, IA(i, q), (zero_rows >> (i & 31)) & 1 ? 0 : int_draw(in->fa, kind, r, w));
            continue;
        }
        if (phase == 0) {
            const int j = part - g->m;
            for (int q = 0; q < g->k; q++)
                mf_elem_set(eb, g->B, IB(j, q), (zero_rows >> ((j + 16) & 31)) & 1 ? 0 : int_draw(in->fb, kind, r, w));
            continue;
        }
        /* row i of C; cancel, boundary and zero read A row i and B back for A.B */
        const int i = part;
        for (int j = 0; j < g->n; j++) {
            int64_t c;
            switch (kind) {
            case GEN_CANCEL: c = -tile_dot(g, slot, i, j) + rng_range(r, -2, 2); break;
            case GEN_BOUNDARY: {
                int64_t dot = tile_dot(g, slot, i, j), delta = rng_range(r, -3, 3);
                uint32_t x = rng_below(r, 4);
                /* the sum dot + c lands at MAX + delta or MIN + delta (c itself clamped to s32) */
                c = x == 0 ? hi - dot + delta : x == 1 ? lo - dot + delta : x == 2 ? hi - rng_range(r, 0, 3)
                                                                                  : lo + rng_range(r, 0, 3);
                c = c < lo ? lo : c > hi ? hi : c;
                break;
            }
            case GEN_ZERO: c = (rng_next(r) & 1) ? 0 : -tile_dot(g, slot, i, j); break;
            default: c = c_draw(kind, r, w); break;
            }
            mf_elem_set(ec, g->C, IC(i, j), int_bits(MF_FMT_S32, c));
        }
    }
}

MF_HD void gen_int_part(const gen_ctx *g, size_t slot, const gen_rng *tile_rng, gen_kind kind, int phase, int part)
{
    if (part < 0 || part >= gen_part_count(g, phase))
        return;
    int_plan p = int_plan_of(tile_rng, kind);
    int_parts(g, slot, &p, tile_rng, kind, phase, part, part + 1);
}

MF_HD void gen_int_run(const gen_ctx *g, size_t slot, const gen_rng *tile_rng, gen_kind kind)
{
    int_plan p = int_plan_of(tile_rng, kind);
    for (int phase = 0; phase < 2; phase++)
        int_parts(g, slot, &p, tile_rng, kind, phase, 0, gen_part_count(g, phase));
}

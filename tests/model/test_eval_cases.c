/*
 * test_eval_cases.c - mf_eval_cases against mf_eval, case by case and bit
 * for bit, for every instruction of the table.
 *
 * Where the expected values come from: mf_eval, the per-case model that the
 * other model tests hold against the peer model's vectors, the hardware
 * recordings and the papers' probe vectors.  mf_eval_cases runs T-FDPA rows
 * eight independent cases at a time, special values classified in the lanes,
 * so it is a second implementation of the same arithmetic.  Each row gets
 * four batches:
 *   - random bits in every operand (most f16/bf16 cases then hold a NaN or
 *     an Inf, the load the Python benchmark puts on it);
 *   - boundary values: +-0, the smallest and largest subnormals, the
 *     smallest normal, 1, the largest finite value, +-Inf and NaNs (the
 *     top exponent field), mixed into otherwise finite cases, one or two
 *     per case, so that lanes of one group take different step-1 outcomes;
 *   - exponent windows: every operand's exponent drawn from one narrow
 *     window, often the lowest fields, c often +-0 (cancellation, sums that
 *     round to zero, the zero_plus rule, c of e_zero) or near the top
 *     (a chunk that overflows to Inf and hands the next chunk an Inf c).
 * Batch sizes are not multiples of 8, so the last cases take the per-case
 * path.  Then every row that runs in lanes is run again as a copy with
 * other parameters (zero_plus, e_zero, F, L changed) against mf_eval_trace,
 * mf_eval's general path, which reads the same parameters from the copy:
 * mf_eval_cases must take them from the row it is given.
 * Usage: test_eval_cases [CASES_PER_BATCH] (1003 when not given).
 */
#include "mmafuzz_model.h"

#include <stdlib.h>
#include <string.h>

#include "test_check.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void) { return test_random(&rng); }

/* Width of format f's container bits used, and the shift of tf32. */
static int fmt_shift(mf_format f) { return f == MF_FMT_TF32 ? 13 : 0; }
static uint64_t fmt_all(mf_format f)
{
    int w = mf_format_get(f)->bits - fmt_shift(f);
    return w >= 64 ? ~0ull : (1ull << w) - 1;
}

/* A value of format f built from sign, exponent field and fraction. */
static uint64_t make(mf_format f, uint64_t sign, uint64_t field, uint64_t frac)
{
    const mf_format_info *fi = mf_format_get(f);
    uint64_t x = frac & ((1ull << fi->frac_bits) - 1);
    x |= (field & ((1ull << fi->exp_bits) - 1)) << fi->frac_bits;
    if (fi->has_sign)
        x |= (sign & 1) << (fi->exp_bits + fi->frac_bits);
    return (x & fmt_all(f)) << fmt_shift(f);
}

/* A boundary value of format f. */
static uint64_t boundary(mf_format f)
{
    const mf_format_info *fi = mf_format_get(f);
    if (fi->exp_bits == 0)
        return (next() & fmt_all(f)) << fmt_shift(f);
    const uint64_t emax = (1ull << fi->exp_bits) - 1, fmax = (1ull << fi->frac_bits) - 1, s = next() & 1;
    switch (next() % 10) {
    case 0: return make(f, s, 0, 0);                       /* +-0 */
    case 1: return make(f, s, 0, 1);                       /* smallest subnormal */
    case 2: return make(f, s, 0, fmax);                    /* largest subnormal */
    case 3: return make(f, s, 1, 0);                       /* smallest normal */
    case 4: return make(f, s, (emax >> 1), 0);             /* 1 (bias = emax/2 for these formats) */
    case 5: return make(f, s, emax - 1, fmax);             /* largest finite (or a top value) */
    case 6: return make(f, s, emax, 0);                    /* Inf (e4m3: 2^8) */
    case 7: return make(f, s, emax, fmax);                 /* NaN (every format with one) */
    case 8: return make(f, s, emax, 1 + next() % fmax);    /* a NaN payload */
    default: return make(f, s, emax - 1 - next() % 2, next());   /* near the top */
    }
}

/* A finite-looking value with its exponent field in [w, w+2]. */
static uint64_t windowed(mf_format f, int w)
{
    const mf_format_info *fi = mf_format_get(f);
    if (fi->exp_bits == 0)
        return (next() & fmt_all(f)) << fmt_shift(f);
    const uint64_t emax = (1ull << fi->exp_bits) - 1;
    uint64_t field = (uint64_t)w + next() % 3;
    if (field >= emax)
        field = emax - 1;
    return make(f, next(), field, next());
}

static void put(void *base, size_t es, size_t i, uint64_t v)
{
    switch (es) {
    case 8: ((uint64_t *)base)[i] = v; break;
    case 4: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case 2: ((uint16_t *)base)[i] = (uint16_t)v; break;
    default: ((uint8_t *)base)[i] = (uint8_t)v; break;
    }
}

static uint64_t get(const void *base, size_t es, size_t i)
{
    switch (es) {
    case 8: return ((const uint64_t *)base)[i];
    case 4: return ((const uint32_t *)base)[i];
    case 2: return ((const uint16_t *)base)[i];
    default: return ((const uint8_t *)base)[i];
    }
}

enum { RANDOM_BITS, BOUNDARY, WINDOW, FULL_SUM, KINDS };
static const char *const kind_name[KINDS] = {"random bits", "boundary values", "exponent windows", "full sums"};

typedef struct batch {
    size_t n, S, ea, eb, ec, ed, es;
    unsigned char *A, *B, *C, *SA, *SB, *D;
} batch;

/* Fill a batch of n cases of row `in` with inputs of one kind. */
static void fill(const mf_instr *in, batch *bt, int kind)
{
    const size_t K = in->k, S = bt->S;
    const mf_format_info *fa = mf_format_get(in->fa), *fc = mf_format_get(in->fc);
    for (size_t i = 0; i < bt->n; i++) {
        int only = next() % 2, w = fa->exp_bits ? (int)(only ? next() % 3 : next() % ((1u << fa->exp_bits) - 2)) : 0;
        int wc = fc->exp_bits ? (int)(only ? next() % 3 : next() % ((1u << fc->exp_bits) - 2)) : 0;
        /* one or two boundary values: p2 often the other operand at p1's position (0 * Inf) */
        const int p1 = (int)(next() % (2 * K)), pick = (int)(next() % 3);
        const int p2 = pick == 0 ? -1 : pick == 1 ? (int)(next() % (2 * K)) : (p1 + (int)K) % (int)(2 * K);
        for (size_t q = 0; q < K; q++) {
            uint64_t a, b;
            if (kind == FULL_SUM) {   /* one sign, one exponent, the largest significands: the largest sums */
                a = make(in->fa, (uint64_t)only, (uint64_t)w + 1, ~0ull ^ (next() & 1));
                b = make(in->fb, 0, (uint64_t)w + 1, ~0ull ^ (next() & 1));
            } else if (kind == RANDOM_BITS) {
                a = next() & (fmt_all(in->fa) << fmt_shift(in->fa));
                b = next() & (fmt_all(in->fb) << fmt_shift(in->fb));
            } else {
                a = windowed(in->fa, w);
                b = windowed(in->fb, w);
                if (kind == BOUNDARY && ((int)q == p1 || (int)q == p2))
                    a = boundary(in->fa);
                if (kind == BOUNDARY && ((int)(q + K) == p1 || (int)(q + K) == p2))
                    b = boundary(in->fb);
            }
            put(bt->A, bt->ea, i * K + q, a);
            put(bt->B, bt->eb, i * K + q, b);
        }
        uint64_t c;
        if (kind == RANDOM_BITS)
            c = next() & (fmt_all(in->fc) << fmt_shift(in->fc));
        else if (kind == FULL_SUM)
            c = make(in->fc, (uint64_t)only ^ (next() % 4 == 0), (uint64_t)wc + 1, next());
        else if (kind == BOUNDARY && next() % 3 == 0)
            c = boundary(in->fc);
        else if (kind == WINDOW && next() % 3 == 0)
            c = (next() & 1) << (fc->bits - 1);   /* +-0 */
        else if (kind == WINDOW && next() % 4 == 0)
            c = make(in->fc, next(), ((1ull << fc->exp_bits) - 2), next());   /* near the top */
        else
            c = windowed(in->fc, wc);
        put(bt->C, bt->ec, i, c);
        for (size_t q = 0; q < S; q++) {   /* scales near 2^0 mostly, sometimes anything */
            put(bt->SA, bt->es, i * S + q, next() % 8 ? 0x7C + next() % 8 : next() & 0xFF);
            put(bt->SB, bt->es, i * S + q, next() % 8 ? 0x7C + next() % 8 : next() & 0xFF);
        }
    }
}

/* Run mf_eval_cases on the batch and compare every case with `ref` (mf_eval
 * for a table row, mf_eval_trace for a copy).  @return cases compared. */
static long compare(const mf_instr *in, batch *bt, int kind, int copy, const char *what)
{
    const size_t K = in->k, S = bt->S;
    memset(bt->D, 0xA5, bt->n * bt->ed);
    mf_eval_cases(in, bt->n, bt->A, bt->B, bt->C, S ? bt->SA : NULL, S ? bt->SB : NULL, bt->D);
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    const int dbits = mf_format_get(in->fd)->bits;
    const uint64_t dmask = dbits >= 64 ? ~0ull : (1ull << dbits) - 1;
    for (size_t i = 0; i < bt->n; i++) {
        for (size_t q = 0; q < K; q++) {
            cs.a[q] = get(bt->A, bt->ea, i * K + q);
            cs.b[q] = get(bt->B, bt->eb, i * K + q);
        }
        for (size_t q = 0; q < S; q++) {
            cs.sa[q] = get(bt->SA, bt->es, i * S + q);
            cs.sb[q] = get(bt->SB, bt->es, i * S + q);
        }
        cs.c = get(bt->C, bt->ec, i);
        const uint64_t want = (copy ? mf_eval_trace(in, &cs, NULL) : mf_eval(in, &cs)) & dmask;
        const uint64_t got = get(bt->D, bt->ed, i);
        CHECK(got == want, "%s%s, %s, case %zu: mf_eval_cases %llx, %s %llx", in->name, what, kind_name[kind], i,
              (unsigned long long)got, copy ? "mf_eval_trace" : "mf_eval", (unsigned long long)want);
    }
    return (long)bt->n;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1003;
    long compared = 0;
    int copies = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        batch bt;
        bt.n = n;
        bt.S = in->n_scales;
        bt.ea = mf_tile_elem_bytes(in->fa);
        bt.eb = mf_tile_elem_bytes(in->fb);
        bt.ec = mf_tile_elem_bytes(in->fc);
        bt.ed = mf_tile_elem_bytes(in->fd);
        bt.es = bt.S ? mf_tile_elem_bytes(in->fs) : 1;
        bt.A = malloc(n * in->k * bt.ea);
        bt.B = malloc(n * in->k * bt.eb);
        bt.C = malloc(n * bt.ec);
        bt.D = malloc(n * bt.ed);
        bt.SA = malloc(n * (bt.S + 1) * bt.es);
        bt.SB = malloc(n * (bt.S + 1) * bt.es);
        if (!bt.A || !bt.B || !bt.C || !bt.D || !bt.SA || !bt.SB)
            return 2;
        for (int kind = 0; kind < KINDS; kind++) {
            fill(in, &bt, kind);
            compared += compare(in, &bt, kind, 0, "");
        }
        /* copies with other parameters: the T-FDPA rows whose results move with them */
        if (in->family == MF_T_FDPA && !in->n_scales) {
            mf_instr v[4];
            const char *what[4] = {" (zero_plus flipped)", " (e_zero + 9)", " (F - 1)", " (L / 2)"};
            for (int i = 0; i < 4; i++)
                v[i] = *in;
            v[0].zero_plus = !in->zero_plus;
            v[1].e_zero = (int16_t)(in->e_zero + 9);
            v[2].F = (int16_t)(in->F - 1);
            v[3].L = (int16_t)(in->L % 2 == 0 && in->L > 1 ? in->L / 2 : in->L);
            for (int i = 0; i < 4; i++) {
                for (int kind = 0; kind < KINDS; kind++) {
                    fill(in, &bt, kind);
                    compared += compare(&v[i], &bt, kind, 1, what[i]);
                }
                copies++;
            }
        }
        free(bt.A); free(bt.B); free(bt.C); free(bt.D); free(bt.SA); free(bt.SB);
    }
    printf("%ld cases of %zu instructions and %d copies with other parameters: mf_eval_cases %s mf_eval",
           compared, mf_instr_count, copies, failures ? "DIFFERS FROM" : "agrees with");
    if (failures)
        printf(" in %d cases", failures);
    printf("\n");
    return failures ? 1 : 0;
}

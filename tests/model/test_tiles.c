/*
 * test_tiles.c - mf_eval_tiles against mf_eval, element by element, for every
 * instruction of the table.
 *
 * Where the expected values come from: mf_eval, the per-case model that the
 * other model tests hold against the peer model, the hardware recordings and
 * the papers' probe vectors.  The tile evaluator decodes rows and columns
 * once and runs T-FDPA rows eight outputs at a time, so it is a second
 * implementation of the same arithmetic; this test says the two agree on
 * every bit.  Inputs mix random bit patterns with the values that steer the
 * lane path away from the common case: zeros, subnormals, NaN/Inf (a lane
 * then falls back to mf_eval), exponents near the top of the range (a chunk
 * overflows to Inf and the next chunk starts from an Inf c), and narrow
 * exponent windows (cancellation).  Sparse rows get metadata in SA (M x
 * n_meta bytes, mmafuzz_model.h), legal nibbles drawn at random
 * (mf_sparse_meta_ok, the PTX ISA's rule), so that the tile's metadata path
 * is compared with mf_eval's on values other than zero.
 * Usage: test_tiles [TILES_PER_INSTR].
 */
#include "mmafuzz_model.h"

#include <stdlib.h>
#include <string.h>

#include "test_check.h"

static uint64_t rng = 0x5DEECE66DULL;
static uint64_t next(void) { return test_random(&rng); }

/* A value of format f: the exponent field drawn from a class, the rest random. */
static uint64_t gen_value(mf_format f, int window_exp, int window_only)
{
    const mf_format_info *fi = mf_format_get(f);
    int shift = f == MF_FMT_TF32 ? 13 : 0;
    int width = fi->bits - shift;
    uint64_t all = width == 64 ? ~0ull : (1ull << width) - 1;
    uint64_t x = next() & all;
    if (fi->exp_bits == 0)
        return x << shift;
    uint64_t emax = (1ull << fi->exp_bits) - 1;
    uint64_t field, r = window_only ? (next() % 8 ? 15 : 7) : next() % 16;
    if (r < 6)
        return x << shift;                                 /* random bits */
    else if (r < 8)
        field = 0;                                         /* zero or subnormal */
    else if (r < 9)
        field = emax;                                      /* Inf/NaN (or a top value) */
    else if (r < 11)
        field = emax - 1 - next() % 2;                     /* near the top */
    else
        field = (uint64_t)window_exp;                      /* the tile's window */
    if (r == 7 || (r == 8 && next() % 2))
        x &= ~(((1ull << fi->frac_bits) - 1));             /* an exact zero, or Inf rather than NaN */
    uint64_t emask = emax << fi->frac_bits;
    x = (x & ~emask) | (field << fi->frac_bits);
    return (x & all) << shift;
}

static void fill(void *base, size_t count, mf_format f, int window_exp, int window_only)
{
    size_t es = mf_tile_elem_bytes(f);
    for (size_t i = 0; i < count; i++) {
        uint64_t v = gen_value(f, window_exp, window_only);
        switch (es) {
        case 8: ((uint64_t *)base)[i] = v; break;
        case 4: ((uint32_t *)base)[i] = (uint32_t)v; break;
        case 2: ((uint16_t *)base)[i] = (uint16_t)v; break;
        default: ((uint8_t *)base)[i] = (uint8_t)v; break;
        }
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

int main(int argc, char **argv)
{
    int tiles = argc > 1 ? atoi(argv[1]) : 100;
    long compared = 0, sparse_rows = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        /* shapes: the row's, capped, with N not a multiple of 8 half the time */
        int m = in->m < 12 ? in->m : 12, n = in->n < 19 ? in->n : (r & 1 ? 19 : 16), k = in->k;
        size_t T = (size_t)tiles, S = in->n_scales, NM = in->sparse ? in->n_meta : 0;
        size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
               ed = mf_tile_elem_bytes(in->fd), es = S ? mf_tile_elem_bytes(in->fs) : 1;
        unsigned char *A = malloc(T * m * k * ea), *B = malloc(T * n * k * eb), *C = malloc(T * m * n * ec),
                      *D = malloc(T * m * n * ed), *SA = malloc(T * m * (S + NM + 1) * es), *SB = malloc(T * n * (S + 1) * es);
        if (!A || !B || !C || !D || !SA || !SB)
            return 2;
        for (size_t t = 0; t < T; t++) {
            const mf_format_info *fa = mf_format_get(in->fa), *fc = mf_format_get(in->fc);
            /* a third of the tiles draw every exponent from one window, often
             * the lowest fields: sums of tiny products that round to zero,
             * where the sign of a zero result (zero_plus) shows */
            int only = next() % 3 == 0, low = only && next() % 2;
            int wa = fa->exp_bits ? (int)(low ? next() % 3 : next() % ((1u << fa->exp_bits) - 1)) : 0;
            int wc = fc->exp_bits ? (int)(low ? next() % 3 : next() % ((1u << fc->exp_bits) - 1)) : 0;
            fill(A + t * m * k * ea, (size_t)m * k, in->fa, wa, only);
            fill(B + t * n * k * eb, (size_t)n * k, in->fb, wa, only);
            fill(C + t * m * n * ec, (size_t)m * n, in->fc, wc, only);
            if (low && next() % 2)   /* c = +-0: nothing but the tiny products */
                for (size_t i = 0; i < (size_t)m * n; i++) {
                    uint64_t z = (next() & 1) << (fc->bits - 1);
                    if (ec == 4) ((uint32_t *)C)[t * m * n + i] = (uint32_t)z;
                    else if (ec == 2) ((uint16_t *)C)[t * m * n + i] = (uint16_t)z;
                    else if (ec == 8) ((uint64_t *)C)[t * m * n + i] = z;
                    else ((uint8_t *)C)[t * m * n + i] = (uint8_t)z;
                }
            if (S) {
                /* scales near 2^0 mostly, sometimes anything (NaN scales included) */
                for (size_t i = 0; i < (size_t)m * S; i++)
                    ((uint8_t *)SA)[t * m * S + i] = (uint8_t)(next() % 8 ? 0x7C + next() % 8 : next());
                for (size_t i = 0; i < (size_t)n * S; i++)
                    ((uint8_t *)SB)[t * n * S + i] = (uint8_t)(next() % 8 ? 0x7C + next() % 8 : next());
            }
            /* sparse rows: one legal metadata nibble a byte, M x n_meta */
            for (size_t i = 0; i < (size_t)m * NM; i++) {
                unsigned v;
                do
                    v = (unsigned)(next() % 16);
                while (!mf_sparse_meta_ok(in, v));
                ((uint8_t *)SA)[t * m * NM + i] = (uint8_t)v;
            }
        }
        mf_eval_tiles(in, m, n, k, T, A, B, C, S || NM ? SA : NULL, S ? SB : NULL, D);
        sparse_rows += NM > 0;
        mf_case cs;
        memset(&cs, 0, sizeof cs);
        for (size_t t = 0; t < T; t++)
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    for (int q = 0; q < k; q++) {
                        cs.a[q] = get(A, ea, (t * m + i) * k + q);
                        cs.b[q] = get(B, eb, (t * n + j) * k + q);
                    }
                    for (size_t q = 0; q < S; q++) {
                        cs.sa[q] = get(SA, es, (t * m + i) * S + q);
                        cs.sb[q] = get(SB, es, (t * n + j) * S + q);
                    }
                    for (size_t q = 0; q < NM; q++)
                        cs.meta[q] = ((const uint8_t *)SA)[(t * m + i) * NM + q];
                    cs.c = get(C, ec, (t * m + i) * n + j);
                    uint64_t want = mf_eval(in, &cs), got = get(D, ed, (t * m + i) * n + j);
                    CHECK(got == want, "%s tile %zu (%d,%d): mf_eval_tiles %llx, mf_eval %llx", in->name, t, i, j,
                          (unsigned long long)got, (unsigned long long)want);
                    compared++;
                }
        free(A); free(B); free(C); free(D); free(SA); free(SB);
    }
    CHECK(sparse_rows > 0, "no sparse row in the table: the metadata path was not compared");
    printf("%ld outputs of %zu instructions (%ld sparse, with metadata): mf_eval_tiles %s mf_eval\n", compared,
           mf_instr_count, sparse_rows, failures ? "DIFFERS FROM" : "agrees with");
    return failures ? 1 : 0;
}

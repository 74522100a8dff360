/*
 * test_fast_paths.c - the model's fast paths against its general path, for
 * every instruction of the table.
 *
 * Where the expected values come from: the general path of each family
 * (mf_eval_trace with a tracer), which follows shared/DOMAIN.md section 3
 * step by step and is the code the peer vectors, the hardware recordings
 * and the papers' probe vectors check (model_vs_peer_vectors,
 * model_vs_hw_recordings, the model_probe_* tests).  mf_eval takes the
 * specialized paths (T-FDPA chunk plans, the E-FDPA 128-bit sum, the
 * all-finite FMA chain, the FTZ-Mul-Add bit construction, ...) wherever
 * their preconditions hold; this test says they give the same bits.
 * Inputs: random bit patterns, values near 1, tiny and huge values, zeros,
 * NaN/Inf, and pairs of products that cancel.  Usage: test_fast_paths [N].
 */
#include "mmafuzz_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"

static uint64_t rng = 0x243F6A8885A308D3ULL;
static uint64_t next(void) { return test_random(&rng); }

/* A value of format f whose exponent field comes from the case's style. */
static uint64_t value(mf_format f, int style, int window)
{
    const mf_format_info *fi = mf_format_get(f);
    const int shift = f == MF_FMT_TF32 ? 13 : 0, width = fi->bits - shift;
    const uint64_t all = width == 64 ? ~0ull : (1ull << width) - 1;
    uint64_t x = next() & all;
    if (fi->exp_bits == 0 || style == 0)
        return x << shift;   /* random bits */
    const uint64_t emax = (1ull << fi->exp_bits) - 1, fmask = (1ull << fi->frac_bits) - 1;
    uint64_t field;
    switch (next() % 16) {
    case 0: field = 0; x &= ~fmask; break;                                   /* zero */
    case 1: field = 0; break;                                                /* subnormal */
    case 2: field = emax; if (next() & 1) x &= ~fmask; break;                /* Inf or NaN */
    case 3: field = emax - 1; break;                                         /* huge */
    case 4: field = 1 + next() % 2; break;                                   /* tiny */
    default: field = (uint64_t)window + next() % 3; break;                   /* the case's window */
    }
    if (style == 2 && field >= emax - 1)   /* style 2: finite, no huge values */
        field = (uint64_t)window;
    if (style == 2 && field == emax)
        field = emax - 1;
    x = (x & ~(emax << fi->frac_bits)) | ((field & emax) << fi->frac_bits);
    return (x & all) << shift;
}

int main(int argc, char **argv)
{
    const long per_instr = argc > 1 ? atol(argv[1]) : 3000;
    const mf_trace general = {NULL, NULL};   /* a tracer that prints nothing: the general path */
    long compared = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        const mf_format_info *fa = mf_format_get(in->fa);
        for (long i = 0; i < per_instr; i++) {
            mf_case cs;
            memset(&cs, 0, sizeof cs);
            /* style 0: random bits; 1: exponents around 1 with zeros, extremes and
             * specials mixed in; 2: the same, finite; 3: like 1 at the lowest
             * exponents (sums far below 1, tiny c) */
            int style = (int)(next() % 4), low = style == 3;
            style = low ? 1 : style;
            int window = fa->exp_bits ? (low ? 1 : (int)((1u << (fa->exp_bits - 1)) - 2 + next() % 4)) : 0;
            for (int k = 0; k < in->k; k++) {
                cs.a[k] = value(in->fa, style, window);
                cs.b[k] = value(in->fb, style, window);
            }
            if (next() % 4 == 0)   /* products that cancel in pairs */
                for (int k = 0; k + 1 < in->k; k += 2) {
                    cs.a[k + 1] = cs.a[k] ^ (fa->has_sign ? 1ull << (fa->bits - 1) : 0);
                    cs.b[k + 1] = cs.b[k];
                }
            const mf_format_info *fc = mf_format_get(in->fc);
            cs.c = value(in->fc, style, fc->exp_bits ? (low ? 1 : (int)((1u << (fc->exp_bits - 1)) - 2 + next() % 4)) : 0);
            if (next() % 8 == 0)   /* c = +-0: zero terms take e_zero */
                cs.c = fc->has_sign ? (next() & 1) << (fc->bits - 1) : 0;
            const int tiny = next() % 8 == 0;   /* ue8m0 scales that take sums near and below 2^-126 */
            for (int s = 0; s < in->n_scales; s++) {
                const int ue8 = in->fs == MF_FMT_UE8M0;
                cs.sa[s] = next() % 8 ? (ue8 ? 124 + next() % 8 : 0x30 + next() % 16) : next() % 256;
                cs.sb[s] = next() % 8 ? (ue8 ? 124 + next() % 8 : 0x30 + next() % 16) : next() % 256;
                if (ue8 && tiny) {
                    cs.sa[s] = 20 + next() % 48;
                    cs.sb[s] = 20 + next() % 48;
                }
            }
            uint64_t fast = mf_eval(in, &cs), slow = mf_eval_trace(in, &cs, &general);
            CHECK(fast == slow, "%s case %ld: fast path 0x%llx, general path 0x%llx", in->name, i,
                  (unsigned long long)fast, (unsigned long long)slow);
            if (fast != slow)
                break;
            compared++;
        }
    }
    printf("%ld cases of %zu instructions: fast paths %s general path\n", compared, mf_instr_count,
           failures ? "DIFFER FROM" : "agree with");
    return failures ? 1 : 0;
}

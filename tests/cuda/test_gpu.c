/*
 * test_gpu.c - tests of the CUDA device layer on a GPU (CTest label gpu).
 *
 * usage: test_gpu layout|vs-model|variants|forms [--device SPEC] [--instr PATTERN] [-runs N] [-seed S]
 *                 [-threads T] [-max_total_time SEC] [-max_instr_time SEC] [--mismatches FILE]
 *
 *   layout    one-hot probes per (instruction, variant): every A, B and C
 *             element must land where the PTX fragment layout puts it.  The
 *             expected D is computed here from the probe (a product of two
 *             exactly representable values, or C passed through), not by the
 *             code under test.
 *   vs-model  N tiles per instruction (default 512) of boundary-rich inputs
 *             (gen_fill_tiles) through the device and the model; every output compared
 *             (NaN rule of shared/VECTORS.md).  Mismatches go to --mismatches as
 *             .vec lines with the device's d.  -cases N: at least N cases a
 *             (row, variant) instead (whole tiles); --all-variants: a wgmma
 *             row through every variant and every operand form it takes,
 *             each form against its own model row (mf_variant_model_row),
 *             and not the default (the rows themselves: mmafuzz run);
 *             --forms-only: the operand forms only.
 *   cases FILE  each case of a .vec file alone on the device: prints it with
 *             the device's d and the model's (for minimized findings); under
 *             `instr NAME form=F`, through that operand form's wrapper, and for
 *             no_c with the refuted alternative's d too.
 *   sparse    mma.sp and wgmma.sp rows: the same tiles through every sparsity
 *             selector (wgmma.sp: and A from registers; bitwise
 *             compared with selector 0) and against the model's hypothesis and
 *             each alternative of mf_sp_model (metadata order, chunks of
 *             logical K, the dense model on the logical row), on generated
 *             tiles and on two directed sets: +Inf in B at one K position of
 *             every column ("pruned Inf": where a row prunes it, only the
 *             dense-logical alternative sees 0 * Inf), and rows of 1 and +-1/2
 *             ulp products ("chunks": one fused sum vs chunked roundings);
 *             integer rows: instead of the two directed sets, "extremes" (every
 *             kept a and every b of largest magnitude, c near INT32_MAX or
 *             INT32_MIN: wrap and .satfinite clamp).
 *             (layout and vs-model run every selector of a sparse row too.)
 *   variants  wgmma and wgmma.sp: the same cases through N=8 and N=256, A from shared
 *             memory and from registers; all four outputs compared bit for bit.
 *   forms     wgmma and wgmma.sp: the operand-form variants (neg_a, neg_b, neg_ab,
 *             no_c, trans_a, trans_b, trans_ab) against the model's row for
 *             each (hypotheses; a transposition leaves the row as it is), and
 *             the negations against the default wrapper on inputs negated here.
 *             `layout` probes the transposed layouts too.
 *
 * With no CUDA device the test exits 77 (CTest: skipped), unless the
 * environment sets MMAFUZZ_REQUIRE_GPU=1: then it fails.
 */
#include "mmafuzz_gen.h"
#include "layout.h"
#include "mf_device.h"
#include "vecfile.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct opts {
    const char *device, *pattern, *mismatch_path;
    long long runs, seed, threads, max_time, max_instr_time;
    long long cases;     /* vs-model -cases N: at least N cases (whole tiles) per (row, variant), instead of -runs */
    int all_variants;    /* vs-model --all-variants: every variant and operand form of a wgmma row too */
    int forms_only;      /* vs-model --forms-only (with --all-variants): the operand forms only */
} opts;

static int matches(const char *pattern, const char *name)
{
    if (!pattern)
        return 1;
    if (strpbrk(pattern, "*?["))
        return mf_glob_match(pattern, name);
    return strstr(name, pattern) != NULL;
}

/* Bits of (1 + q/4) * 2^e in format f (normal or subnormal; must be exact). */
static uint64_t probe_bits(mf_format f, int q, int e)
{
    const mf_format_info *fi = mf_format_get(f);
    int fb = f == MF_FMT_TF32 ? 23 : fi->frac_bits, bias = fi->bias;
    uint64_t v;
    if (e + bias >= 1) {
        v = ((uint64_t)(e + bias) << fb) | ((uint64_t)q << (fb - 2));
    } else {
        int shift = e - 3 + bias + fb;
        if (shift < 0) {
            fprintf(stderr, "test_gpu: probe value (1+%d/4)*2^%d not exact in %s\n", q, e, fi->name);
            exit(2);
        }
        v = (uint64_t)(4 + q) << shift;
    }
    return v;
}

/* ------------------------------------------------------------------ layout */

/* Integer probes: the "one" of a one-hot probe (b1: a word of ones), the
 * probe value at K position kk (distinct while kk < the format's range; b1:
 * the word of kk+1 low ones), and the product of the two (the s32 result). */
static uint64_t int_one(mf_format f) { return f == MF_FMT_B1 ? 0xFFFFFFFFu : 1; }
static int64_t int_probe_val(mf_format f, int kk)
{
    return f == MF_FMT_B1 ? kk + 1 : (f == MF_FMT_S4 || f == MF_FMT_U4) ? kk % 7 + 1 : kk % 127 + 1;
}
static uint64_t int_probe_bits(mf_format f, int kk)
{
    return f == MF_FMT_B1 ? (UINT64_C(1) << (kk + 1)) - 1 : (uint64_t)int_probe_val(f, kk);
}

/* Sparse rows (mma.sp): one-hot probes through the metadata.  The
 * metadata of every (tile, row) is drawn (legal nibbles, both index orders
 * where legal), so each nibble position of the metadata register carries a
 * different pattern; the expected D follows from the drawn metadata here.
 *   probe s < K (A probes): row i keeps logical position p = the
 *     (s / n_meta % per)-th kept position of group (i + s) % n_meta, A[i][p] =
 *     1, every other a 0; B[kk][j] = (1 + (kk%4)/4) * 2^(kk/4)  =>  D[i][j] =
 *     B[p][j] for every j: the packed slot, the metadata nibble's place in
 *     its thread's register and the B row all have to be right;
 *   probe K + s (B probes): B[(j+s)%K][j] = 1; A[i][q] = (1 + (q%4)/4) *
 *     2^(q/4) at every kept q  =>  D[i][j] = A[i][(j+s)%K] if row i keeps
 *     it, else +0;
 *   probe 2K (C probe): A = B = 0, C distinct  =>  D = C. */
/* The probe values of the sparse one-hot probes at K position kk, read back in
 * output column j: floating point (1 + (kk%4)/4) * 2^(kk/4) (fp8, K = 64:
 * within its exponent range, below); integer rows
 * kk % 127 + 1 (s8/u8: distinct over K <= 64), s4/u4 one base-7 digit of kk
 * per column, + 1 (columns 0-2, 3-5, 6-7 repeat the three digits: the 8
 * columns together tell the 128 positions apart). */
static uint64_t sp_probe_bits(mf_format f, int kk, int j)
{
    static const int pow7[3] = {1, 7, 49};
    if (f == MF_FMT_E4M3)   /* fp8 at K = 64: (1 + (kk%8)/8) * 2^(kk/8 - 3), exponents -3..4 */
        return ((uint64_t)(kk / 8 - 3 + 7) << 3) | (uint64_t)(kk % 8);
    if (f == MF_FMT_E5M2)   /* (1 + (kk%4)/4) * 2^(kk/4 - 6), exponents -6..9 */
        return ((uint64_t)(kk / 4 - 6 + 15) << 2) | (uint64_t)(kk % 4);
    if (!mf_format_is_int(f))
        return probe_bits(f, kk % 4, kk / 4);
    if (f == MF_FMT_S4 || f == MF_FMT_U4)
        return (uint64_t)(kk / pow7[j % 3] % 7 + 1);
    return (uint64_t)(kk % 127 + 1);
}
/* The output the probe gives (s32 for integer rows: the same small number). */
static uint64_t sp_probe_out(const mf_instr *in, mf_format f, int kk, int j)
{
    const int h = in->fd == MF_FMT_F16;   /* the fp8 probe value as f16 (wgmma.sp) or f32 */
    if (f == MF_FMT_E4M3)
        return h ? ((uint64_t)(kk / 8 - 3 + 15) << 10) | ((uint64_t)(kk % 8) << 7)
                 : ((uint64_t)(kk / 8 - 3 + 127) << 23) | ((uint64_t)(kk % 8) << 20);
    if (f == MF_FMT_E5M2)
        return h ? ((uint64_t)(kk / 4 - 6 + 15) << 10) | ((uint64_t)(kk % 4) << 8)
                 : ((uint64_t)(kk / 4 - 6 + 127) << 23) | ((uint64_t)(kk % 4) << 21);
    return mf_format_is_int(in->fd) ? sp_probe_bits(f, kk, j) : probe_bits(in->fd, kk % 4, kk / 4);
}

static int layout_sp_one(mf_device *dev, const mf_instr *in, const char *variant)
{
    int m, n, k;
    char err[512];
    mf_device_tile_shape(dev, in, variant, &m, &n, &k);
    const int nm = in->n_meta, G = in->sp_group, per = G == 2 ? 1 : G == 8 ? 4 : 2;
    const int isint = mf_format_is_int(in->fa);
    int nt = 2 * k + 1;
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
           ed = mf_abi_elem_bytes(in->fd);
    unsigned char *A = calloc((size_t)nt * m * k, ea), *B = calloc((size_t)nt * n * k, eb),
                  *C = calloc((size_t)nt * m * n, ec), *D = calloc((size_t)nt * m * n, ed),
                  *SA = calloc((size_t)nt * m * nm, 1);
    uint64_t *X = calloc((size_t)nt * m * n, sizeof *X);
    gen_rng r = rng_derive(7, rng_hash_str(in->name), 0);
    for (int t = 0; t < nt; t++) {
        for (int i = 0; i < m; i++) {
            mf_case cs;
            for (int g = 0; g < nm; g++)
                cs.meta[g] = SA[((size_t)t * m + i) * nm + g] = (uint8_t)gen_sparse_nibble(in, &r);
            int s = t % k, pos[MF_SP_KEPT_MAX];
            if (t < k) {   /* A probe */
                int g = (i + s) % nm, slot = (s / nm) % per;
                mf_sparse_group_kept(in, g, cs.meta[g], pos);
                int p = pos[slot];
                mf_abi_set(in->fa, A, ((size_t)t * m + i) * k + p, isint ? int_one(in->fa) : probe_bits(in->fa, 0, 0));
                for (int j = 0; j < n; j++)
                    X[((size_t)t * m + i) * n + j] = sp_probe_out(in, in->fb, p, j);
            } else if (t < 2 * k) {   /* B probe */
                for (int q = 0; q < k; q++)
                    if (mf_sparse_is_kept(in, &cs, q))
                        mf_abi_set(in->fa, A, ((size_t)t * m + i) * k + q, sp_probe_bits(in->fa, q, 0));
                for (int j = 0; j < n; j++) {
                    int kj = (j + s) % k;
                    X[((size_t)t * m + i) * n + j] = mf_sparse_is_kept(in, &cs, kj) ? sp_probe_out(in, in->fa, kj, 0) : 0;
                }
            }
        }
        for (int j = 0; j < n && t < 2 * k; j++)
            for (int kk = 0; kk < k; kk++)
                mf_abi_set(in->fb, B, ((size_t)t * n + j) * k + kk,
                           t < k ? sp_probe_bits(in->fb, kk, j)
                                 : kk == (j + t % k) % k ? (isint ? int_one(in->fb) : probe_bits(in->fb, 0, 0)) : 0);
    }
    size_t tc = (size_t)2 * k;
    for (int idx = 0; idx < m * n; idx++) {
        uint64_t c = isint ? (uint64_t)(1000 + idx)
                     : in->fc == MF_FMT_F16 ? 0x0400u + (uint64_t)idx : 0x3F800000u + ((uint64_t)idx << 10);
        mf_abi_set(in->fc, C, tc * m * n + idx, c);
        X[tc * m * n + idx] = c;
    }
    int bad = 0;
    memset(D, 0xA5, (size_t)nt * m * n * ed);
    if (mf_device_run_tiles(dev, in, variant, (size_t)nt, A, B, C, SA, NULL, D, err, sizeof err)) {
        printf("FAIL %s [%s]: %s\n", in->name, variant ? variant : "", err);
        bad = 1;
    } else {
        for (int t = 0; t < nt && bad < 5; t++)
            for (int i = 0; i < m && bad < 5; i++)
                for (int j = 0; j < n && bad < 5; j++) {
                    uint64_t got = mf_abi_get(in->fd, D, ((size_t)t * m + i) * n + j), x = X[((size_t)t * m + i) * n + j];
                    if (got != x) {
                        printf("FAIL %s [%s]: %s probe %d: D[%d][%d] = %llx, expected %llx (row meta ", in->name,
                               variant && *variant ? variant : "default", t < k ? "A" : t < 2 * k ? "B" : "C", t % k, i,
                               j, (unsigned long long)got, (unsigned long long)x);
                        for (int g = 0; g < nm; g++)
                            printf("%x", SA[((size_t)t * m + i) * nm + g]);
                        printf(")\n");
                        bad++;
                    }
                }
    }
    if (!bad)
        printf("ok   %-48s %-11s %d probes, %d outputs each\n", in->name, variant && *variant ? variant : "default",
               nt, m * n);
    free(A);
    free(B);
    free(C);
    free(D);
    free(SA);
    free(X);
    return bad != 0;
}

static int layout_one(mf_device *dev, const mf_instr *in, const char *variant)
{
    int m, n, k;
    char err[512];
    if (in->sparse)
        return layout_sp_one(dev, in, variant);
    mf_device_tile_shape(dev, in, variant, &m, &n, &k);
    int nt = 2 * k + 1;
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
           ed = mf_abi_elem_bytes(in->fd);
    unsigned char *A = calloc((size_t)nt * m * k, ea), *B = calloc((size_t)nt * n * k, eb),
                  *C = calloc((size_t)nt * m * n, ec), *D = calloc((size_t)nt * m * n, ed);
    uint64_t *X = calloc((size_t)nt * m * n, sizeof *X);
    /* probe s < k (A probes): A[i][(i+s)%k] = 2^-(i/k); B[kk][j] = (1+(kk%4)/4) * 2^(kk/4)
     *   => D[i][j] = (1 + (ki%4)/4) * 2^(ki/4 - i/k), ki = (i+s)%k, for every j.
     * probe k+s (B probes): B[(j+s)%k][j] = 2^-(j/k); A[i][kk] = (1+(kk%4)/4) * 2^(kk/4)
     *   => D[i][j] = (1 + (kj%4)/4) * 2^(kj/4 - j/k) for every i.
     * probe 2k (C probe): A = B = 0, C[i][j] distinct per (i, j) => D = C. */
    /* integer rows: A[i][ki] = 1 (b1: all ones) against B[kk][j] = int_probe(kk)
     * gives D[i][j] = int_probe_val(ki); the B probes likewise, C passed through */
    const int isint = mf_format_is_int(in->fa);
    for (int s = 0; isint && s < k; s++) {
        size_t ta = (size_t)s, tb = (size_t)(k + s);
        for (int i = 0; i < m; i++) {
            mf_abi_set(in->fa, A, (ta * m + i) * k + (i + s) % k, int_one(in->fa));
            for (int kk = 0; kk < k; kk++)
                mf_abi_set(in->fa, A, (tb * m + i) * k + kk, int_probe_bits(in->fa, kk));
        }
        for (int j = 0; j < n; j++) {
            mf_abi_set(in->fb, B, (tb * n + j) * k + (j + s) % k, int_one(in->fb));
            for (int kk = 0; kk < k; kk++)
                mf_abi_set(in->fb, B, (ta * n + j) * k + kk, int_probe_bits(in->fb, kk));
        }
        /* .xor.popc: the zero words count too: sum of popc(B) = S = k(k+1)/2 over
         * all words, the probed word counts 32 - v instead of v: 32 + S - 2v */
        const int xr = in->fa == MF_FMT_B1 && (in->x & MF_INT_XOR);
        const int64_t S = (int64_t)k * (k + 1) / 2;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int64_t va = int_probe_val(in->fb, (i + s) % k), vb = int_probe_val(in->fa, (j + s) % k);
                X[(ta * m + i) * n + j] = (uint64_t)(xr ? 32 + S - 2 * va : va);
                X[(tb * m + i) * n + j] = (uint64_t)(xr ? 32 + S - 2 * vb : vb);
            }
    }
    for (int s = 0; !isint && s < k; s++) {
        size_t ta = (size_t)s, tb = (size_t)(k + s);
        for (int i = 0; i < m; i++) {
            int ki = (i + s) % k;
            mf_abi_set(in->fa, A, (ta * m + i) * k + ki, probe_bits(in->fa, 0, -(i / k)));
            for (int kk = 0; kk < k; kk++)
                mf_abi_set(in->fa, A, (tb * m + i) * k + kk, probe_bits(in->fa, kk % 4, kk / 4));
        }
        for (int j = 0; j < n; j++) {
            int kj = (j + s) % k;
            mf_abi_set(in->fb, B, (tb * n + j) * k + kj, probe_bits(in->fb, 0, -(j / k)));
            for (int kk = 0; kk < k; kk++)
                mf_abi_set(in->fb, B, (ta * n + j) * k + kk, probe_bits(in->fb, kk % 4, kk / 4));
        }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                int ki = (i + s) % k, kj = (j + s) % k;
                X[(ta * m + i) * n + j] = probe_bits(in->fd, ki % 4, ki / 4 - i / k);
                X[(tb * m + i) * n + j] = probe_bits(in->fd, kj % 4, kj / 4 - j / k);
            }
    }
    size_t tc = (size_t)2 * k;
    for (int idx = 0; idx < m * n; idx++) {
        /* distinct values that every output conversion keeps exactly (RZ-E8M13
         * keeps 13 fraction bits): f32 (1 + (idx % 8192)/8192) * 2^(idx / 8192) */
        uint64_t c = isint ? 0x10000u + (uint64_t)idx
                     : in->fc == MF_FMT_F16 ? 0x0400u + (uint64_t)idx
                     : in->fc == MF_FMT_F64 ? 0x3FF0000000000000ull + ((uint64_t)idx << 20)
                                            : 0x3F800000u + ((uint64_t)(idx & 8191) << 10) + ((uint64_t)(idx >> 13) << 23);
        mf_abi_set(in->fc, C, tc * m * n + idx, c);
        X[tc * m * n + idx] = c;
    }
    int bad = 0;
    memset(D, 0xA5, (size_t)nt * m * n * ed); /* poison: every element must be written */
    if (mf_device_run_tiles(dev, in, variant, (size_t)nt, A, B, C, NULL, NULL, D, err, sizeof err)) {
        printf("FAIL %s [%s]: %s\n", in->name, variant ? variant : "", err);
        bad = 1;
    } else {
        for (int t = 0; t < nt && bad < 5; t++)
            for (int i = 0; i < m && bad < 5; i++)
                for (int j = 0; j < n && bad < 5; j++) {
                    uint64_t got = mf_abi_get(in->fd, D, ((size_t)t * m + i) * n + j), x = X[((size_t)t * m + i) * n + j];
                    if (got != x) {
                        printf("FAIL %s [%s]: %s probe %d: D[%d][%d] = %llx, expected %llx\n", in->name,
                               variant && *variant ? variant : "default", t < k ? "A" : t < 2 * k ? "B" : "C",
                               t % k, i, j, (unsigned long long)got, (unsigned long long)x);
                        bad++;
                    }
                }
    }
    if (!bad)
        printf("ok   %-48s %-11s %d probes, %d outputs each\n", in->name, variant && *variant ? variant : "default",
               nt, m * n);
    free(A);
    free(B);
    free(C);
    free(D);
    free(X);
    return bad != 0;
}

/* ---------------------------------------------------------------- vs-model */

typedef struct job {
    const mf_instr *in;
    const mf_instr *model;   /* the model's row: in, or its operand form (mf_variant_model_row) */
    int m, n, k;
    const void *A, *B, *C, *D, *SA;
    size_t t0, t1;
    long long mismatches;
    int nsamples;
    mf_case samples[4];
    uint64_t sample_d[4];
} job;

typedef struct genjob {
    const mf_instr *in;
    int m, n, k;
    uint64_t seed, first;
    size_t t0, t1;
    unsigned char *A, *B, *C, *SA;   /* SA: a sparse row's metadata (else NULL) */
} genjob;

static void *gen_range(void *arg)
{
    genjob *g = arg;
    const mf_instr *in = g->in;
    size_t n = g->t1 - g->t0;
    gen_fill_tiles(in, g->m, g->n, g->k, g->seed, g->first + g->t0, n,
                     g->A + g->t0 * g->m * g->k * mf_abi_elem_bytes(in->fa),
                     g->B + g->t0 * g->n * g->k * mf_abi_elem_bytes(in->fb),
                     g->C + g->t0 * g->m * g->n * mf_abi_elem_bytes(in->fc),
                     g->SA ? g->SA + g->t0 * g->m * in->n_meta : NULL, NULL);
    return NULL;
}

static void *eval_range(void *arg)
{
    job *j = arg;
    mf_case cs;
    for (size_t t = j->t0; t < j->t1; t++)
        for (int i = 0; i < j->m; i++)
            for (int jj = 0; jj < j->n; jj++) {
                mf_tile_get_case(j->in, j->m, j->n, j->k, j->A, j->B, j->C, j->SA, NULL, t, i, jj, &cs);
                uint64_t d = mf_abi_get(j->in->fd, j->D, (t * j->m + (size_t)i) * j->n + (size_t)jj);
                if (!mf_output_equal(j->model, mf_eval(j->model, &cs), d)) {
                    if (j->nsamples < 4) {
                        j->samples[j->nsamples] = cs;
                        j->sample_d[j->nsamples++] = d;
                    }
                    j->mismatches++;
                }
            }
    return NULL;
}

static int vs_model_one(mf_device *dev, const mf_instr *in, const char *variant, const opts *o, FILE *mis,
                        double deadline, long long *tiles_out)
{
    int m, n, k;
    char err[512];
    mf_device_tile_shape(dev, in, variant, &m, &n, &k);
    /* the model's row: an operand form that changes the arithmetic has its own (neg_a, neg_b, no_c) */
    mf_instr mrow = *in;
    if (variant && *variant && mf_variant_model_row(in, variant, &mrow)) {
        printf("FAIL %s: no model row for variant %s\n", in->name, variant);
        return 1;
    }
    /* tiles: -runs, or enough for -cases */
    const long long runs = o->cases > 0 ? (o->cases + (long long)m * n - 1) / ((long long)m * n) : o->runs;
    size_t batch = (size_t)(1 << 21) / ((size_t)m * n); /* ~2M outputs per batch */
    if (batch > (size_t)runs)
        batch = (size_t)runs;
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
           ed = mf_abi_elem_bytes(in->fd);
    unsigned char *A = malloc(batch * m * k * ea), *B = malloc(batch * n * k * eb), *C = malloc(batch * m * n * ec),
                  *D = malloc(batch * m * n * ed);
    unsigned char *SA = in->sparse ? malloc(batch * m * in->n_meta) : NULL;
    int T = (int)o->threads;
    job *jobs = calloc((size_t)T, sizeof *jobs);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    long long mism = 0, done = 0;
    double t_dev = 0, t_model = 0, t_gen = 0;
    int rc = 0;
    if (o->max_instr_time > 0 && (deadline <= 0 || now() + (double)o->max_instr_time < deadline))
        deadline = now() + (double)o->max_instr_time;
    while (done < runs && (deadline <= 0 || now() < deadline)) {
        size_t nt = (size_t)(runs - done) < batch ? (size_t)(runs - done) : batch;
        double t0 = now();
        genjob *gj = calloc((size_t)T, sizeof *gj);
        for (int w = 0; w < T; w++) {
            gj[w] = (genjob){in, m, n, k, (uint64_t)o->seed, (uint64_t)done, nt * w / T, nt * (w + 1) / T, A, B, C, SA};
            pthread_create(&th[w], NULL, gen_range, &gj[w]);
        }
        for (int w = 0; w < T; w++)
            pthread_join(th[w], NULL);
        free(gj);
        double t1 = now();
        if (mf_device_run_tiles(dev, in, variant, nt, A, B, C, SA, NULL, D, err, sizeof err)) {
            printf("FAIL %s: %s\n", in->name, err);
            rc = 1;
            break;
        }
        double t2 = now();
        for (int w = 0; w < T; w++) {
            jobs[w] = (job){in, &mrow, m, n, k, A, B, C, D, SA, nt * w / T, nt * (w + 1) / T, 0, 0, {{0}}, {0}};
            pthread_create(&th[w], NULL, eval_range, &jobs[w]);
        }
        for (int w = 0; w < T; w++) {
            pthread_join(th[w], NULL);
            mism += jobs[w].mismatches;
            for (int s = 0; s < jobs[w].nsamples && mis; s++) {
                char line[16384], hex[24];
                const char *form = mf_instr_form_name(&mrow);
                mf_vec_format_value(in->fd, mf_eval(&mrow, &jobs[w].samples[s]), hex, sizeof hex);
                mf_vec_format_case(in, &jobs[w].samples[s], &jobs[w].sample_d[s], line, sizeof line);
                fprintf(mis, "instr %s%s%s\n# model d=%s (seed %lld%s%s)\n%s\n", in->name, form ? " form=" : "",
                        form ? form : "", hex, o->seed, variant && *variant ? ", variant " : "",
                        variant ? variant : "", line);
            }
        }
        t_gen += t1 - t0;
        t_dev += t2 - t1;
        t_model += now() - t2;
        done += (long long)nt;
    }
    long long cases = done * m * n;
    printf("%s %-48s %-5s tiles=%-9lld cases=%-11lld mismatches=%-8lld gen %.1fs device %.2fs model %.1fs (%.3g cases/s)\n",
           mism || rc ? "FAIL" : "ok  ", in->name, variant && *variant ? variant : "-", done, cases, mism, t_gen, t_dev,
           t_model, t_model > 0 ? (double)cases / t_model : 0.0);
    fflush(stdout);
    *tiles_out = done;
    free(A);
    free(B);
    free(C);
    free(D);
    free(SA);
    free(jobs);
    free(th);
    return rc || mism;
}

/* ---------------------------------------------------------------- variants */

static int variants_one(mf_device *dev, const mf_instr *in, const opts *o)
{
    const int N = 256, K = in->k, M = 64, S = N / 8, NM = in->sparse ? in->n_meta : 0;
    size_t T = (size_t)o->runs;
    char err[512];
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
           ed = mf_abi_elem_bytes(in->fd);
    unsigned char *A = malloc(T * M * K * ea), *B = malloc(T * N * K * eb), *C = malloc(T * M * N * ec);
    unsigned char *D[4], *A8 = malloc(T * S * M * K * ea), *B8 = malloc(T * S * 8 * K * eb),
                         *C8 = malloc(T * S * M * 8 * ec);
    /* wgmma.sp: the metadata of A (M x n_meta bytes a tile), the same for the 32 N=8 tiles */
    unsigned char *SA = NM ? malloc(T * M * NM) : NULL, *SA8 = NM ? malloc(T * S * M * NM) : NULL;
    for (int v = 0; v < 4; v++)
        D[v] = malloc(T * M * N * ed);
    gen_fill_tiles(in, M, N, K, (uint64_t)o->seed, 0, T, A, B, C, SA, NULL);
    /* N=256 tile t = 32 N=8 tiles (t, s): same A, columns 8s..8s+7 of B and C */
    for (size_t t = 0; t < T; t++)
        for (int s = 0; s < S; s++) {
            size_t u = t * S + (size_t)s;
            memcpy(A8 + u * M * K * ea, A + t * M * K * ea, (size_t)M * K * ea);
            if (NM)
                memcpy(SA8 + u * M * NM, SA + t * M * NM, (size_t)M * NM);
            memcpy(B8 + u * 8 * K * eb, B + (t * N + (size_t)s * 8) * K * eb, (size_t)8 * K * eb);
            for (int i = 0; i < M; i++)
                memcpy(C8 + (u * M + i) * 8 * ec, C + ((t * M + i) * N + (size_t)s * 8) * ec, 8 * ec);
        }
    const char *names[4] = {"n256", "n256,a_reg", "", "a_reg"};
    int rc = 0;
    for (int v = 0; v < 4 && !rc; v++) {
        int big = v < 2;
        unsigned char *out = big ? D[v] : malloc(T * S * M * 8 * ed);
        if (mf_device_run_tiles(dev, in, names[v], big ? T : T * S, big ? A : A8, big ? B : B8, big ? C : C8,
                                big ? SA : SA8, NULL, out, err, sizeof err)) {
            printf("FAIL %s [%s]: %s\n", in->name, names[v], err);
            rc = 1;
        }
        if (!big) { /* back into N=256 order */
            for (size_t t = 0; t < T; t++)
                for (int s = 0; s < S; s++)
                    for (int i = 0; i < M; i++)
                        memcpy(D[v] + ((t * M + i) * N + (size_t)s * 8) * ed, out + ((t * S + s) * M + i) * 8 * ed,
                               8 * ed);
            free(out);
        }
    }
    long long diff[4] = {0, 0, 0, 0}, model_bad = 0;
    size_t outs = T * M * N;
    for (size_t e = 0; e < outs && !rc; e++)
        for (int v = 1; v < 4; v++)
            if (mf_abi_get(in->fd, D[v], e) != mf_abi_get(in->fd, D[0], e))
                diff[v]++;
    /* and the N=256 outputs against the model, on the first tile */
    mf_case cs;
    for (int i = 0; i < M && !rc; i++)
        for (int j = 0; j < N; j++) {
            mf_tile_get_case(in, M, N, K, A, B, C, SA, NULL, 0, i, j, &cs);
            if (!mf_output_equal(in, mf_eval(in, &cs), mf_abi_get(in->fd, D[0], (size_t)i * N + j)))
                model_bad++;
        }
    int bad = rc || diff[1] || diff[2] || diff[3] || model_bad;
    printf("%s %-40s %zu N=256 tiles (%zu cases): bitwise differences vs n256: n256,a_reg %lld, n8 %lld, n8 a_reg %lld;"
           " model mismatches on tile 0: %lld\n",
           bad ? "FAIL" : "ok  ", in->name, T, outs, diff[1], diff[2], diff[3], model_bad);
    free(A);
    free(B);
    free(C);
    free(A8);
    free(B8);
    free(C8);
    free(SA);
    free(SA8);
    for (int v = 0; v < 4; v++)
        free(D[v]);
    return bad;
}

/* ------------------------------------------------------------------ forms */

/* wgmma's operand forms (variants neg_a, neg_b, neg_ab, no_c): the default
 * generator's tiles through each form's wrapper, every output against the
 * model's row for the form (mf_variant_model_row: the hypotheses of the
 * README), and against the default wrapper on inputs negated by hand (the
 * sign bits of A and/or B flipped here), which needs no model at all. */
static int forms_one(mf_device *dev, const mf_instr *in, const opts *o)
{
    const int M = in->m, N = in->n, K = in->k;
    size_t T = (size_t)o->runs;
    char err[512];
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
           ed = mf_abi_elem_bytes(in->fd);
    unsigned char *A = malloc(T * M * K * ea), *B = malloc(T * N * K * eb), *C = malloc(T * M * N * ec),
                  *D = malloc(T * M * N * ed), *An = malloc(T * M * K * ea), *Bn = malloc(T * N * K * eb),
                  *Dn = malloc(T * M * N * ed);
    unsigned char *SA = in->sparse ? malloc(T * M * in->n_meta) : NULL;   /* wgmma.sp: the metadata */
    gen_fill_tiles(in, M, N, K, (uint64_t)o->seed, 0, T, A, B, C, SA, NULL);
    int bad = 0, tried = 0;
    for (int f = 0; mf_wgmma_form_variants[f]; f++) {
        const char *vn = mf_wgmma_form_variants[f];
        mf_instr row;
        if (!mf_device_supports(dev, in, vn) || mf_variant_model_row(in, vn, &row))
            continue;
        tried++;
        if (mf_device_run_tiles(dev, in, vn, T, A, B, C, SA, NULL, D, err, sizeof err)) {
            printf("FAIL %s [%s]: %s\n", in->name, vn, err);
            bad++;
            continue;
        }
        long long model_bad = 0, hand_bad = -1, alt_neg_zero = 0, alt_plus_c = 0;
        mf_case cs;
        /* no_c's alternative hypotheses, counted beside the model's (README):
         * -0 from an all -0 product sum (no_c_neg_zero = 1), and c = +0 read
         * (the row itself on c = +0, whose zero c takes e_zero) */
        mf_instr row_nz = row;
        row_nz.no_c_neg_zero = 1;
        for (size_t t = 0; t < T; t++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    mf_tile_get_case(in, M, N, K, A, B, C, SA, NULL, t, i, j, &cs);
                    uint64_t d = mf_abi_get(in->fd, D, (t * M + i) * N + j);
                    if (!mf_output_equal(&row, mf_eval(&row, &cs), d))
                        model_bad++;
                    if (row.no_c) {
                        alt_neg_zero += !mf_output_equal(&row_nz, mf_eval(&row_nz, &cs), d);
                        cs.c = 0;
                        alt_plus_c += !mf_output_equal(in, mf_eval(in, &cs), d);
                    }
                }
        if (row.neg_a || row.neg_b) { /* the default wrapper on negated inputs */
            const int sa = mf_format_get(in->fa)->bits - 1, sb = mf_format_get(in->fb)->bits - 1;
            for (size_t q = 0; q < T * M * K; q++)
                mf_abi_set(in->fa, An, q, mf_abi_get(in->fa, A, q) ^ (row.neg_a ? UINT64_C(1) << sa : 0));
            for (size_t q = 0; q < T * N * K; q++)
                mf_abi_set(in->fb, Bn, q, mf_abi_get(in->fb, B, q) ^ (row.neg_b ? UINT64_C(1) << sb : 0));
            hand_bad = 0;
            if (mf_device_run_tiles(dev, in, NULL, T, An, Bn, C, SA, NULL, Dn, err, sizeof err)) {
                printf("FAIL %s: %s\n", in->name, err);
                hand_bad = 1;
            } else {
                for (size_t e = 0; e < T * M * N; e++)
                    if (!mf_output_equal(in, mf_abi_get(in->fd, D, e), mf_abi_get(in->fd, Dn, e)))
                        hand_bad++;
            }
        }
        int b = model_bad || hand_bad > 0;
        bad += b;
        printf("%s %-44s %-6s %zu tiles: model mismatches %lld", b ? "FAIL" : "ok  ", in->name, vn, T, model_bad);
        if (hand_bad >= 0)
            printf(", differences from the default form on inputs negated here %lld", hand_bad);
        if (row.no_c)
            printf("; alternatives: -0 from all -0 products %lld mismatches, c = +0 read %lld", alt_neg_zero,
                   alt_plus_c);
        printf("\n");
    }
    free(A);
    free(B);
    free(C);
    free(D);
    free(An);
    free(Bn);
    free(Dn);
    free(SA);
    if (!tried)
        printf("SKIP %s: no operand-form wrappers\n", in->name);
    return bad;
}

/* ------------------------------------------------------------------ sparse */

/* The model rows of the sparse questions: the table's hypothesis and each
 * alternative (mmafuzz_model.h, mf_sp_model). */
static const char *const sp_model_names[MF_SPM_COUNT] = {"kept, K order (hypothesis)", "(a) metadata order",
                                                          "(b) chunks of logical K", "(c) dense on the logical row"};

/* Tiles T of `in` (A, B, C, SA) through every selector; mismatches against
 * each model row; bitwise differences from selector 0. */
static int sparse_pass(mf_device *dev, const mf_instr *in, const char *what, size_t T, const unsigned char *A,
                       const unsigned char *B, const unsigned char *C, const unsigned char *SA, FILE *mis)
{
    const int M = in->m, N = in->n, K = in->k;
    char err[512];
    size_t ed = mf_abi_elem_bytes(in->fd);
    unsigned char *D0 = malloc(T * M * N * ed), *D = malloc(T * M * N * ed);
    mf_device_form form;
    mf_device_form_of(in, &form);
    int bad = 0;
    mf_instr rows[MF_SPM_COUNT];
    for (int v = 0; v < MF_SPM_COUNT; v++) {
        rows[v] = *in;
        rows[v].sp_model = (uint8_t)v;
    }
    for (int sv = 0; form.variants[sv]; sv++) {
        const char *vn = form.variants[sv];
        int vm, vnn, vk;   /* wgmma.sp: the selector and a_reg here, not the N = 256 variants */
        if (!mf_device_supports(dev, in, vn) || mf_device_tile_shape(dev, in, vn, &vm, &vnn, &vk) || vnn != N)
            continue;
        unsigned char *out = sv ? D : D0;
        if (mf_device_run_tiles(dev, in, vn, T, A, B, C, SA, NULL, out, err, sizeof err)) {
            printf("FAIL %s [%s]: %s\n", in->name, vn, err);
            bad++;
            continue;
        }
        long long diff = 0, model[MF_SPM_COUNT] = {0};
        int logged = 0;
        mf_case cs;
        for (size_t t = 0; t < T; t++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    size_t e = (t * M + i) * N + j;
                    uint64_t d = mf_abi_get(in->fd, out, e);
                    if (sv) {
                        diff += d != mf_abi_get(in->fd, D0, e);
                        continue;
                    }
                    mf_tile_get_case(in, M, N, K, A, B, C, SA, NULL, t, i, j, &cs);
                    for (int v = 0; v < MF_SPM_COUNT; v++) {
                        int agree = mf_output_equal(in, mf_eval(&rows[v], &cs), d);
                        model[v] += !agree;
                        if (!agree && v == 0 && mis && logged < 4) {
                            char line[16384];
                            mf_vec_format_case(in, &cs, &d, line, sizeof line);
                            fprintf(mis, "instr %s\n# sparse %s: device d, the hypothesis disagrees\n%s\n", in->name,
                                    what, line);
                            logged++;
                        }
                    }
                }
        if (sv) {
            printf("%s %-52s %-9s %-6s %zu tiles: bitwise differences from the default (selector 0): %lld\n", diff ? "FAIL" : "ok  ",
                   in->name, what, vn, T, diff);
            bad += diff != 0;
        } else {
            printf("%s %-52s %-9s %-6s %zu tiles (%zu cases): mismatches", model[0] ? "FAIL" : "ok  ", in->name, what,
                   "sel0", T, T * M * N);
            for (int v = 0; v < MF_SPM_COUNT; v++)
                printf("%s %s %lld", v ? "," : "", sp_model_names[v], model[v]);
            printf("\n");
            bad += model[0] != 0;
        }
    }
    free(D0);
    free(D);
    return bad;
}

/* The sparse questions on row `in` (mode "sparse", usage above). */
static int sparse_one(mf_device *dev, const mf_instr *in, const opts *o, FILE *mis)
{
    const int M = in->m, N = in->n, K = in->k;
    size_t T = (size_t)o->runs;
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc);
    unsigned char *A = malloc(T * M * K * ea), *B = malloc(T * N * K * eb), *C = malloc(T * M * N * ec),
                  *SA = malloc(T * M * in->n_meta);
    int bad = 0;
    gen_fill_tiles(in, M, N, K, (uint64_t)o->seed, 0, T, A, B, C, SA, NULL);
    bad += sparse_pass(dev, in, "generated", T, A, B, C, SA, mis);
    gen_rng r = rng_derive((uint64_t)o->seed, rng_hash_str(in->name), 99);
    if (mf_format_is_int(in->fa)) {
        /* integer rows: "extremes": every kept a and every b the format's value
         * of largest magnitude (s8 -128, u8 255, s4 -8, u4 15; pruned a 0), c
         * within 2^16 of INT32_MAX or INT32_MIN, each half the time: the kept
         * products' sum (all of one sign, |sum| up to 32 * 255 * 128 < 2^20)
         * wraps or (.satfinite) clamps whenever c is near the end it moves
         * toward, also through sm_90a's two IMMA of s4/u4 */
        const uint64_t xa = mf_format_get(in->fa)->has_sign ? UINT64_C(1) << (mf_format_get(in->fa)->bits - 1)
                                                            : (UINT64_C(1) << mf_format_get(in->fa)->bits) - 1;
        const uint64_t xb = mf_format_get(in->fb)->has_sign ? UINT64_C(1) << (mf_format_get(in->fb)->bits - 1)
                                                            : (UINT64_C(1) << mf_format_get(in->fb)->bits) - 1;
        for (size_t t = 0; t < T; t++) {
            for (int j = 0; j < N; j++)
                for (int kk = 0; kk < K; kk++)
                    mf_abi_set(in->fb, B, (t * N + j) * K + kk, xb);
            for (int i = 0; i < M; i++) {
                mf_case cs;
                for (int g = 0; g < in->n_meta; g++)
                    cs.meta[g] = SA[(t * M + i) * in->n_meta + g];
                for (int kk = 0; kk < K; kk++)
                    mf_abi_set(in->fa, A, (t * M + i) * K + kk, mf_sparse_is_kept(in, &cs, kk) ? xa : 0);
                for (int j = 0; j < N; j++) {
                    uint32_t off = rng_below(&r, 1u << 16);
                    uint64_t c = rng_below(&r, 2) ? (uint64_t)(0x7FFFFFFFu - off) : (uint64_t)(0x80000000u + off);
                    mf_abi_set(in->fc, C, (t * M + i) * N + j, c);
                }
            }
        }
        bad += sparse_pass(dev, in, "extremes", T, A, B, C, SA, mis);
        free(A);
        free(B);
        free(C);
        free(SA);
        return bad;
    }
    /* pruned Inf: +Inf in B at one K position per tile (every column); e4m3,
     * which has no Inf, its NaN */
    const uint64_t inf = in->fb == MF_FMT_F16 ? 0x7c00 : in->fb == MF_FMT_BF16 ? 0x7f80
                         : in->fb == MF_FMT_E5M2 ? 0x7c : in->fb == MF_FMT_E4M3 ? 0x7f : 0x7f800000;
    for (size_t t = 0; t < T; t++) {
        int kk = (int)rng_below(&r, (uint32_t)K);
        for (int j = 0; j < N; j++)
            mf_abi_set(in->fb, B, (t * N + j) * K + kk, inf);
    }
    bad += sparse_pass(dev, in, "prunedinf", T, A, B, C, SA, mis);
    if (in->fa == MF_FMT_E4M3 || in->fa == MF_FMT_E5M2) {   /* fp8: half an ulp of 1 in f32 is no fp8 value */
        free(A);
        free(B);
        free(C);
        free(SA);
        return bad;
    }
    /* chunks: B = 1, c = +0, each row's first kept a = 1 and its other kept a
     * drawn from {0, +h, -h}, h = half an ulp of 1 in D (2^-24 for f32, 2^-11
     * for f16): one fused sum keeps every h, chunked sums round between */
    const int eh = in->fd == MF_FMT_F16 ? -11 : -24;
    const mf_format_info *fai = mf_format_get(in->fa);
    const int fbits = in->fa == MF_FMT_TF32 ? 23 : fai->frac_bits;
    const uint64_t one_a = probe_bits(in->fa, 0, 0),
                   h = eh + fai->bias >= 1 ? (uint64_t)(eh + fai->bias) << fbits   /* 2^eh, normal or subnormal */
                                           : UINT64_C(1) << (fbits + eh + fai->bias - 1),
                   hneg = h | (UINT64_C(1) << (mf_format_get(in->fa)->bits - 1));
    memset(C, 0, T * M * N * ec);
    for (size_t t = 0; t < T; t++) {
        for (int j = 0; j < N; j++)
            for (int kk = 0; kk < K; kk++)
                mf_abi_set(in->fb, B, (t * N + j) * K + kk, probe_bits(in->fb, 0, 0));
        for (int i = 0; i < M; i++) {
            mf_case cs;
            for (int g = 0; g < in->n_meta; g++)
                cs.meta[g] = SA[(t * M + i) * in->n_meta + g];
            int first = 1;
            for (int kk = 0; kk < K; kk++) {
                uint64_t v = 0;
                if (mf_sparse_is_kept(in, &cs, kk)) {
                    uint32_t x = rng_below(&r, 4);
                    v = first ? one_a : x == 0 ? 0 : x == 3 ? hneg : h;
                    first = 0;
                }
                mf_abi_set(in->fa, A, (t * M + i) * K + kk, v);
            }
        }
    }
    bad += sparse_pass(dev, in, "chunks", T, A, B, C, SA, mis);
    free(A);
    free(B);
    free(C);
    free(SA);
    return bad;
}

/* ------------------------------------------------------------------ cases */

/* Run each case of a .vec file on the device, alone at (0,0) of a zero tile,
 * and print it with the device's d and the model's d in a comment. */
static int cases_file(mf_device *dev, const char *path)
{
    char err[512];
    mf_vec_reader *r = mf_vec_open(path, err, sizeof err);
    if (!r) {
        printf("FAIL %s\n", err);
        return 1;
    }
    mf_vec_case vc;
    int rc, bad = 0;
    const mf_instr *last = NULL;
    while ((rc = mf_vec_next(r, &vc)) == MF_VEC_CASE) {
        const mf_instr *in = vc.instr;
        const char *form = mf_instr_form_name(in);   /* `instr NAME form=F`: that operand form's wrapper */
        int m, n, k;
        if (!mf_device_supports(dev, in, form) || mf_device_tile_shape(dev, in, form, &m, &n, &k)) {
            printf("# %s: not runnable here\n", in->name);
            continue;
        }
        unsigned char *A = calloc((size_t)m * k, 8), *B = calloc((size_t)n * k, 8), *C = calloc((size_t)m * n, 8),
                      *D = calloc((size_t)m * n, 8), *SA = NULL;
        for (int kk = 0; kk < k; kk++) {
            mf_abi_set(in->fa, A, (size_t)kk, vc.cs.a[kk]);
            mf_abi_set(in->fb, B, (size_t)kk, vc.cs.b[kk]);
        }
        mf_abi_set(in->fc, C, 0, vc.cs.c);
        if (in->sparse) {   /* row 0 the case's metadata; the zero rows keep (0, 1) (tf32 0x4) */
            SA = malloc((size_t)m * in->n_meta);
            memset(SA, 0x4, (size_t)m * in->n_meta);
            memcpy(SA, vc.cs.meta, in->n_meta);
        }
        if (mf_device_run_tiles(dev, in, form, 1, A, B, C, SA, NULL, D, err, sizeof err)) {
            printf("FAIL %s\n", err);
            bad = 1;
        } else {
            uint64_t d = mf_abi_get(in->fd, D, 0), md = mf_eval(in, &vc.cs);
            char line[16384], hex[24];
            mf_vec_format_value(in->fd, md, hex, sizeof hex);
            mf_vec_format_case(in, &vc.cs, &d, line, sizeof line);
            if (in != last)
                printf("instr %s%s%s\n", in->name, form ? " form=" : "", form ? form : "");
            last = in;
            printf("# model d=%s%s\n", hex, mf_output_equal(in, md, d) ? " (agrees)" : " (DIFFERS)");
            if (in->no_c) {   /* the refuted alternative: no term for c, -0 from an all -0 product sum */
                mf_instr alt = *in;
                alt.no_c_neg_zero = 1;
                mf_vec_format_value(in->fd, mf_eval(&alt, &vc.cs), hex, sizeof hex);
                printf("# alternative (c no term of the sum) d=%s\n", hex);
            }
            if (in->sparse) {   /* the alternatives of the variant catalogue, and every selector */
                printf("# alternatives:");
                for (int v = 1; v < MF_SPM_COUNT; v++) {
                    mf_instr alt = *in;
                    alt.sp_model = (uint8_t)v;
                    mf_vec_format_value(in->fd, mf_eval(&alt, &vc.cs), hex, sizeof hex);
                    printf("%s %s d=%s", v > 1 ? "," : "", sp_model_names[v], hex);
                }
                mf_device_form form;
                mf_device_form_of(in, &form);
                printf("; selectors:");
                for (int sv = 0; form.variants[sv]; sv++) {
                    int vm, vnn, vk;   /* the tile shape of the arrays here (wgmma.sp: not N = 256) */
                    if (mf_device_tile_shape(dev, in, form.variants[sv], &vm, &vnn, &vk) || vnn != n || vm != m)
                        continue;
                    unsigned char *Dv = calloc((size_t)m * n, 8);
                    if (!mf_device_run_tiles(dev, in, form.variants[sv], 1, A, B, C, SA, NULL, Dv, err, sizeof err)) {
                        mf_vec_format_value(in->fd, mf_abi_get(in->fd, Dv, 0), hex, sizeof hex);
                        printf(" %d:%s", sv, hex);
                    }
                    free(Dv);
                }
                printf("\n");
            }
            printf("%s\n", line);
        }
        free(SA);
        free(A);
        free(B);
        free(C);
        free(D);
    }
    if (rc == MF_VEC_ERROR || rc == MF_VEC_UNKNOWN) {
        printf("FAIL %s\n", mf_vec_error(r));
        bad = 1;
    }
    mf_vec_close(r);
    return bad;
}

/* ---------------------------------------------------------------- main */

static int parse_long(const char *s, long long *v)
{
    char *end;
    *v = strtoll(s, &end, 0);
    return end != s && !*end;
}

int main(int argc, char **argv)
{
    opts o = {"cuda", NULL, NULL, 0, 1, 0, 0, 0, 0, 0, 0};
    const char *mode = argc > 1 ? argv[1] : "";
    const char *cases_path = NULL;
    int first = 2;
    if (!strcmp(mode, "cases") && argc > 2) {
        cases_path = argv[2];
        first = 3;
    }
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (!strcmp(a, "--device")) o.device = v;
        else if (!strcmp(a, "--instr")) o.pattern = v;
        else if (!strcmp(a, "--mismatches")) o.mismatch_path = v;
        else if (!strcmp(a, "-runs")) ok = ok && parse_long(v, &o.runs);
        else if (!strcmp(a, "-seed")) ok = ok && parse_long(v, &o.seed);
        else if (!strcmp(a, "-threads")) ok = ok && parse_long(v, &o.threads);
        else if (!strcmp(a, "-max_total_time")) ok = ok && parse_long(v, &o.max_time);
        else if (!strcmp(a, "-max_instr_time")) ok = ok && parse_long(v, &o.max_instr_time);
        else if (!strcmp(a, "-cases")) ok = ok && parse_long(v, &o.cases) && o.cases > 0;
        else if (!strcmp(a, "--all-variants") || !strcmp(a, "--forms-only")) {
            o.all_variants = 1;
            o.forms_only |= !strcmp(a, "--forms-only");
            continue;
        }
        else ok = 0;
        if (!ok) {
            fprintf(stderr, "test_gpu: bad argument '%s'\n", a);
            return 2;
        }
        i++;
    }
    if (strcmp(mode, "layout") && strcmp(mode, "vs-model") && strcmp(mode, "variants") && strcmp(mode, "forms") &&
        strcmp(mode, "sparse") && !cases_path) {
        fprintf(stderr, "usage: test_gpu layout|vs-model|variants|forms|sparse|cases FILE [--device SPEC] [--instr PATTERN] [-runs N]\n"
                        "       [-seed S] [-threads T] [-max_total_time SEC] [-max_instr_time SEC] [--mismatches FILE]\n"
                        "       [-cases N] [--all-variants | --forms-only]   (vs-model)\n");
        return 2;
    }
    if (o.threads <= 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = nc > 0 ? nc : 1;
    }
    if (o.runs <= 0)
        o.runs = !strcmp(mode, "variants") ? 16 : !strcmp(mode, "forms") || !strcmp(mode, "sparse") ? 256 : 512;
    const char *req = getenv("MMAFUZZ_REQUIRE_GPU");
    int require = req && !strcmp(req, "1");
    mf_device *dev;
    char err[512];
    if (mf_device_open(o.device, &dev, err, sizeof err)) {
        printf("%s: %s\n", require ? "FAIL (MMAFUZZ_REQUIRE_GPU=1)" : "SKIP", err);
        return require ? 1 : 77;
    }
    const mf_device_info *di = mf_device_get_info(dev);
    printf("# %s on %s (%s), %s, %s\n", mode, di->name, di->arch, di->driver, di->runtime);
    FILE *mis = NULL;
    if (o.mismatch_path && !(mis = fopen(o.mismatch_path, "w"))) {
        perror(o.mismatch_path);
        return 2;
    }
    if (cases_path) {
        int bad = cases_file(dev, cases_path);
        mf_device_close(dev);
        return bad;
    }
    double deadline = o.max_time > 0 ? now() + (double)o.max_time : 0;
    int failed = 0, ran = 0;
    long long total_tiles = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        if (!matches(o.pattern, in->name) || !mf_device_supports(dev, in, NULL))
            continue;
        mf_ptx_kind kind = mf_ptx_kind_of(in, NULL);
        mf_device_form form;
        mf_device_form_of(in, &form);
        if (!strcmp(mode, "layout")) {
            /* wgmma: N and where A comes from; mma.sp: every sparsity selector */
            const char *const *vl =
                kind == MF_PTX_WGMMA || kind == MF_PTX_MMA_SP || kind == MF_PTX_WGMMA_SP ? form.variants : NULL;
            for (int v = 0; vl ? vl[v] != NULL : v == 0; v++) {
                const char *vn = vl ? vl[v] : NULL;
                if (mf_device_supports(dev, in, vn)) {
                    failed += layout_one(dev, in, vn);
                    ran++;
                }
            }
            /* the transposed shared-memory layouts (imm-trans), which move data only */
            for (int v = 0; (kind == MF_PTX_WGMMA || kind == MF_PTX_WGMMA_SP) && mf_wgmma_form_variants[v]; v++) {
                const char *vn = mf_wgmma_form_variants[v];
                if (!mf_variant_changes_arithmetic(vn) && mf_device_supports(dev, in, vn)) {
                    failed += layout_one(dev, in, vn);
                    ran++;
                }
            }
        } else if (!strcmp(mode, "vs-model")) {
            /* a sparse row through every selector (the same tiles each); with --all-variants, a wgmma row
             * through every variant (N, A's source, selector) and then every operand form it takes */
            const int wg = kind == MF_PTX_WGMMA || kind == MF_PTX_WGMMA_SP;
            const char *list[64];   /* the variants to run; NULL: the default */
            int nl = 0;
            if (!o.all_variants)
                for (int v = 0; in->sparse ? form.variants[v] != NULL : v == 0; v++)
                    list[nl++] = in->sparse ? form.variants[v] : NULL;
            /* --all-variants: not the default (the rows themselves: mmafuzz run) */
            for (int v = 0; o.all_variants && (in->sparse || wg) && !o.forms_only && form.variants[v]; v++)
                if (*form.variants[v] && nl < 64)
                    list[nl++] = form.variants[v];
            for (int v = 0; o.all_variants && wg && mf_wgmma_form_variants[v]; v++)
                if (mf_variant_form_ok(in, mf_wgmma_form_variants[v]) && nl < 64)
                    list[nl++] = mf_wgmma_form_variants[v];
            for (int v = 0; v < nl; v++) {
                const char *vn = list[v];
                long long t = 0;
                if (!mf_device_supports(dev, in, vn))
                    continue;
                failed += vs_model_one(dev, in, vn, &o, mis, deadline, &t);
                total_tiles += t;
                ran++;
            }
        } else if (!strcmp(mode, "sparse")) {
            if (in->sparse) {
                failed += sparse_one(dev, in, &o, mis);
                ran++;
            }
        } else if ((kind == MF_PTX_WGMMA || kind == MF_PTX_WGMMA_SP) && !strcmp(mode, "forms")) {
            failed += forms_one(dev, in, &o);
            ran++;
        } else if (kind == MF_PTX_WGMMA || kind == MF_PTX_WGMMA_SP) {
            failed += variants_one(dev, in, &o);
            ran++;
        }
    }
    mf_device_close(dev);
    if (mis)
        fclose(mis);
    if (!ran) {
        printf("%s: nothing of '%s' runs on this device\n", require ? "FAIL" : "SKIP", o.pattern ? o.pattern : "*");
        return require ? 1 : 77;
    }
    printf("%d of %d %s checks failed%s\n", failed, ran, mode, total_tiles ? "" : "");
    if (total_tiles)
        printf("total tiles through device and model: %lld\n", total_tiles);
    return failed ? 1 : 0;
}

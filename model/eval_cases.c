/*
 * eval_cases.c - batches of independent cases (mf_eval_cases): every case its
 * own A, B and C, the result of each exactly mf_eval's.
 *
 * T-FDPA rows without scales, whose formats and parameters fit 32-bit lanes,
 * run eight cases at a time, one case per lane: each lane decodes its own
 * inputs from their bits, and the special values of T-FDPA step 1 (NaN, Inf,
 * 0 * Inf, +Inf with -Inf) are classified in the lanes too, so that a batch
 * of random bits, most of whose cases hold a NaN or an Inf, stays on the
 * lane path.  A lane computes what chunk_core in family_tfdpa_fast.c
 * computes (DOMAIN section 3, T-FDPA steps 1-7); every parameter comes from
 * the row given (F, L, e_zero, rho, zero_plus), never from its place in the
 * table.  Other rows, and the last n % 8 cases, go through mf_eval one case
 * at a time.  tests/model/test_eval_cases.c holds the two against each other.
 */
#include "internal.h"
#include "lanes.h"

#include <string.h>

#define LANES 8

/* ------------------------------------------------------- any family */

/* Cases [lo, hi) one at a time: mf_eval for a table row, mf_eval_trace (the
 * same results, without the per-row plan) for a copy of one. */
static void cases_by_case(const mf_instr *in, size_t lo, size_t hi, const void *A, const void *B, const void *C,
                          const void *SA, const void *SB, void *D)
{
    const size_t K = in->k, S = in->n_scales;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd), es = S ? mf_tile_elem_bytes(in->fs) : 1;
    const uintptr_t p = (uintptr_t)in, t0 = (uintptr_t)mf_instr_table,
                    t1 = (uintptr_t)(mf_instr_table + mf_instr_count);
    const int table_row = p >= t0 && p < t1;
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    for (size_t i = lo; i < hi; i++) {
        for (size_t q = 0; q < K; q++) {
            cs.a[q] = mf_elem_get(ea, A, i * K + q);
            cs.b[q] = mf_elem_get(eb, B, i * K + q);
        }
        for (size_t q = 0; q < S; q++) {
            cs.sa[q] = mf_elem_get(es, SA, i * S + q);
            cs.sb[q] = mf_elem_get(es, SB, i * S + q);
        }
        if (in->sparse && SA)   /* a sparse row's SA is its metadata: n_meta bytes per case */
            for (int q = 0; q < in->n_meta; q++)
                cs.meta[q] = ((const uint8_t *)SA)[i * in->n_meta + (size_t)q];
        cs.c = mf_elem_get(ec, C, i);
        mf_elem_set(ed, D, i, table_row ? mf_eval(in, &cs) : mf_eval_trace(in, &cs, NULL));
    }
}

/* ----------------------------------------------- T-FDPA, a case per lane */

/* An input operand of eight lanes decoded from its bits (format constants
 * fold in each kernel): significand with its hidden bit (0 for a zero),
 * exponent (emin for subnormals and zeros), and masks (all ones or zeros per
 * lane) for a negative sign, a NaN and an Inf.  NaN and Inf keep a nonzero
 * significand, so sig == 0 means a zero. */
typedef struct lane_in {
    v8u sig, neg, nan, inf;
    v8i exp;
} lane_in;

AI lane_in dec_lanes(const mf_format f, v8u x)
{
    int ebits, fbits, bias, style;   /* style: 1 IEEE Inf/NaN, 2 e4m3 (S.1111.111 NaN), 0 none */
    switch (f) {
    case MF_FMT_TF32: x = (x >> 13) & 0x7FFFF; ebits = 8; fbits = 10; bias = 127; style = 1; break;
    case MF_FMT_F16: x &= 0xFFFF; ebits = 5; fbits = 10; bias = 15; style = 1; break;
    case MF_FMT_BF16: x &= 0xFFFF; ebits = 8; fbits = 7; bias = 127; style = 1; break;
    case MF_FMT_E5M2: x &= 0xFF; ebits = 5; fbits = 2; bias = 15; style = 1; break;
    default: x &= 0xFF; ebits = 4; fbits = 3; bias = 7; style = 2; break;   /* e4m3 */
    }
    const uint32_t emax = (1u << ebits) - 1;
    const v8u e = (x >> fbits) & emax, m = x & ((1u << fbits) - 1);
    lane_in v;
    v.neg = (v8u){0} - ((x >> (ebits + fbits)) & 1);
    v.sig = m | ((v8u)(e != 0) & (1u << fbits));
    v.exp = (v8i)(e | ((v8u)(e == 0) & 1)) - bias;
    if (style == 1) {
        const v8u spec = (v8u)(e == emax);
        v.nan = spec & (v8u)(m != 0);
        v.inf = spec & ~v.nan;
    } else {
        v.nan = (v8u)((x & 0x7F) == 0x7F);
        v.inf = (v8u){0};
    }
    return v;
}

static inline __attribute__((always_inline)) int frac_of(mf_format f)
{
    return f == MF_FMT_TF32 || f == MF_FMT_F16 ? 10 : f == MF_FMT_BF16 ? 7 : f == MF_FMT_E5M2 ? 2 : 3;
}

static inline __attribute__((always_inline)) size_t bytes_of(mf_format f)
{
    return f == MF_FMT_TF32 ? 4 : f == MF_FMT_F16 || f == MF_FMT_BF16 ? 2 : 1;
}

/* The fixed parameters of a row on the lane path, from its mf_instr. */
typedef struct cases_cfg {
    int K, L, F, e_zero, zero_plus;
    int c_f32;   /* C is binary32 (else binary16) */
    int d_f32;   /* D, and c of every chunk after the first, is binary32 */
} cases_cfg;

/* Can row `in` take the lane path?  The formats of the kernels below; one
 * chunk's L aligned products, each below 2^(F+2) (a product significand has
 * 2 (fbits+1) bits and moves up to F fraction bits: F >= 2 fbits), must sum
 * below 2^31; c and D binary32 or binary16, rho rounding to D's format. */
static int cases_lanes_ok(const mf_instr *in)
{
    if (in->family != MF_T_FDPA || in->n_scales || in->k > MF_KMAX_FLOAT || in->L <= 0 || in->k % in->L ||
        mf_row_has_forms(in))
        return 0;
    const int a16 = in->fa == MF_FMT_F16 || in->fa == MF_FMT_BF16, b16 = in->fb == MF_FMT_F16 || in->fb == MF_FMT_BF16;
    const int a8 = in->fa == MF_FMT_E4M3 || in->fa == MF_FMT_E5M2, b8 = in->fb == MF_FMT_E4M3 || in->fb == MF_FMT_E5M2;
    const int tf = in->fa == MF_FMT_TF32 && in->fb == MF_FMT_TF32;
    if (!(a16 && b16) && !(a8 && b8) && !tf)
        return 0;
    if ((in->fc != MF_FMT_F32 && in->fc != MF_FMT_F16) || (in->fd != MF_FMT_F32 && in->fd != MF_FMT_F16))
        return 0;
    if (!((in->fd == MF_FMT_F32 && (in->rho == MF_RZ_FP32 || in->rho == MF_RZ_E8M13)) ||
          (in->fd == MF_FMT_F16 && in->rho == MF_RNE_FP16)))
        return 0;
    const int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    int lg = 0;
    while ((1 << lg) < in->L)
        lg++;
    return in->F >= fr && in->F <= 29 && lg + in->F + 2 <= 31;
}

/* T-FDPA steps 1-7 for eight cases: ta[q] and tb[q] hold the eight cases'
 * a[q] and b[q] (bits), c their C bits; @return their D bits. */
AI v8u cases_lanes(const v8u *ta, const v8u *tb, v8u c, const cases_cfg *g, const mf_format fa, const mf_format fb,
                   const mf_rho rho, const int K, const int L)
{
    const int up = g->F - (frac_of(fa) + frac_of(fb));
    int f32 = g->c_f32;
    for (int k0 = 0; k0 < K; k0 += L) {
        /* c decoded: sign, significand with its hidden bit, exponent; a zero c takes e_zero */
        const int cfr = f32 ? 23 : 10;
        const v8u ce_bits = f32 ? (c >> 23) & 0xFF : (c >> 10) & 0x1F;
        const uint32_t ce_max = f32 ? 0xFF : 0x1F, cbias = f32 ? 127 : 15;
        const v8u cneg = f32 ? c >> 31 : (c >> 15) & 1, cn = (v8u){0} - cneg;
        const v8u cfrac = c & ((1u << cfr) - 1);
        const v8u csig = cfrac | ((v8u)(ce_bits != 0) & (1u << cfr));
        v8i ce = (v8i)(ce_bits | ((v8u)(ce_bits == 0) & 1)) - (int32_t)cbias;
        const v8i czero = (v8i)(csig == 0);
        ce = (ce & ~czero) | (czero & g->e_zero);
        const v8u cspec = (v8u)(ce_bits == ce_max), cinf = cspec & (v8u)(cfrac == 0);
        /* step 1: NaN, +Inf and -Inf seen in the lanes (c's first) */
        v8u vn = cspec & ~cinf, vp = cinf & ~cn, vm = cinf & cn;
        /* step 2: exact products; zero products take e_zero; e_max over them and c */
        v8u P[MF_KMAX_FLOAT], NG[MF_KMAX_FLOAT];
        v8i E[MF_KMAX_FLOAT];
        v8i mx = ce;
        for (int q = 0; q < L; q++) {
            const lane_in a = dec_lanes(fa, ta[k0 + q]), b = dec_lanes(fb, tb[k0 + q]);
            const v8u p = a.sig * b.sig, pz = (v8u)(p == 0), ng = a.neg ^ b.neg;
            const v8i e = (v8i)sel_lanes(pz, (v8u){0} + (uint32_t)g->e_zero, (v8u)(a.exp + b.exp));
            const v8i gt = e > mx;
            mx = (e & gt) | (mx & ~gt);
            P[q] = p << up;
            E[q] = e;
            NG[q] = ng;
            /* any NaN or 0 * Inf is NaN; an Inf product has the sign of the product */
            const v8u az = (v8u)(a.sig == 0), bz = (v8u)(b.sig == 0), pinf = a.inf | b.inf;
            vn |= a.nan | b.nan | (a.inf & bz) | (b.inf & az);
            vp |= pinf & ~ng;
            vm |= pinf & ng;
        }
        /* steps 3-4: align to e_max, truncate to F fraction bits, sum (32 bits,
         * wrapping only in lanes whose result is special) */
        v8u acc = {0};
        for (int q = 0; q < L; q++) {
            v8i dist = mx - E[q];   /* >= 0 */
            const v8i big = dist > 31;
            dist = (dist & ~big) | (big & 31);
            const v8u t = P[q] >> (v8u)dist;
            acc += (t ^ NG[q]) - NG[q];
        }
        const v8i S = (v8i)acc;
        /* c aligned to e_max and truncated: r <= 0 moves it up (by at most
         * F - cfr bits), r > 0 down */
        const v8i r = (mx - ce) + (cfr - g->F);
        const v8i rpos = r > 0;
        v8i rr = r & rpos;
        rr = (rr & (rr <= 31)) | (31 & (rr > 31));
        const v8u tc = ((csig >> (v8u)rr) & (v8u)rpos) | ((csig << (v8u)(-r & ~rpos)) & ~(v8u)rpos);
        /* S + (-1)^cneg tc in sign and magnitude: |S| < 2^31, tc < 2^(F+1) <= 2^30 */
        const v8u sneg = (v8u)(S < 0);
        const v8u sa = (v8u)((S ^ (v8i)sneg) - (v8i)sneg);
        const v8u same = ~(sneg ^ cn), ge = (v8u)((v8i)sa >= (v8i)tc);
        const v8u mag = (same & (sa + tc)) | (~same & ((ge & (sa - tc)) | (~ge & (tc - sa))));
        v8u neg = ((same | ge) & sneg) | (~same & ~ge & cn);
        neg &= (v8u)(mag != 0) & 1;
        /* steps 5-6: rho; zero_plus */
        v8u d;
        switch (rho) {
        case MF_RZ_FP32: d = round_lanes(mag, neg, mx - g->F, 23, 23, 8, 0, g->zero_plus); break;
        case MF_RZ_E8M13: d = round_lanes(mag, neg, mx - g->F, 13, 23, 8, 0, g->zero_plus); break;
        default: d = round_lanes(mag, neg, mx - g->F, 10, 10, 5, 1, g->zero_plus); break;
        }
        /* step 1's outcome decides the lanes it holds */
        const int of16 = rho == MF_RNE_FP16;
        const v8u isnan = vn | (vp & vm), isinf = (vp | vm) & ~isnan;
        const v8u qnan = (v8u){0} + (of16 ? 0x7FFFu : 0x7FFFFFFFu), inf = (v8u){0} + (of16 ? 0x7C00u : 0x7F800000u),
                  sb = (v8u){0} + (of16 ? 0x8000u : 0x80000000u);
        d = (d & ~(isnan | isinf)) | (isnan & qnan) | (isinf & (inf | (vm & sb)));
        c = d;
        f32 = g->d_f32;
    }
    return c;
}

/* Eight consecutive cases' operand of width es (bytes), k-major: t[q][j] is
 * element q of case i0 + j. */
AI void gather8(size_t es, const void *base, size_t i0, int K, v8u *t)
{
    if (es == 2 && K % 8 == 0) {   /* 16-bit inputs: transposed in registers */
        for (int q = 0; q < K; q += 8)
            transpose8_u16((const uint16_t *)base + i0 * (size_t)K + (size_t)q, (size_t)K, t + q);
        return;
    }
    uint32_t buf[MF_KMAX_FLOAT][LANES];
    for (int j = 0; j < LANES; j++) {
        const size_t first = (i0 + (size_t)j) * (size_t)K;
        switch (es) {
        case 4: for (int q = 0; q < K; q++) buf[q][j] = ((const uint32_t *)base)[first + (size_t)q]; break;
        case 2: for (int q = 0; q < K; q++) buf[q][j] = ((const uint16_t *)base)[first + (size_t)q]; break;
        default: for (int q = 0; q < K; q++) buf[q][j] = ((const uint8_t *)base)[first + (size_t)q]; break;
        }
    }
    for (int q = 0; q < K; q++)
        LOAD8(t[q], buf[q]);
}

/* Cases [lo, hi) (hi - lo a multiple of 8), eight at a time. */
AI void groups(const cases_cfg *g, size_t lo, size_t hi, const void *A, const void *B, const void *C, void *D,
               const mf_format fa, const mf_format fb, const mf_rho rho, const int Kc, const int Lc)
{
    const int K = Kc ? Kc : g->K, L = Lc ? Lc : g->L;   /* constants where the caller knows them */
    v8u ta[MF_KMAX_FLOAT], tb[MF_KMAX_FLOAT];
    for (size_t i0 = lo; i0 < hi; i0 += LANES) {
        gather8(bytes_of(fa), A, i0, K, ta);
        gather8(bytes_of(fb), B, i0, K, tb);
        uint32_t c32[LANES];
        for (int j = 0; j < LANES; j++)
            c32[j] = g->c_f32 ? ((const uint32_t *)C)[i0 + (size_t)j] : ((const uint16_t *)C)[i0 + (size_t)j];
        v8u c;
        LOAD8(c, c32);
        c = cases_lanes(ta, tb, c, g, fa, fb, rho, K, L);
        memcpy(c32, &c, sizeof c32);
        for (int j = 0; j < LANES; j++) {
            if (g->d_f32)
                ((uint32_t *)D)[i0 + (size_t)j] = c32[j];
            else
                ((uint16_t *)D)[i0 + (size_t)j] = (uint16_t)c32[j];
        }
    }
}

typedef void (*groups_fn)(const cases_cfg *, mf_rho, size_t, size_t, const void *, const void *, const void *,
                          void *);

/* One kernel per (A format, B format) pair: the table's usual roundings and
 * shapes (K, L) as constants, so that the loops unroll and the rounding
 * folds, and one instance for any other rho, K and L. */
#define FAST(RHO, KK, LL)                                                                                    \
    if (rho == RHO && g->K == KK && g->L == LL) {                                                            \
        groups(g, lo, hi, A, B, C, D, fa, fb, RHO, KK, LL);                                                  \
        return;                                                                                              \
    }
#define PAIR_FN(X, Y, SPECIALIZED)                                                                           \
    MULTI_ISA static void groups_##X##_##Y(const cases_cfg *g, mf_rho rho, size_t lo, size_t hi, const void *A, \
                                           const void *B, const void *C, void *D)                            \
    {                                                                                                        \
        const mf_format fa = MF_FMT_##X, fb = MF_FMT_##Y;                                                    \
        SPECIALIZED                                                                                          \
        groups(g, lo, hi, A, B, C, D, fa, fb, rho, 0, 0);                                                    \
    }
PAIR_FN(F16, F16, FAST(MF_RZ_FP32, 16, 16) FAST(MF_RZ_FP32, 16, 8) FAST(MF_RZ_FP32, 8, 8)
                  FAST(MF_RNE_FP16, 16, 16) FAST(MF_RNE_FP16, 16, 8) FAST(MF_RNE_FP16, 8, 8))
PAIR_FN(F16, BF16, FAST(MF_RZ_FP32, 16, 16))
PAIR_FN(BF16, F16, FAST(MF_RZ_FP32, 16, 16))
PAIR_FN(BF16, BF16, FAST(MF_RZ_FP32, 16, 16) FAST(MF_RZ_FP32, 16, 8) FAST(MF_RZ_FP32, 8, 8))
PAIR_FN(TF32, TF32, )
PAIR_FN(E4M3, E4M3, FAST(MF_RZ_E8M13, 32, 16) FAST(MF_RNE_FP16, 32, 16))
PAIR_FN(E4M3, E5M2, )
PAIR_FN(E5M2, E4M3, )
PAIR_FN(E5M2, E5M2, FAST(MF_RZ_E8M13, 32, 16) FAST(MF_RNE_FP16, 32, 16))

static groups_fn kernel_of(mf_format fa, mf_format fb)
{
#define PICK(X, Y)                                                                                           \
    if (fa == MF_FMT_##X && fb == MF_FMT_##Y)                                                                \
        return groups_##X##_##Y;
    PICK(F16, F16) PICK(F16, BF16) PICK(BF16, F16) PICK(BF16, BF16) PICK(TF32, TF32)
    PICK(E4M3, E4M3) PICK(E4M3, E5M2) PICK(E5M2, E4M3) PICK(E5M2, E5M2)
#undef PICK
    return NULL;
}

void mf_eval_cases(const mf_instr *in, size_t n, const void *A, const void *B, const void *C, const void *SA,
                   const void *SB, void *D)
{
    size_t done = 0;
    groups_fn fn = cases_lanes_ok(in) ? kernel_of(in->fa, in->fb) : NULL;
    if (fn && n >= LANES) {
        const cases_cfg g = {
            .K = in->k,
            .L = in->L,
            .F = in->F,
            .e_zero = in->e_zero,
            .zero_plus = in->zero_plus,
            .c_f32 = in->fc == MF_FMT_F32,
            .d_f32 = in->fd == MF_FMT_F32,
        };
        done = n - n % LANES;
        fn(&g, in->rho, 0, done, A, B, C, D);
    }
    if (done < n)
        cases_by_case(in, done, n, A, B, C, SA, SB, D);
}

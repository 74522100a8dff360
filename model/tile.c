/*
 * tile.c - evaluation of whole tiles: every output element of M x N x K
 * tiles in the canonical layout of mmafuzz_model.h.
 *
 * The result of each element is exactly mf_eval's.  What a tile adds is
 * sharing: a row of A feeds N outputs and a column of B feeds M, so they are
 * decoded once per tile, and T-FDPA rows (no scales, formats of the fast
 * path) evaluate eight outputs of a row at a time, one per lane, in loops
 * the compiler turns into SIMD code.  Such a lane computes what chunk_core
 * in family_tfdpa_fast.c computes (DOMAIN section 3, T-FDPA steps 1-7),
 * special values included.
 */
#include "internal.h"
#include "lanes.h"

#include <string.h>

/* --------------------------------------------------------- any family */

/* Tile t, element by element through mf_eval (rows/columns copied once). */
static void tile_by_case(const mf_instr *in, int m, int n, int k, size_t t, const void *A, const void *B,
                         const void *C, const void *SA, const void *SB, void *D)
{
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd), es = in->n_scales ? mf_tile_elem_bytes(in->fs) : 1;
    const size_t S = in->n_scales;
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    for (int i = 0; i < m; i++) {
        size_t row = t * (size_t)m + (size_t)i;
        for (int q = 0; q < k; q++)
            cs.a[q] = mf_elem_get(ea, A, row * (size_t)k + (size_t)q);
        for (size_t q = 0; q < S; q++)
            cs.sa[q] = mf_elem_get(es, SA, row * S + q);
        if (in->sparse && SA)   /* a sparse row's SA is its metadata: n_meta bytes per row */
            for (int q = 0; q < in->n_meta; q++)
                cs.meta[q] = ((const uint8_t *)SA)[row * in->n_meta + (size_t)q];
        for (int j = 0; j < n; j++) {
            size_t col = t * (size_t)n + (size_t)j;
            for (int q = 0; q < k; q++)
                cs.b[q] = mf_elem_get(eb, B, col * (size_t)k + (size_t)q);
            for (size_t q = 0; q < S; q++)
                cs.sb[q] = mf_elem_get(es, SB, col * S + q);
            cs.c = mf_elem_get(ec, C, row * (size_t)n + (size_t)j);
            mf_elem_set(ed, D, row * (size_t)n + (size_t)j, mf_eval(in, &cs));
        }
    }
}

/* ----------------------------------------------------- T-FDPA in lanes */

#define LANES 8

/* Inputs of a tile decoded once.  A row of A stays in the packed words of
 * the decode tables (internal.h: sig | (exp+512) << 16 | cls << 26 |
 * sign << 28), taken apart as scalars in the kernels; eight columns of B are
 * split into fields, k-major so that the lanes (columns) are contiguous:
 *   b_sig  significand with its hidden bit;
 *   b_exp  exponent, ZERO_EXP for a zero (see chunk_lanes);
 *   b_neg  0 or all ones (the sign);
 *   b_cls  the class as one bit (CLS_BIT), shifted up by 4 when negative. */
typedef struct tile_dec {
    uint32_t a[MF_KMAX_FLOAT];
    uint32_t b_sig[MF_KMAX_FLOAT][LANES];
    int32_t b_exp[MF_KMAX_FLOAT][LANES];
    uint32_t b_neg[MF_KMAX_FLOAT][LANES];
    uint32_t b_cls[MF_KMAX_FLOAT][LANES];
} tile_dec;

/* The exponent given to zero inputs in the lanes: a product with a zero
 * factor lands far under every real product exponent and every c. */
#define ZERO_EXP (-(1 << 20))
#define CLS_BIT(cls) (1u << (cls))   /* MF_CLS_ZERO 1, FINITE 2, INF 4, NAN 8 */

#define W_SPECIAL (UINT32_C(1) << 27)   /* cls >= MF_CLS_INF: NaN or Inf */

/* The packed word of x in format f (the table's entry where there is one). */
static inline uint32_t dec_word(mf_format f, uint64_t x)
{
    const uint32_t *t = mf_dec_tab[f];
    if (t)
        return t[x & mf_dec_mask[f]];
    mf_value v = mf_decode(f, x);   /* tf32: 11-bit significand, exponent within 10 bits */
    return (uint32_t)v.sig | ((uint32_t)(v.exp + 512) << 16) | ((uint32_t)v.cls << 26) | ((uint32_t)v.sign << 28);
}

/* The aligned, truncated products of one chunk [k0, k0+L) in the eight lanes
 * of row dc->a: S (units 2^-F at 2^emax); *emax comes in holding the
 * exponent of each lane's c and leaves holding the chunk's maximum.  Zero
 * products take e_zero in T-FDPA step 2, but c's exponent is never below
 * e_zero (checked by lanes_ok: a zero c takes e_zero, any other c has at
 * least its format's emin), so a zero product can never raise the maximum;
 * their factors carry ZERO_EXP to keep them out of it.  Every aligned
 * product is below 2^(F+2) and L of them stay below 2^31 (lanes_ok again),
 * so the lane sums are 32-bit. */
AI void chunk_lanes(const tile_dec *dc, int k0, int L, int up, v8i *emax, v8i *S)
{
    v8u P[MF_KMAX_FLOAT];
    v8i E[MF_KMAX_FLOAT];
    v8i mx = *emax;
    v8u acc = {0};   /* unsigned: wraps (only in lanes whose result is special) */
    for (int q = k0; q < k0 + L; q++) {
        const uint32_t wa = dc->a[q], sa = wa & 0xFFFF;
        const int32_t ea = sa ? (int32_t)((wa >> 16) & 0x3FF) - 512 : ZERO_EXP;
        v8u bs;
        v8i be;
        LOAD8(bs, dc->b_sig[q]);
        LOAD8(be, dc->b_exp[q]);
        const v8i e = be + ea;
        const v8i gt = e > mx;
        mx = (e & gt) | (mx & ~gt);
        P[q - k0] = (bs * sa) << up;
        E[q - k0] = e;
    }
    for (int q = k0; q < k0 + L; q++) {
        v8i dist = mx - E[q - k0];   /* >= 0 */
        const v8i big = dist > 31;
        dist = (dist & ~big) | (big & 31);
        const v8u t = P[q - k0] >> (v8u)dist;
        v8u neg;
        LOAD8(neg, dc->b_neg[q]);
        neg ^= 0u - ((dc->a[q] >> 28) & 1);
        acc += (t ^ neg) - neg;
    }
    *emax = mx;
    *S = (v8i)acc;
}

/* T-FDPA step 1 over the products of one chunk in the eight lanes: any NaN
 * or 0 * Inf makes the lane NaN; Inf products set *pinf or *ninf by their
 * sign (the rule of special_result in family_tfdpa_fast.c).  For each class
 * of a, special_of_a lists the classes of b (CLS_BIT, shifted by b's sign)
 * that make the product NaN, +Inf and -Inf. */
typedef struct special_masks {
    uint32_t nan, pinf, ninf;
} special_masks;

static const special_masks special_of_a[8] = {
#define NAN_WITH(m) ((m) | (m) << 4)
#define B_INF_POS CLS_BIT(MF_CLS_INF)
#define B_FIN_INF_POS (CLS_BIT(MF_CLS_FINITE) | CLS_BIT(MF_CLS_INF))
    /* positive a: ZERO, FINITE, INF, NAN */
    {NAN_WITH(CLS_BIT(MF_CLS_INF) | CLS_BIT(MF_CLS_NAN)), 0, 0},
    {NAN_WITH(CLS_BIT(MF_CLS_NAN)), B_INF_POS, B_INF_POS << 4},
    {NAN_WITH(CLS_BIT(MF_CLS_ZERO) | CLS_BIT(MF_CLS_NAN)), B_FIN_INF_POS, B_FIN_INF_POS << 4},
    {0xFF, 0, 0},
    /* negative a */
    {NAN_WITH(CLS_BIT(MF_CLS_INF) | CLS_BIT(MF_CLS_NAN)), 0, 0},
    {NAN_WITH(CLS_BIT(MF_CLS_NAN)), B_INF_POS << 4, B_INF_POS},
    {NAN_WITH(CLS_BIT(MF_CLS_ZERO) | CLS_BIT(MF_CLS_NAN)), B_FIN_INF_POS << 4, B_FIN_INF_POS},
    {0xFF, 0, 0},
#undef NAN_WITH
#undef B_INF_POS
#undef B_FIN_INF_POS
};

AI void chunk_special_lanes(const tile_dec *dc, int k0, int L, v8u *nan, v8u *pinf, v8u *ninf)
{
    v8u vn = {0}, vp = {0}, vm = {0};
    for (int q = k0; q < k0 + L; q++) {
        const special_masks *sm = &special_of_a[(dc->a[q] >> 26) & 7];   /* cls | sign << 2 */
        v8u bc;
        LOAD8(bc, dc->b_cls[q]);
        vn |= bc & sm->nan;
        vp |= bc & sm->pinf;
        vm |= bc & sm->ninf;
    }
    *nan = (v8u)(vn != 0);
    *pinf = (v8u)(vp != 0);
    *ninf = (v8u)(vm != 0);
}

/* Can row `in` with K = k take the lane path? */
static int lanes_ok(const mf_instr *in, int k)
{
    if (in->n_scales || k != in->k || k > MF_KMAX_FLOAT || mf_row_has_forms(in))
        return 0;
    int L;
    if (in->family == MF_T_FDPA) {
        if (k % in->L || k / in->L > MF_KMAX_FLOAT / 4 || !mf_t_fdpa_plan(in))
            return 0;   /* the row plan: the fast formats, F and rho of chunk_core */
        L = in->L;
    } else if (in->family == MF_F16_EMU) {
        /* fp8 inputs taken as f16, two passes of k/2 (mf_eval_f16_emu), then c added in D's format */
        if ((in->fa != MF_FMT_E4M3 && in->fa != MF_FMT_E5M2) || (in->fb != MF_FMT_E4M3 && in->fb != MF_FMT_E5M2) ||
            in->fc != in->fd || k % 4 || k / 2 > in->L ||
            (in->rho != MF_RZ_FP32 && in->rho != MF_RZ_E8M13 && in->rho != MF_RNE_FP16))
            return 0;
        L = k / 2;
    } else {
        return 0;
    }
    if ((in->fc != MF_FMT_F32 && in->fc != MF_FMT_F16) || (in->fd != MF_FMT_F32 && in->fd != MF_FMT_F16))
        return 0;
    /* L aligned products below 2^(F+2) each must sum below 2^31 */
    int lg = 0;
    while ((1 << lg) < L)
        lg++;
    if (lg + in->F + 2 > 31)
        return 0;
    /* c, of either format, is never below e_zero (see chunk_lanes): emin = 1 - bias */
    return in->e_zero <= 1 - mf_format_get(in->fc)->bias && in->e_zero <= 1 - mf_format_get(in->fd)->bias;
}

/* Where K position kk goes in a decoded row: kk itself, or for F16-emu its
 * place among the two passes (mf_f16_emu_pos). */
static inline int lane_pos(int kk, int emu, int half)
{
    return emu ? mf_f16_emu_pos(kk, half) : kk;
}

/* T-FDPA step 6: the rounding rho of a chunk's sum. */
AI v8u round_rho(v8u mag, v8u neg, v8i q, const mf_rho rho, int zero_plus)
{
    switch (rho) {
    case MF_RZ_FP32: return round_lanes(mag, neg, q, 23, 23, 8, 0, zero_plus);
    case MF_RZ_E8M13: return round_lanes(mag, neg, q, 13, 23, 8, 0, zero_plus);
    default: return round_lanes(mag, neg, q, 10, 10, 5, 1, zero_plus);
    }
}

/* The fixed parameters of one T-FDPA row on the lane path. */
typedef struct lanes_cfg {
    int L, F, up, e_zero, nchunks, zero_plus;
    uint64_t chunk_mask;   /* L ones: a chunk's positions in a mask of special inputs */
    int c_f32;   /* c of the first chunk is binary32 (else binary16) */
    int d_f32;   /* D (and c of later chunks) is binary32 */
    int emu;     /* F16-emu: the chunks start from +0 and c is added at the end */
} lanes_cfg;

/* T-FDPA steps 1-7 for one row of A against eight columns: c (the lanes'
 * C bits) goes through the row's chunks and leaves holding D's bits.
 * special has bit q set where position q of the row or of a column holds a
 * NaN or Inf. */
AI void row_lanes(const tile_dec *dc, const lanes_cfg *g, uint64_t special, v8u *cv, const mf_rho rho)
{
    const v8u c_in = *cv;
    v8u c = g->emu ? (v8u){0} : c_in;   /* F16-emu: the HMMA steps start from +0 */
    int f32 = g->c_f32;
    for (int ch = 0, k0 = 0; ch < g->nchunks; ch++, k0 += g->L) {
        /* c decoded: sign, significand with its hidden bit, exponent */
        const int cfr = f32 ? 23 : 10;
        const v8u ce_bits = f32 ? (c >> 23) & 0xFF : (c >> 10) & 0x1F;
        const uint32_t ce_max = f32 ? 0xFF : 0x1F, cbias = f32 ? 127 : 15;
        const v8u cneg = f32 ? c >> 31 : (c >> 15) & 1;
        const v8u cfrac = c & ((1u << cfr) - 1);
        const v8u csig = cfrac | ((v8u)(ce_bits != 0) & (1u << cfr));
        v8i ce = (v8i)(ce_bits | ((v8u)(ce_bits == 0) & 1)) - (int32_t)cbias;
        const v8i czero = (v8i)(csig == 0);
        ce = (ce & ~czero) | (czero & g->e_zero);   /* a zero c takes e_zero, as zero products do */
        const v8u cspec = (v8u)(ce_bits == ce_max);
        v8i emax = ce, S;
        chunk_lanes(dc, k0, g->L, g->up, &emax, &S);
        /* c aligned to emax and truncated to F fraction bits: r <= 0 moves
         * it up (by at most F - cfr bits), r > 0 down */
        const v8i r = (emax - ce) + (cfr - g->F);
        const v8i rpos = r > 0;
        v8i rr = r & rpos;
        rr = (rr & (rr <= 31)) | (31 & (rr > 31));
        const v8u tc = ((csig >> (v8u)rr) & (v8u)rpos) | ((csig << (v8u)(-r & ~rpos)) & ~(v8u)rpos);
        /* S + (-1)^cneg tc in sign and magnitude: |S| < 2^31, tc < 2^30 */
        const v8u sneg = (v8u)(S < 0), cn = (v8u){0} - cneg;
        const v8u sa = (v8u)((S ^ (v8i)sneg) - (v8i)sneg);
        const v8u same = ~(sneg ^ cn), ge = (v8u)((v8i)sa >= (v8i)tc);
        const v8u mag = (same & (sa + tc)) | (~same & ((ge & (sa - tc)) | (~ge & (tc - sa))));
        v8u neg = ((same | ge) & sneg) | (~same & ~ge & cn);
        neg &= (v8u)(mag != 0) & 1;
        v8u d = round_rho(mag, neg, emax - g->F, rho, g->zero_plus);
        /* NaN/Inf inputs (step 1) and a NaN/Inf c decide the lanes they are in */
        v8u vn = {0}, vp = {0}, vm = {0};
        if ((special >> k0) & g->chunk_mask)
            chunk_special_lanes(dc, k0, g->L, &vn, &vp, &vm);
        const v8u cinf = cspec & (v8u)(cfrac == 0);
        vn |= cspec & ~cinf;
        vp |= cinf & ~cn;
        vm |= cinf & cn;
        const int of16 = rho == MF_RNE_FP16;
        const v8u isnan = vn | (vp & vm), isinf = (vp | vm) & ~isnan;
        const v8u qnan = (v8u){0} + (of16 ? 0x7FFFu : 0x7FFFFFFFu), inf = (v8u){0} + (of16 ? 0x7C00u : 0x7F800000u),
                  sb = (v8u){0} + (of16 ? 0x8000u : 0x80000000u);
        d = (d & ~(isnan | isinf)) | (isnan & qnan) | (isinf & (inf | (vm & sb)));
        c = d;
        f32 = g->d_f32;
    }
    *cv = g->emu ? ieee_add_lanes(c, c_in, g->d_f32) : c;
}
MULTI_ISA static void row_lanes_rz32(const tile_dec *dc, const lanes_cfg *g, uint64_t special, v8u *c)
{
    row_lanes(dc, g, special, c, MF_RZ_FP32);
}
MULTI_ISA static void row_lanes_rz13(const tile_dec *dc, const lanes_cfg *g, uint64_t special, v8u *c)
{
    row_lanes(dc, g, special, c, MF_RZ_E8M13);
}
MULTI_ISA static void row_lanes_rne16(const tile_dec *dc, const lanes_cfg *g, uint64_t special, v8u *c)
{
    row_lanes(dc, g, special, c, MF_RNE_FP16);
}

/* Tile t of a T-FDPA row, eight columns at a time. */
static void tile_t_fdpa_lanes(const mf_instr *in, int m, int n, int k, size_t t, const void *A, const void *B,
                              const void *C, void *D)
{
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd);
    const int emu = in->family == MF_F16_EMU;
    const int fra = emu ? 10 : mf_format_get(in->fa)->frac_bits, frb = emu ? 10 : mf_format_get(in->fb)->frac_bits;
    const uint16_t *f8a = emu ? mf_fp8_f16_table(in->fa) : NULL, *f8b = emu ? mf_fp8_f16_table(in->fb) : NULL;
    const int L = emu ? k / 2 : in->L;
    const lanes_cfg g = {
        .L = L,
        .F = in->F,
        .up = in->F - (fra + frb),
        .e_zero = in->e_zero,
        .nchunks = emu ? 2 : k / in->L,
        .zero_plus = in->zero_plus,
        .c_f32 = (emu ? in->fd : in->fc) == MF_FMT_F32,
        .d_f32 = in->fd == MF_FMT_F32,
        .emu = emu,
        .chunk_mask = L >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << L) - 1,
    };
    void (*row)(const tile_dec *, const lanes_cfg *, uint64_t, v8u *) =
        in->rho == MF_RZ_FP32 ? row_lanes_rz32 : in->rho == MF_RZ_E8M13 ? row_lanes_rz13 : row_lanes_rne16;
    /* the inputs' packed words: a decode table (F16-emu: f16's, through the
     * fp8 -> f16 table), or mf_decode for formats without one (tf32) */
    const mf_format fwa = emu ? MF_FMT_F16 : in->fa, fwb = emu ? MF_FMT_F16 : in->fb;
    const uint32_t *tab_a = mf_dec_tab[fwa], *tab_b = mf_dec_tab[fwb];
    const uint64_t mask_a = mf_dec_mask[fwa], mask_b = mf_dec_mask[fwb];
    tile_dec dc;
    for (int j0 = 0; j0 < n; j0 += LANES) {
        const int nl = n - j0 < LANES ? n - j0 : LANES;
        uint64_t col_special = 0;   /* bit q: a NaN/Inf at position q of a column of the block */
        for (int j = 0; j < LANES; j++) {
            const size_t first = (t * (size_t)n + (size_t)(j0 + (j < nl ? j : 0))) * (size_t)k;
            for (int kk = 0; kk < k; kk++) {
                const int q = lane_pos(kk, emu, g.L);
                uint64_t x = mf_elem_get(eb, B, first + (size_t)kk);
                if (f8b)
                    x = f8b[x & 0xFF];
                const uint32_t w = tab_b ? tab_b[x & mask_b] : dec_word(fwb, x), sig = w & 0xFFFF,
                               cls = (w >> 26) & 3, neg = (w >> 28) & 1;
                dc.b_sig[q][j] = sig;
                dc.b_exp[q][j] = sig ? (int32_t)((w >> 16) & 0x3FF) - 512 : ZERO_EXP;
                dc.b_neg[q][j] = 0u - neg;
                dc.b_cls[q][j] = CLS_BIT(cls) << (4 * neg);
                col_special |= (uint64_t)((w >> 27) & 1) << q;
            }
        }
        for (int i = 0; i < m; i++) {
            const size_t row_i = t * (size_t)m + (size_t)i, first = row_i * (size_t)k;
            uint64_t special = col_special;
            if (!emu && tab_a && ea == 2 && mask_a == 0xFFFF) {   /* the common case: 16-bit inputs, one table */
                const uint16_t *pa = (const uint16_t *)A + first;
                uint32_t sp = 0;
                for (int kk = 0; kk < k; kk++) {
                    const uint32_t w = tab_a[pa[kk]];
                    dc.a[kk] = w;
                    sp |= w;
                }
                if (sp & W_SPECIAL)   /* rare: find the positions */
                    for (int kk = 0; kk < k; kk++)
                        special |= (uint64_t)((dc.a[kk] >> 27) & 1) << kk;
            } else {
                for (int kk = 0; kk < k; kk++) {
                    const int q = lane_pos(kk, emu, g.L);
                    uint64_t x = mf_elem_get(ea, A, first + (size_t)kk);
                    if (f8a)
                        x = f8a[x & 0xFF];
                    const uint32_t w = tab_a ? tab_a[x & mask_a] : dec_word(fwa, x);
                    dc.a[q] = w;
                    special |= (uint64_t)((w >> 27) & 1) << q;
                }
            }
            uint32_t c32[LANES];
            for (int j = 0; j < LANES; j++)
                c32[j] = (uint32_t)mf_elem_get(ec, C, row_i * (size_t)n + (size_t)(j0 + (j < nl ? j : 0)));
            v8u c;
            memcpy(&c, c32, sizeof c);
            row(&dc, &g, special, &c);
            memcpy(c32, &c, sizeof c32);
            for (int j = 0; j < nl; j++)
                mf_elem_set(ed, D, row_i * (size_t)n + (size_t)(j0 + j), c32[j]);
        }
    }
}

void mf_eval_tiles(const mf_instr *in, int m, int n, int k, size_t ntiles, const void *A, const void *B,
                   const void *C, const void *SA, const void *SB, void *D)
{
    const int lanes = lanes_ok(in, k);
    for (size_t t = 0; t < ntiles; t++) {
        if (lanes)
            tile_t_fdpa_lanes(in, m, n, k, t, A, B, C, D);
        else
            tile_by_case(in, m, n, k, t, A, B, C, SA, SB, D);
    }
}

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

#include <string.h>

static inline uint64_t elem_get(size_t es, const void *base, size_t idx)
{
    switch (es) {
    case 8: return ((const uint64_t *)base)[idx];
    case 4: return ((const uint32_t *)base)[idx];
    case 2: return ((const uint16_t *)base)[idx];
    default: return ((const uint8_t *)base)[idx];
    }
}

/* n consecutive elements from index first, widened to 64 bits. */
static inline void elems_get(size_t es, const void *base, size_t first, int n, uint64_t *out)
{
    switch (es) {
    case 8: for (int i = 0; i < n; i++) out[i] = ((const uint64_t *)base)[first + (size_t)i]; break;
    case 4: for (int i = 0; i < n; i++) out[i] = ((const uint32_t *)base)[first + (size_t)i]; break;
    case 2: for (int i = 0; i < n; i++) out[i] = ((const uint16_t *)base)[first + (size_t)i]; break;
    default: for (int i = 0; i < n; i++) out[i] = ((const uint8_t *)base)[first + (size_t)i]; break;
    }
}

static inline void elem_set(size_t es, void *base, size_t idx, uint64_t v)
{
    switch (es) {
    case 8: ((uint64_t *)base)[idx] = v; break;
    case 4: ((uint32_t *)base)[idx] = (uint32_t)v; break;
    case 2: ((uint16_t *)base)[idx] = (uint16_t)v; break;
    default: ((uint8_t *)base)[idx] = (uint8_t)v; break;
    }
}

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
            cs.a[q] = elem_get(ea, A, row * (size_t)k + (size_t)q);
        for (size_t q = 0; q < S; q++)
            cs.sa[q] = elem_get(es, SA, row * S + q);
        for (int j = 0; j < n; j++) {
            size_t col = t * (size_t)n + (size_t)j;
            for (int q = 0; q < k; q++)
                cs.b[q] = elem_get(eb, B, col * (size_t)k + (size_t)q);
            for (size_t q = 0; q < S; q++)
                cs.sb[q] = elem_get(es, SB, col * S + q);
            cs.c = elem_get(ec, C, row * (size_t)n + (size_t)j);
            elem_set(ed, D, row * (size_t)n + (size_t)j, mf_eval(in, &cs));
        }
    }
}

/* ----------------------------------------------------- T-FDPA in lanes */

#define LANES 8

/* Inputs of a tile decoded once, each as a packed word of the decode tables
 * (internal.h: sig | (exp+512) << 16 | cls << 26 | sign << 28); the kernels
 * take the fields apart eight lanes at a time.  B is stored k-major so that
 * the lanes (columns) are contiguous. */
typedef struct tile_dec {
    uint32_t a[MF_KMAX];
    uint32_t b[MF_KMAX][LANES];
} tile_dec;

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

/* Decode c (f32 or f16 bits) for the c term of a chunk; @return 1 for NaN/Inf. */
static inline int dec_c(mf_format f, uint64_t c, int e_zero, uint32_t *sig, int32_t *exp, uint32_t *neg, int *fr)
{
    uint32_t v, e;
    int special;
    if (f == MF_FMT_F32) {
        v = (uint32_t)c;
        e = (v >> 23) & 0xFF;
        *neg = v >> 31;
        *sig = (v & 0x7FFFFF) | ((uint32_t)(e != 0) << 23);
        *exp = (int32_t)(e ? e : 1) - 127;
        *fr = 23;
        special = e == 0xFF;
    } else {
        v = (uint32_t)c & 0xFFFF;
        e = (v >> 10) & 0x1F;
        *neg = v >> 15;
        *sig = (v & 0x3FF) | ((uint32_t)(e != 0) << 10);
        *exp = (int32_t)(e ? e : 1) - 15;
        *fr = 10;
        special = e == 0x1F;
    }
    if (*sig == 0)
        *exp = e_zero;  /* a zero c takes e_zero, as zero products do */
    return special;
}

/* S * 2^q rounded as the row's rho says (the rounding of chunk_core). */
static inline uint64_t round_chunk(int64_t S, int q, mf_rho rho, int zero_plus)
{
    int sign = S < 0;
    uint64_t mag = sign ? (uint64_t)0 - (uint64_t)S : (uint64_t)S;
    uint64_t d = rho == MF_RZ_FP32    ? mf_round64(sign, mag, q, 23, 23, 8, MF_RM_RZ)
                 : rho == MF_RZ_E8M13 ? mf_round64(sign, mag, q, 13, 23, 8, MF_RM_RZ)
                                      : mf_round64(sign, mag, q, 10, 10, 5, MF_RM_RNE);
    if (zero_plus && (d << 1) << (rho == MF_RNE_FP16 ? 48 : 32) == 0)
        d = 0;
    return d;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(MMAFUZZ_NO_CLONES)
#define MULTI_ISA __attribute__((target_clones("avx2", "default")))
#else
#define MULTI_ISA
#endif

/* Eight lanes of 32-bit integers (GCC/Clang vector extensions: AVX2
 * registers in the avx2 clone, pairs of SSE registers otherwise). */
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* v = eight 32-bit values at p (any alignment) */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(v))

/* The aligned, truncated products of one chunk [k0, k0+L) in the eight lanes
 * of row dc->a*: S (units 2^-F at 2^emax); *emax comes in holding the
 * exponent of each lane's c and leaves holding the chunk's maximum.  Every
 * aligned product is below 2^(F+2) and L of them stay below 2^31 (checked by
 * lanes_ok), so the lane sums are 32-bit. */
MULTI_ISA static void chunk_lanes(const tile_dec *dc, int k0, int L, int up, int e_zero, v8i *emax, v8i *S)
{
    v8u P[MF_KMAX];
    v8i E[MF_KMAX];
    v8i mx = *emax;
    v8u acc = {0};   /* unsigned: wraps (only in lanes whose result is special) */
    const v8i ez = (v8i){0} + e_zero;
    for (int q = 0; q < L; q++) {
        const uint32_t wa = dc->a[k0 + q];
        v8u wb;
        LOAD8(wb, dc->b[k0 + q]);
        v8u p = (wb & 0xFFFF) * (wa & 0xFFFF);
        v8i e = (v8i)((wb >> 16) & 0x3FF) + ((int32_t)((wa >> 16) & 0x3FF) - 1024);
        v8i zero = (v8i)(p == 0);                     /* zero products take e_zero */
        e = (e & ~zero) | (ez & zero);
        v8i gt = (v8i)(e > mx);
        mx = (e & gt) | (mx & ~gt);
        P[q] = p << up;
        E[q] = e;
    }
    for (int q = 0; q < L; q++) {
        v8u dist = (v8u)(mx - E[q]);
        v8u big = (v8u)(dist > 31);
        dist = (dist & ~big) | (((v8u){0} + 31) & big);
        v8u t = P[q] >> dist, wb;
        LOAD8(wb, dc->b[k0 + q]);
        v8u neg = (v8u){0} - (((wb ^ dc->a[k0 + q]) >> 28) & 1);
        acc += (t ^ neg) - neg;
    }
    *emax = mx;
    *S = (v8i)acc;
}

/* T-FDPA step 1 over the products of one chunk in the eight lanes: any NaN
 * or 0 * Inf makes the lane NaN; Inf products set *pinf or *ninf by their
 * sign (the rule of special_result in family_tfdpa_fast.c). */
MULTI_ISA static void chunk_special_lanes(const tile_dec *dc, int k0, int L, v8u *nan, v8u *pinf, v8u *ninf)
{
    v8u vn = {0}, vp = {0}, vm = {0};
    for (int q = 0; q < L; q++) {
        const uint32_t wa = dc->a[k0 + q], ca = (wa >> 26) & 3;
        const uint32_t a_nan = 0u - (ca == MF_CLS_NAN), a_inf = 0u - (ca == MF_CLS_INF), a_zero = 0u - (ca == MF_CLS_ZERO);
        v8u wb;
        LOAD8(wb, dc->b[k0 + q]);
        v8u cb = (wb >> 26) & 3;
        v8u b_nan = (v8u)(cb == MF_CLS_NAN), b_inf = (v8u)(cb == MF_CLS_INF), b_zero = (v8u)(cb == MF_CLS_ZERO);
        v8u isnan = b_nan | a_nan | (b_zero & a_inf) | (b_inf & a_zero);
        v8u isinf = (b_inf | a_inf) & ~isnan;
        v8u neg = (v8u){0} - (((wb ^ wa) >> 28) & 1);
        vn |= isnan;
        vp |= isinf & ~neg;
        vm |= isinf & neg;
    }
    *nan = vn;
    *pinf = vp;
    *ninf = vm;
}

/* Can row `in` with K = k take the lane path? */
static int lanes_ok(const mf_instr *in, int k)
{
    if (in->family != MF_T_FDPA || in->n_scales || k != in->k || k > MF_KMAX || k % in->L || k / in->L > MF_KMAX / 4)
        return 0;
    if (!mf_t_fdpa_row_plan[in - mf_instr_table])   /* the fast formats, F and rho of chunk_core */
        return 0;
    /* L aligned products below 2^(F+2) each must sum below 2^31 */
    int lg = 0;
    while ((1 << lg) < in->L)
        lg++;
    return lg + in->F + 2 <= 31;
}

/* Tile t of a T-FDPA row, eight columns at a time (rho a constant in each
 * instance, see tile_t_fdpa_lanes). */
static inline __attribute__((always_inline)) void lanes_body(const mf_instr *in, int m, int n, int k, size_t t,
                                                             const void *A, const void *B, const void *C, void *D,
                                                             const mf_rho rho)
{
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd);
    const int L = in->L, F = in->F, e_zero = in->e_zero, nchunks = k / L;
    const int up = F - (mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits);
    /* the special outputs of D's format (DOMAIN section 3, T-FDPA step 7) */
    const int f16 = rho == MF_RNE_FP16;
    const uint64_t qnan = f16 ? 0x7FFF : 0x7FFFFFFF, inf = f16 ? 0x7C00 : 0x7F800000, sbit = f16 ? 0x8000 : 0x80000000;
    tile_dec dc;
    for (int j0 = 0; j0 < n; j0 += LANES) {
        const int nl = n - j0 < LANES ? n - j0 : LANES;
        uint32_t col_special[MF_KMAX / 4] = {0};   /* per chunk: any NaN/Inf in the block's columns */
        for (int j = 0; j < LANES; j++) {
            size_t col = t * (size_t)n + (size_t)(j0 + (j < nl ? j : 0));
            uint64_t x[MF_KMAX];
            elems_get(eb, B, col * (size_t)k, k, x);
            for (int ch = 0, q = 0; ch < nchunks; ch++)
                for (int qe = q + L; q < qe; q++) {
                    uint32_t w = dec_word(in->fb, x[q]);
                    dc.b[q][j] = w;
                    col_special[ch] |= w & W_SPECIAL;
                }
        }
        for (int i = 0; i < m; i++) {
            const size_t row = t * (size_t)m + (size_t)i;
            uint32_t row_special[MF_KMAX / 4] = {0};
            uint64_t x[MF_KMAX];
            elems_get(ea, A, row * (size_t)k, k, x);
            for (int ch = 0, q = 0; ch < nchunks; ch++)
                for (int qe = q + L; q < qe; q++) {
                    uint32_t w = dec_word(in->fa, x[q]);
                    dc.a[q] = w;
                    row_special[ch] |= w & W_SPECIAL;
                }
            uint64_t c[LANES];
            elems_get(ec, C, row * (size_t)n + (size_t)j0, nl, c);
            for (int j = nl; j < LANES; j++)
                c[j] = c[0];
            mf_format fc = in->fc;
            for (int ch = 0, k0 = 0; ch < nchunks; ch++, k0 += L) {
                int32_t emax[LANES], S[LANES], ce[LANES];
                uint32_t csig[LANES], cneg[LANES], cspec[LANES];
                int cfr = 0;
                for (int j = 0; j < LANES; j++)
                    cspec[j] = (uint32_t)dec_c(fc, c[j], e_zero, &csig[j], &ce[j], &cneg[j], &cfr);
                v8i vmax, vS;
                memcpy(&vmax, ce, sizeof vmax);
                chunk_lanes(&dc, k0, L, up, e_zero, &vmax, &vS);
                memcpy(emax, &vmax, sizeof emax);
                memcpy(S, &vS, sizeof S);
                uint32_t nan[LANES] = {0}, pinf[LANES] = {0}, ninf[LANES] = {0};
                if (row_special[ch] | col_special[ch]) {
                    v8u vn, vp, vm;
                    chunk_special_lanes(&dc, k0, L, &vn, &vp, &vm);
                    memcpy(nan, &vn, sizeof nan);
                    memcpy(pinf, &vp, sizeof pinf);
                    memcpy(ninf, &vm, sizeof ninf);
                }
                for (int j = 0; j < LANES; j++) {
                    if (nan[j] | pinf[j] | ninf[j] | cspec[j]) {
                        if (cspec[j]) {   /* c NaN or Inf */
                            uint64_t frac = fc == MF_FMT_F32 ? c[j] & 0x7FFFFF : c[j] & 0x3FF;
                            nan[j] |= frac != 0;
                            pinf[j] |= !frac && !cneg[j];
                            ninf[j] |= !frac && cneg[j];
                        }
                        c[j] = nan[j] || (pinf[j] && ninf[j]) ? qnan : inf | (ninf[j] ? sbit : 0);
                        continue;
                    }
                    /* c aligned to emax and truncated to F fraction bits */
                    int r = (emax[j] - ce[j]) + cfr - F;
                    uint64_t tc = r <= 0 ? (uint64_t)csig[j] << -r : (r > 63 ? 0 : (uint64_t)csig[j] >> r);
                    int64_t neg = -(int64_t)cneg[j];
                    int64_t sum = (int64_t)S[j] + (((int64_t)tc ^ neg) - neg);
                    c[j] = round_chunk(sum, emax[j] - F, rho, in->zero_plus);
                }
                fc = in->fd;
            }
            for (int j = 0; j < nl; j++)
                elem_set(ed, D, row * (size_t)n + (size_t)(j0 + j), c[j]);
        }
    }
}

static void tile_t_fdpa_lanes(const mf_instr *in, int m, int n, int k, size_t t, const void *A, const void *B,
                              const void *C, void *D)
{
    switch (in->rho) {   /* lanes_ok admits these three */
    case MF_RZ_FP32: lanes_body(in, m, n, k, t, A, B, C, D, MF_RZ_FP32); break;
    case MF_RZ_E8M13: lanes_body(in, m, n, k, t, A, B, C, D, MF_RZ_E8M13); break;
    default: lanes_body(in, m, n, k, t, A, B, C, D, MF_RNE_FP16); break;
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

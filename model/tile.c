/*
 * tile.c - evaluation of whole tiles: every output element of M x N x K
 * tiles in the canonical layout of mmafuzz_model.h.
 *
 * The result of each element is exactly mf_eval's.  What a tile adds is
 * sharing: a row of A feeds N outputs and a column of B feeds M, so they are
 * decoded once per tile, and T-FDPA rows (no scales, formats of the fast
 * path) evaluate eight outputs of a row at a time, one per lane, in loops
 * the compiler turns into SIMD code.  Such a lane computes what chunk_core
 * in family_tfdpa_fast.c computes (DOMAIN section 3, T-FDPA steps 2-6); a
 * lane that meets a NaN or Inf anywhere (inputs, or c at the start of a
 * chunk) is evaluated again by mf_eval, so special values follow the one
 * general path.
 */
#include "internal.h"

#include <string.h>

size_t mf_tile_elem_bytes(mf_format f)
{
    int bits = mf_format_get(f)->bits;
    return bits > 32 ? 8 : bits > 16 ? 4 : bits > 8 ? 2 : 1;
}

static inline uint64_t elem_get(size_t es, const void *base, size_t idx)
{
    switch (es) {
    case 8: return ((const uint64_t *)base)[idx];
    case 4: return ((const uint32_t *)base)[idx];
    case 2: return ((const uint16_t *)base)[idx];
    default: return ((const uint8_t *)base)[idx];
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

/* Inputs of a tile decoded once: significand (hidden bit included), exponent
 * and sign of every element; B stored k-major so that the lanes (columns)
 * are contiguous. */
typedef struct tile_dec {
    uint32_t asig[MF_KMAX], aneg[MF_KMAX];
    int32_t aexp[MF_KMAX];
    uint32_t bsig[MF_KMAX][LANES], bneg[MF_KMAX][LANES];
    int32_t bexp[MF_KMAX][LANES];
} tile_dec;

/* Decode x of format f; @return 1 for NaN or Inf. */
static inline int dec(mf_format f, uint64_t x, uint32_t *sig, int32_t *exp, uint32_t *neg)
{
    mf_value v = mf_decode_fast(f, x);
    *sig = v.cls == MF_CLS_FINITE ? (uint32_t)v.sig : 0;
    *exp = v.exp;
    *neg = v.sign;
    return v.cls >= MF_CLS_INF;
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

/* The aligned, truncated products of one chunk [k0, k0+L) for `nl` lanes of
 * row dec->a*: S[j] (units 2^-F at 2^emax[j]); emax[] comes in holding the
 * exponent of each lane's c and leaves holding the chunk's maximum.  Every
 * aligned product is below 2^(F+2) and L of them stay below 2^31 (checked by
 * lanes_ok), so the lane sums are 32-bit. */
MULTI_ISA static void chunk_lanes(const tile_dec *dc, int k0, int L, int F, int up, int e_zero, int32_t *emax,
                                  int32_t *S)
{
    uint32_t P[MF_KMAX][LANES];
    int32_t E[MF_KMAX][LANES];
    int32_t mx[LANES], acc[LANES];
    for (int j = 0; j < LANES; j++) {
        mx[j] = emax[j];
        acc[j] = 0;
    }
    for (int q = 0; q < L; q++) {
        const uint32_t sa = dc->asig[k0 + q];
        const int32_t ea = dc->aexp[k0 + q];
        for (int j = 0; j < LANES; j++) {
            uint32_t p = sa * dc->bsig[k0 + q][j];
            int32_t e = p ? ea + dc->bexp[k0 + q][j] : e_zero;   /* zero products take e_zero */
            P[q][j] = p << up;
            E[q][j] = e;
            mx[j] = e > mx[j] ? e : mx[j];
        }
    }
    for (int q = 0; q < L; q++) {
        const uint32_t na = dc->aneg[k0 + q];
        for (int j = 0; j < LANES; j++) {
            uint32_t dist = (uint32_t)(mx[j] - E[q][j]);
            dist = dist > 31 ? 31 : dist;
            uint32_t tq = P[q][j] >> dist, neg = 0u - (na ^ dc->bneg[k0 + q][j]);
            acc[j] += (int32_t)((tq ^ neg) - neg);
        }
    }
    (void)F;
    for (int j = 0; j < LANES; j++) {
        emax[j] = mx[j];
        S[j] = acc[j];
    }
}

/* Can row `in` with K = k take the lane path? */
static int lanes_ok(const mf_instr *in, int k)
{
    if (in->family != MF_T_FDPA || in->n_scales || k != in->k || k > MF_KMAX)
        return 0;
    if (!mf_t_fdpa_row_plan[in - mf_instr_table])   /* the fast formats, F and rho of chunk_core */
        return 0;
    /* L aligned products below 2^(F+2) each must sum below 2^31 */
    int lg = 0;
    while ((1 << lg) < in->L)
        lg++;
    return lg + in->F + 2 <= 31;
}

/* Tile t of a T-FDPA row, eight columns at a time. */
static void tile_t_fdpa_lanes(const mf_instr *in, int m, int n, int k, size_t t, const void *A, const void *B,
                              const void *C, void *D)
{
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd);
    const int L = in->L, F = in->F, e_zero = in->e_zero;
    const int up = F - (mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits);
    tile_dec dc;
    for (int j0 = 0; j0 < n; j0 += LANES) {
        const int nl = n - j0 < LANES ? n - j0 : LANES;
        uint32_t col_special[LANES] = {0};
        for (int j = 0; j < LANES; j++) {
            size_t col = t * (size_t)n + (size_t)(j0 + (j < nl ? j : 0));
            for (int q = 0; q < k; q++)
                col_special[j] |= (uint32_t)dec(in->fb, elem_get(eb, B, col * (size_t)k + (size_t)q), &dc.bsig[q][j],
                                                &dc.bexp[q][j], &dc.bneg[q][j]);
        }
        for (int i = 0; i < m; i++) {
            const size_t row = t * (size_t)m + (size_t)i;
            uint32_t row_special = 0;
            for (int q = 0; q < k; q++)
                row_special |= (uint32_t)dec(in->fa, elem_get(ea, A, row * (size_t)k + (size_t)q), &dc.asig[q],
                                             &dc.aexp[q], &dc.aneg[q]);
            uint64_t c[LANES];
            uint32_t redo[LANES];
            for (int j = 0; j < LANES; j++) {
                c[j] = elem_get(ec, C, row * (size_t)n + (size_t)(j0 + (j < nl ? j : 0)));
                redo[j] = row_special | col_special[j];
            }
            mf_format fc = in->fc;
            for (int k0 = 0; k0 < k; k0 += L) {
                int32_t emax[LANES], S[LANES];
                uint32_t csig[LANES], cneg[LANES];
                int cfr = 0;
                for (int j = 0; j < LANES; j++) {
                    redo[j] |= (uint32_t)dec_c(fc, c[j], e_zero, &csig[j], &emax[j], &cneg[j], &cfr);
                }
                int32_t ce[LANES];
                memcpy(ce, emax, sizeof ce);
                chunk_lanes(&dc, k0, L, F, up, e_zero, emax, S);
                for (int j = 0; j < LANES; j++) {
                    /* c aligned to emax and truncated to F fraction bits */
                    int r = (emax[j] - ce[j]) + cfr - F;
                    uint64_t tc = r <= 0 ? (uint64_t)csig[j] << -r : (r > 63 ? 0 : (uint64_t)csig[j] >> r);
                    int64_t neg = -(int64_t)cneg[j];
                    int64_t sum = (int64_t)S[j] + (((int64_t)tc ^ neg) - neg);
                    c[j] = round_chunk(sum, emax[j] - F, in->rho, in->zero_plus);
                }
                fc = in->fd;
            }
            for (int j = 0; j < nl; j++) {
                uint64_t d = c[j];
                if (redo[j]) {   /* a NaN or Inf on the way: the general path */
                    mf_case cs;
                    size_t col = t * (size_t)n + (size_t)(j0 + j);
                    for (int q = 0; q < k; q++) {
                        cs.a[q] = elem_get(ea, A, row * (size_t)k + (size_t)q);
                        cs.b[q] = elem_get(eb, B, col * (size_t)k + (size_t)q);
                    }
                    cs.c = elem_get(ec, C, row * (size_t)n + (size_t)(j0 + j));
                    d = mf_eval(in, &cs);
                }
                elem_set(ed, D, row * (size_t)n + (size_t)(j0 + j), d);
            }
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

/*
 * family_amd.c - the AMD matrix-core families (shared/DOMAIN.md section 3):
 * E-FDPA (CDNA1 f16/bf16), FTZ-Mul-Add (CDNA2 f16/bf16), TR-FDPA (CDNA3
 * xf32/f16/bf16) and GTR-FDPA (CDNA3 fp8/bf8).  FMA chains are in
 * family_fma.c.
 */
#include "internal.h"
#ifndef MF_DEVICE_BUILD
#include "lanes.h"   /* the vector fast path of FTZ-Mul-Add: host only */
#endif

#include <string.h>

/* ------------------------------------------------------------ E-FDPA */

/* m * 2^s as 128 bits, 0 <= s < 64, without the general 128-bit shift. */
MF_HD static inline mf_u128 shl128(uint64_t m, int s)
{
    return ((mf_u128)((m >> 1) >> (63 - s)) << 64) | (mf_u128)(m << s);
}

/* An exact fixed-point accumulator wide enough for any sum of f16/bf16
 * products and an f32 c: bit 0 weighs 2^-ACC_LSB.  Positive and negative
 * terms go to separate unsigned sums (no two's complement over the whole
 * width), and only the words touched are visited. */
#define ACC_WORDS 12
#define ACC_LSB 400

typedef struct wide_acc {
    uint64_t w[2][ACC_WORDS];  /* [0] positive terms, [1] negative terms */
    int lo, hi;                /* touched word range */
} wide_acc;

MF_HD static inline void acc_init(wide_acc *acc)
{
    acc->lo = ACC_WORDS;
    acc->hi = -1;
}

/* acc += (-1)^neg * mag * 2^exp, where exp >= -ACC_LSB and mag < 2^63. */
MF_HD static inline void acc_add(wide_acc *acc, int neg, uint64_t mag, int exp)
{
    int pos = exp + ACC_LSB;
    int wi = pos >> 6, sh = pos & 63;
    uint64_t *w = acc->w[neg];
    /* clear newly touched words first */
    int top = wi + 2 < ACC_WORDS ? wi + 2 : ACC_WORDS - 1;
    if (acc->hi < acc->lo) {
        for (int i = wi; i <= top; i++)
            acc->w[0][i] = acc->w[1][i] = 0;
        acc->lo = wi;
        acc->hi = top;
    } else {
        for (int i = wi; i < acc->lo; i++)
            acc->w[0][i] = acc->w[1][i] = 0;
        for (int i = acc->hi + 1; i <= top; i++)
            acc->w[0][i] = acc->w[1][i] = 0;
        if (wi < acc->lo)
            acc->lo = wi;
        if (top > acc->hi)
            acc->hi = top;
    }
    mf_u128 part = (mf_u128)mag << sh;
    mf_u128 cur = (mf_u128)w[wi] + (uint64_t)part;
    w[wi] = (uint64_t)cur;
    cur = (cur >> 64) + w[wi + 1] + (uint64_t)(part >> 64);
    w[wi + 1] = (uint64_t)cur;
    for (int i = wi + 2; (cur >> 64) && i < ACC_WORDS; i++) {
        if (i > acc->hi) {
            acc->w[0][i] = acc->w[1][i] = 0;
            acc->hi = i;
        }
        cur = (cur >> 64) + w[i];
        w[i] = (uint64_t)cur;
    }
}

/* Round the accumulator once to binary32, nearest even.  Exact zero: +0. */
MF_HD static uint64_t acc_round_f32(wide_acc *acc)
{
    if (acc->hi < acc->lo)
        return mf_pack_zero(MF_FMT_F32, 0);
    /* which sum is larger? */
    int neg = 0, i;
    for (i = acc->hi; i >= acc->lo; i--)
        if (acc->w[0][i] != acc->w[1][i]) {
            neg = acc->w[1][i] > acc->w[0][i];
            break;
        }
    if (i < acc->lo)
        return mf_pack_zero(MF_FMT_F32, 0);  /* exact cancellation */
    /* r = big - small over the touched words */
    uint64_t r[ACC_WORDS];
    const uint64_t *x = acc->w[neg], *y = acc->w[!neg];
    uint64_t borrow = 0;
    for (i = acc->lo; i <= acc->hi; i++) {
        uint64_t d = x[i] - y[i];
        uint64_t b2 = x[i] < y[i];
        r[i] = d - borrow;
        b2 |= d < borrow;
        borrow = b2;
    }
    int top = acc->hi;
    while (r[top] == 0)
        top--;
    int msb = top * 64 + 63 - mf_clz64(r[top]);  /* bit index */
    int lo = msb - 127;   /* bit index that becomes bit 0 of the 128-bit window */
    mf_u128 m = 0;
    int sticky = 0;
    for (i = acc->lo; i <= top; i++) {
        if (!r[i])
            continue;
        int off = i * 64 - lo;   /* where word i's bit 0 lands in the window */
        if (off >= 0) {
            m |= (mf_u128)r[i] << off;
        } else if (off > -64) {
            m |= (mf_u128)(r[i] >> -off);
            if (r[i] & ((UINT64_C(1) << -off) - 1))
                sticky = 1;
        } else {
            sticky = 1;
        }
    }
    m |= (mf_u128)sticky;
    return mf_round_pack(MF_FMT_F32, neg, m, lo - ACC_LSB, 23, MF_RM_RNE);
}

/* A term of an E-FDPA chunk: (-1)^neg * m * 2^q, m < 2^24. */
typedef struct ef_term {
    int neg, q;
    uint64_t m;
} ef_term;

MF_HD static inline ef_term ef_make(int neg, int q, uint64_t m)
{
    ef_term t;
    t.neg = neg;
    t.q = q;
    t.m = m;
    return t;
}

/* One E-FDPA chunk without NaN/Inf products, any input format (bf16's
 * products can lie 500 bits apart): the nonzero products and c are exact
 * terms m * 2^q with m < 2^24.  Ordered by q, they form clusters wherever
 * two neighbours lie more than 28 bits apart; each cluster is summed exactly
 * in 128 bits (at most 100 bits wide, which always holds with L = 2) and
 * lies wholly above the clusters below (their terms sum to less than
 * 2^(q+24+4) for their largest q, under the lowest bit of the cluster
 * above).  The clusters are joined from the bottom up: a nonzero cluster
 * takes the running sum exactly when both fit in 126 bits, else with the
 * running sum's low bits jammed into a sticky bit over 100 bits under the
 * result's rounding position; a zero cluster leaves the sum alone.
 * @return 0 when that applies, else -1 (the wide accumulator of the general
 * path is needed). */
MF_HD static int e_fdpa_chunk_clusters(const mf_instr *in, const mf_case *cs, int k0, int fr, uint32_t c, uint64_t *d)
{
    ef_term t[MF_KMAX_FLOAT + 1];
    int n = 0, special = 0;
    const int bf16 = in->fa == MF_FMT_BF16 && in->fb == MF_FMT_BF16;
    for (int k = k0; k < k0 + in->L; k++) {
        /* bf16 from its fields: random inputs miss the 256 KB table in the L1 cache */
        const mf_value va = bf16 ? mf_decode_ieee(cs->a[k] & 0xFFFF, 8, 7, 127, 1) : mf_decode_fast(in->fa, cs->a[k]),
                       vb = bf16 ? mf_decode_ieee(cs->b[k] & 0xFFFF, 8, 7, 127, 1) : mf_decode_fast(in->fb, cs->b[k]);
        special |= va.cls >= MF_CLS_INF || vb.cls >= MF_CLS_INF;
        t[n] = ef_make(va.sign ^ vb.sign, va.exp + vb.exp - fr, va.sig * vb.sig);
        n += t[n].m != 0;
    }
    if (special)
        return -1;
    const mf_value vc = mf_decode_fast(MF_FMT_F32, c);
    if (vc.cls >= MF_CLS_INF) {   /* finite products and a NaN or Inf c (often an earlier chunk's overflow) */
        *d = vc.cls == MF_CLS_NAN ? mf_canonical_nan(MF_FMT_F32) : c;
        return 0;
    }
    t[n] = ef_make(vc.sign, vc.exp - 23, vc.sig);
    n += t[n].m != 0;
    if (n == 0) {
        *d = 0;   /* every term zero: +0 */
        return 0;
    }
    /* largest q first: a sorting network for up to three terms (L = 2),
     * insertion sort beyond */
#define EF_ORDER(i, j)                                                                                           \
    if (t[j].q > t[i].q) {                                                                                       \
        const ef_term x_ = t[i];                                                                                 \
        t[i] = t[j];                                                                                             \
        t[j] = x_;                                                                                               \
    }
    if (n == 3) {
        EF_ORDER(0, 1) EF_ORDER(1, 2) EF_ORDER(0, 1)
    } else if (n == 2) {
        EF_ORDER(0, 1)
    } else {
        for (int i = 1; i < n; i++) {
            const ef_term x = t[i];
            int j = i;
            for (; j > 0 && t[j - 1].q < x.q; j--)
                t[j] = t[j - 1];
            t[j] = x;
        }
    }
#undef EF_ORDER
    /* clusters: S[g] exact, in units of 2^qc[g] (the lowest q of its terms) */
    __int128 S[MF_KMAX_FLOAT + 1];
    int qc[MF_KMAX_FLOAT + 1], nc = 0, qtop = 0;
    for (int i = 0; i < n; i++) {
        const __int128 v = t[i].neg ? -(__int128)t[i].m : (__int128)t[i].m;
        if (i == 0 || t[i - 1].q - t[i].q > 28) {
            S[nc] = v;
            qc[nc++] = qtop = t[i].q;
        } else if (qtop - t[i].q > 100) {
            return -1;   /* a cluster wider than 100 bits */
        } else {
            S[nc - 1] = S[nc - 1] * ((__int128)1 << (qc[nc - 1] - t[i].q)) + v;
            qc[nc - 1] = t[i].q;
        }
    }
    /* bottom-up */
    int sign = S[nc - 1] < 0, ex = qc[nc - 1];
    mf_u128 sm = sign ? (mf_u128)(-S[nc - 1]) : (mf_u128)S[nc - 1];
    for (int g = nc - 2; g >= 0; g--) {
        if (S[g] == 0)
            continue;
        const int s = S[g] < 0;
        const mf_u128 mag = s ? (mf_u128)(-S[g]) : (mf_u128)S[g];
        const int room = 126 - mf_bitlen128(mag), dq = qc[g] - ex, sh = dq < room ? dq : room;
        const mf_u128 lo = dq > room ? mf_shr_jam128(sm, dq - room) : sm, hi = mag << sh;
        sm = sign == s ? hi + lo : hi - lo;
        sign = s;
        ex = qc[g] - sh;
    }
    if (sm == 0) {
        *d = 0;   /* exact cancellation: +0 */
        return 0;
    }
    const uint64_t m64 = mf_jam64(sm, &ex);
    *d = mf_round64(sign, m64, ex, 23, 23, 8, MF_RM_RNE);
    return 0;
}

/* One E-FDPA chunk of f16 products without NaN/Inf, L <= 16.  Every f16
 * product is m * 2^q with m < 2^22 and -48 <= q <= 10, so in units of 2^-48
 * it is below 2^80, the products' sum below 2^84, exact in a fixed 128-bit
 * window with no alignment.  c (binary32) with its last bit at unit 2^sc:
 *   sc > 100: the sum lies under a quarter of c's last place, the result is c;
 *   0 <= sc <= 100: one more exact term (below 2^124);
 *   sc <= -24 and a sum of at least 2^26: c lies wholly under the unit and
 *     only gives a sticky bit its sign (the rounding position lies at least
 *     2 bits above the unit);
 *   otherwise the window moves down to c's last bit (the sum, below 2^84
 *   shifted by under 24, or below 2^26 shifted by at most 101, stays below
 *   2^127).
 * @return 0, or -1 for NaN/Inf. */
MF_HD static int e_fdpa_chunk_f16(const mf_case *cs, int k0, int L, uint32_t c, uint64_t *d)
{
    __int128 P = 0;
    uint32_t special = 0;
    for (int k = k0; k < k0 + L; k++) {
        const uint32_t wa = mf_dec_word(MF_FMT_F16, cs->a[k]), wb = mf_dec_word(MF_FMT_F16, cs->b[k]);
        special |= wa | wb;
        const uint64_t m = (uint64_t)(wa & 0xFFFF) * (wb & 0xFFFF);
        const int s = (int)((wa >> 16) & 0x3FF) + (int)((wb >> 16) & 0x3FF) - 1024 - 20 + 48;   /* 0..58 */
        const __int128 t = (__int128)shl128(m, s), nm = -(__int128)(((wa ^ wb) >> 28) & 1);
        P += (t ^ nm) - nm;
    }
    const mf_value vc = mf_decode_fast(MF_FMT_F32, c);
    if ((special & (UINT32_C(1) << 27)) || vc.cls >= MF_CLS_INF)
        return -1;   /* NaN/Inf */
    int e = -48;   /* the window's unit */
    if (vc.cls == MF_CLS_FINITE) {
        const int sc = vc.exp - 23 + 48;
        const __int128 nm = -(__int128)vc.sign;
        const mf_u128 pm = P < 0 ? (mf_u128)(-P) : (mf_u128)P;
        if (sc > 100) {
            *d = c;
            return 0;
        } else if (sc >= 0) {
            const __int128 t = (__int128)((mf_u128)vc.sig << sc);
            P += (t ^ nm) - nm;
        } else if (sc <= -24 && pm >> 26) {
            const int ps = P < 0;
            const mf_u128 m2 = (pm << 1) + (vc.sign == ps ? 1 : 0) - (vc.sign == ps ? 0 : 1);
            e = -49;
            const uint64_t m64 = mf_jam64(m2, &e);
            *d = mf_round64(ps, m64, e, 23, 23, 8, MF_RM_RNE);
            return 0;
        } else {
            P = (__int128)((mf_u128)P << -sc);
            P += ((__int128)vc.sig ^ nm) - nm;
            e = -48 + sc;
        }
    }
    if (P == 0) {
        *d = 0;   /* an exact zero sum is +0 */
        return 0;
    }
    const int ps = P < 0;
    const uint64_t m64 = mf_jam64(ps ? (mf_u128)(-P) : (mf_u128)P, &e);
    *d = mf_round64(ps, m64, e, 23, 23, 8, MF_RM_RNE);
    return 0;
}

MF_HD uint64_t mf_eval_e_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    const int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    const int f16 = in->fa == MF_FMT_F16 && in->fb == MF_FMT_F16 && in->L <= 16;
    uint64_t c = cs->c;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        if (!tr) {   /* f16: the fixed window; anything else, or what it leaves: the clusters */
            uint64_t d;
            if ((f16 && e_fdpa_chunk_f16(cs, k0, in->L, (uint32_t)c, &d) == 0) ||
                e_fdpa_chunk_clusters(in, cs, k0, fr, (uint32_t)c, &d) == 0) {
                c = d;
                continue;
            }
        }
        int nan = 0, pinf = 0, ninf = 0;
        wide_acc acc;
        acc_init(&acc);
        for (int k = k0; k < k0 + in->L; k++) {
            mf_value va = mf_decode_fast(in->fa, cs->a[k]), vb = mf_decode_fast(in->fb, cs->b[k]);
            int neg = va.sign ^ vb.sign;
            if (va.cls == MF_CLS_NAN || vb.cls == MF_CLS_NAN)
                nan = 1;
            else if (va.cls == MF_CLS_INF || vb.cls == MF_CLS_INF) {
                if (va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO)
                    nan = 1;
                else if (neg)
                    ninf = 1;
                else
                    pinf = 1;
            } else if (va.cls == MF_CLS_FINITE && vb.cls == MF_CLS_FINITE) {
                acc_add(&acc, neg, va.sig * vb.sig, va.exp + vb.exp - fr);
            }
        }
        mf_value vc = mf_decode_fast(MF_FMT_F32, c);
        if (vc.cls == MF_CLS_NAN) {
            nan = 1;
        } else if (vc.cls == MF_CLS_INF) {
            if (vc.sign)
                ninf = 1;
            else
                pinf = 1;
        } else if (vc.cls == MF_CLS_FINITE) {
            acc_add(&acc, vc.sign, vc.sig, vc.exp - 23);
        }
        uint64_t d;
        if (nan || (pinf && ninf))
            d = mf_canonical_nan(MF_FMT_F32);
        else if (pinf || ninf)
            d = mf_pack_inf(MF_FMT_F32, ninf);
        else
            d = acc_round_f32(&acc);
        MF_TRACE(tr, "chunk k = %d..%d: exact sum of %d products and c=0x%08llx, RNE to f32 -> 0x%08llx",
                  k0, k0 + in->L - 1, in->L, (unsigned long long)c, (unsigned long long)d);
        c = d;
    }
    return c;
}

/* ------------------------------------------------------- FTZ-Mul-Add */

/* A binary32 subnormal becomes a zero of the same sign. */
MF_HD static inline uint64_t flush_keep_sign(uint64_t x)
{
    return ((x & 0x7F800000u) == 0) ? (x & 0x80000000u) : x;
}

MF_HD static inline uint64_t ftz_mul(mf_format f, uint64_t x, uint64_t y)
{
    const int frac_bits = f == MF_FMT_F16 ? 10 : 7;  /* f16 or bf16 */
    mf_value vx = mf_decode_fast(f, x), vy = mf_decode_fast(f, y);
    /* subnormal and zero inputs to +0 */
    mf_value *v[2] = {&vx, &vy};
    for (int j = 0; j < 2; j++)
        if (v[j]->cls == MF_CLS_ZERO || (v[j]->cls == MF_CLS_FINITE && (v[j]->sig >> frac_bits) == 0)) {
            v[j]->cls = MF_CLS_ZERO;
            v[j]->sign = 0;
        }
    int s = vx.sign ^ vy.sign;
    if (vx.cls == MF_CLS_NAN || vy.cls == MF_CLS_NAN)
        return mf_canonical_nan(MF_FMT_F32);
    if (vx.cls == MF_CLS_INF || vy.cls == MF_CLS_INF) {
        if (vx.cls == MF_CLS_ZERO || vy.cls == MF_CLS_ZERO)
            return mf_canonical_nan(MF_FMT_F32);
        return mf_pack_inf(MF_FMT_F32, s);
    }
    if (vx.cls == MF_CLS_ZERO || vy.cls == MF_CLS_ZERO)
        return mf_pack_zero(MF_FMT_F32, s);
    uint64_t p = mf_round64(s, vx.sig * vy.sig, vx.exp + vy.exp - 2 * frac_bits, 23, 23, 8, MF_RM_RNE);
    return flush_keep_sign(p);
}

MF_HD static inline uint64_t ftz_add(uint64_t x, uint64_t y)
{
    return flush_keep_sign(mf_f32_add((uint32_t)x, (uint32_t)y));
}

/* ftz_add for the fast path: operands are zeros, normals or Inf/NaN (never
 * subnormal: every input and result is flushed).  Two normals are added
 * with 32 guard bits and a sticky bit, rounded to nearest even; a result
 * below 2^-126 is exact (both are multiples of 2^-149) and flushed. */
MF_HD static inline uint32_t ftz_add_fast(uint32_t x, uint32_t y)
{
    uint32_t ex = (x >> 23) & 0xFF, ey = (y >> 23) & 0xFF;
    if (ex == 0xFF || ey == 0xFF)
        return (uint32_t)ftz_add(x, y);
    uint32_t ax = x & 0x7FFFFFFFu, ay = y & 0x7FFFFFFFu;
    if (!ay)
        return ax ? x : x & y;   /* +-0 + +-0: the AND of the signs */
    if (!ax)
        return y;
    if (ax < ay) {
        uint32_t t = x; x = y; y = t;
        t = ex; ex = ey; ey = t;
    }
    const int d = (int)(ex - ey);
    uint64_t mx = (uint64_t)((x & 0x7FFFFFu) | 0x800000u) << 32, my = (uint64_t)((y & 0x7FFFFFu) | 0x800000u) << 32;
    if (d > 63)
        my = 1;
    else if (d > 0)
        my = (my >> d) | ((my & ((UINT64_C(1) << d) - 1)) != 0);
    const uint64_t m = (x ^ y) >> 31 ? mx - my : mx + my;
    if (!m)
        return 0;   /* exact cancellation: +0 */
    const uint32_t s = x & 0x80000000u;
    const int lead = 63 - mf_clz64(m);   /* 56 after a carry, 55 or less after a cancellation */
    int e = (int)ex + lead - 55;                /* biased */
    if (e <= 0)
        return s;
    uint64_t sig;
    const int sh = lead - 23;
    if (sh > 0) {
        const uint64_t kept = m >> sh, rem = m & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);
        sig = kept + (rem > half || (rem == half && (kept & 1)));
        if (sig >> 24) {
            sig >>= 1;
            e++;
        }
    } else {
        sig = m << -sh;
    }
    if (e >= 255)
        return s | 0x7F800000u;
    return s | (uint32_t)e << 23 | ((uint32_t)sig & 0x7FFFFFu);
}

#ifndef MF_DEVICE_BUILD  /* the vector-extension fast path: host only */
/* Eight products of f16 or bf16 inputs given as decode-table words (no
 * NaN/Inf), fr fraction bits.  The exact product has at most 22 significant
 * bits, so binary32 holds it exactly unless its exponent leaves the normal
 * range: above, RNE overflows to Inf; below, the rounded value is subnormal
 * or zero and is flushed, keeping its sign. */
AI v8u ftz_mul_lanes(v8u wa, v8u wb, const int fr)
{
    const v8u sa = wa & 0xFFFF, sb = wb & 0xFFFF;
    const v8u za = (v8u)((sa >> fr) == 0), zb = (v8u)((sb >> fr) == 0);   /* zero or subnormal: +0 */
    const v8u s = (((wa >> 28) & 1 & ~za) ^ ((wb >> 28) & 1 & ~zb)) << 31;
    const v8u p = sa * sb, top = p >> (2 * fr + 1);
    const v8i e = (v8i)((wa >> 16) & 0x3FF) + (v8i)((wb >> 16) & 0x3FF) - 1024 + (v8i)top;
    v8u r = s | (v8u)(e + 127) << 23 | ((p << ((23 - 2 * fr) - top)) & 0x7FFFFF);
    r = sel_lanes((v8u)(e > 127), s | 0x7F800000u, r);
    return sel_lanes((v8u)(e < -126) | za | zb, s, r);
}

/* ftz_add in eight lanes: the IEEE sum (lanes.h), a subnormal result
 * flushed to a zero of its sign. */
AI v8u ftz_add_lanes(v8u x, v8u y)
{
    const v8u r = ieee_add_lanes(x, y, 1);
    return sel_lanes((v8u)((r & 0x7F800000u) == 0), r & 0x80000000u, r);
}

/* The fast path with the products and the sums inside each group in eight
 * lanes, then the chain into c one group at a time.  NaN/Inf inputs take the
 * general path (returns -1); products and sums that overflow are handled. */
AI int ftz_mul_add_lanes_body(const mf_instr *in, const mf_case *cs, uint64_t *d)
{
    const int K = in->k, X = in->x;
    if ((in->fa != MF_FMT_F16 && in->fa != MF_FMT_BF16) || in->fb != in->fa || (X != 2 && X != 4) || K > 16 ||
        K % X)
        return -1;
    const uint32_t *tab = mf_dec_tab[in->fa];
    if (!tab)
        return -1;
    uint32_t wa[16] = {0}, wb[16] = {0}, any = 0;   /* word 0: +0 */
    for (int k = 0; k < K; k++) {
        wa[k] = tab[cs->a[k] & 0xFFFF];
        wb[k] = tab[cs->b[k] & 0xFFFF];
        any |= wa[k] | wb[k];
    }
    if (any & (UINT32_C(1) << 27))   /* cls >= MF_CLS_INF */
        return -1;
    uint32_t p[16];
    for (int h = 0; h < (K + 7) / 8; h++) {
        v8u va, vb, vp;
        LOAD8(va, wa + 8 * h);
        LOAD8(vb, wb + 8 * h);
        if (in->fa == MF_FMT_F16)
            vp = ftz_mul_lanes(va, vb, 10);
        else
            vp = ftz_mul_lanes(va, vb, 7);
        memcpy(p + 8 * h, &vp, sizeof vp);
    }
    /* level 1: p[2j] + p[2j+1]; level 2 (groups of four): pairs of those */
    uint32_t xs[8] = {0}, ys[8] = {0}, sum[8];
    for (int j = 0; j < K / 2; j++) {
        xs[j] = p[2 * j];
        ys[j] = p[2 * j + 1];
    }
    v8u vx, vy, vs;
    LOAD8(vx, xs);
    LOAD8(vy, ys);
    vs = ftz_add_lanes(vx, vy);
    memcpy(sum, &vs, sizeof vs);
    int groups = K / 2;
    if (X == 4) {
        for (int j = 0; j < 8; j++) {
            xs[j] = j < K / 4 ? sum[2 * j] : 0;
            ys[j] = j < K / 4 ? sum[2 * j + 1] : 0;
        }
        LOAD8(vx, xs);
        LOAD8(vy, ys);
        vs = ftz_add_lanes(vx, vy);
        memcpy(sum, &vs, sizeof vs);
        groups = K / 4;
    }
    uint32_t c = (uint32_t)cs->c;
    if ((c & 0x7F800000u) == 0)
        c = 0;  /* subnormal or zero c flushed to +0 */
    for (int g = 0; g < groups; g++)
        c = ftz_add_fast(c, sum[g]);
    *d = c;
    return 0;
}

/* Built for AVX2 and for the baseline ISA (lanes.h); the body is a separate
 * always-inline function, as clang wants no vector arguments in the
 * target_clones function itself. */
MULTI_ISA static int ftz_mul_add_lanes(const mf_instr *in, const mf_case *cs, uint64_t *d)
{
    return ftz_mul_add_lanes_body(in, cs, d);
}
#endif

MF_HD uint64_t mf_eval_ftz_mul_add(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
#ifndef MF_DEVICE_BUILD
    uint64_t fast;
    if (!tr && ftz_mul_add_lanes(in, cs, &fast) == 0)
        return fast;
#else
    (void)tr;   /* device code: no vector path, no tracing */
#endif
    const int P = in->x;
    uint64_t p[MF_KMAX_FLOAT];
    for (int k = 0; k < in->k; k++)
        p[k] = ftz_mul(in->fa, cs->a[k], cs->b[k]);
    uint64_t c = cs->c & 0xFFFFFFFFu;
    if ((c & 0x7F800000u) == 0)
        c = 0;  /* subnormal or zero c flushed to +0 */
    for (int k = 0; k < in->k; k += P) {
        uint64_t s = ftz_add(p[k], p[k + 1]);
        if (P == 4)
            s = ftz_add(s, ftz_add(p[k + 2], p[k + 3]));
        uint64_t d = ftz_add(c, s);
        MF_TRACE(tr, "group k = %d..%d: products %s, group sum 0x%08llx, c 0x%08llx -> 0x%08llx", k, k + P - 1,
                  "rounded to f32 with FTZ", (unsigned long long)s, (unsigned long long)c, (unsigned long long)d);
        c = d;
    }
    return c;
}

/* ------------------------------------------------- TR-FDPA, GTR-FDPA */

/* Truncated fused sum of products with F fraction bits (no c).  Zero
 * products take exponent -999.  Returns S (units 2^-F at 2^e_dot). */
MF_HD static int64_t tr_fused_products(const int *neg, const uint64_t *sig, const int *e, int n, int fr, int F,
                                 int *e_dot)
{
    int em = e[0];
    for (int i = 1; i < n; i++)
        if (e[i] > em)
            em = e[i];
    int64_t S = 0;
    for (int i = 0; i < n; i++) {
        int r = (em - e[i]) + fr - F;
        uint64_t t = r <= 0 ? sig[i] << -r : (r >= 64 ? 0 : sig[i] >> r);
        S += neg[i] ? -(int64_t)t : (int64_t)t;
    }
    *e_dot = em;
    return S;
}

/* floor(x * 2^sh) for signed x */
MF_HD static inline int64_t floor_shift(int64_t x, int sh)
{
    if (sh >= 0)
        return x * ((int64_t)1 << sh);
    if (sh <= -63)
        return x < 0 ? -1 : 0;
    return x >> -sh;  /* arithmetic shift: floor */
}

#define TR_ZERO_EXP (-999)
/* What the fast path returns besides 0 (a finite sum) and 1 (general path). */
enum { TR_PINF = 2, TR_NINF = 3, TR_NAN = 4 };

/* All-finite fast path of TR/GTR-FDPA step 2, specialized per operand
 * format: products decoded through the tables (tf32 arithmetically), the
 * truncated fused sums done in 32-bit lanes (each aligned product is below
 * 2^(F+2) = 2^26, and at most 16 of them are summed).  Returns 1 when an
 * operand is NaN/Inf (the general path handles those), TR_PINF, TR_NINF or
 * TR_NAN when products reach 2^128 (Inf, step 1), else 0 with S_dot (units
 * 2^-F at 2^e_dot) and e_dot. */
MF_HD static inline __attribute__((always_inline)) void tr_dec(mf_format f, uint64_t x, uint32_t *sig, int32_t *exp,
                                                         uint32_t *sign, uint32_t *special)
{
    if (f == MF_FMT_TF32) {
        uint32_t v = (uint32_t)(x >> 13) & 0x7FFFF, e = (v >> 10) & 0xFF;
        *sig = (v & 0x3FF) | ((uint32_t)(e != 0) << 10);
        *exp = (int32_t)(e ? e : 1) - 127;
        *sign = v >> 18;
        *special |= e == 0xFF;
        return;
    }
    uint32_t w = mf_dec_word(f, x);
    *sig = w & 0xFFFF;
    *exp = (int32_t)((w >> 16) & 0x3FF) - 512;
    *sign = (w >> 28) & 1;
    *special |= ((w >> 26) & 3) >= MF_CLS_INF;
}

MF_HD static inline __attribute__((always_inline)) int tr_products_core(mf_format fa, mf_format fb, int fr, int grouped,
                                                                  const uint64_t *a, const uint64_t *b, int L,
                                                                  int F, int64_t *S_dot, int *e_dot)
{
    uint32_t p[MF_KMAX_FLOAT], neg[MF_KMAX_FLOAT], special = 0, pinf = 0, ninf = 0;
    int32_t e[MF_KMAX_FLOAT];
    for (int i = 0; i < L; i++) {
        uint32_t sa, sb, ga, gb;
        int32_t ea, eb;
        tr_dec(fa, a[i], &sa, &ea, &ga, &special);
        tr_dec(fb, b[i], &sb, &eb, &gb, &special);
        p[i] = sa * sb;
        e[i] = p[i] ? ea + eb : TR_ZERO_EXP;
        neg[i] = ga ^ gb;
        /* a product of magnitude >= 2^128 becomes Inf (step 1) */
        const uint32_t ovf = !grouped && e[i] + (int32_t)(p[i] >> (fr + 1) != 0) >= 128;
        pinf |= ovf & !neg[i];
        ninf |= ovf & neg[i];
    }
    if (special)
        return 1;
    if (pinf | ninf)   /* the chunk is Inf or NaN whatever the sum (c is finite here) */
        return pinf && ninf ? TR_NAN : ninf ? TR_NINF : TR_PINF;
    const int up = F - fr;
    if (!grouped) {
        int32_t m0 = TR_ZERO_EXP, S0 = 0;
        for (int i = 0; i < L; i++)
            m0 = e[i] > m0 ? e[i] : m0;
        for (int i = 0; i < L; i++) {
            uint32_t dist = (uint32_t)(m0 - e[i]);
            dist = dist > 31 ? 31 : dist;
            uint32_t t = (p[i] << up) >> dist, m = 0u - neg[i];
            S0 += (int32_t)((t ^ m) - m);
        }
        *S_dot = S0;
        *e_dot = m0;
        return 0;
    }
    /* GTR: even- and odd-indexed products in separate sums */
    int32_t m2[2] = {TR_ZERO_EXP, TR_ZERO_EXP}, S2[2] = {0, 0};
    for (int par = 0; par < 2; par++) {
        for (int i = par; i < L; i += 2)
            m2[par] = e[i] > m2[par] ? e[i] : m2[par];
        for (int i = par; i < L; i += 2) {
            uint32_t dist = (uint32_t)(m2[par] - e[i]);
            dist = dist > 31 ? 31 : dist;
            uint32_t t = (p[i] << up) >> dist, m = 0u - neg[i];
            S2[par] += (int32_t)((t ^ m) - m);
        }
    }
    int ed = m2[0] > m2[1] ? m2[0] : m2[1];
    *S_dot = floor_shift(S2[0], m2[0] - ed) + floor_shift(S2[1], m2[1] - ed);
    *e_dot = ed;
    return 0;
}

#define TR_PAIR(NAME, FA, FB, FR, G)                                                                         \
    MF_HD static int NAME(const uint64_t *a, const uint64_t *b, int L, int F, int64_t *S_dot, int *e_dot)          \
    {                                                                                                        \
        switch (L) { /* constant chunk lengths unroll */                                                    \
        case 16: return tr_products_core(FA, FB, FR, G, a, b, 16, F, S_dot, e_dot);                          \
        case 8: return tr_products_core(FA, FB, FR, G, a, b, 8, F, S_dot, e_dot);                            \
        case 4: return tr_products_core(FA, FB, FR, G, a, b, 4, F, S_dot, e_dot);                            \
        default: return tr_products_core(FA, FB, FR, G, a, b, L, F, S_dot, e_dot);                           \
        }                                                                                                    \
    }
TR_PAIR(tr_f16, MF_FMT_F16, MF_FMT_F16, 20, 0)
TR_PAIR(tr_bf16, MF_FMT_BF16, MF_FMT_BF16, 14, 0)
TR_PAIR(tr_tf32, MF_FMT_TF32, MF_FMT_TF32, 20, 0)
TR_PAIR(gtr_fp8_fp8, MF_FMT_E4M3FNUZ, MF_FMT_E4M3FNUZ, 6, 1)
TR_PAIR(gtr_fp8_bf8, MF_FMT_E4M3FNUZ, MF_FMT_E5M2FNUZ, 5, 1)
TR_PAIR(gtr_bf8_fp8, MF_FMT_E5M2FNUZ, MF_FMT_E4M3FNUZ, 5, 1)
TR_PAIR(gtr_bf8_bf8, MF_FMT_E5M2FNUZ, MF_FMT_E5M2FNUZ, 4, 1)

typedef int (*tr_fast_fn)(const uint64_t *, const uint64_t *, int, int, int64_t *, int *);

MF_HD static tr_fast_fn tr_fast_for(const mf_instr *in)
{
    if (in->F != 24 || in->L > 16)
        return NULL;
    switch (in->fa * MF_FMT_COUNT + in->fb) {
    case MF_FMT_F16 * MF_FMT_COUNT + MF_FMT_F16: return tr_f16;
    case MF_FMT_BF16 * MF_FMT_COUNT + MF_FMT_BF16: return tr_bf16;
    case MF_FMT_TF32 * MF_FMT_COUNT + MF_FMT_TF32: return tr_tf32;
    case MF_FMT_E4M3FNUZ * MF_FMT_COUNT + MF_FMT_E4M3FNUZ: return gtr_fp8_fp8;
    case MF_FMT_E4M3FNUZ * MF_FMT_COUNT + MF_FMT_E5M2FNUZ: return gtr_fp8_bf8;
    case MF_FMT_E5M2FNUZ * MF_FMT_COUNT + MF_FMT_E4M3FNUZ: return gtr_bf8_fp8;
    case MF_FMT_E5M2FNUZ * MF_FMT_COUNT + MF_FMT_E5M2FNUZ: return gtr_bf8_bf8;
    default: return NULL;
    }
}

MF_HD uint64_t mf_eval_tr_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    const int F = in->F, F2 = in->x;
    const int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    const int grouped = in->family == MF_GTR_FDPA;
    uint64_t c = cs->c;
    const tr_fast_fn fast = tr_fast_for(in);
    const int L = in->L;
    for (int k0 = 0; k0 < in->k; k0 += L) {
        int e_dot;
        int64_t S_dot;
        mf_value vc;
        if (!tr && fast && ((c >> 23) & 0xFF) != 0xFF) {
            const int rc = fast(cs->a + k0, cs->b + k0, in->L, F, &S_dot, &e_dot);
            if (rc >= TR_PINF) {   /* an overflowing product, c finite */
                c = rc == TR_NAN ? mf_canonical_nan(MF_FMT_F32) : mf_pack_inf(MF_FMT_F32, rc == TR_NINF);
                continue;
            }
            if (rc == 0) {
                vc = mf_decode_fast(MF_FMT_F32, c);
                goto combine;
            }
        }
        int nan, pinf, ninf;   /* not initialized in the declaration: `goto combine` jumps past it (C++) */
        nan = pinf = ninf = 0;
        int neg[MF_KMAX_FLOAT], e[MF_KMAX_FLOAT];
        uint64_t sig[MF_KMAX_FLOAT];
        for (int i = 0; i < L; i++) {
            mf_value va = mf_decode_fast(in->fa, cs->a[k0 + i]), vb = mf_decode_fast(in->fb, cs->b[k0 + i]);
            neg[i] = va.sign ^ vb.sign;
            sig[i] = 0;
            e[i] = TR_ZERO_EXP;
            if (va.cls == MF_CLS_NAN || vb.cls == MF_CLS_NAN) {
                nan = 1;
            } else if (va.cls == MF_CLS_INF || vb.cls == MF_CLS_INF) {
                if (va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO)
                    nan = 1;
                else
                    { if (neg[i]) ninf = 1; else pinf = 1; }
            } else if (va.cls == MF_CLS_FINITE && vb.cls == MF_CLS_FINITE) {
                sig[i] = va.sig * vb.sig;
                e[i] = va.exp + vb.exp;
                /* a product of magnitude >= 2^128 becomes Inf (step 1) */
                if (!grouped && e[i] + (sig[i] >> (fr + 1) ? 1 : 0) >= 128) {
                    { if (neg[i]) ninf = 1; else pinf = 1; }
                    sig[i] = 0;
                    e[i] = TR_ZERO_EXP;
                }
            }
        }
        vc = mf_decode_fast(MF_FMT_F32, c);
        if (grouped && !nan && !pinf && !ninf && (vc.cls == MF_CLS_NAN || vc.cls == MF_CLS_INF)) {
            /* GTR-FDPA drops c when e_c < E - F - 1.  A NaN or Inf c carries
             * the exponent -1 there (frexp gives 0, minus 1 for s in [1,2)),
             * so a chunk whose finite products reach 2^(F+1) or more drops a
             * NaN or Inf c coming from the previous chunk (MMA-Sim v2). */
            int e_prod = TR_ZERO_EXP;
            for (int i = 0; i < L; i++)
                if (e[i] > e_prod)
                    e_prod = e[i];
            if (-1 < e_prod - F - 1) {
                MF_TRACE(tr, "c (NaN/Inf, exponent -1) dropped: below E - F - 1");
                vc.cls = MF_CLS_ZERO;
                vc.sign = 0;
                vc.exp = -1;
            }
        }
        if (vc.cls == MF_CLS_NAN) {
            nan = 1;
        } else if (vc.cls == MF_CLS_INF) {
            if (vc.sign)
                ninf = 1;
            else
                pinf = 1;
        }
        if (nan || (pinf && ninf)) {
            c = mf_canonical_nan(MF_FMT_F32);
            MF_TRACE(tr, "chunk k = %d..%d: NaN", k0, k0 + L - 1);
            continue;
        }
        if (pinf || ninf) {
            c = mf_pack_inf(MF_FMT_F32, ninf);
            MF_TRACE(tr, "chunk k = %d..%d: %cInf", k0, k0 + L - 1, ninf ? '-' : '+');
            continue;
        }
        /* step 2: products only, truncated fused sum with F bits */
        if (!grouped) {
            S_dot = tr_fused_products(neg, sig, e, L, fr, F, &e_dot);
        } else {
            /* even- and odd-indexed products summed separately, each then
             * aligned to their common max exponent and rounded down */
            int ne[MF_KMAX_FLOAT / 2], no[MF_KMAX_FLOAT / 2], ee[MF_KMAX_FLOAT / 2] = {0}, eo[MF_KMAX_FLOAT / 2] = {0};
            uint64_t se[MF_KMAX_FLOAT / 2], so[MF_KMAX_FLOAT / 2];
            for (int i = 0; i < L / 2; i++) {
                ne[i] = neg[2 * i]; se[i] = sig[2 * i]; ee[i] = e[2 * i];
                no[i] = neg[2 * i + 1]; so[i] = sig[2 * i + 1]; eo[i] = e[2 * i + 1];
            }
            int e_even, e_odd;
            int64_t S_even = tr_fused_products(ne, se, ee, L / 2, fr, F, &e_even);
            int64_t S_odd = tr_fused_products(no, so, eo, L / 2, fr, F, &e_odd);
            e_dot = e_even > e_odd ? e_even : e_odd;
            S_dot = floor_shift(S_even, e_even - e_dot) + floor_shift(S_odd, e_odd - e_dot);
            MF_TRACE(tr, "even sum %lld/2^%d * 2^%d, odd sum %lld/2^%d * 2^%d", (long long)S_even, F, e_even,
                      (long long)S_odd, F, e_odd);
        }
    combine:;
        /* step 3: E = max(e_dot, e_c); round the product sum down to F2+1
         * bits and c down to F bits, relative to E */
        int e_c = vc.cls == MF_CLS_ZERO ? (vc.exp == -1 ? -1 : -126) : vc.exp;
        int64_t sc = vc.cls == MF_CLS_ZERO ? 0 : (vc.sign ? -(int64_t)vc.sig : (int64_t)vc.sig);
        int E = e_dot > e_c ? e_dot : e_c;
        int64_t D = floor_shift(S_dot, e_dot - E + (F2 + 1 - F));     /* units 2^-(F2+1) */
        int64_t C = floor_shift(sc, e_c - E + F - 23);                 /* units 2^-F */
        if (grouped && e_c < E - F - 1)
            C = 0;  /* GTR: c is dropped when far below */
        int64_t T = D + C * ((int64_t)1 << (F2 + 1 - F));
        /* step 4: normalize, round down to F2 bits, then RNE to binary32 */
        int sign = T < 0;
        uint64_t mag = sign ? (uint64_t)0 - (uint64_t)T : (uint64_t)T;
        /* round down to F2 bits with binary32's exponent range: packed into an
         * IEEE-style field of 8 exponent and F2 fraction bits, then unpacked */
        uint64_t r31 = mf_round64(sign, mag, E - (F2 + 1), F2, F2, 8, MF_RM_RD);
        uint64_t b31 = (r31 >> F2) & 0xFF, f31 = r31 & ((UINT64_C(1) << F2) - 1);
        uint64_t d;
        if (b31 == 0xFF)
            d = mf_pack_inf(MF_FMT_F32, sign);  /* beyond 2^128: Inf after RNE too */
        else if (b31 == 0 && f31 == 0)
            d = mf_pack_zero(MF_FMT_F32, sign);
        else
            d = mf_round64(sign, f31 | (b31 ? UINT64_C(1) << F2 : 0), (b31 ? (int)b31 : 1) - 127 - F2, 23, 23, 8,
                           MF_RM_RNE);
        MF_TRACE(tr,
                  "chunk k = %d..%d: product sum %lld/2^%d * 2^%d; E = %d; rounded down: products %lld/2^%d, "
                  "c %lld/2^%d; sum %c0x%llx/2^%d * 2^%d; RD to %d bits, RNE -> 0x%08llx",
                  k0, k0 + L - 1, (long long)S_dot, F, e_dot, E, (long long)D, F2 + 1, (long long)C, F,
                  sign ? '-' : '+', (unsigned long long)mag, F2 + 1, E, F2, (unsigned long long)d);
        c = d;
    }
    return c;
}

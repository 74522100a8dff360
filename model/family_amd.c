/*
 * family_amd.c - the AMD matrix-core families (shared/DOMAIN.md section 3):
 * E-FDPA (CDNA1 f16/bf16), FTZ-Mul-Add (CDNA2 f16/bf16), TR-FDPA (CDNA3
 * xf32/f16/bf16) and GTR-FDPA (CDNA3 fp8/bf8).  FMA chains are in
 * family_fma.c.
 */
#include "internal.h"

#include <string.h>

/* ------------------------------------------------------------ E-FDPA */

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

static inline void acc_init(wide_acc *acc)
{
    acc->lo = ACC_WORDS;
    acc->hi = -1;
}

/* acc += (-1)^neg * mag * 2^exp, where exp >= -ACC_LSB and mag < 2^63. */
static inline void acc_add(wide_acc *acc, int neg, uint64_t mag, int exp)
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
static uint64_t acc_round_f32(wide_acc *acc)
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
    int msb = top * 64 + 63 - __builtin_clzll(r[top]);  /* bit index */
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

uint64_t mf_eval_e_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    const int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    uint64_t c = cs->c;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
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
static inline uint64_t flush_keep_sign(uint64_t x)
{
    return ((x & 0x7F800000u) == 0) ? (x & 0x80000000u) : x;
}

static uint64_t ftz_mul(mf_format f, uint64_t x, uint64_t y)
{
    const mf_format_info *fi = mf_format_get(f);
    mf_value vx = mf_decode_fast(f, x), vy = mf_decode_fast(f, y);
    /* subnormal and zero inputs to +0 */
    mf_value *v[2] = {&vx, &vy};
    for (int j = 0; j < 2; j++)
        if (v[j]->cls == MF_CLS_ZERO || (v[j]->cls == MF_CLS_FINITE && (v[j]->sig >> fi->frac_bits) == 0)) {
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
    uint64_t p = mf_round_pack(MF_FMT_F32, s, vx.sig * vy.sig, vx.exp + vy.exp - 2 * fi->frac_bits, 23, MF_RM_RNE);
    return flush_keep_sign(p);
}

static inline uint64_t ftz_add(uint64_t x, uint64_t y)
{
    return flush_keep_sign(mf_ieee_add(MF_FMT_F32, x, y));
}

uint64_t mf_eval_ftz_mul_add(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    const int P = in->x;
    uint64_t p[MF_KMAX];
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
static int64_t tr_fused_products(const int *neg, const uint64_t *sig, const int *e, int n, int fr, int F,
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
static inline int64_t floor_shift(int64_t x, int sh)
{
    if (sh >= 0)
        return x * ((int64_t)1 << sh);
    if (sh <= -63)
        return x < 0 ? -1 : 0;
    return x >> -sh;  /* arithmetic shift: floor */
}

#define TR_ZERO_EXP (-999)

uint64_t mf_eval_tr_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    const int F = in->F, F2 = in->x;
    const int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    const int grouped = in->family == MF_GTR_FDPA;
    uint64_t c = cs->c;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        int nan = 0, pinf = 0, ninf = 0;
        int neg[MF_KMAX], e[MF_KMAX];
        uint64_t sig[MF_KMAX];
        const int L = in->L;
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
        mf_value vc = mf_decode_fast(MF_FMT_F32, c);
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
        int e_dot;
        int64_t S_dot;
        if (!grouped) {
            S_dot = tr_fused_products(neg, sig, e, L, fr, F, &e_dot);
        } else {
            /* even- and odd-indexed products summed separately, each then
             * aligned to their common max exponent and rounded down */
            int ne[MF_KMAX / 2], no[MF_KMAX / 2], ee[MF_KMAX / 2], eo[MF_KMAX / 2];
            uint64_t se[MF_KMAX / 2], so[MF_KMAX / 2];
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
        uint64_t s31;
        int e31;
        mf_round_sig(sign, mag, E - (F2 + 1), F2, -126, MF_RM_RD, &s31, &e31);
        uint64_t d = mf_round_pack(MF_FMT_F32, sign, s31, e31 - F2, 23, MF_RM_RNE);
        MF_TRACE(tr,
                  "chunk k = %d..%d: product sum %lld/2^%d * 2^%d; E = %d; rounded down: products %lld/2^%d, "
                  "c %lld/2^%d; sum %c0x%llx/2^%d * 2^%d; RD to %d bits, RNE -> 0x%08llx",
                  k0, k0 + L - 1, (long long)S_dot, F, e_dot, E, (long long)D, F2 + 1, (long long)C, F,
                  sign ? '-' : '+', (unsigned long long)mag, F2 + 1, E, F2, (unsigned long long)d);
        c = d;
    }
    return c;
}

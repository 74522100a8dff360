/*
 * family_tfdpa.c - the NVIDIA truncated fused dot-product-add families
 * (shared/DOMAIN.md section 3): T-FDPA, ST-FDPA (block-scaled, one scale per
 * block of products), GST-FDPA (grouped, e2m1 K=64), and the f16 emulation
 * of fp8 mma.sync on sm_90/sm_100 (DOMAIN section 5).
 */
#include "internal.h"

#define MAX_TERMS (MF_KMAX_FLOAT + 1)

/* Step 6: the sum (below 2^64) converted with rho into the output format. */
MF_HD static uint64_t finish_rho(mf_format fd, mf_rho rho, int sign, uint64_t mag, int exp)
{
    switch (rho) {
    case MF_RZ_FP32: return mf_round64(sign, mag, exp, 23, 23, 8, MF_RM_RZ);
    case MF_RZ_E8M13: return mf_round64(sign, mag, exp, 13, 23, 8, MF_RM_RZ);
    case MF_RNE_FP16: return mf_round64(sign, mag, exp, 10, 10, 5, MF_RM_RNE);
    case MF_RZ: return mf_round_pack(fd, sign, mag, exp, mf_format_get(fd)->frac_bits, MF_RM_RZ);
    case MF_RD: return mf_round_pack(fd, sign, mag, exp, mf_format_get(fd)->frac_bits, MF_RM_RD);
    case MF_RU: return mf_round_pack(fd, sign, mag, exp, mf_format_get(fd)->frac_bits, MF_RM_RU);
    default: return mf_round_pack(fd, sign, mag, exp, mf_format_get(fd)->frac_bits, MF_RM_RNE);
    }
}

/* The state of one fused sum: special-value flags and exact terms
 * (-1)^neg * sig * 2^(exp - fr), where fr is the term's fraction-bit count. */
typedef struct fused_sum {
    int n;
    int nan, pinf, ninf;
    uint64_t sig[MAX_TERMS];
    int16_t exp[MAX_TERMS];
    uint8_t fr[MAX_TERMS];
    uint8_t neg[MAX_TERMS];
} fused_sum;

MF_HD static inline void add_special(fused_sum *fs, int sign)
{
    if (sign)
        fs->ninf = 1;
    else
        fs->pinf = 1;
}

MF_HD static inline void add_term(fused_sum *fs, int neg, uint64_t sig, int exp, int fr)
{
    int i = fs->n++;
    fs->sig[i] = sig;
    fs->exp[i] = (int16_t)exp;
    fs->fr[i] = (uint8_t)fr;
    fs->neg[i] = (uint8_t)neg;
}

/* Add the accumulator c (format fc) as a term; a zero c takes e_zero. */
MF_HD static void add_c(fused_sum *fs, mf_format fc, uint64_t c, int e_zero)
{
    mf_value v = mf_decode_fast(fc, c);
    int fr = mf_format_get(fc)->frac_bits;
    switch (v.cls) {
    case MF_CLS_NAN: fs->nan = 1; break;
    case MF_CLS_INF: add_special(fs, v.sign); break;
    case MF_CLS_ZERO: add_term(fs, v.sign, 0, e_zero, fr); break;
    default: add_term(fs, v.sign, v.sig, v.exp, fr); break;
    }
}

/* Steps 4-6 of T-FDPA: align every term to e_max, truncate toward zero to
 * F fraction bits, sum exactly, convert with rho.  Specials (step 1) first. */
MF_HD static uint64_t finish_fused(const fused_sum *fs, int F, mf_format fd, mf_rho rho, int zero_plus,
                             const mf_trace *tr)
{
    if (fs->nan || (fs->pinf && fs->ninf)) {
        MF_TRACE(tr, "special: NaN (NaN input, 0*Inf, or +Inf with -Inf)");
        return mf_canonical_nan(fd);
    }
    if (fs->pinf || fs->ninf) {
        MF_TRACE(tr, "special: %cInf", fs->ninf ? '-' : '+');
        return mf_pack_inf(fd, fs->ninf);
    }
    int e_max = fs->exp[0];
    for (int i = 1; i < fs->n; i++)
        if (fs->exp[i] > e_max)
            e_max = fs->exp[i];
    MF_TRACE(tr, "e_max = %d; align to 2^%d, truncate to F = %d fraction bits", e_max, e_max, F);
    int64_t S = 0;
    for (int i = 0; i < fs->n; i++) {
        /* trunc(sig * 2^(exp - fr) * 2^(F - e_max)) */
        int r = (e_max - fs->exp[i]) + fs->fr[i] - F;
        uint64_t t;
        if (r <= 0)
            t = fs->sig[i] << -r;
        else
            t = r >= 64 ? 0 : fs->sig[i] >> r;
        S += fs->neg[i] ? -(int64_t)t : (int64_t)t;
        if (tr)
            MF_TRACE(tr, "  term %2d: %c0x%llx * 2^%d (%d frac bits) -> %c0x%llx / 2^%d%s", i,
                      fs->neg[i] ? '-' : '+', (unsigned long long)fs->sig[i], fs->exp[i], fs->fr[i],
                      fs->neg[i] ? '-' : '+', (unsigned long long)t, F,
                      (r > 0 && r < 64 && (fs->sig[i] & ((UINT64_C(1) << r) - 1))) || (r >= 64 && fs->sig[i])
                          ? " (bits truncated)" : "");
    }
    int sign = S < 0;
    uint64_t mag = sign ? (uint64_t)0 - (uint64_t)S : (uint64_t)S;
    uint64_t d = finish_rho(fd, rho, sign, mag, e_max - F);
    if (zero_plus && (d & ~(UINT64_C(1) << (mf_format_get(fd)->bits - 1))) == 0)
        d = 0;  /* a sum that rounds to zero gives +0 (instr_table.c) */
    if (tr)
        MF_TRACE(tr, "sum = %c0x%llx * 2^%d; %s -> 0x%0*llx", sign ? '-' : '+', (unsigned long long)mag,
                  e_max - F, mf_rho_name(rho), mf_format_get(fd)->hex_width, (unsigned long long)d);
    return d;
}

/* One chunk of T-FDPA / ST-FDPA: products a[0..L-1]*b[0..L-1] (each adding
 * the scale exponents e_sab when block-scaled) plus c of format fc; without
 * c (with_c 0: the refuted alternative of wgmma's scale-d = 0 that
 * no_c_neg_zero selects) c is no term at all, and an exact zero sum is -0
 * when every product is -0. */
MF_HD static uint64_t t_fdpa_chunk(const mf_instr *in, mf_format fc, uint64_t c, const uint64_t *a,
                             const uint64_t *b, int L, int scale_nan, int e_sab, int with_c, const mf_trace *tr)
{
    uint64_t d;
    if (with_c && !tr && !scale_nan && mf_t_fdpa_chunk_fast(in, fc, c, a, b, L, e_sab, &d) == 0)
        return d;
    int all_neg_zero = 1;
    fused_sum fs;
    fs.n = 0;
    fs.nan = scale_nan;
    fs.pinf = fs.ninf = 0;
    const int fr = mf_format_get(in->fa)->frac_bits + mf_format_get(in->fb)->frac_bits;
    for (int k = 0; k < L; k++) {
        mf_value va = mf_decode_fast(in->fa, a[k]), vb = mf_decode_fast(in->fb, b[k]);
        int neg = va.sign ^ vb.sign;
        all_neg_zero &= neg && (va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO);
        if (va.cls == MF_CLS_FINITE && vb.cls == MF_CLS_FINITE) {
            /* exact, not renormalized: s = s_a*s_b, e = e_a + e_b (step 2) */
            add_term(&fs, neg, va.sig * vb.sig, va.exp + vb.exp + e_sab, fr);
        } else if (va.cls == MF_CLS_NAN || vb.cls == MF_CLS_NAN) {
            fs.nan = 1;
        } else if (va.cls == MF_CLS_INF || vb.cls == MF_CLS_INF) {
            if (va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO)
                fs.nan = 1;
            else
                add_special(&fs, neg);
        } else {
            add_term(&fs, neg, 0, in->e_zero, fr);  /* zero product (step 3) */
        }
    }
    if (with_c)
        add_c(&fs, fc, c, in->e_zero);
    else
        MF_TRACE(tr, "no c (scale-d = 0): the products alone");
    d = finish_fused(&fs, in->F, in->fd, in->rho, in->zero_plus, tr);
    if (!with_c && in->no_c_neg_zero && all_neg_zero && L > 0 && !fs.nan && !fs.pinf && !fs.ninf) {
        d |= UINT64_C(1) << (mf_format_get(in->fd)->bits - 1);
        MF_TRACE(tr, "every product -0 and no c: -0 (no_c_neg_zero)");
    }
    return d;
}

MF_HD uint64_t mf_eval_t_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    uint64_t c = cs->c;
    mf_format fc = in->fc;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        int scale_nan = 0, e_sab = 0;
        if (in->family == MF_ST_FDPA) {
            /* ST-FDPA: products add their row's and column's scale exponents */
            int blk = k0 / in->block;
            mf_value sa = mf_decode_fast(in->fs, cs->sa[blk]), sb = mf_decode_fast(in->fs, cs->sb[blk]);
            scale_nan = sa.cls == MF_CLS_NAN || sb.cls == MF_CLS_NAN;
            e_sab = sa.exp + sb.exp;
            MF_TRACE(tr, "scales: e_sa = %d, e_sb = %d%s", sa.exp, sb.exp, scale_nan ? " (NaN)" : "");
        }
        if (in->L < in->k)
            MF_TRACE(tr, "chunk k = %d..%d, c = 0x%llx", k0, k0 + in->L - 1, (unsigned long long)c);
        int with_c = 1;
        if (in->no_c && k0 == 0) {
            /* scale-d = 0 reads no c, and the sum is what +0 as c gives: an H100 agreed with that on 10^7
             * cases of every dense floating-point wgmma row, and disagreed with "no term for c" (tf32 and bf16
             * rows: a zero c still takes e_zero in e_max), docs/findings.md.  no_c_neg_zero keeps the refuted
             * alternative (the products alone, -0 from all -0 products) for test_gpu forms to count. */
            if (in->no_c_neg_zero) {
                with_c = 0;
            } else {
                c = 0;
                MF_TRACE(tr, "no c (scale-d = 0): c = +0");
            }
        }
        c = t_fdpa_chunk(in, fc, c, cs->a + k0, cs->b + k0, in->L, scale_nan, e_sab, with_c, tr);
        fc = in->fd;  /* later chunks accumulate into D's format */
    }
    return c;
}

/* The product of e2m1 values a and b (4-bit patterns), signed, in units of 2^-2. */
MF_HD static inline int e2m1_product_of(uint32_t a, uint32_t b)
{
    mf_value va = mf_decode(MF_FMT_E2M1, a), vb = mf_decode(MF_FMT_E2M1, b);
    int p = (int)((va.sig * vb.sig) << (va.exp + vb.exp));   /* e2m1: emin 0, one fraction bit */
    return (va.sign ^ vb.sign) ? -p : p;
}

#ifndef MF_DEVICE_BUILD
/* e2m1 x e2m1 products (e2m1_product_of), index (a << 4) | b: host only. */
static int16_t e2m1_products[256];

__attribute__((constructor)) static void build_e2m1_products(void)
{
    for (uint32_t a = 0; a < 16; a++)
        for (uint32_t b = 0; b < 16; b++)
            e2m1_products[a << 4 | b] = (int16_t)e2m1_product_of(a, b);
}
#endif

/* e2m1_product_of(a, b): from the table on the host, worked out in device code. */
MF_HD static inline int e2m1_product(uint32_t a, uint32_t b)
{
#ifdef MF_DEVICE_BUILD
    return e2m1_product_of(a, b);
#else
    return e2m1_products[a << 4 | b];
#endif
}

/* GST-FDPA with e2m1 inputs, untraced: the group sums from the product
 * table, then finish_fused.  @return 0 when it applies (no NaN scale). */
MF_HD static int gst_fdpa_fast(const mf_instr *in, const mf_case *cs, uint64_t *d)
{
    if (in->fa != MF_FMT_E2M1 || in->fb != MF_FMT_E2M1 || in->L != in->k)
        return -1;
    const int G = in->x, fsb = mf_format_get(in->fs)->frac_bits;
    fused_sum fs;
    fs.n = 0;
    fs.nan = fs.pinf = fs.ninf = 0;
    for (int g0 = 0; g0 < in->k; g0 += G) {
        int P = 0, nonzero = 0;
        for (int k = g0; k < g0 + G; k++) {
            const int p = e2m1_product((uint32_t)(cs->a[k] & 15), (uint32_t)(cs->b[k] & 15));
            P += p;
            nonzero |= p;
        }
        const int blk = g0 / in->block;
        const mf_value sa = mf_decode_fast(in->fs, cs->sa[blk]), sb = mf_decode_fast(in->fs, cs->sb[blk]);
        if (sa.cls == MF_CLS_NAN || sb.cls == MF_CLS_NAN)
            return -1;
        const uint64_t SS = sa.sig * sb.sig;
        /* all-zero group or zero scale: e_zero (as the general path below) */
        add_term(&fs, P < 0, (uint64_t)(P < 0 ? -P : P) * SS, nonzero && SS ? sa.exp + sb.exp : in->e_zero,
                 2 + 2 * fsb);
    }
    add_c(&fs, in->fc, cs->c, in->e_zero);
    *d = finish_fused(&fs, in->F, in->fd, in->rho, in->zero_plus, NULL);
    return 0;
}

/* GST-FDPA: products of e2m1 summed exactly in groups of G, each group sum
 * scaled by its block's scales, then a truncated fused sum of the group
 * terms and c. */
MF_HD uint64_t mf_eval_gst_fdpa(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    uint64_t fast;
    if (!tr && gst_fdpa_fast(in, cs, &fast) == 0)
        return fast;
    const int G = in->x;
    const int fa = mf_format_get(in->fa)->frac_bits, fb = mf_format_get(in->fb)->frac_bits;
    const int fsb = mf_format_get(in->fs)->frac_bits;
    uint64_t c = cs->c;
    mf_format fc = in->fc;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        fused_sum fs;
        fs.n = 0;
        fs.nan = fs.pinf = fs.ninf = 0;
        for (int g0 = k0; g0 < k0 + in->L; g0 += G) {
            /* exact group sum in units of 2^-(fa+fb) */
            int64_t P = 0;
            int all_zero = 1;
            for (int k = g0; k < g0 + G; k++) {
                mf_value va = mf_decode_fast(in->fa, cs->a[k]), vb = mf_decode_fast(in->fb, cs->b[k]);
                uint64_t p = (va.sig * vb.sig) << (va.exp + vb.exp - 2 * (1 - mf_format_get(in->fa)->bias));
                if (p)
                    all_zero = 0;
                P += (va.sign ^ vb.sign) ? -(int64_t)p : (int64_t)p;
            }
            int blk = g0 / in->block;
            mf_value sa = mf_decode_fast(in->fs, cs->sa[blk]), sb = mf_decode_fast(in->fs, cs->sb[blk]);
            if (sa.cls == MF_CLS_NAN || sb.cls == MF_CLS_NAN)
                fs.nan = 1;
            uint64_t SS = sa.sig * sb.sig;
            int neg = P < 0;
            uint64_t mag = (uint64_t)(neg ? -P : P) * SS;
            /* value = mag * 2^(emin_a + emin_b - fa - fb) * 2^(e_sa + e_sb - 2 fsb) */
            int e = sa.exp + sb.exp + 2 * (1 - mf_format_get(in->fa)->bias);
            int fr = fa + fb + 2 * fsb;
            if (all_zero || SS == 0)
                e = in->e_zero;  /* all-zero group or zero scale: e_zero */
            MF_TRACE(tr, "group k = %d..%d: sum = %c0x%llx / 2^%d, scale 0x%llx * 2^%d", g0, g0 + G - 1,
                      neg ? '-' : '+', (unsigned long long)(uint64_t)(neg ? -P : P), fa + fb,
                      (unsigned long long)SS, sa.exp + sb.exp - 2 * fsb);
            add_term(&fs, neg, mag, e, fr);
        }
        add_c(&fs, fc, c, in->e_zero);
        c = finish_fused(&fs, in->F, in->fd, in->rho, in->zero_plus, tr);
        fc = in->fd;
    }
    return c;
}

/* fp8 mma.sync on sm_90/sm_100 (DOMAIN section 5): ptxas converts the fp8
 * operands to f16 and issues HMMA.16816 steps from a zero accumulator
 * (for K=32: k = 0,1,4,5,...,29, then k = 2,3,6,7,...,31), then adds c with
 * an ordinary IEEE addition in D's format.  K=16 is modelled the same way,
 * as two HMMA.1688 steps over the same split of k. */
#ifndef MF_DEVICE_BUILD
/* e4m3 or e5m2 (f) byte x to f16: exact (every value is an f16 value); NaN -> 0x7FFF. */
static uint16_t fp8_f16_of(mf_format f, uint32_t x)
{
    mf_value v = mf_decode(f, x);
    int fr = mf_format_get(f)->frac_bits;
    uint64_t h;
    if (v.cls == MF_CLS_NAN)
        h = 0x7FFF;
    else if (v.cls == MF_CLS_INF)
        h = mf_pack_inf(MF_FMT_F16, v.sign);
    else
        h = mf_round_pack(MF_FMT_F16, v.sign, v.sig, v.exp - fr, 10, MF_RM_RNE);
    return (uint16_t)h;
}

/* fp8_f16_of of every byte, e4m3 then e5m2: host only. */
static uint16_t fp8_f16[2][256];

__attribute__((constructor)) static void build_fp8_tables(void)
{
    const mf_format fmts[2] = {MF_FMT_E4M3, MF_FMT_E5M2};
    for (int i = 0; i < 2; i++)
        for (uint32_t x = 0; x < 256; x++)
            fp8_f16[i][x] = fp8_f16_of(fmts[i], x);
}

const uint16_t *mf_fp8_f16_table(mf_format f)
{
    return fp8_f16[f == MF_FMT_E5M2];
}
#endif

#ifdef MF_DEVICE_BUILD
/* fp8_f16_of from the bit fields, for device code (no table there, and
 * mf_decode plus a rounding per operand costs too much there): the same bits
 * for every byte (tests/model/test_device_model.cpp checks all 512). */
MF_HD static inline uint16_t fp8_f16_fields(mf_format f, uint32_t x)
{
    const uint32_t s = (x & 0x80) << 8;
    if (f == MF_FMT_E5M2)   /* e5m2 is the top byte of an f16; NaN: exponent all ones, fraction nonzero */
        return (x & 0x7F) > 0x7C ? 0x7FFF : (uint16_t)(x << 8);
    if ((x & 0x7F) == 0x7F)   /* e4m3: S.1111.111 is the NaN; no Inf */
        return 0x7FFF;
    const uint32_t e = (x >> 3) & 0xF, m = x & 7;
    if (e)   /* normal: 1.m * 2^(e-7), f16 exponent field e - 7 + 15 */
        return (uint16_t)(s | ((e + 8) << 10) | (m << 7));
    if (!m)
        return (uint16_t)s;
    /* subnormal m * 2^-9 with its leading bit at p: 1.f * 2^(p-9), an f16 normal */
    const int p = 63 - mf_clz64(m);
    return (uint16_t)(s | ((uint32_t)(p + 6) << 10) | ((m << (10 - p)) & 0x3FF));
}
#endif

MF_HD uint16_t mf_fp8_f16(mf_format f, uint64_t x)
{
#ifdef MF_DEVICE_BUILD
    return fp8_f16_fields(f, (uint32_t)(x & 0xFF));
#else
    return fp8_f16[f == MF_FMT_E5M2][x & 0xFF];
#endif
}

#ifdef MF_DEVICE_BUILD
/* Device code: 1 when the f16 step of F16-emu row `in` takes the fast chunk
 * (fast_ok of the HMMA.16816 row that mf_eval_f16_emu makes). */
MF_HD static inline int mf_f16_emu_fast(const mf_instr *in)
{
    mf_instr h = *in;
    h.fa = h.fb = MF_FMT_F16;
    h.fc = h.fd;
    h.family = MF_T_FDPA;
    return fast_ok(&h, h.fd);
}

/* Device code: a whole F16-emu dot product (the untraced mf_eval_f16_emu) of
 * K = 16 or 32 fp8 inputs of formats fa, fb, from operand arrays, for a row
 * with mf_f16_emu_fast: the two passes through chunk_core_as
 * (family_tfdpa_fast.c, which model_device.cuh includes before this file),
 * each fp8 input decoded straight into the f16 it converts to, then c
 * added.  Callers pass formats and K as constants (mf_eval_f16_emu
 * below, and the GPU's fixed-shape check, devices/cuda/verify.cu): the f16
 * operands stay in registers and nothing is called indirectly.  packed:
 * NULL, or the K products as mf_prod_pack entries (as_f16 1), by k. */
MF_HD static inline __attribute__((always_inline)) uint64_t mf_f16_emu_fixed(const mf_instr *in, mf_format fa,
                                                                            mf_format fb, const uint64_t *a,
                                                                            const uint64_t *b,
                                                                            const uint32_t *packed, uint64_t c,
                                                                            const int K)
{
    mf_instr h = *in;               /* the HMMA.16816 step: f16 x f16 (mf_eval_f16_emu) */
    h.fa = h.fb = MF_FMT_F16;
    h.fc = h.fd;
    h.family = MF_T_FDPA;
    const int half = K / 2;
    uint64_t a8[MF_KMAX_FLOAT], b8[MF_KMAX_FLOAT];   /* the fp8 inputs in pass order, decoded as their f16 by chunk_core_as */
    uint32_t w8[MF_KMAX_FLOAT];                      /* their packed products in pass order */
    MF_UNROLL
    for (int k = 0; k < K; k++) {
        const int pos = mf_f16_emu_pos(k, half);
        a8[pos] = a[k];
        b8[pos] = b[k];
        w8[pos] = packed ? packed[k] : 0;
    }
    uint64_t acc = mf_pack_zero(h.fd, 0);
    MF_UNROLL
    for (int pass = 0; pass < 2; pass++)
        chunk_core_as(&h, fa, fb, h.fd, acc, a8 + pass * half, b8 + pass * half, half, 0, 1,
                      packed ? w8 + pass * half : NULL, 1, &acc);
    return mf_ieee_add(in->fd, acc, c);
}
#endif

MF_HD uint64_t mf_eval_f16_emu(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    mf_instr h = *in;               /* the HMMA.16816 step: f16 x f16 */
    h.fa = h.fb = MF_FMT_F16;
    h.fc = h.fd;
    h.family = MF_T_FDPA;
    /* Two chained passes from a zero accumulator, as ptxas emits them for
     * sm_90 (SASS of the wrappers): K=32 is two HMMA.16816, K=16 two
     * HMMA.1688; pass p takes the k with ((k >> 1) & 1) == p, because each
     * f16 register unpacks two adjacent fp8 bytes (F2FP.F16.*.UNPACK_B of the
     * low half, then of .H1).  The inputs go straight to their pass
     * (mf_f16_emu_pos). */
#ifdef MF_DEVICE_BUILD
    if ((in->k == 32 || in->k == 16) && mf_f16_emu_fast(in))   /* the table's K, as a constant */
        return in->k == 32 ? mf_f16_emu_fixed(in, in->fa, in->fb, cs->a, cs->b, NULL, cs->c, 32)
                           : mf_f16_emu_fixed(in, in->fa, in->fb, cs->a, cs->b, NULL, cs->c, 16);
#endif
    const int half = in->k / 2;
    uint64_t a16[MF_KMAX_FLOAT], b16[MF_KMAX_FLOAT];
#ifndef MF_DEVICE_BUILD
    const uint16_t *ta = mf_fp8_f16_table(in->fa), *tb = mf_fp8_f16_table(in->fb);
    for (int k = 0; k < in->k; k++) {
        const int pos = mf_f16_emu_pos(k, half);
        a16[pos] = ta[cs->a[k] & 0xFF];
        b16[pos] = tb[cs->b[k] & 0xFF];
    }
#else
    for (int k = 0; k < in->k; k++) {
        const int pos = mf_f16_emu_pos(k, half);
        a16[pos] = mf_fp8_f16(in->fa, cs->a[k]);
        b16[pos] = mf_fp8_f16(in->fb, cs->b[k]);
    }
#endif
    uint64_t acc = mf_pack_zero(in->fd, 0);
    for (int pass = 0; pass < 2; pass++) {
        MF_TRACE(tr, "HMMA.168%d pass %d over k = %d,%d,%d,%d,...", half, pass, 2 * pass, 2 * pass + 1,
                 2 * pass + 4, 2 * pass + 5);
        acc = t_fdpa_chunk(&h, h.fd, acc, a16 + pass * half, b16 + pass * half, half, 0, 0, 1, tr);
    }
    uint64_t d = mf_ieee_add(in->fd, acc, cs->c);
    MF_TRACE(tr, "IEEE add of c: 0x%llx + 0x%llx -> 0x%llx", (unsigned long long)acc,
              (unsigned long long)cs->c, (unsigned long long)d);
    return d;
}

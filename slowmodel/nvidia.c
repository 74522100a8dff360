/*
 * nvidia.c - the NVIDIA families of shared/DOMAIN.md section 3, held
 * exactly: T-FDPA, ST-FDPA, GST-FDPA, and the fp8 mma.sync sequence of
 * section 5 (fp8 -> f16, two chained HMMA.16816 from zero, then an IEEE add
 * of c).
 */
#include "slow_internal.h"

/* One term of a truncated fused sum: its class and sign, its exact value,
 * and the exponent it is aligned by (DOMAIN 3, T-FDPA steps 2-3). */
typedef struct term {
    int cls;
    int neg;
    int e;
    sm_num v;
} term;

/* The output conversion rho of a table row: format, fraction bits, mode. */
static void rho_of(const mf_instr *in, mf_format *f, int *prec, sm_mode *mode)
{
    switch (in->rho) {
    case MF_RZ_FP32: *f = MF_FMT_F32; *prec = 23; *mode = SM_RZ; return;
    case MF_RZ_E8M13: *f = MF_FMT_F32; *prec = 13; *mode = SM_RZ; return;
    case MF_RNE_FP16: *f = MF_FMT_F16; *prec = 10; *mode = SM_RNE; return;
    default: *f = in->fd; *prec = sm_frac_bits(in->fd); *mode = SM_RNE; return;
    }
}

/* Steps 1 and 4-8 of T-FDPA over n terms: specials, alignment to e_max with
 * truncation toward zero at F fraction bits, exact sum, conversion rho. */
static uint64_t fused_sum(const mf_instr *in, term *t, int n)
{
    mf_format f;
    int prec;
    sm_mode mode;
    rho_of(in, &f, &prec, &mode);
    int nan = 0, pos_inf = 0, neg_inf = 0;
    for (int i = 0; i < n; i++) {
        nan |= t[i].cls == SM_NAN;
        if (t[i].cls == SM_INF)
            *(t[i].neg ? &neg_inf : &pos_inf) = 1;
    }
    if (nan || (pos_inf && neg_inf))
        return sm_nan(f);
    if (pos_inf || neg_inf)
        return sm_inf(f, neg_inf);
    int e_max = t[0].e;
    for (int i = 1; i < n; i++)
        if (t[i].e > e_max)
            e_max = t[i].e;
    sm_num sum;
    sm_zero(&sum);
    for (int i = 0; i < n; i++) {
        sm_round(&t[i].v, e_max - in->F, SM_RZ);
        sm_add(&sum, &t[i].v);
    }
    /* step 8: an exact zero sum is +0, even when every term is -0 (the peer
       model's convention: its fixed-point sum starts from +0; DOMAIN leaves
       the sign to hardware).  A non-zero sum that rounds to zero keeps its
       sign (sm_round_pack). */
    uint64_t d = sm_round_pack(f, &sum, prec, mode, 0);
    /* rows marked zero_plus (the zero rule of their architecture, arch_table.def): a sum that
       rounds to zero gives +0 too */
    if (in->zero_plus && sm_decode(f, d).cls == SM_ZERO)
        d = 0;
    return d;
}

/* The product term a*b (DOMAIN 3, T-FDPA steps 2-3), scaled by the block
 * scales sa, sb when given (ST-FDPA: exponents add). */
static void product_term(term *t, const sm_val *a, const sm_val *b, const sm_val *sa, const sm_val *sb, int e_zero)
{
    t->neg = a->neg ^ b->neg;
    int a_inf = a->cls == SM_INF, b_inf = b->cls == SM_INF;
    int zero = a->cls == SM_ZERO || b->cls == SM_ZERO;
    sm_zero(&t->v);
    t->e = e_zero;
    if (a->cls == SM_NAN || b->cls == SM_NAN || (sa && (sa->cls == SM_NAN || sb->cls == SM_NAN)) ||
        ((a_inf || b_inf) && zero)) {
        t->cls = SM_NAN;
        return;
    }
    if (a_inf || b_inf) {
        t->cls = SM_INF;
        return;
    }
    if (zero || (sa && (sa->cls == SM_ZERO || sb->cls == SM_ZERO))) {
        t->cls = SM_ZERO;
        return;
    }
    t->cls = SM_FINITE;
    unsigned __int128 m = (unsigned __int128)a->sig * b->sig;
    int e = a->exp - a->p + b->exp - b->p;
    t->e = a->exp + b->exp;
    if (sa) {
        m *= (unsigned __int128)sa->sig * sb->sig;
        e += sa->exp - sa->p + sb->exp - sb->p;
        t->e += sa->exp + sb->exp;
    }
    sm_set128(&t->v, t->neg, (uint64_t)(m >> 64), (uint64_t)m, e);
}

/* The accumulator term c (DOMAIN 3, T-FDPA steps 2-3). */
static void c_term(term *t, const sm_val *c, int e_zero)
{
    t->cls = c->cls;
    t->neg = c->neg;
    t->e = c->cls == SM_ZERO ? e_zero : c->exp;
    if (c->cls == SM_ZERO || c->cls == SM_FINITE)
        sm_value(&t->v, c);
    else
        sm_zero(&t->v);
}

/* One T-FDPA / ST-FDPA step over the products listed in idx[0..n) and the
 * accumulator c (bits of format fc). */
static uint64_t tfdpa_step(const mf_instr *in, mf_format fa, mf_format fb, const uint64_t *a, const uint64_t *b,
                           const int *idx, int n, mf_format fc, uint64_t c, const mf_case *cs)
{
    term t[MF_KMAX + 1];
    for (int i = 0; i < n; i++) {
        int k = idx[i];
        sm_val va = sm_decode(fa, a[k]), vb = sm_decode(fb, b[k]);
        if (in->n_scales) {
            sm_val sa = sm_decode(in->fs, cs->sa[k / in->block]);
            sm_val sb = sm_decode(in->fs, cs->sb[k / in->block]);
            product_term(&t[i], &va, &vb, &sa, &sb, in->e_zero);
        } else {
            product_term(&t[i], &va, &vb, NULL, NULL, in->e_zero);
        }
    }
    sm_val vc = sm_decode(fc, c);
    c_term(&t[n], &vc, in->e_zero);
    return fused_sum(in, t, n + 1);
}

/* T-FDPA and ST-FDPA: chunks of L products chain, first chunk first; the
 * result of a chunk (format D) is the c of the next (DOMAIN section 1). */
static uint64_t eval_tfdpa(const mf_instr *in, const mf_case *cs)
{
    uint64_t c = cs->c;
    mf_format fc = in->fc;
    if (in->sparse) {
        /* mma.sp (the table's hypothesis): the kept positions, read from each
         * metadata nibble's bits as the PTX ISA defines them (2:4: bits 0-1
         * and 2-3 index the group of 4; tf32: the pair's element is bit 1 of
         * the first index; s4/u4: bits 0-1 and 2-3 index the pairs of the
         * group of 8), in K order, chunks of L of them */
        int kept[MF_KMAX], nk = 0;
        for (int q = 0; q < in->k; q++) {
            int g = q / in->sp_group, i0 = cs->meta[g] & 3, i1 = cs->meta[g] >> 2 & 3, r = q % in->sp_group;
            if (in->sp_group == 2 ? r == i0 >> 1 : in->sp_group == 8 ? r / 2 == i0 || r / 2 == i1 : r == i0 || r == i1)
                kept[nk++] = q;
        }
        for (int k0 = 0; k0 < nk; k0 += in->L) {
            int n = nk - k0 < in->L ? nk - k0 : in->L;
            c = tfdpa_step(in, in->fa, in->fb, cs->a, cs->b, kept + k0, n, fc, c, cs);
            fc = in->fd;
        }
        return c;
    }
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        int idx[MF_KMAX], n = 0;
        for (int k = k0; k < k0 + in->L && k < in->k; k++)
            idx[n++] = k;
        c = tfdpa_step(in, in->fa, in->fb, cs->a, cs->b, idx, n, fc, c, cs);
        fc = in->fd;
    }
    return c;
}

/* GST-FDPA (DOMAIN 3): exact sums of G products, each times its row's and
 * column's scales, aligned by the scales' exponents; a group with no
 * nonzero product, or with a zero scale, takes e_zero; then a truncated
 * fused sum of the groups and c with F fraction bits. */
static uint64_t eval_gst_fdpa(const mf_instr *in, const mf_case *cs)
{
    term t[MF_KMAX + 1];
    int G = in->x, n = 0;
    for (int g0 = 0; g0 < in->k; g0 += G, n++) {
        term *g = &t[n];
        sm_val sa = sm_decode(in->fs, cs->sa[g0 / in->block]);
        sm_val sb = sm_decode(in->fs, cs->sb[g0 / in->block]);
        sm_zero(&g->v);
        g->cls = SM_ZERO;
        g->neg = 0;
        int any = 0, all_neg = 1;
        for (int k = g0; k < g0 + G; k++) {
            sm_val va = sm_decode(in->fa, cs->a[k]), vb = sm_decode(in->fb, cs->b[k]);
            sm_num p;
            sm_product(&p, &va, &vb);
            any |= sm_sign(&p) != 0;
            all_neg &= va.neg ^ vb.neg;
            sm_add(&g->v, &p);
        }
        if (sa.cls == SM_NAN || sb.cls == SM_NAN) {
            g->cls = SM_NAN;
            continue;
        }
        if (!any || sa.cls == SM_ZERO || sb.cls == SM_ZERO) {
            sm_zero(&g->v);
            g->e = in->e_zero;
            g->neg = all_neg;
            continue;
        }
        g->cls = SM_FINITE;
        g->neg = sm_sign(&g->v) < 0 || (sm_sign(&g->v) == 0 && all_neg);
        /* times the scales: (sig_sa * sig_sb) * 2^(exp_sa - p + exp_sb - p) */
        sm_mul_small(&g->v, (uint32_t)(sa.sig * sb.sig));
        sm_scale2(&g->v, sa.exp - sa.p + sb.exp - sb.p);
        g->e = sa.exp + sb.exp;
    }
    sm_val vc = sm_decode(in->fc, cs->c);
    c_term(&t[n], &vc, in->e_zero);
    return fused_sum(in, t, n + 1);
}

/* fp8 mma.sync on sm_90/sm_100 (DOMAIN section 5): each fp8 value becomes an
 * f16 (exactly), two chained HMMA steps from a zero accumulator take the k
 * with (k/2) even, then those with (k/2) odd, and c is added last with an
 * IEEE addition in D's format. */
static uint64_t eval_f16_emu(const mf_instr *in, const mf_case *cs)
{
    uint64_t a16[MF_KMAX], b16[MF_KMAX];
    for (int k = 0; k < in->k; k++) {
        const uint64_t *src[2] = {&cs->a[k], &cs->b[k]};
        mf_format fmt[2] = {in->fa, in->fb};
        uint64_t *dst[2] = {&a16[k], &b16[k]};
        for (int j = 0; j < 2; j++) {
            sm_val v = sm_decode(fmt[j], *src[j]);
            sm_num x;
            if (v.cls == SM_NAN) {
                *dst[j] = 0x7E00;
            } else if (v.cls == SM_INF) {
                *dst[j] = sm_inf(MF_FMT_F16, v.neg);
            } else {
                sm_value(&x, &v);
                *dst[j] = sm_round_pack(MF_FMT_F16, &x, 10, SM_RNE, v.neg);
            }
        }
    }
    /* dense: the first HMMA takes k with (k/2) % 2 == 0 (the low f16 pair of
     * each unpacked register); sparse (fp8 mma.sp m16n8k64): only the kept
     * positions (bits 0-1 and 2-3 of each group's nibble), the first HMMA.SP
     * those of the even groups of 4 (the low halves of the packed registers) */
    int first[MF_KMAX], second[MF_KMAX], n1 = 0, n2 = 0;
    for (int k = 0; k < in->k; k++) {
        int pass = (k / 2) % 2;
        if (in->sparse) {
            int g = k / 4, i0 = cs->meta[g] & 3, i1 = cs->meta[g] >> 2 & 3;
            if (k % 4 != i0 && k % 4 != i1)
                continue;
            pass = g % 2;
        }
        if (pass == 0)
            first[n1++] = k;
        else
            second[n2++] = k;
    }
    uint64_t acc = tfdpa_step(in, MF_FMT_F16, MF_FMT_F16, a16, b16, first, n1, in->fd, 0, cs);
    acc = tfdpa_step(in, MF_FMT_F16, MF_FMT_F16, a16, b16, second, n2, in->fd, acc, cs);
    return sm_ieee_add(in->fd, cs->c, acc);
}

uint64_t sm_eval_nvidia(const mf_instr *in, const mf_case *cs)
{
    switch (in->family) {
    case MF_GST_FDPA: return eval_gst_fdpa(in, cs);
    case MF_F16_EMU: return eval_f16_emu(in, cs);
    default: return eval_tfdpa(in, cs);
    }
}

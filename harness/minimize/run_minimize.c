/*
 * run_minimize.c - re-running and minimizing mismatches (see run_minimize.h).
 */
#include "run_minimize.h"

#include "gen_values.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int mz_dev_init(mz_dev *z, mf_device *dev, const mf_instr *in, const mf_instr *model)
{
    memset(z, 0, sizeof *z);
    z->dev = dev;
    z->in = in;
    z->model = model ? model : in;
    if (mf_device_tile_shape(dev, in, NULL, &z->m, &z->n, &z->k) || z->k != in->k || z->m < 1 || z->n < 1) {
        snprintf(z->err, sizeof z->err, "%s: the device reports no usable tile shape", in->name);
        return -1;
    }
    z->diag = z->m < z->n ? z->m : z->n;
    return 0;
}

void mz_dev_free(mz_dev *z)
{
    free(z->A);
    free(z->B);
    free(z->C);
    free(z->SA);
    free(z->SB);
    free(z->D);
    z->A = z->B = z->C = z->SA = z->SB = z->D = NULL;
    z->cap_tiles = 0;
}

static int reserve(mz_dev *z, size_t tiles)
{
    if (tiles <= z->cap_tiles)
        return 0;
    const mf_instr *in = z->in;
    /* SA: the scales, or a sparse row's metadata (n_meta bytes per row) */
    size_t S = in->n_scales ? in->n_scales * mf_abi_elem_bytes(in->fs) : in->sparse ? in->n_meta : 1;
    size_t cap = tiles < 16 ? 16 : tiles * 2;
    void *p[6] = {
        realloc(z->A, cap * z->m * z->k * mf_abi_elem_bytes(in->fa)),
        realloc(z->B, cap * z->n * z->k * mf_abi_elem_bytes(in->fb)),
        realloc(z->C, cap * z->m * z->n * mf_abi_elem_bytes(in->fc)),
        realloc(z->SA, cap * z->m * S),
        realloc(z->SB, cap * z->n * S),
        realloc(z->D, cap * z->m * z->n * mf_abi_elem_bytes(in->fd)),
    };
    /* realloc leaves the old block alive on failure: keep whichever we got */
    void **dst[6] = {&z->A, &z->B, &z->C, &z->SA, &z->SB, &z->D};
    int ok = 1;
    for (int i = 0; i < 6; i++) {
        if (p[i])
            *dst[i] = p[i];
        else
            ok = 0;
    }
    if (!ok) {
        snprintf(z->err, sizeof z->err, "out of memory for %zu candidate tiles", cap);
        return -1;
    }
    z->cap_tiles = cap;
    return 0;
}

/* Put a case on the diagonal of tile t (local copy of the ABI layout). */
static void put_case(mz_dev *z, size_t t, int s, const mf_case *cs)
{
    const mf_instr *in = z->in;
    size_t S = in->n_scales;
    for (int kk = 0; kk < z->k; kk++) {
        mf_abi_set(in->fa, z->A, (t * z->m + (size_t)s) * z->k + (size_t)kk, cs->a[kk]);
        mf_abi_set(in->fb, z->B, (t * z->n + (size_t)s) * z->k + (size_t)kk, cs->b[kk]);
    }
    mf_abi_set(in->fc, z->C, (t * z->m + (size_t)s) * z->n + (size_t)s, cs->c);
    for (size_t q = 0; q < S; q++) {
        mf_abi_set(in->fs, z->SA, (t * z->m + (size_t)s) * S + q, cs->sa[q]);
        mf_abi_set(in->fs, z->SB, (t * z->n + (size_t)s) * S + q, cs->sb[q]);
    }
    for (int g = 0; in->sparse && g < in->n_meta; g++)   /* a sparse row's SA: its metadata */
        ((unsigned char *)z->SA)[(t * z->m + (size_t)s) * in->n_meta + (size_t)g] = cs->meta[g];
}

int mz_dev_run(mz_dev *z, const mf_case *cs, size_t n, uint64_t *out)
{
    if (n == 0)
        return MF_DEV_OK;
    if (z->stop && *z->stop) {
        snprintf(z->err, sizeof z->err, "%s: stopped (interrupted)", z->in->name);
        z->stopped = 1;
        return MZ_DEV_STOPPED;
    }
    const mf_instr *in = z->in;
    size_t tiles = (n + (size_t)z->diag - 1) / (size_t)z->diag;
    if (reserve(z, tiles))
        return MF_DEV_ERR_ARG;
    size_t S = in->n_scales;
    memset(z->A, 0, tiles * z->m * z->k * mf_abi_elem_bytes(in->fa));
    memset(z->B, 0, tiles * z->n * z->k * mf_abi_elem_bytes(in->fb));
    memset(z->C, 0, tiles * z->m * z->n * mf_abi_elem_bytes(in->fc));
    if (S) {
        memset(z->SA, 0, tiles * z->m * S);
        memset(z->SB, 0, tiles * z->n * S);
    }
    /* a sparse row's empty rows keep the first indices of every group: (0, 1), tf32 0x4 */
    if (in->sparse)
        memset(z->SA, 0x4, tiles * z->m * in->n_meta);
    for (size_t i = 0; i < n; i++)
        put_case(z, i / (size_t)z->diag, (int)(i % (size_t)z->diag), &cs[i]);
    int rc = mf_device_run_tiles(z->dev, in, NULL, tiles, z->A, z->B, z->C, S || in->sparse ? z->SA : NULL,
                                 S ? z->SB : NULL, z->D, z->err, sizeof z->err);
    z->batches++;
    z->evals += (long)n;
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        size_t t = i / (size_t)z->diag, s = i % (size_t)z->diag;
        out[i] = mf_abi_get(in->fd, z->D, (t * z->m + s) * z->n + s);
    }
    return MF_DEV_OK;
}

int mz_recheck(mz_dev *z, const mf_case *cs, uint64_t batch_d, uint64_t runs[MZ_RERUNS])
{
    for (int r = 0; r < MZ_RERUNS; r++)
        if (mz_dev_run(z, cs, 1, &runs[r]))
            return -1;
    for (int r = 0; r < MZ_RERUNS; r++)
        if (!mf_output_equal(z->in, runs[r], batch_d))
            return MZ_NONDETERMINISTIC;
    if (mf_output_equal(z->in, runs[0], mf_eval(z->model, cs)))
        return MZ_CONTEXT;
    return MZ_REPEATS;
}

/* ------------------------------------------------------------ cost */

/* Lexicographic cost: fewer terms, then fewer significand bits, then
 * exponents nearer 0, then a and b exponents nearer each other, then fewer
 * negative values, then terms at lower K positions, then (sparse rows)
 * simpler metadata: each group's nibble (0, 1) (tf32 0x4), else sorted. */
#define NCOST 7
typedef struct cost {
    long v[NCOST];
} cost;

static int cost_less(const cost *a, const cost *b)
{
    for (int i = 0; i < NCOST; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i];
    return 0;
}

static int term_present(const mf_case *cs, int kk) { return cs->a[kk] != 0 || cs->b[kk] != 0; }

static void value_cost(mf_format f, uint64_t x, cost *c, int *e_out)
{
    mf_value v = mf_decode(f, x);
    int s;
    uint32_t E;
    uint64_t frac;
    rv_unpack(f, x, &s, &E, &frac);
    *e_out = 0;
    if (v.cls == MF_CLS_ZERO) {
        c->v[4] += s;
        return;
    }
    c->v[1] += __builtin_popcountll(frac) + (long)__builtin_popcountll(x & ((UINT64_C(1) << rv_get(f)->low) - 1));
    if (v.cls == MF_CLS_FINITE) {
        *e_out = v.exp;
        c->v[2] += labs((long)v.exp);
    }
    c->v[4] += s;
}

static cost case_cost(const mf_instr *in, const mf_case *cs)
{
    cost c = {{0, 0, 0, 0, 0, 0, 0}};
    int e, ea, eb;
    if (cs->c != 0) {
        c.v[0]++;
        value_cost(in->fc, cs->c, &c, &e);
    }
    for (int kk = 0; kk < in->k; kk++) {
        if (!term_present(cs, kk))
            continue;
        c.v[0]++;
        c.v[5] += kk;  /* terms at the lowest K positions */
        value_cost(in->fa, cs->a[kk], &c, &ea);
        value_cost(in->fb, cs->b[kk], &c, &eb);
        c.v[3] += labs((long)ea - eb);
    }
    for (int q = 0; q < in->n_scales; q++) {
        mf_value sa = mf_decode(in->fs, cs->sa[q]), sb = mf_decode(in->fs, cs->sb[q]);
        c.v[2] += labs((long)sa.exp) + labs((long)sb.exp);
    }
    for (int g = 0; in->sparse && g < in->n_meta; g++)
        c.v[6] += cs->meta[g] == 0x4 ? 0 : (cs->meta[g] & 3) < (cs->meta[g] >> 2) ? 1 : 2;
    return c;
}

int mz_count_products(const mf_instr *in, const mf_case *cs)
{
    int n = 0;
    for (int kk = 0; kk < in->k; kk++) {
        mf_value a = mf_decode(in->fa, cs->a[kk]), b = mf_decode(in->fb, cs->b[kk]);
        int special = a.cls >= MF_CLS_INF || b.cls >= MF_CLS_INF;
        if (special || (a.cls != MF_CLS_ZERO && b.cls != MF_CLS_ZERO))
            n++;
    }
    return n;
}

/* ------------------------------------------------------------ candidates */

typedef struct cand_list {
    mf_case *c;
    size_t n, cap;
} cand_list;

static int cand_push(cand_list *l, const mf_case *cs)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        mf_case *p = realloc(l->c, cap * sizeof *p);
        if (!p)
            return -1;
        l->c = p;
        l->cap = cap;
    }
    l->c[l->n++] = *cs;
    return 0;
}

/* Evaluate candidates; bad[i] = 1 where device and model still disagree. */
static int eval_cands(mz_dev *z, const cand_list *l, uint64_t *dev, unsigned char *bad)
{
    /* run in slices so the device buffers stay small */
    const size_t slice = 4096;
    for (size_t off = 0; off < l->n; off += slice) {
        size_t n = l->n - off < slice ? l->n - off : slice;
        if (mz_dev_run(z, l->c + off, n, dev + off))
            return -1;
    }
    for (size_t i = 0; i < l->n; i++)
        bad[i] = !mf_output_equal(z->in, dev[i], mf_eval(z->model, &l->c[i]));
    return 0;
}

/* Simplifications of one value of format f (see mz_minimize). */
static int simplify_value(mf_format f, uint64_t x, uint64_t *out)
{
    const rv_layout *L = rv_get(f);
    mf_value v = mf_decode(f, x);
    int s;
    uint32_t E;
    uint64_t frac;
    int n = 0;
    rv_unpack(f, x, &s, &E, &frac);
    uint64_t lowbits = x & ((UINT64_C(1) << L->low) - 1);
    if (lowbits)
        out[n++] = x & ~((UINT64_C(1) << L->low) - 1);
    if (v.cls == MF_CLS_NAN) {
        if (mf_format_get(f)->has_inf && L->fbits)
            out[n++] = rv_pack(f, 0, E, UINT64_C(1) << (L->fbits - 1));
        if (s && L->sign_shift >= 0 && mf_decode(f, x & ~(UINT64_C(1) << L->sign_shift)).cls == MF_CLS_NAN)
            out[n++] = x & ~(UINT64_C(1) << L->sign_shift);
        return n;
    }
    if (v.cls != MF_CLS_FINITE)
        return n;
    if (frac) {
        if (E == 0)  /* subnormal: keep the leading bit only */
            out[n++] = rv_pack(f, s, 0, UINT64_C(1) << (63 - __builtin_clzll(frac)));
        else
            out[n++] = rv_pack(f, s, E, 0);
        out[n++] = rv_pack(f, s, E, frac & (frac - 1)) | lowbits;  /* lowest set bit cleared */
        int pc = __builtin_popcountll(frac);
        for (uint64_t rest = frac & (frac - 1); rest && pc > 1; rest &= rest - 1)  /* each other set bit cleared */
            if (n < 60)
                out[n++] = rv_pack(f, s, E, frac & ~(rest & -rest)) | lowbits;
        if (pc > 2) {  /* the lower half of the set bits cleared */
            uint64_t keep = frac;
            for (int i = 0; i < pc / 2; i++)
                keep &= keep - 1;
            out[n++] = rv_pack(f, s, E, keep) | lowbits;
        }
    }
    if (E != 0 && v.exp != 0) {  /* exponent toward 0: a step, halfway, all the way */
        int targets[3] = {v.exp > 0 ? v.exp - 1 : v.exp + 1, v.exp / 2, 0};
        for (int t = 0; t < 3; t++) {
            int e = targets[t];
            if (e == v.exp || (t > 0 && e == targets[t - 1]) || e < L->emin || e > L->emax)
                continue;
            uint64_t y = rv_pack(f, s, (uint32_t)(e + L->bias), frac) | lowbits;
            if (mf_decode(f, y).cls == MF_CLS_FINITE)
                out[n++] = y;
        }
    }
    return n;
}

/* Multiply a finite normal value by 2^d exactly. @return 0 if not possible. */
static int scale_value(mf_format f, uint64_t x, int d, uint64_t *out)
{
    const rv_layout *L = rv_get(f);
    mf_value v = mf_decode(f, x);
    if (v.cls == MF_CLS_ZERO) {
        *out = x;
        return 1;
    }
    if (v.cls != MF_CLS_FINITE || !(v.sig >> L->fbits))
        return 0;
    int e = v.exp + d;
    if (e < L->emin || e > L->emax)
        return 0;
    int s;
    uint32_t E;
    uint64_t frac;
    rv_unpack(f, x, &s, &E, &frac);
    uint64_t y = rv_pack(f, s, (uint32_t)(e + L->bias), frac) | (x & ((UINT64_C(1) << L->low) - 1));
    if (mf_decode(f, y).cls != MF_CLS_FINITE)
        return 0;
    *out = y;
    return 1;
}

/* Every single-step candidate from cs: removal of one term, simplification
 * of one value, an exponent transfer within one product, negation of a
 * product's two factors, scaling the whole case, scales toward 1. */
static int build_cands(const mf_instr *in, const mf_case *cs, cand_list *l)
{
    mf_case t;
    uint64_t alt[64];
    if (cs->c != 0) {
        t = *cs;
        t.c = 0;
        if (cand_push(l, &t))
            return -1;
    }
    for (int kk = 0; kk < in->k; kk++) {
        if (!term_present(cs, kk))
            continue;
        t = *cs;
        t.a[kk] = t.b[kk] = 0;
        if (cand_push(l, &t))
            return -1;
    }
    int n = simplify_value(in->fc, cs->c, alt);
    for (int i = 0; i < n; i++) {
        t = *cs;
        t.c = alt[i];
        if (cand_push(l, &t))
            return -1;
    }
    for (int kk = 0; kk < in->k; kk++) {
        if (!term_present(cs, kk))
            continue;
        n = simplify_value(in->fa, cs->a[kk], alt);
        for (int i = 0; i < n; i++) {
            t = *cs;
            t.a[kk] = alt[i];
            if (cand_push(l, &t))
                return -1;
        }
        n = simplify_value(in->fb, cs->b[kk], alt);
        for (int i = 0; i < n; i++) {
            t = *cs;
            t.b[kk] = alt[i];
            if (cand_push(l, &t))
                return -1;
        }
        /* exponents of a and b toward each other (the product is unchanged) */
        mf_value va = mf_decode(in->fa, cs->a[kk]), vb = mf_decode(in->fb, cs->b[kk]);
        if (va.cls == MF_CLS_FINITE && vb.cls == MF_CLS_FINITE && va.exp != vb.exp) {
            int gap = va.exp - vb.exp;
            int steps[2] = {gap / 2, gap > 0 ? 1 : -1};
            for (int i = 0; i < 2; i++) {
                if (!steps[i] || (i == 1 && steps[1] == steps[0]))
                    continue;
                t = *cs;
                if (scale_value(in->fa, cs->a[kk], -steps[i], &t.a[kk]) &&
                    scale_value(in->fb, cs->b[kk], steps[i], &t.b[kk]) && cand_push(l, &t))
                    return -1;
            }
        }
        /* -a * -b = a * b */
        const rv_layout *A = rv_get(in->fa), *B = rv_get(in->fb);
        if (A->sign_shift >= 0 && B->sign_shift >= 0 && va.sign && vb.sign && va.cls == MF_CLS_FINITE &&
            vb.cls == MF_CLS_FINITE) {
            t = *cs;
            t.a[kk] ^= UINT64_C(1) << A->sign_shift;
            t.b[kk] ^= UINT64_C(1) << B->sign_shift;
            if (cand_push(l, &t))
                return -1;
        }
    }
    /* a term moved to the first free K position before it */
    for (int kk = 1; kk < in->k; kk++) {
        if (!term_present(cs, kk))
            continue;
        for (int j = 0; j < kk; j++)
            if (!term_present(cs, j)) {
                t = *cs;
                t.a[j] = cs->a[kk];
                t.b[j] = cs->b[kk];
                t.a[kk] = t.b[kk] = 0;
                if (cand_push(l, &t))
                    return -1;
                break;
            }
    }
    /* the whole case scaled by 2^d (all a and c): exponents move together */
    for (int d = -1; d <= 1; d += 2) {
        t = *cs;
        int ok = scale_value(in->fc, cs->c, d, &t.c);
        for (int kk = 0; kk < in->k && ok; kk++)
            ok = scale_value(in->fa, cs->a[kk], d, &t.a[kk]);
        if (ok && cand_push(l, &t))
            return -1;
    }
    /* sparse rows: a group's metadata simplified: its indices sorted (the
     * values stay where they are), or its kept products moved, in metadata
     * order, to the group's first positions (0x4: (0, 1); tf32 the pair's first;
     * s4/u4 the first two pairs) */
    for (int g = 0; in->sparse && g < in->n_meta; g++) {
        unsigned v = cs->meta[g];
        if (in->sp_group != 2 && (v & 3) > (v >> 2)) {
            t = *cs;
            t.meta[g] = (uint8_t)((v >> 2) | ((v & 3) << 2));
            if (cand_push(l, &t))
                return -1;
        }
        if (v != 0x4) {
            int oldp[MF_SP_KEPT_MAX], newp[MF_SP_KEPT_MAX];
            int n2 = mf_sparse_group_kept(in, g, v, oldp);
            t = *cs;
            for (int i = 0; i < in->sp_group; i++)
                t.a[g * in->sp_group + i] = t.b[g * in->sp_group + i] = 0;
            t.meta[g] = 0x4;
            mf_sparse_group_kept(in, g, 0x4, newp);
            for (int i = 0; i < n2; i++) {
                t.a[newp[i]] = cs->a[oldp[i]];
                t.b[newp[i]] = cs->b[oldp[i]];
            }
            if (cand_push(l, &t))
                return -1;
        }
    }
    /* every candidate of a sparse row in canonical form (+0 at pruned positions of a) */
    for (size_t i = 0; in->sparse && i < l->n; i++)
        mf_sparse_canon(in, &l->c[i]);
    /* scales toward 2^0 */
    for (int q = 0; q < in->n_scales; q++) {
        uint64_t one = in->fs == MF_FMT_UE8M0 ? 127 : rv_make(in->fs, 0, 0, 0);
        if (cs->sa[q] != one) {
            t = *cs;
            t.sa[q] = one;
            if (cand_push(l, &t))
                return -1;
        }
        if (cs->sb[q] != one) {
            t = *cs;
            t.sb[q] = one;
            if (cand_push(l, &t))
                return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ ddmin */

/* cs with only the elements of keep[] present (elements: -1 is c, k >= 0 product k). */
static void with_only(const mf_instr *in, const mf_case *base, const int *el, int nel, const unsigned char *keep,
                      mf_case *out)
{
    *out = *base;
    for (int i = 0; i < nel; i++) {
        if (keep[i])
            continue;
        if (el[i] < 0)
            out->c = 0;
        else
            out->a[el[i]] = out->b[el[i]] = 0;
    }
    (void)in;
}

/* Zeller & Hildebrandt's ddmin over the present terms, each round's subsets
 * and complements evaluated in one batch. */
static int ddmin(mz_dev *z, mf_case *cur, cand_list *l, uint64_t **dev, unsigned char **bad, size_t *cap)
{
    const mf_instr *in = z->in;
    int el[MF_KMAX + 1], nel = 0;
    if (cur->c != 0)
        el[nel++] = -1;
    for (int kk = 0; kk < in->k; kk++)
        if (term_present(cur, kk))
            el[nel++] = kk;
    int gran = 2;
    unsigned char keep[MF_KMAX + 1];
    while (nel >= 2) {
        if (gran > nel)
            gran = nel;
        l->n = 0;
        for (int pass = 0; pass < 2; pass++)  /* subsets, then complements */
            for (int g = 0; g < gran; g++) {
                if (pass == 1 && gran == 2)
                    break;  /* complements of halves are the other halves */
                int lo = g * nel / gran, hi = (g + 1) * nel / gran;
                for (int i = 0; i < nel; i++)
                    keep[i] = (unsigned char)((i >= lo && i < hi) ^ pass);
                mf_case t;
                with_only(in, cur, el, nel, keep, &t);
                if (cand_push(l, &t))
                    return -1;
            }
        if (l->n > *cap) {
            *cap = l->n * 2;
            uint64_t *d = realloc(*dev, *cap * sizeof **dev);
            unsigned char *b = realloc(*bad, *cap);
            if (d)
                *dev = d;
            if (b)
                *bad = b;
            if (!d || !b)
                return -1;
        }
        if (eval_cands(z, l, *dev, *bad))
            return -1;
        size_t hit = l->n;
        for (size_t i = 0; i < l->n && hit == l->n; i++)
            if ((*bad)[i])
                hit = i;
        if (hit == l->n) {
            if (gran >= nel)
                break;
            gran = gran * 2 < nel ? gran * 2 : nel;
            continue;
        }
        int is_subset = hit < (size_t)gran;
        int g = is_subset ? (int)hit : (int)hit - gran;
        int lo = g * nel / gran, hi = (g + 1) * nel / gran;
        *cur = l->c[hit];
        int nn = 0;
        for (int i = 0; i < nel; i++)
            if (((i >= lo && i < hi) ? 1 : 0) == is_subset)
                el[nn++] = el[i];
        nel = nn;
        gran = is_subset ? 2 : (gran - 1 > 2 ? gran - 1 : 2);
    }
    return 0;
}

int mz_minimize(mz_dev *z, const mf_case *cs, mz_result *res)
{
    const mf_instr *in = z->in;
    double t0 = now_s();
    long e0 = z->evals, b0 = z->batches;
    memset(res, 0, sizeof *res);
    mf_case cur = *cs;
    uint64_t d;
    if (mz_dev_run(z, &cur, 1, &d))
        return z->stopped ? MZ_STOPPED : -1;
    if (mf_output_equal(in, d, mf_eval(z->model, &cur)))
        return 1;
    cand_list l = {0};
    size_t cap = 1024;
    uint64_t *dev = malloc(cap * sizeof *dev);
    unsigned char *bad = malloc(cap);
    int rc = (!dev || !bad) ? -1 : ddmin(z, &cur, &l, &dev, &bad, &cap);
    /* greedy descent: the cheapest single step that keeps the mismatch, until none does */
    for (int iter = 0; rc == 0 && iter < 2000; iter++) {
        cost now = case_cost(in, &cur);
        l.n = 0;
        if (build_cands(in, &cur, &l)) {
            rc = -1;
            break;
        }
        size_t w = 0;  /* keep only candidates that are simpler */
        for (size_t i = 0; i < l.n; i++) {
            cost c = case_cost(in, &l.c[i]);
            if (cost_less(&c, &now))
                l.c[w++] = l.c[i];
        }
        l.n = w;
        if (!l.n)
            break;
        if (l.n > cap) {
            cap = l.n * 2;
            uint64_t *nd = realloc(dev, cap * sizeof *dev);
            unsigned char *nb = realloc(bad, cap);
            if (nd)
                dev = nd;
            if (nb)
                bad = nb;
            if (!nd || !nb) {
                rc = -1;
                break;
            }
        }
        if (eval_cands(z, &l, dev, bad)) {
            rc = -1;
            break;
        }
        size_t best = l.n;
        cost bc = now;
        for (size_t i = 0; i < l.n; i++) {
            if (!bad[i])
                continue;
            cost c = case_cost(in, &l.c[i]);
            if (cost_less(&c, &bc)) {
                bc = c;
                best = i;
            }
        }
        if (best == l.n)
            break;
        cur = l.c[best];
    }
    if (rc == 0 && mz_dev_run(z, &cur, 1, &d))
        rc = -1;
    if (rc == 0) {
        res->cs = cur;
        res->d_dev = d;
        res->d_model = mf_eval(z->model, &cur);
        res->products = mz_count_products(in, &cur);
        res->c_nonzero = cur.c != 0;
        res->evals = z->evals - e0;
        res->batches = z->batches - b0;
        res->seconds = now_s() - t0;
        if (mf_output_equal(in, res->d_dev, res->d_model)) {  /* cannot happen with a deterministic device */
            snprintf(z->err, sizeof z->err, "%s: the minimized case no longer mismatches on a re-run", in->name);
            rc = -1;
        }
    }
    free(l.c);
    free(dev);
    free(bad);
    return rc < 0 && z->stopped ? MZ_STOPPED : rc;
}

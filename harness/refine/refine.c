/*
 * refine.c - the variant catalogue of a row, explanations, buckets and
 * fingerprints (refine.h).
 */
#include "refine.h"

#include "mmafuzz_gen.h"

#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

const char *rf_kind_name(rf_kind k)
{
    static const char *const names[RF_KIND_COUNT] = {"F", "L", "e_zero", "X", "rho", "zero-sign",
                                                     "nan",  "order", "family", "arch", "sparse"};
    return (unsigned)k < RF_KIND_COUNT ? names[k] : "?";
}

/* Which parameters a family reads (DOMAIN section 3). */
static int uses_F(mf_family f)
{
    return f == MF_T_FDPA || f == MF_ST_FDPA || f == MF_GST_FDPA || f == MF_TR_FDPA || f == MF_GTR_FDPA ||
           f == MF_F16_EMU;
}
static int uses_ezero(mf_family f)
{
    return f == MF_T_FDPA || f == MF_ST_FDPA || f == MF_GST_FDPA || f == MF_F16_EMU;
}
static int chunked(mf_family f)
{
    return f == MF_T_FDPA || f == MF_ST_FDPA || f == MF_F16_EMU || f == MF_E_FDPA || f == MF_TR_FDPA ||
           f == MF_GTR_FDPA;
}

int rf_rhos_of(const mf_instr *in, mf_rho *out)
{
    int n = 0;
    if (in->fd == MF_FMT_F32) {
        out[n++] = MF_RZ_FP32;   /* = MF_RZ for binary32 */
        out[n++] = MF_RZ_E8M13;
        out[n++] = MF_RNE;
    } else if (in->fd == MF_FMT_F16) {
        out[n++] = MF_RNE_FP16;  /* = MF_RNE for binary16 */
        out[n++] = MF_RZ;
    } else {
        out[n++] = in->rho;
        return n;
    }
    out[n++] = MF_RD;
    out[n++] = MF_RU;
    return n;
}

rf_row rf_row_of(const mf_instr *in)
{
    rf_row r;
    memset(&r, 0, sizeof r);
    r.in = *in;
    return r;
}

uint64_t rf_row_eval(const rf_row *r, const mf_case *cs)
{
    if (!r->reverse)
        return mf_eval(&r->in, cs);
    /* chunk order: the same chunks, last first (rows without scales) */
    mf_case rc = *cs;
    int L = r->in.L, k = r->in.k, nch = L > 0 ? k / L : 1;
    for (int c = 0; c < nch; c++)
        for (int i = 0; i < L; i++) {
            rc.a[c * L + i] = cs->a[(nch - 1 - c) * L + i];
            rc.b[c * L + i] = cs->b[(nch - 1 - c) * L + i];
        }
    return mf_eval(&r->in, &rc);
}

static rf_variant *add(rf_catalogue *cat, rf_kind kind, const rf_row *r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#include <stdarg.h>
static rf_variant *add(rf_catalogue *cat, rf_kind kind, const rf_row *r, const char *fmt, ...)
{
    if (cat->n >= RF_MAX_VARIANTS)
        return NULL;
    rf_variant *v = &cat->v[cat->n++];
    memset(v, 0, sizeof *v);
    v->row = *r;
    v->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->what, sizeof v->what, fmt, ap);
    va_end(ap);
    return v;
}

static int valid_L(const mf_instr *in, int L)
{
    return L >= 1 && L <= in->k && in->k % L == 0 && (!in->block || L % in->block == 0 || in->block % L == 0);
}

static void add_F(rf_catalogue *cat, const rf_row *b, int d)
{
    rf_row r = *b;
    if (b->in.F + d < 1)
        return;
    r.in.F = (int16_t)(b->in.F + d);
    add(cat, RF_F, &r, "F = %d instead of %d", r.in.F, b->in.F);
}

static void add_L(rf_catalogue *cat, const rf_row *b, int L)
{
    const mf_instr *base = &b->in;
    int seen = 0;
    for (int i = 0; i < cat->n; i++)
        seen |= cat->v[i].kind == RF_L && cat->v[i].row.in.L == L;
    if (seen || L == base->L || !valid_L(base, L) || (base->family == MF_F16_EMU && L * 2 < base->k))
        return;
    rf_row r = *b;
    r.in.L = (int16_t)L;
    add(cat, RF_L, &r, "chunk length %d instead of %d", L, base->L);
}

/* The catalogue in order of priority: the explanation that keys a bucket is
 * the first variant that reproduces its case.  First the same qualifier's
 * rows on the other architectures (whole rows of the table, the hypotheses
 * with evidence behind them; rows with equal parameters are one variant, named
 * by every architecture that has it, and by their differences from the base),
 * then the rules that touch only special outcomes (zero sign, NaN), then the
 * smallest change of each parameter, then larger changes, chunk order and
 * other families. */
void rf_catalogue_build(const mf_instr *base, rf_catalogue *cat)
{
    memset(cat, 0, sizeof *cat);
    cat->base = base;
    const rf_row b = rf_row_of(base);
    rf_row r;
    mf_family fam = base->family;
    int nv = fam == MF_T_FDPA || fam == MF_ST_FDPA || fam == MF_GST_FDPA || fam == MF_F16_EMU;
    /* the same qualifier's row on the other architectures first: a whole row of the table
     * (several parameters at once, each named by the row's differences); rows with the same
     * parameters are one variant, and a row with the base's own parameters is none */
    {
        const mf_instr *rows[MF_ARCH_COUNT];
        char names[MF_ARCH_COUNT][96];
        int nrows = 0;
        for (int a = 0; a < MF_ARCH_COUNT; a++) {
            const mf_instr *t = a == (int)base->arch ? NULL : mf_instr_on_arch(base, (mf_arch)a);
            if (!t)
                continue;
            rf_row rt = rf_row_of(t), ri;
            if (rf_row_same(&rt, &b))
                continue;
            int i = 0;
            for (; i < nrows; i++)
                if (ri = rf_row_of(rows[i]), rf_row_same(&ri, &rt))
                    break;
            if (i < nrows) {
                size_t o = strlen(names[i]);
                snprintf(names[i] + o, sizeof names[i] - o, ", %s's", mf_arch_name(t->arch));
                continue;
            }
            rows[nrows] = t;
            snprintf(names[nrows++], sizeof names[0], "%s's", mf_arch_name(t->arch));
        }
        for (int i = 0; i < nrows; i++) {
            char diff[120];
            r = rf_row_of(rows[i]);
            rf_row_diff(&b, &r, diff, sizeof diff);
            rf_variant *v = add(cat, RF_ARCH, &r, "behaves like %s row (%s)", names[i], diff);
            if (v)
                v->table_row = rows[i];
        }
    }
    /* mma.sp: the alternatives of the sparse hypothesis (model/sparse.c), first */
    for (int m = 1; base->sparse && m < MF_SPM_COUNT; m++) {
        static const char *const words[MF_SPM_COUNT] = {
            "", "the kept products in metadata order", "chunks of logical K positions (sp_L) of the kept products",
            "the dense model on the logical row (pruned positions are zero products)"};
        r = b;
        r.in.sp_model = (uint8_t)m;
        add(cat, RF_SPARSE, &r, "%s", words[m]);
    }
    if (nv) {
        r = b;
        r.in.zero_plus = !base->zero_plus;
        add(cat, RF_ZERO_SIGN, &r, "%s", r.in.zero_plus ? "a sum rounding to zero gives +0"
                                                        : "a sum rounding to zero keeps its sign");
    }
    r = b;
    r.in.nan_any = !base->nan_any;
    add(cat, RF_NAN, &r, "%s", r.in.nan_any ? "NaN payloads not compared" : "NaN canonical");
    if (uses_F(fam)) {
        add_F(cat, &b, +1);
        add_F(cat, &b, -1);
    }
    if (uses_ezero(fam))
        for (int d = 1; d >= -1; d -= 2) {
            r = b;
            r.in.e_zero = (int16_t)(base->e_zero + d);
            add(cat, RF_EZERO, &r, "e_zero = %d instead of %d", r.in.e_zero, base->e_zero);
        }
    if (chunked(fam)) {
        add_L(cat, &b, base->L * 2);
        add_L(cat, &b, base->L / 2);
    }
    if (nv) {
        mf_rho rhos[8];
        int nr = rf_rhos_of(base, rhos);
        for (int i = 0; i < nr; i++)
            if (rhos[i] != base->rho) {
                r = b;
                r.in.rho = rhos[i];
                add(cat, RF_RHO, &r, "rounding %s instead of %s", mf_rho_name(rhos[i]), mf_rho_name(base->rho));
            }
    }
    if (uses_F(fam))
        for (int d = 2; d <= 3; d++) {
            add_F(cat, &b, +d);
            add_F(cat, &b, -d);
        }
    if (chunked(fam))
        add_L(cat, &b, base->k);
    if (fam == MF_FTZ_MUL_ADD && (base->x == 2 || base->x == 4)) {
        r = b;
        r.in.x = (int16_t)(6 - base->x);
        add(cat, RF_X, &r, "P = %d instead of %d", r.in.x, base->x);
    } else if ((fam == MF_TR_FDPA || fam == MF_GTR_FDPA) && base->x > 1) {
        for (int d = -1; d <= 1; d += 2) {
            r = b;
            r.in.x = (int16_t)(base->x + d);
            add(cat, RF_X, &r, "F2 = %d instead of %d", r.in.x, base->x);
        }
    }
    if (chunked(fam) && !base->n_scales && !base->sparse && base->L < base->k && fam != MF_F16_EMU) {
        r = b;
        r.reverse = 1;
        add(cat, RF_ORDER, &r, "chunks in reverse order");
    }
    /* other families that accept the row's formats: parameters of a table row of that family */
    for (int f = 0; f < MF_FAMILY_COUNT; f++) {
        if (f == (int)fam)
            continue;
        const mf_instr *best = NULL;
        for (size_t i = 0; i < mf_instr_count; i++) {
            const mf_instr *t = &mf_instr_table[i];
            if ((int)t->family != f || t->fa != base->fa || t->fb != base->fb || t->fc != base->fc ||
                t->fd != base->fd || t->fs != base->fs)
                continue;
            int L = t->L < base->k ? t->L : base->k;
            if (!valid_L(base, L))
                continue;
            if (!best || (t->k == base->k && best->k != base->k))
                best = t;
        }
        if (!best)
            continue;
        r = b;
        r.in.family = best->family;
        r.in.F = best->F;
        r.in.L = (int16_t)(best->L < base->k ? best->L : base->k);
        r.in.e_zero = best->e_zero;
        r.in.x = best->x;
        r.in.rho = best->rho;
        r.in.zero_plus = best->zero_plus;
        r.in.nan_any = best->nan_any;
        add(cat, RF_FAMILY, &r, "family %s (parameters of %s)", mf_family_name(best->family), best->name);
    }
}

const mf_instr *rf_nearest_start(const mf_instr *target, mf_arch arch, mf_instr *out)
{
    const mf_instr *best = NULL;
    int best_score = -1;
    size_t op = strcspn(target->qualifier, ".");
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *t = &mf_instr_table[i];
        if (t->arch != arch || (t->family == MF_INT_DOT) != (target->family == MF_INT_DOT) ||
            (t->n_scales != 0) != (target->n_scales != 0) || (t->sparse != 0) != (target->sparse != 0))
            continue;
        int score = 8 * (t->fa == target->fa) + 8 * (t->fb == target->fb) + 4 * (t->fc == target->fc) +
                    4 * (t->fd == target->fd) + 2 * (strncmp(t->qualifier, target->qualifier, op + 1) == 0) +
                    (t->k == target->k);
        if (score > best_score) {
            best = t;
            best_score = score;
        }
    }
    if (!best)
        return NULL;
    *out = *target;
    out->family = best->family;
    out->F = best->F;
    int L = best->L < target->k ? best->L : target->k;
    out->L = (int16_t)(valid_L(target, L) ? L : target->k);
    out->e_zero = best->e_zero;
    out->x = best->x;
    out->rho = best->rho;
    out->zero_plus = best->zero_plus;
    out->nan_any = best->nan_any;
    return best;
}

int rf_set_count(const rf_set *s)
{
    return __builtin_popcountll(s->w[0]) + __builtin_popcountll(s->w[1]);
}

/* Does variant i reproduce d_dev on cs? */
static int reproduces(const rf_catalogue *cat, int i, const mf_case *cs, uint64_t d_dev)
{
    const rf_variant *v = &cat->v[i];
    uint64_t d = v->table_row ? mf_eval(v->table_row, cs) : rf_row_eval(&v->row, cs);
    return mf_output_equal(&v->row.in, d, d_dev);
}

rf_set rf_explain(const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev, long long *evals)
{
    rf_set s = {{0, 0}};
    for (int i = 0; i < cat->n; i++)
        if (reproduces(cat, i, cs, d_dev))
            s.w[i >> 6] |= UINT64_C(1) << (i & 63);
    if (evals)
        *evals += cat->n;
    return s;
}

char *rf_explain_words(const rf_catalogue *cat, const rf_set *s, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    if (rf_set_empty(s)) {
        snprintf(buf, len, "unexplained");
        return buf;
    }
    for (int i = 0; i < cat->n && o + 1 < len; i++) {
        if (!rf_set_has(s, i))
            continue;
        int n = snprintf(buf + o, len - o, "%s%s", o ? "; or " : "", cat->v[i].what);
        if (n < 0 || (size_t)n >= len - o) {
            /* cut: mark it */
            if (len > 4)
                memcpy(buf + len - 4, "...", 4);
            break;
        }
        o += (size_t)n;
    }
    return buf;
}

/* ------------------------------------------------------------ fingerprint */

static const char *special_of(mf_format f, uint64_t x)
{
    mf_value v = mf_decode(f, x);
    if (v.cls == MF_CLS_NAN)
        return "nan";
    if (v.cls == MF_CLS_INF)
        return "inf";
    if (v.cls == MF_CLS_FINITE && v.sig < (UINT64_C(1) << mf_format_get(f)->frac_bits))
        return "sub";
    return NULL;
}

/* Exponent of the leading bit of |x - y| for finite values, or INT32_MIN when equal. */
static int diff_exponent(mf_format f, uint64_t x, uint64_t y)
{
    int fb = mf_format_get(f)->frac_bits;
    mf_value a = mf_decode(f, x), b = mf_decode(f, y);
    int qa = a.exp - fb, qb = b.exp - fb;
    if (a.cls == MF_CLS_ZERO)
        qa = qb;
    if (b.cls == MF_CLS_ZERO)
        qb = qa;
    int q = qa < qb ? qa : qb;
    if (qa - q > 60 || qb - q > 60) {
        const mf_value *big = qa > qb ? &a : &b;
        return (qa > qb ? qa : qb) + 63 - __builtin_clzll(big->sig | 1);
    }
    __int128 va = (__int128)(a.cls == MF_CLS_ZERO ? 0 : a.sig) << (qa - q);
    __int128 vb = (__int128)(b.cls == MF_CLS_ZERO ? 0 : b.sig) << (qb - q);
    if (a.sign)
        va = -va;
    if (b.sign)
        vb = -vb;
    __int128 d = va - vb;
    if (d < 0)
        d = -d;
    if (d == 0)
        return INT32_MIN;
    unsigned __int128 u = (unsigned __int128)d;
    int p = 0;
    while (u >> 1) {
        u >>= 1;
        p++;
    }
    return q + p;
}

char *rf_fingerprint(const mf_instr *model, const mf_case *cs, uint64_t d_dev, uint64_t d_model, char *buf,
                     size_t len)
{
    /* the special values involved, by operand */
    char spec[80] = "";
    const char *ops[3] = {"a", "b", "c"};
    for (int op = 0; op < 3; op++) {
        int seen[3] = {0, 0, 0};
        int n = op == 2 ? 1 : model->k;
        mf_format f = op == 0 ? model->fa : op == 1 ? model->fb : model->fc;
        for (int k = 0; k < n; k++) {
            const char *s = special_of(f, op == 0 ? cs->a[k] : op == 1 ? cs->b[k] : cs->c);
            if (!s)
                continue;
            int idx = s[0] == 'n' ? 0 : s[0] == 'i' ? 1 : 2;
            if (seen[idx]++)
                continue;
            size_t o = strlen(spec);
            snprintf(spec + o, sizeof spec - o, "%s%s-%s", o ? "," : "", s, ops[op]);
        }
    }
    if (mf_decode(model->fc, cs->c).cls == MF_CLS_ZERO) {
        size_t o = strlen(spec);
        snprintf(spec + o, sizeof spec - o, "%szero-c", o ? "," : "");
    }
    /* e_max of the products and c (decoded exponents, DOMAIN section 3 step 4) */
    int e_max = INT32_MIN;
    for (int k = 0; k < model->k; k++) {
        mf_value a = mf_decode(model->fa, cs->a[k]), b = mf_decode(model->fb, cs->b[k]);
        if (a.cls == MF_CLS_FINITE && b.cls == MF_CLS_FINITE && a.exp + b.exp > e_max)
            e_max = a.exp + b.exp;
    }
    mf_value c = mf_decode(model->fc, cs->c);
    if (c.cls == MF_CLS_FINITE && c.exp > e_max)
        e_max = c.exp;
    char diff[64];
    mf_value vd = mf_decode(model->fd, d_dev), vm = mf_decode(model->fd, d_model);
    if (vd.cls >= MF_CLS_INF || vm.cls >= MF_CLS_INF || e_max == INT32_MIN) {
        static const char *const cls[4] = {"zero", "finite", "inf", "nan"};
        snprintf(diff, sizeof diff, "%s-vs-%s", cls[vd.cls], cls[vm.cls]);
    } else {
        int de = diff_exponent(model->fd, d_dev, d_model);
        if (de == INT32_MIN)
            snprintf(diff, sizeof diff, "zero-sign");
        else
            snprintf(diff, sizeof diff, "2^(e_max-F%+d)", de - (e_max - model->F));
    }
    const mf_format_info *fi = mf_format_get(model->fd);
    uint64_t mask = fi->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << fi->bits) - 1;
    uint64_t x = (d_dev ^ d_model) & mask;
    int hi = x ? 63 - __builtin_clzll(x) : -1, lo = x ? __builtin_ctzll(x) : -1;
    snprintf(buf, len, "specials=%s diff=%s bits=%d..%d", spec[0] ? spec : "none", diff, hi, lo);
    return buf;
}

char *rf_signature_class(const mf_instr *in, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s*%s+%s->%s", mf_format_get(in->fa)->name, mf_format_get(in->fb)->name,
                     mf_format_get(in->fc)->name, mf_format_get(in->fd)->name);
    if (in->n_scales && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " scaled %s/%d", mf_format_get(in->fs)->name, in->block);
    return buf;
}

int rf_explain_first(const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev, long long *evals)
{
    int i = 0;
    while (i < cat->n && !reproduces(cat, i, cs, d_dev))
        i++;
    if (evals)
        *evals += i < cat->n ? i + 1 : cat->n;
    return i < cat->n ? i : -1;
}

/* The key's head: "INSTR|SIGCLASS|[model ROW]".  @return its length. */
static int key_head(const mf_instr *in, const rf_catalogue *cat, char *key, size_t len)
{
    char sig[64];
    rf_signature_class(in, sig, sizeof sig);
    /* the model row compared with, when it is not the instruction's own: the
     * explanation is a change of that row */
    return snprintf(key, len, "%s|%s|%s%s", in->name, sig, cat->base != in ? "model " : "",
                    cat->base != in ? cat->base->name : "");
}

static void bucket_set_id(rf_bucket *out)
{
    snprintf(out->id, sizeof out->id, "%016llx", (unsigned long long)XXH3_64bits(out->key, strlen(out->key)));
}

void rf_bucket_by_first(const mf_instr *in, const rf_catalogue *cat, int first, const mf_case *cs, uint64_t d_dev,
                        uint64_t d_model, rf_bucket *out)
{
    int n = key_head(in, cat, out->key, sizeof out->key);
    out->explained = first >= 0;
    out->also[0] = 0;
    if (first >= 0) {
        /* keyed on the first explaining variant in catalogue order (the same qualifier's
         * rows on other architectures, then single parameters, then families), by its
         * description, so that the key does not depend on the catalogue's positions */
        snprintf(out->key + n, sizeof out->key - (size_t)n, "|E:%s", cat->v[first].what);
        snprintf(out->words, sizeof out->words, "%s", cat->v[first].what);
    } else {
        char fp[200];
        rf_fingerprint(cat->base, cs, d_dev, d_model, fp, sizeof fp);
        snprintf(out->key + n, sizeof out->key - (size_t)n, "|U:%s", fp);
        snprintf(out->words, sizeof out->words, "unexplained (%s)", fp);
    }
    bucket_set_id(out);
}

static void bucket_of(const mf_instr *in, const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev,
                      uint64_t d_model, rf_bucket *out, long long *evals, int full)
{
    if (!full) {
        /* the first reproducing variant is all the key needs: stop there */
        rf_bucket_by_first(in, cat, rf_explain_first(cat, cs, d_dev, evals), cs, d_dev, d_model, out);
        return;
    }
    rf_set s = rf_explain(cat, cs, d_dev, evals);
    int first = 0;
    while (first < cat->n && !rf_set_has(&s, first))
        first++;
    rf_bucket_by_first(in, cat, first < cat->n ? first : -1, cs, d_dev, d_model, out);
    if (first < cat->n) {
        s.w[first >> 6] &= ~(UINT64_C(1) << (first & 63));
        if (!rf_set_empty(&s))
            rf_explain_words(cat, &s, out->also, sizeof out->also);
    }
}

void rf_bucket_of(const mf_instr *in, const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev,
                  uint64_t d_model, rf_bucket *out, long long *evals)
{
    bucket_of(in, cat, cs, d_dev, d_model, out, evals, 1);
}

void rf_bucket_id_of(const mf_instr *in, const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev,
                     uint64_t d_model, rf_bucket *out, long long *evals)
{
    bucket_of(in, cat, cs, d_dev, d_model, out, evals, 0);
}

struct rf_classifier {
    const mf_instr *in;
    rf_catalogue cat;
    uint64_t id[RF_MAX_VARIANTS];  /* the bucket id of a case explained first by variant i */
};

rf_classifier *rf_classifier_new(const mf_instr *in, const mf_instr *model)
{
    rf_classifier *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->in = in;
    rf_catalogue_build(model, &c->cat);
    for (int i = 0; i < c->cat.n; i++) {
        rf_bucket b;
        rf_bucket_by_first(in, &c->cat, i, NULL, 0, 0, &b);
        c->id[i] = strtoull(b.id, NULL, 16);
    }
    return c;
}

void rf_classifier_free(rf_classifier *c) { free(c); }

uint64_t rf_classify(const rf_classifier *c, const mf_case *cs, uint64_t d_dev, uint64_t d_model)
{
    int first = rf_explain_first(&c->cat, cs, d_dev, NULL);
    if (first >= 0)
        return c->id[first];
    rf_bucket b;
    rf_bucket_by_first(c->in, &c->cat, -1, cs, d_dev, d_model, &b);
    return strtoull(b.id, NULL, 16);
}

void rf_classify_bucket(const rf_classifier *c, const mf_case *cs, uint64_t d_dev, uint64_t d_model, rf_bucket *b)
{
    rf_bucket_by_first(c->in, &c->cat, rf_explain_first(&c->cat, cs, d_dev, NULL), cs, d_dev, d_model, b);
}

/* ---------------------------------------------------------------- helpers */

int rf_exact(mf_format f, int sign, uint64_t sig, int exp, uint64_t *x)
{
    if (sig == 0) {
        *x = 0;
        if (sign && mf_format_get(f)->has_sign)
            *x = UINT64_C(1) << (mf_format_get(f)->bits - 1);
        return 0;
    }
    while (!(sig & 1)) {
        sig >>= 1;
        exp++;
    }
    uint64_t v = rv_from_sig(f, sign, sig, exp);
    mf_value d = mf_decode(f, v);
    if (d.cls != MF_CLS_FINITE || d.sign != (sign != 0))
        return -1;
    uint64_t s2 = d.sig;
    int e2 = d.exp - mf_format_get(f)->frac_bits;
    while (s2 && !(s2 & 1)) {
        s2 >>= 1;
        e2++;
    }
    if (s2 != sig || e2 != exp)
        return -1;
    *x = v;
    return 0;
}

/* A finite value of format f with exponent near e (+-spread). */
static uint64_t rnd_val(mf_format f, uint64_t *s, int e, int spread)
{
    uint64_t r = rng_splitmix64(s);
    const rv_layout *L = rv_get(f);
    int ee = e + (spread ? (int)(r % (unsigned)(2 * spread + 1)) - spread : 0);
    uint64_t frac = (r >> 20) & ((UINT64_C(1) << L->fbits) - 1);
    if ((r >> 60) & 1)
        frac &= ~((UINT64_C(1) << (L->fbits / 2)) - 1);  /* fewer low bits, more exact sums */
    return rv_make(f, (int)((r >> 8) & 1) && mf_format_get(f)->has_sign, ee, frac);
}

void rf_random_case(const mf_instr *in, uint64_t *s, mf_case *cs)
{
    memset(cs, 0, sizeof *cs);
    uint64_t r = rng_splitmix64(s);
    int shape = (int)(r % 8);
    const rv_layout *la = rv_get(in->fa), *lb = rv_get(in->fb), *lc = rv_get(in->fc);
    int ea = la->emin + (int)((r >> 8) % (unsigned)(la->emax - la->emin + 1));
    int eb = lb->emin + (int)((r >> 16) % (unsigned)(lb->emax - lb->emin + 1));
    if (shape == 1 || shape == 6) {
        ea = (la->emin + la->emax) / 2;
        eb = (lb->emin + lb->emax) / 2;
    }
    if (shape == 5) {
        ea = la->emin;
        eb = lb->emin;
    }
    int spread = 4 + (int)((r >> 24) % 8);
    int nz = shape == 7 ? 1 + (int)((r >> 32) % 3) : in->k;
    for (int k = 0; k < in->k; k++) {
        if (shape == 3 || k >= nz || ((r >> 40) & 1 && (rng_splitmix64(s) & 3) == 0)) {
            cs->a[k] = (rng_splitmix64(s) & 1) ? rnd_val(in->fa, s, ea, spread) : 0;
            cs->b[k] = 0;
            if (rng_splitmix64(s) & 1) {
                cs->b[k] = rnd_val(in->fb, s, eb, spread);
                cs->a[k] = (rng_splitmix64(s) & 1) && mf_format_get(in->fa)->has_sign
                               ? UINT64_C(1) << (mf_format_get(in->fa)->bits - 1) : 0;
            }
            continue;
        }
        cs->a[k] = rnd_val(in->fa, s, ea, spread);
        cs->b[k] = rnd_val(in->fb, s, eb, spread);
    }
    if (shape == 4 && in->k >= 2) {
        /* cancellation: a1*b1 = -(a0*b0) */
        cs->a[1] = cs->a[0] ^ (UINT64_C(1) << (mf_format_get(in->fa)->bits - 1));
        cs->b[1] = cs->b[0];
        if (!mf_format_get(in->fa)->has_sign)
            cs->a[1] = cs->a[0];
    }
    int ec = ea + eb + (int)((r >> 44) % 9) - 4;
    if (shape == 2)
        cs->c = (rng_splitmix64(s) & 1) && mf_format_get(in->fc)->has_sign ? UINT64_C(1) << (mf_format_get(in->fc)->bits - 1)
                                                                  : 0;
    else if (shape == 3)
        cs->c = rnd_val(in->fc, s, lc->emin + (int)(rng_splitmix64(s) % (unsigned)(lc->emax - lc->emin + 1)), 0);
    else
        cs->c = rnd_val(in->fc, s, ec, 3);
    if (shape == 0) {
        /* raw bits */
        const mf_format_info *fa = mf_format_get(in->fa), *fb = mf_format_get(in->fb), *fc = mf_format_get(in->fc);
        for (int k = 0; k < in->k; k++) {
            cs->a[k] = rng_splitmix64(s) & ((fa->bits == 64) ? ~UINT64_C(0) : (UINT64_C(1) << fa->bits) - 1);
            cs->b[k] = rng_splitmix64(s) & ((fb->bits == 64) ? ~UINT64_C(0) : (UINT64_C(1) << fb->bits) - 1);
        }
        cs->c = rng_splitmix64(s) & ((fc->bits == 64) ? ~UINT64_C(0) : (UINT64_C(1) << fc->bits) - 1);
    }
    if (shape == 6) {
        /* one special value */
        uint64_t sp[40];
        mf_format f = (r >> 50) & 1 ? in->fa : in->fc;
        size_t n = rv_specials(f, sp, 40);
        if (n) {
            uint64_t v = sp[rng_splitmix64(s) % n];
            if (f == in->fc && !((r >> 51) & 1))
                cs->c = v;
            else
                cs->a[rng_splitmix64(s) % (unsigned)in->k] = v;
        }
    }
    for (int i = 0; i < in->n_scales && i < MF_SMAX; i++) {
        /* scales near 1 */
        int e = (int)(rng_splitmix64(s) % 9) - 4;
        if (in->fs == MF_FMT_UE8M0) {
            cs->sa[i] = (uint64_t)(127 + e);
            cs->sb[i] = (uint64_t)(127 - e);
        } else {
            cs->sa[i] = rv_make(MF_FMT_E4M3, 0, e, rng_splitmix64(s) & 7);
            cs->sb[i] = rv_make(MF_FMT_E4M3, 0, -e, rng_splitmix64(s) & 7);
        }
    }
    mf_sparse_legalize(in, cs);   /* a sparse row: legal metadata, +0 where pruned */
}

/* ------------------------------------------------------------ def lines */

static const char *family_id(mf_family f)
{
    static const char *const ids[MF_FAMILY_COUNT] = {"MF_T_FDPA",  "MF_ST_FDPA",     "MF_GST_FDPA",
                                                     "MF_FMA_CHAIN", "MF_E_FDPA",    "MF_FTZ_MUL_ADD",
                                                     "MF_TR_FDPA", "MF_GTR_FDPA",    "MF_F16_EMU",
                                                     "MF_INT_DOT"};
    return (unsigned)f < MF_FAMILY_COUNT ? ids[f] : "?";
}
static const char *rho_id(mf_rho r)
{
    static const char *const ids[MF_RHO_COUNT] = {"MF_RZ_FP32", "MF_RZ_E8M13", "MF_RNE_FP16", "MF_RNE",
                                                   "MF_RZ",      "MF_RD",       "MF_RU"};
    return (unsigned)r < MF_RHO_COUNT ? ids[r] : "?";
}
static const char *status_id(mf_status s)
{
    static const char *const ids[4] = {"MF_HYPOTHESIS", "MF_PEER", "MF_HW", "MF_PEER_HW"};
    return (unsigned)s < 4 ? ids[s] : "?";
}
static void fmt_id(mf_format f, char *buf)
{
    const char *n = f == MF_FMT_NONE ? "NONE" : mf_format_get(f)->name;
    int i = 0;
    for (; n[i] && i < 15; i++)
        buf[i] = (char)toupper((unsigned char)n[i]);
    buf[i] = 0;
}

char *rf_row_def_line(const rf_row *r, char *buf, size_t len)
{
    const mf_instr *in = &r->in;
    char fa[16], fb[16], fc[16], fd[16], fs[16];
    fmt_id(in->fa, fa);
    fmt_id(in->fb, fb);
    fmt_id(in->fc, fc);
    fmt_id(in->fd, fd);
    fmt_id(in->fs, fs);
    /* e_zero as the table writes it: EZ_D when it is the architecture's value
     * for the output format (arch_table.def), else the number */
    char ez[16];
    const mf_arch_info *ai = mf_arch_get(in->arch);
    if (ai && in->e_zero == (in->fd == MF_FMT_F16 ? ai->e_zero_f16 : ai->e_zero_f32))
        snprintf(ez, sizeof ez, "EZ_D");
    else
        snprintf(ez, sizeof ez, "%d", in->e_zero);
    snprintf(buf, len,
             "MF_INSTR(%s, \"%s\", %d,%d,%d, %s,%s,%s,%s, %s,%d, %s, %d,%d,%s,%d, %s, %s)"
             "  /* zero sum: %s; NaN: %s; chunks: %s */",
             mf_arch_name(in->arch), in->qualifier, in->m, in->n, in->k, fa, fb, fc, fd, fs, in->block,
             family_id(in->family), in->F, in->L, ez, in->x, rho_id(in->rho), status_id(in->status),
             in->zero_plus ? "+0" : "sign kept", in->nan_any ? "any NaN" : "canonical",
             r->reverse ? "last first" : "first first");
    return buf;
}

int rf_row_same(const rf_row *a, const rf_row *b)
{
    const mf_instr *x = &a->in, *y = &b->in;
    return x->family == y->family && x->F == y->F && x->L == y->L && x->e_zero == y->e_zero && x->x == y->x &&
           x->rho == y->rho && x->zero_plus == y->zero_plus && x->nan_any == y->nan_any && a->reverse == b->reverse &&
           x->sp_model == y->sp_model;
}

char *rf_row_diff(const rf_row *a, const rf_row *b, char *buf, size_t len)
{
    const mf_instr *x = &a->in, *y = &b->in;
    size_t o = 0;
    buf[0] = 0;
#define DIFF(cond, ...)                                                                                      \
    do {                                                                                                     \
        if ((cond) && o < len) {                                                                             \
            int n_ = snprintf(buf + o, len - o, "%s", o ? ", " : "");                                        \
            o += n_ > 0 ? (size_t)n_ : 0;                                                                    \
            if (o < len) {                                                                                   \
                n_ = snprintf(buf + o, len - o, __VA_ARGS__);                                                \
                o += n_ > 0 ? (size_t)n_ : 0;                                                                \
            }                                                                                                \
        }                                                                                                    \
    } while (0)
    DIFF(x->family != y->family, "family %s -> %s", mf_family_name(x->family), mf_family_name(y->family));
    DIFF(x->F != y->F, "F %d -> %d", x->F, y->F);
    DIFF(x->L != y->L, "L %d -> %d", x->L, y->L);
    DIFF(x->e_zero != y->e_zero, "e_zero %d -> %d", x->e_zero, y->e_zero);
    DIFF(x->x != y->x, "X %d -> %d", x->x, y->x);
    DIFF(x->rho != y->rho, "rho %s -> %s", mf_rho_name(x->rho), mf_rho_name(y->rho));
    DIFF(x->zero_plus != y->zero_plus, "zero sum %s -> %s", x->zero_plus ? "+0" : "sign kept",
         y->zero_plus ? "+0" : "sign kept");
    DIFF(x->nan_any != y->nan_any, "NaN %s -> %s", x->nan_any ? "any" : "canonical",
         y->nan_any ? "any" : "canonical");
    DIFF(a->reverse != b->reverse, "chunks %s -> %s", a->reverse ? "last first" : "first first",
         b->reverse ? "last first" : "first first");
    DIFF(x->sp_model != y->sp_model, "sparse model %d -> %d", x->sp_model, y->sp_model);
#undef DIFF
    if (o >= len && len)
        buf[len - 1] = 0;
    return buf;
}

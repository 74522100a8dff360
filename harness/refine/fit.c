/*
 * fit.c - the parameter-space search of `mmafuzz fit` (fit.h).
 */
#include "fit.h"

#include "mmafuzz_gen.h"

#include <stdlib.h>
#include <string.h>

int rf_cases_add(rf_cases *c, const mf_case *cs, uint64_t d)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        rf_obs *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n].cs = *cs;
    c->v[c->n].d = d;
    c->n++;
    return 0;
}

void rf_cases_free(rf_cases *c)
{
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* The parameters of a point packed into one key (for the duplicate check). */
static uint64_t key_of(const rf_row *r)
{
    const mf_instr *x = &r->in;
    return ((uint64_t)x->family << 60) ^ ((uint64_t)(uint16_t)x->F << 44) ^ ((uint64_t)(uint16_t)x->L << 32) ^
           ((uint64_t)(uint16_t)x->e_zero << 16) ^ ((uint64_t)(uint8_t)x->x << 8) ^ ((uint64_t)x->rho << 4) ^
           ((uint64_t)x->zero_plus << 2) ^ ((uint64_t)x->nan_any << 1) ^ (uint64_t)r->reverse;
}

#define SEEN_BITS 18
static uint64_t seen[1u << SEEN_BITS];  /* key + 1; 0 = empty (one search at a time) */

static int seen_insert(uint64_t key)
{
    uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ULL;
    for (size_t i = (size_t)(h >> (64 - SEEN_BITS)), n = 0; n < (1u << SEEN_BITS);
         i = (i + 1) & ((1u << SEEN_BITS) - 1), n++) {
        if (seen[i] == key + 1)
            return 0;
        if (!seen[i]) {
            seen[i] = key + 1;
            return 1;
        }
    }
    return 0;  /* full: treat as seen */
}

static int push(rf_space *sp, const rf_row *r, const mf_instr *start)
{
    if (!seen_insert(key_of(r)))
        return 0;
    if (sp->n == sp->cap) {
        size_t cap = sp->cap ? 2 * sp->cap : 1024;
        rf_cand *c = realloc(sp->c, cap * sizeof *c);
        if (!c)
            return -1;
        sp->c = c;
        sp->cap = cap;
    }
    rf_cand *c = &sp->c[sp->n++];
    memset(c, 0, sizeof *c);
    c->row = *r;
    rf_row s = rf_row_of(start);
    const mf_instr *a = &s.in, *b = &r->in;
    c->dist = (a->family != b->family) + (a->F != b->F) + (a->L != b->L) + (a->e_zero != b->e_zero) +
              (a->x != b->x) + (a->rho != b->rho) + (a->zero_plus != b->zero_plus) + (a->nan_any != b->nan_any) +
              (r->reverse != 0);
    c->first_miss = -1;
    c->order = (long)sp->n;
    c->mag = abs(a->F - b->F) + abs(a->e_zero - b->e_zero) + abs(a->x - b->x);
    return 0;
}

static int uses_F(mf_family f)
{
    return f == MF_T_FDPA || f == MF_ST_FDPA || f == MF_GST_FDPA || f == MF_TR_FDPA || f == MF_GTR_FDPA ||
           f == MF_F16_EMU;
}
static int uses_ezero(mf_family f)
{
    return f == MF_T_FDPA || f == MF_ST_FDPA || f == MF_GST_FDPA || f == MF_F16_EMU;
}
static int nvidia_family(mf_family f)
{
    return f == MF_T_FDPA || f == MF_ST_FDPA || f == MF_GST_FDPA || f == MF_F16_EMU;
}

/* The grid around one base point (its family fixed). */
static int grid(rf_space *sp, const rf_row *base, const mf_instr *start)
{
    const mf_instr *b = &base->in;
    mf_family fam = b->family;
    int Fs[16], nF = 0, Ls[8], nL = 0, Es[8], nE = 0;
    mf_rho rhos[8];
    int nR = 0;
    if (uses_F(fam))
        for (int d = -4; d <= 4; d++)
            if (b->F + d >= 1)
                Fs[nF++] = b->F + d;
    if (!nF)
        Fs[nF++] = b->F;
    int chunkable = fam == MF_T_FDPA || fam == MF_ST_FDPA || fam == MF_E_FDPA || fam == MF_TR_FDPA ||
                    fam == MF_GTR_FDPA;
    if (chunkable) {
        for (int L = 1; L <= b->k && nL < 8; L *= 2)
            if (b->k % L == 0 && (!b->block || L % b->block == 0))
                Ls[nL++] = L;
    }
    if (!nL)
        Ls[nL++] = b->L;
    if (uses_ezero(fam))
        for (int d = -3; d <= 3; d++)
            Es[nE++] = b->e_zero + d;
    else
        Es[nE++] = b->e_zero;
    if (nvidia_family(fam)) {
        nR = rf_rhos_of(b, rhos);
    } else {
        rhos[nR++] = b->rho;
    }
    int nz = nvidia_family(fam) ? 2 : 1;
    for (int f = 0; f < nF; f++)
        for (int l = 0; l < nL; l++)
            for (int e = 0; e < nE; e++)
                for (int r = 0; r < nR; r++)
                    for (int z = 0; z < nz; z++)
                        for (int na = 0; na < 2; na++)
                            for (int rev = 0; rev < 2; rev++) {
                                rf_row p = *base;
                                p.in.F = (int16_t)Fs[f];
                                p.in.L = (int16_t)Ls[l];
                                p.in.e_zero = (int16_t)Es[e];
                                p.in.rho = rhos[r];
                                p.in.zero_plus = nz == 2 ? (uint8_t)z : b->zero_plus;
                                p.in.nan_any = (uint8_t)(na ? !b->nan_any : b->nan_any);
                                p.reverse = (uint8_t)rev;
                                if (rev && (!chunkable || p.in.L >= p.in.k || p.in.n_scales))
                                    continue;
                                if (push(sp, &p, start))
                                    return -1;
                            }
    return 0;
}

int rf_space_build(const mf_instr *start, const rf_row *seeds, int nseeds, rf_space *sp)
{
    memset(sp, 0, sizeof *sp);
    memset(seen, 0, sizeof seen);
    rf_row s = rf_row_of(start);
    if (grid(sp, &s, start))
        return -1;
    for (int i = 0; i < nseeds; i++)
        if (grid(sp, &seeds[i], start))
            return -1;
    static rf_catalogue cat;
    rf_catalogue_build(start, &cat);
    for (int i = 0; i < cat.n; i++)
        if (cat.v[i].kind == RF_FAMILY || cat.v[i].kind == RF_ARCH) {
            rf_row r = cat.v[i].row;
            /* an architecture's row: keep the start row's name, shape and formats */
            if (grid(sp, &r, start))
                return -1;
        }
    return 0;
}

void rf_space_free(rf_space *sp)
{
    free(sp->c);
    memset(sp, 0, sizeof *sp);
}

int rf_agrees(const rf_row *r, const rf_obs *o)
{
    return mf_output_equal(&r->in, rf_row_eval(r, &o->cs), o->d);
}

size_t rf_space_filter(rf_space *sp, rf_cases *cs, long long *evals)
{
    size_t kept = 0;
    long long ev = 0;
    for (size_t i = 0; i < sp->n; i++) {
        rf_cand *c = &sp->c[i];
        size_t q;
        for (q = 0; q < cs->n; q++) {
            ev++;
            if (!rf_agrees(&c->row, &cs->v[q]))
                break;
        }
        if (q < cs->n) {
            /* move the rejecting case one step toward the front */
            if (q > 0) {
                rf_obs t = cs->v[q];
                cs->v[q] = cs->v[q / 2];
                cs->v[q / 2] = t;
            }
            continue;
        }
        c->agree = (long)cs->n;
        sp->c[kept++] = *c;
    }
    sp->n = kept;
    if (evals)
        *evals += ev;
    return kept;
}

void rf_space_count(rf_space *sp, const rf_cases *cs, size_t limit, long long *evals)
{
    size_t n = cs->n < limit ? cs->n : limit;
    long best = 0;
    for (size_t i = 0; i < sp->n; i++) {
        rf_cand *c = &sp->c[i];
        c->agree = 0;
        c->first_miss = -1;
        long miss = 0;
        size_t q = 0;
        /* stop once the candidate cannot reach the best count so far (then its count
         * is below the best, and the order of the best candidates is unchanged) */
        for (; q < n && miss <= (long)n - best; q++) {
            if (rf_agrees(&c->row, &cs->v[q])) {
                c->agree++;
            } else {
                miss++;
                if (c->first_miss < 0)
                    c->first_miss = (int)q;
            }
        }
        if (c->agree > best)
            best = c->agree;
        if (evals)
            *evals += (long long)q;
    }
}

static int by_dist(const void *x, const void *y)
{
    const rf_cand *a = x, *b = y;
    if (a->agree != b->agree)
        return a->agree > b->agree ? -1 : 1;
    if (a->dist != b->dist)
        return a->dist - b->dist;
    if (a->mag != b->mag)
        return a->mag - b->mag;
    return a->order < b->order ? -1 : a->order > b->order;
}

void rf_space_sort(rf_space *sp)
{
    if (sp->n)  /* sp->c is NULL while empty */
        qsort(sp->c, sp->n, sizeof *sp->c, by_dist);
}

static uint64_t fmt_mask(mf_format f)
{
    int bits = mf_format_get(f)->bits;
    return bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
}

/* A small change of one value: exponent field +-1..3, a low bit, the sign, or zero. */
static uint64_t mutate(mf_format f, uint64_t x, uint64_t r)
{
    const mf_format_info *fi = mf_format_get(f);
    int fb = f == MF_FMT_TF32 ? 23 : fi->frac_bits;
    switch (r % 5) {
    case 0: return x + ((uint64_t)(1 + (r >> 8) % 3) << fb);
    case 1: return x - ((uint64_t)(1 + (r >> 8) % 3) << fb);
    case 2: return x ^ (UINT64_C(1) << ((r >> 8) % (unsigned)(fb ? fb : 1)));
    case 3: return fi->has_sign ? x ^ (UINT64_C(1) << (fi->bits - 1)) : x;
    default: return 0;
    }
}

int rf_separate(const rf_row *x, const rf_row *y, const rf_cases *seeds, uint64_t *rng, long tries, mf_case *out,
                long long *evals)
{
    const mf_instr *in = &x->in;
    const mf_format_info *fd = mf_format_get(in->fd);
    uint64_t mask = fd->bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << fd->bits) - 1;
    for (long t = 0; t < tries; t++) {
        mf_case cs;
        uint64_t r = rng_splitmix64(rng);
        if (seeds->n && (t < (long)seeds->n || (r & 3) != 0)) {
            cs = seeds->v[t < (long)seeds->n ? (size_t)t : (size_t)(r >> 8) % seeds->n].cs;
            if (t >= (long)seeds->n) {
                int nm = 1 + (int)((r >> 40) % 3);
                for (int m = 0; m < nm; m++) {
                    uint64_t q = rng_splitmix64(rng);
                    int which = (int)(q % (unsigned)(2 * in->k + 1));
                    if (which == 2 * in->k)
                        cs.c = mutate(in->fc, cs.c, q >> 16) & fmt_mask(in->fc);
                    else if (which < in->k)
                        cs.a[which] = mutate(in->fa, cs.a[which], q >> 16) & fmt_mask(in->fa);
                    else
                        cs.b[which - in->k] = mutate(in->fb, cs.b[which - in->k], q >> 16) & fmt_mask(in->fb);
                }
            }
        } else {
            rf_random_case(in, rng, &cs);
        }
        mf_sparse_legalize(in, &cs);   /* a mutation may land on a pruned position */
        uint64_t dx = rf_row_eval(x, &cs) & mask, dy = rf_row_eval(y, &cs) & mask;
        if (evals)
            *evals += 2;
        /* separating: no device output can agree with both */
        if (dx != dy && !(x->in.nan_any && y->in.nan_any && mf_is_nan(in->fd, dx) && mf_is_nan(in->fd, dy)) &&
            !(mf_output_equal(&x->in, dx, dy) && mf_output_equal(&y->in, dy, dx))) {
            int both_nan_ok = mf_is_nan(in->fd, dx) && mf_is_nan(in->fd, dy) && (x->in.nan_any || y->in.nan_any);
            if (!both_nan_ok) {
                *out = cs;
                return 1;
            }
        }
    }
    return 0;
}

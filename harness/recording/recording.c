/*
 * recording.c - recordings of whole GEMM calls read, validated, and their
 * operands regenerated (recording.h; docs/recordings.md).
 */
#include "recording.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The formats a recording holds: container bytes and the generator's fields
 * (python/mmafuzz/recording.py's _FMT). */
static const struct {
    mf_format f;
    const char *name;
    int width, bias, ebits, fbits;
} rec_fmt[] = {
    {MF_FMT_F32, "f32", 4, 127, 8, 23}, {MF_FMT_TF32, "tf32", 4, 127, 8, 23}, {MF_FMT_F16, "f16", 2, 15, 5, 10},
    {MF_FMT_BF16, "bf16", 2, 127, 8, 7}, {MF_FMT_E4M3, "e4m3", 1, 7, 4, 3},   {MF_FMT_E5M2, "e5m2", 1, 15, 5, 2},
};
enum { NFMT = sizeof rec_fmt / sizeof rec_fmt[0] };

static int fmt_index(mf_format f)
{
    for (int i = 0; i < NFMT; i++)
        if (rec_fmt[i].f == f)
            return i;
    return -1;
}

int mf_rec_width(mf_format f)
{
    int i = fmt_index(f);
    return i < 0 ? 0 : rec_fmt[i].width;
}

static uint64_t splitmix64(uint64_t x)
{
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

const char *mf_rec_gen_check(mf_format f, int exp_lo, int exp_hi)
{
    int i = fmt_index(f);
    if (i < 0)
        return "the generator draws f32, tf32, f16, bf16, e4m3 and e5m2 only";
    if (exp_lo > exp_hi)
        return "exp_lo is above exp_hi";
    if ((long)exp_lo + rec_fmt[i].bias < 0 || (long)exp_hi + rec_fmt[i].bias > (1L << rec_fmt[i].ebits) - 1)
        return "exp_lo..exp_hi is out of the format's exponent field";
    return NULL;
}

int mf_rec_generate(mf_format f, uint64_t seed, uint64_t base, uint64_t count, int exp_lo, int exp_hi, void *out)
{
    if (mf_rec_gen_check(f, exp_lo, exp_hi))
        return -1;
    int i = fmt_index(f);
    const int bias = rec_fmt[i].bias, eb = rec_fmt[i].ebits, fb = rec_fmt[i].fbits, w = rec_fmt[i].width;
    const uint64_t span = (uint64_t)(exp_hi - exp_lo + 1), c0 = seed * (1ull << 32) + base;
    const uint64_t fmask = (1ull << fb) - 1;
    for (uint64_t c = 0; c < count; c++) {
        uint64_t z = splitmix64(c0 + c);
        uint64_t e = (uint64_t)((int64_t)((z >> 32) % span) + exp_lo + bias);
        uint64_t bits = (z >> 63) << (eb + fb) | e << fb | (z & fmask);
        if (f == MF_FMT_TF32)
            bits &= 0xFFFFE000u;
        if (w == 1)
            ((uint8_t *)out)[c] = (uint8_t)bits;
        else if (w == 2)
            ((uint16_t *)out)[c] = (uint16_t)bits;
        else
            ((uint32_t *)out)[c] = (uint32_t)bits;
    }
    return 0;
}

void mf_rec_free(mf_rec *r)
{
    if (!r)
        return;
    npz_free(&r->z);
    jv_free(&r->header);
    memset(r, 0, sizeof *r);
}

static int bad(char *err, size_t errlen, const char *fmt, const char *a)
{
    snprintf(err, errlen, fmt, a);
    return -1;
}

static int get_int(const jv *o, const char *key, int64_t lo, int64_t hi, int64_t *out, char *err, size_t errlen)
{
    const jv *v = jv_get(o, key);
    if (!v || v->kind != JV_NUMBER || !v->is_int || v->i < lo || v->i > hi) {
        snprintf(err, errlen, "header: expected \"%s\" an integer from %lld to %lld", key, (long long)lo,
                 (long long)hi);
        return -1;
    }
    *out = v->i;
    return 0;
}

static int get_fmt(const jv *o, const char *key, mf_format *f, const char **name, char *err, size_t errlen)
{
    const jv *v = jv_get(o, key);
    if (v && v->kind == JV_STRING)
        for (int i = 0; i < NFMT; i++)
            if (!strcmp(v->str, rec_fmt[i].name)) {
                *f = rec_fmt[i].f;
                *name = rec_fmt[i].name;
                return 0;
            }
    snprintf(err, errlen, "header: expected \"%s\" one of f32, tf32, f16, bf16, e4m3, e5m2", key);
    return -1;
}

static int key_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* flags as the kernel table's column: "k=v" sorted by key, booleans 0/1 */
static void flags_text(const jv *fl, char *out, size_t len)
{
    snprintf(out, len, "-");
    if (!fl || fl->kind != JV_OBJECT || !fl->n)
        return;
    const char **keys = malloc(fl->n * sizeof *keys);
    if (!keys)
        return;
    for (size_t i = 0; i < fl->n; i++)
        keys[i] = fl->keys[i];
    qsort(keys, fl->n, sizeof *keys, key_cmp);
    size_t pos = 0;
    out[0] = 0;
    for (size_t i = 0; i < fl->n; i++) {
        if (i && !strcmp(keys[i], keys[i - 1]))
            continue;
        const jv *v = jv_get(fl, keys[i]);
        const char *val = v->kind == JV_TRUE ? "1" : v->kind == JV_FALSE ? "0" : v->kind == JV_NULL ? "None"
                          : v->kind == JV_NUMBER || v->kind == JV_STRING ? v->str : "?";
        int w = snprintf(out + pos, len - pos, "%s%s=%s", pos ? "," : "", keys[i], val);
        if (w < 0 || (size_t)w >= len - pos) {
            out[len - 1] = 0;
            break;
        }
        pos += (size_t)w;
    }
    free(keys);
}

static const char *env_str(const jv *env, const char *key)
{
    const jv *v = jv_get(env, key);
    return v && v->kind == JV_STRING ? v->str : "";
}

/* array x: unsigned, of `width` bytes, rows x cols (cols 0: 1-D) */
static int check_array(const npz_array *x, const char *what, char kind, int width, uint64_t rows, uint64_t cols,
                       char *err, size_t errlen)
{
    int nd = cols ? 2 : 1;
    if (x->kind != kind || x->width != width || x->ndim != nd || x->shape[0] != rows || (nd == 2 && x->shape[1] != cols)) {
        if (nd == 2)
            snprintf(err, errlen, "array %s: expected %llu x %llu %s%d, got %s%d of shape %llu x %llu (%d-D)", what,
                     (unsigned long long)rows, (unsigned long long)cols, kind == 'u' ? "uint" : "int", width * 8,
                     x->kind == 'u' ? "uint" : "int", x->width * 8, (unsigned long long)x->shape[0],
                     (unsigned long long)x->shape[1], x->ndim);
        else
            snprintf(err, errlen, "array %s: expected %llu %s%d, got %s%d of %d dimensions", what,
                     (unsigned long long)rows, kind == 'u' ? "uint" : "int", width * 8, x->kind == 'u' ? "uint" : "int",
                     x->width * 8, x->ndim);
        return -1;
    }
    return 0;
}

static int index_array(const npz_array *x, const char *what, int64_t limit, char *err, size_t errlen)
{
    if (x->kind != 'i' || x->width != 8 || x->ndim != 1 || x->count == 0) {
        snprintf(err, errlen, "array %s: expected a non-empty 1-D int64 array of indices", what);
        return -1;
    }
    const int64_t *v = x->data;
    for (uint64_t i = 0; i < x->count; i++)
        if (v[i] < 0 || v[i] >= limit) {
            snprintf(err, errlen, "array %s: element %llu is %lld, out of 0..%lld", what, (unsigned long long)i,
                     (long long)v[i], (long long)limit - 1);
            return -1;
        }
    return 0;
}

int mf_rec_load_mem(const unsigned char *buf, size_t len, uint64_t max_bytes, mf_rec *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (npz_read_mem(buf, len, max_bytes, &r->z, err, errlen))
        return -1;
    const npz_array *h = npz_get(&r->z, "header");
    if (!h)
        return bad(err, errlen, "%s", "not an mmafuzz recording: no 'header' array (docs/recordings.md)");
    if (h->kind != 'u' || h->width != 1 || h->ndim != 1)
        return bad(err, errlen, "%s", "array header: expected 1-D uint8 (UTF-8 JSON)");
    char msg[200];
    if (jv_parse(h->data, (size_t)h->count, &r->header, msg, sizeof msg))
        return bad(err, errlen, "header: not JSON: %s", msg);
    const jv *H = &r->header;
    if (H->kind != JV_OBJECT)
        return bad(err, errlen, "%s", "header: expected a JSON object");
    const jv *fmt = jv_get(H, "format"), *ver = jv_get(H, "version");
    if (!fmt || fmt->kind != JV_STRING || strcmp(fmt->str, "mmafuzz-recording") || !ver || ver->kind != JV_NUMBER ||
        !ver->is_int || ver->i != 1)
        return bad(err, errlen, "%s", "header: expected \"format\": \"mmafuzz-recording\" and \"version\": 1");
    const jv *op = jv_get(H, "op");
    if (!op || op->kind != JV_STRING || !*op->str)
        return bad(err, errlen, "%s", "header: expected \"op\", a non-empty string");
    r->op = op->str;
    const int64_t dim_max = 1ll << 31;
    if (get_int(H, "m", 1, dim_max, &r->m, err, errlen) || get_int(H, "n", 1, dim_max, &r->n, err, errlen) ||
        get_int(H, "k", 1, dim_max, &r->k, err, errlen))
        return -1;
    if (get_fmt(H, "a_format", &r->fa, &r->a_name, err, errlen) ||
        get_fmt(H, "b_format", &r->fb, &r->b_name, err, errlen) ||
        get_fmt(H, "d_format", &r->fd, &r->d_name, err, errlen))
        return -1;
    const jv *fl = jv_get(H, "flags");
    if (fl && fl->kind != JV_OBJECT)
        return bad(err, errlen, "%s", "header: expected \"flags\" an object");
    flags_text(fl, r->flags, sizeof r->flags);
    const jv *env = jv_get(H, "env");
    if (env && env->kind != JV_OBJECT)
        return bad(err, errlen, "%s", "header: expected \"env\" an object");
    r->gpu = env_str(env, "gpu");
    {
        const char *parts[][2] = {{"torch", env_str(env, "torch")}, {"cublasLt", env_str(env, "cublaslt")},
                                  {"cuda", env_str(env, "cuda")}};
        size_t pos = 0;
        for (int i = 0; i < 3; i++)
            if (*parts[i][1] && pos < sizeof r->software) {
                int w = snprintf(r->software + pos, sizeof r->software - pos, "%s%s %s", pos ? " " : "", parts[i][0],
                                 parts[i][1]);
                pos += w > 0 ? (size_t)w : 0;
            }
    }
    r->a = npz_get(&r->z, "a");
    r->b = npz_get(&r->z, "b");
    if (!r->a != !r->b)
        return bad(err, errlen, "%s", "arrays a and b: expected both (stored operands) or neither (the generator)");
    if (r->a) {
        if (check_array(r->a, "a", 'u', mf_rec_width(r->fa), (uint64_t)r->m, (uint64_t)r->k, err, errlen) ||
            check_array(r->b, "b", 'u', mf_rec_width(r->fb), (uint64_t)r->k, (uint64_t)r->n, err, errlen))
            return -1;
    } else {
        const jv *g = jv_get(H, "inputs");
        const jv *gen = jv_get(g, "generator");
        if (!g || g->kind != JV_OBJECT || !gen || gen->kind != JV_STRING || strcmp(gen->str, "mmafuzz.splitmix64"))
            return bad(err, errlen, "%s",
                       "no arrays a and b, and no header \"inputs\" with \"generator\": \"mmafuzz.splitmix64\"");
        int64_t sa, sb, lo = -4, hi = 2;
        if (get_int(g, "seed_a", 0, INT64_MAX, &sa, err, errlen) || get_int(g, "seed_b", 0, INT64_MAX, &sb, err, errlen))
            return -1;
        if ((jv_get(g, "exp_lo") && get_int(g, "exp_lo", -1000, 1000, &lo, err, errlen)) ||
            (jv_get(g, "exp_hi") && get_int(g, "exp_hi", -1000, 1000, &hi, err, errlen)))
            return -1;
        const char *why = mf_rec_gen_check(r->fa, (int)lo, (int)hi);
        if (!why)
            why = mf_rec_gen_check(r->fb, (int)lo, (int)hi);
        if (why)
            return bad(err, errlen, "header inputs: %s", why);
        if ((uint64_t)r->m * (uint64_t)r->k > (1ull << 32) || (uint64_t)r->n * (uint64_t)r->k > (1ull << 32))
            return bad(err, errlen, "%s", "header inputs: M*K and N*K must be at most 2^32 (the generator's counters)");
        r->generated = 1;
        r->seed_a = (uint64_t)sa;
        r->seed_b = (uint64_t)sb;
        r->exp_lo = (int)lo;
        r->exp_hi = (int)hi;
    }
    r->d = npz_get(&r->z, "d");
    if (!r->d)
        return bad(err, errlen, "%s", "no array d (the outputs)");
    const npz_array *dr = npz_get(&r->z, "d_rows"), *dc = npz_get(&r->z, "d_cols");
    if (!dr != !dc)
        return bad(err, errlen, "%s", "arrays d_rows and d_cols: expected both or neither");
    if (dr) {
        if (index_array(dr, "d_rows", r->m, err, errlen) || index_array(dc, "d_cols", r->n, err, errlen))
            return -1;
        r->d_rows = dr->data;
        r->d_cols = dc->data;
        r->d_nrows = dr->count;
        r->d_ncols = dc->count;
    } else {
        r->d_nrows = (uint64_t)r->m;
        r->d_ncols = (uint64_t)r->n;
    }
    if (check_array(r->d, "d", 'u', mf_rec_width(r->fd), r->d_nrows, r->d_ncols, err, errlen))
        return -1;
    return 0;
}

int mf_rec_load(const char *path, mf_rec *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    unsigned char *buf;
    size_t len;
    if (npz_slurp(path, MF_REC_MAX_BYTES * 2 + (64u << 20), &buf, &len, err, errlen))
        return -1;
    int rc = mf_rec_load_mem(buf, len, MF_REC_MAX_BYTES, r, err, errlen);
    free(buf);
    return rc;
}

void mf_rec_a_row(const mf_rec *r, int64_t row, void *out)
{
    size_t w = (size_t)mf_rec_width(r->fa), K = (size_t)r->k;
    if (r->a)
        memcpy(out, (const unsigned char *)r->a->data + (size_t)row * K * w, K * w);
    else
        mf_rec_generate(r->fa, r->seed_a, (uint64_t)row * K, K, r->exp_lo, r->exp_hi, out);
}

void mf_rec_b_col(const mf_rec *r, int64_t col, void *out)
{
    size_t w = (size_t)mf_rec_width(r->fb), K = (size_t)r->k, N = (size_t)r->n;
    if (r->b) {
        const unsigned char *b = r->b->data;
        for (size_t k = 0; k < K; k++)
            memcpy((unsigned char *)out + k * w, b + (k * N + (size_t)col) * w, w);
    } else {
        mf_rec_generate(r->fb, r->seed_b, (uint64_t)col * K, K, r->exp_lo, r->exp_hi, out);
    }
}

/*
 * fuzz_input.c - fuzz_model's input layout and format-aware mutations (the
 * mutations themselves are the case-generation library's, gen/mutators.def).
 */
#include "fuzz_input.h"

#include "mmafuzz_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of the instruction table, counted from the X-macro itself. */
enum {
    FZ_TABLE_ROWS = 0
#define MF_INSTR(...) +1
#include "instr_table.def"
#undef MF_INSTR
};
_Static_assert(FZ_TABLE_ROWS > 0, "the instruction table has rows");

static const mf_instr *rows[FZ_TABLE_ROWS];   /* the rows being fuzzed */
static size_t nrows;

/* The rows being fuzzed by key, sorted: fz_decode's binary search. */
typedef struct fz_keyed {
    uint32_t key;
    const mf_instr *in;
} fz_keyed;
static fz_keyed by_key[FZ_TABLE_ROWS];
_Static_assert(sizeof by_key / sizeof by_key[0] == sizeof rows / sizeof rows[0], "one key per row");

uint32_t fz_key(const mf_instr *in) { return (uint32_t)rng_hash_str(in->name); }

static int cmp_keyed(const void *x, const void *y)
{
    uint32_t a = ((const fz_keyed *)x)->key, b = ((const fz_keyed *)y)->key;
    return a < b ? -1 : a > b;
}

static int in_group(const mf_instr *in, const char *group)
{
    if (!group || !*group || !strcmp(group, "all"))
        return 1;
    switch (in->family) {
    case MF_T_FDPA:
    case MF_ST_FDPA:
    case MF_GST_FDPA:
    case MF_F16_EMU: return !strcmp(group, "nvidia");
    case MF_E_FDPA:
    case MF_FTZ_MUL_ADD:
    case MF_TR_FDPA:
    case MF_GTR_FDPA: return !strcmp(group, "amd");
    case MF_FMA_CHAIN: return !strcmp(group, "fma");
    default: return 0;
    }
}

size_t fz_select(const char *group, const char *pattern)
{
    nrows = 0;
    if (mf_instr_count != FZ_TABLE_ROWS) {   /* the library and instr_table.def disagree: a stale build */
        fprintf(stderr, "fuzz_input: the model has %zu rows, instr_table.def %d\n", mf_instr_count, FZ_TABLE_ROWS);
        return 0;
    }
    /* every name of the table must have its own key, selected or not */
    for (size_t i = 0; i < mf_instr_count; i++)
        by_key[i] = (fz_keyed){fz_key(&mf_instr_table[i]), &mf_instr_table[i]};
    qsort(by_key, mf_instr_count, sizeof by_key[0], cmp_keyed);
    for (size_t i = 1; i < mf_instr_count; i++)
        if (by_key[i].key == by_key[i - 1].key) {
            fprintf(stderr, "fuzz_input: %s and %s have the same key %08x\n", by_key[i - 1].in->name,
                    by_key[i].in->name, by_key[i].key);
            return 0;
        }
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (in_group(in, group) && (!pattern || !*pattern || mf_glob_match(pattern, in->name)))
            rows[nrows++] = in;
    }
    for (size_t i = 0; i < nrows; i++)
        by_key[i] = (fz_keyed){fz_key(rows[i]), rows[i]};
    qsort(by_key, nrows, sizeof by_key[0], cmp_keyed);
    return nrows;
}

size_t fz_count(void) { return nrows; }
const mf_instr *fz_row(size_t i) { return rows[i]; }

uint64_t fz_mask(mf_format f, uint64_t x)
{
    int bits = mf_format_get(f)->bits;
    return bits >= 64 ? x : x & (((uint64_t)1 << bits) - 1);
}

static uint64_t get8(const uint8_t *d, size_t size, size_t pos)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | (pos + (size_t)i < size ? d[pos + (size_t)i] : 0);
    return v;
}

static void put8(uint8_t *d, size_t pos, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        d[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* Sparse rows: the legal metadata nibbles (mf_sparse_meta_ok) in order; an
 * input byte b of a group means legal[b % n].  @return n. */
static int legal_nibbles(const mf_instr *in, uint8_t *legal)
{
    int n = 0;
    for (unsigned v = 0; v < 16; v++)
        if (mf_sparse_meta_ok(in, v))
            legal[n++] = (uint8_t)v;
    return n;
}

/* Give a case of sparse row `in` legal metadata where it has none, and +0 at
 * its pruned positions (mf_sparse_canon). */
static void sparse_fix(const mf_instr *in, mf_case *cs)
{
    uint8_t legal[16];
    int n = legal_nibbles(in, legal);
    for (int g = 0; in->sparse && n && g < in->n_meta; g++)
        if (!mf_sparse_meta_ok(in, cs->meta[g]))
            cs->meta[g] = legal[cs->meta[g] % n];
    mf_sparse_canon(in, cs);
}

const mf_instr *fz_decode(const uint8_t *data, size_t size, mf_case *cs)
{
    memset(cs, 0, sizeof *cs);
    if (!nrows)
        return NULL;
    /* the key names a row by its name, so that an input means the same case
       whichever rows are fuzzed and however the table is ordered; a key of
       no fuzzed row maps to one of them */
    uint32_t key = 0;
    for (size_t i = 0; i < FZ_KEY_BYTES && i < size; i++)
        key |= (uint32_t)data[i] << (8 * i);
    fz_keyed want = {key, NULL};
    const fz_keyed *hit = bsearch(&want, by_key, nrows, sizeof by_key[0], cmp_keyed);
    const mf_instr *in = hit ? hit->in : rows[key % nrows];
    size_t pos = FZ_KEY_BYTES;
    cs->c = fz_mask(in->fc, get8(data, size, pos));
    pos += 8;
    for (int k = 0; k < in->k; k++, pos += 8)
        cs->a[k] = fz_mask(in->fa, get8(data, size, pos));
    for (int k = 0; k < in->k; k++, pos += 8)
        cs->b[k] = fz_mask(in->fb, get8(data, size, pos));
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        cs->sa[s] = fz_mask(in->fs, get8(data, size, pos));
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        cs->sb[s] = fz_mask(in->fs, get8(data, size, pos));
    if (in->sparse) {   /* a byte per metadata group: the index of a legal nibble */
        uint8_t legal[16];
        int n = legal_nibbles(in, legal);
        for (int g = 0; g < in->n_meta; g++, pos++)
            cs->meta[g] = legal[(pos < size ? data[pos] : 0) % n];
        mf_sparse_canon(in, cs);
    }
    return in;
}

size_t fz_encode(const mf_instr *in, const mf_case *cs, uint8_t *out, size_t max)
{
    uint8_t buf[FZ_MAX_SIZE];
    uint32_t key = fz_key(in);
    size_t pos = FZ_KEY_BYTES;
    for (size_t i = 0; i < FZ_KEY_BYTES; i++)
        buf[i] = (uint8_t)(key >> (8 * i));
    put8(buf, pos, cs->c);
    pos += 8;
    for (int k = 0; k < in->k; k++, pos += 8)
        put8(buf, pos, cs->a[k]);
    for (int k = 0; k < in->k; k++, pos += 8)
        put8(buf, pos, cs->b[k]);
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        put8(buf, pos, cs->sa[s]);
    for (int s = 0; s < in->n_scales; s++, pos += 8)
        put8(buf, pos, cs->sb[s]);
    if (in->sparse) {
        uint8_t legal[16];
        int n = legal_nibbles(in, legal);
        for (int g = 0; g < in->n_meta; g++, pos++) {
            int i = 0;
            while (i < n - 1 && legal[i] != cs->meta[g])
                i++;
            buf[pos] = (uint8_t)i;
        }
    }
    if (pos > max)
        pos = max;
    memcpy(out, buf, pos);
    return pos;
}

void fz_mutate(const mf_instr **inp, mf_case *cs, uint64_t *rnd)
{
    const mf_instr *in = *inp;
    gen_rng r = {*rnd};
    if (rng_below(&r, 8)) {   /* one of the library's mutations */
        gen_mutate_once(in, &r, cs, NULL);
        *rnd = r.s;
        return;
    }
    /* another row of the same family */
    size_t n = fz_count(), start = rng_below(&r, (uint32_t)n);
    *rnd = r.s;
    for (size_t t = 0; t < n; t++) {
        const mf_instr *o = fz_row((start + t) % n);
        if (o->family == in->family && o != in) {
            mf_case tmp = *cs;
            memset(cs, 0, sizeof *cs);
            cs->c = fz_mask(o->fc, tmp.c);
            for (int k = 0; k < o->k; k++) {
                cs->a[k] = fz_mask(o->fa, tmp.a[k % in->k]);
                cs->b[k] = fz_mask(o->fb, tmp.b[k % in->k]);
            }
            for (int s = 0; s < o->n_scales; s++) {
                cs->sa[s] = fz_mask(o->fs, in->n_scales ? tmp.sa[s % in->n_scales] : 127);
                cs->sb[s] = fz_mask(o->fs, in->n_scales ? tmp.sb[s % in->n_scales] : 127);
            }
            sparse_fix(o, cs);   /* another sparse row: legal metadata, pruned a = +0 */
            *inp = o;
            break;
        }
    }
}

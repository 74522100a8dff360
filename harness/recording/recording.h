/*
 * recording.h - recordings of whole GEMM calls (docs/recordings.md): the
 * .npz with a JSON header, read and checked for what the format promises,
 * written, and the operand generator `mmafuzz.splitmix64` (the same draws as
 * python/mmafuzz/recording.py's generate).
 */
#ifndef MMAFUZZ_RECORDING_H
#define MMAFUZZ_RECORDING_H

#include "json_value.h"
#include "mmafuzz_model.h"
#include "npz.h"

#include <stddef.h>
#include <stdint.h>

/* A recording as read. */
typedef struct mf_rec {
    npz_file z;
    jv header;                 /* the JSON header, whole */
    const char *op;            /* header "op" */
    int64_t m, n, k;
    mf_format fa, fb, fd;      /* a_format, b_format, d_format (tf32: f32 containers) */
    const char *a_name, *b_name, *d_name;
    const char *gpu;           /* env.gpu, or "" */
    char software[160];        /* "torch X cuda Y" as the kernel table writes it ("" parts left out) */
    char flags[1024];          /* flags as "k=v,..." sorted, booleans 0/1 (the kernel table's column); "-" if none */
    int generated;             /* operands from the generator (no a, b arrays) */
    uint64_t seed_a, seed_b;
    int exp_lo, exp_hi;
    const npz_array *a, *b;    /* stored operands (M x K, K x N), or NULL */
    const npz_array *d;        /* the outputs: M x N, or rows x cols */
    uint64_t d_nrows, d_ncols; /* d's shape */
    const int64_t *d_rows, *d_cols;   /* which outputs d holds, or NULL (all) */
} mf_rec;

/* Largest array a recording may hold (bytes, uncompressed). */
#define MF_REC_MAX_BYTES (16ull << 30)

/* Read and validate a recording from buf[0..len) (mf_rec_load: a file).
 * @return 0, or -1 with what was expected in err (no file name: the caller
 * adds it).  mf_rec_free is safe either way. */
int mf_rec_load_mem(const unsigned char *buf, size_t len, uint64_t max_bytes, mf_rec *r, char *err, size_t errlen);
int mf_rec_load(const char *path, mf_rec *r, char *err, size_t errlen);
void mf_rec_free(mf_rec *r);

/* Row `row` of A (K elements of the format's width, mf_tile_elem_bytes)
 * and column `col` of B, stored or generated. */
void mf_rec_a_row(const mf_rec *r, int64_t row, void *out);
void mf_rec_b_col(const mf_rec *r, int64_t col, void *out);

/* The generator `mmafuzz.splitmix64`: elements c = 0..count-1 of counter
 * seed * 2^32 + base + c (base = r * K for row r of A, j * K for column j
 * of B), as bit patterns of format f (f32, tf32, f16, bf16, e4m3, e5m2)
 * into out (width of f each).  @return 0, or -1 if f or the exponent range
 * is not one the generator draws (mf_rec_gen_check says why). */
int mf_rec_generate(mf_format f, uint64_t seed, uint64_t base, uint64_t count, int exp_lo, int exp_hi, void *out);
const char *mf_rec_gen_check(mf_format f, int exp_lo, int exp_hi);

/* Bytes an element of format f takes in a recording (1, 2 or 4), 0 if f is
 * not one a recording holds. */
int mf_rec_width(mf_format f);

#endif

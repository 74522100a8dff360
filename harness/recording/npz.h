/*
 * npz.h - NumPy .npz files (a zip of .npy arrays, as np.savez writes them
 * stored and np.savez_compressed deflated), read and written: integer arrays
 * of up to two dimensions, C order, little-endian.  What the recordings of
 * docs/recordings.md hold.
 *
 * Reading trusts nothing: sizes are checked against the file and against
 * each other, and anything else is an error message saying what was
 * expected (the caller prefixes the file's name).
 */
#ifndef MMAFUZZ_NPZ_H
#define MMAFUZZ_NPZ_H

#include <stddef.h>
#include <stdint.h>

/* One array. */
typedef struct npz_array {
    char name[64];     /* without ".npy" */
    char kind;         /* 'u' unsigned, 'i' signed */
    int width;         /* bytes an element: 1, 2, 4 or 8 */
    int ndim;          /* 0, 1 or 2 */
    uint64_t shape[2]; /* unused dimensions are 1 */
    uint64_t count;    /* elements */
    void *data;        /* count * width bytes, C order, host byte order (little-endian hosts) */
} npz_array;

typedef struct npz_file {
    npz_array *arrays;
    int n;
} npz_file;

/* Read the .npz held in buf[0..len).  Arrays of more than max_bytes bytes
 * (uncompressed) are refused.  @return 0, or -1 with what is wrong in err
 * (npz_free is then still safe to call). */
int npz_read_mem(const unsigned char *buf, size_t len, uint64_t max_bytes, npz_file *out, char *err, size_t errlen);
/* The same from a file. */
int npz_read(const char *path, uint64_t max_bytes, npz_file *out, char *err, size_t errlen);
void npz_free(npz_file *f);
/* A whole file into *out (malloc'd, *outlen bytes), refused above limit
 * bytes.  @return 0, or -1 with why in err. */
int npz_slurp(const char *path, uint64_t limit, unsigned char **out, size_t *outlen, char *err, size_t errlen);
/* The array named `name`, or NULL. */
const npz_array *npz_get(const npz_file *f, const char *name);

/* Write arrays[0..n) as an .npz at path, each member deflated (as
 * np.savez_compressed), through a temporary file renamed into place: the
 * file is written whole or not at all.  @return 0, or -1 with why in err. */
int npz_write(const char *path, const npz_array *arrays, int n, char *err, size_t errlen);

#endif

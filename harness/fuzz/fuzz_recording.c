/*
 * fuzz_recording.c - libFuzzer entry point: the recording reader
 * (harness/recording/recording.h: the .npz zip and .npy reader, the JSON
 * header, the checks of docs/recordings.md) and the kernel model's text
 * form (mf_ktable_parse_model) on arbitrary bytes.
 *
 * What must hold, for every input: no crash, no undefined behaviour, no
 * leak, no hang; a rejected input comes back as -1 with a message; an
 * accepted one is self-consistent: d holds d_nrows x d_ncols outputs of its
 * format's width, its row and column indices are in range, and every
 * operand row and column can be read (stored or generated).
 */
#include "kernel_table.h"
#include "recording.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_recording: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024];
    mf_rec r;
    /* small limits: the fuzzer's memory, and K bounded below so that a row is cheap */
    if (mf_rec_load_mem(data, size, 1 << 20, &r, err, sizeof err) == 0) {
        if (!*r.op || r.m < 1 || r.n < 1 || r.k < 1)
            fail("accepted a header without op or shape");
        if (r.d->count != r.d_nrows * r.d_ncols || r.d->width != mf_rec_width(r.fd))
            fail("accepted d of the wrong size or width");
        for (uint64_t i = 0; i < r.d_nrows && r.d_rows; i++)
            if (r.d_rows[i] < 0 || r.d_rows[i] >= r.m)
                fail("accepted a d_rows index out of range");
        for (uint64_t i = 0; i < r.d_ncols && r.d_cols; i++)
            if (r.d_cols[i] < 0 || r.d_cols[i] >= r.n)
                fail("accepted a d_cols index out of range");
        if (r.k <= 4096) {
            unsigned char *row = malloc((size_t)r.k * 4);
            if (row) {
                mf_rec_a_row(&r, r.d_rows ? r.d_rows[0] : 0, row);
                mf_rec_b_col(&r, r.d_cols ? r.d_cols[r.d_ncols - 1] : r.n - 1, row);
            }
            free(row);
        }
    } else if (!*err) {
        fail("rejected without a message");
    }
    mf_rec_free(&r);
    /* the same bytes as a kernel model's text */
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = 0;
        mf_kernel kr;
        if (mf_ktable_parse_model(text, &kr, err, sizeof err) == 0 && mf_kernel_check(&kr))
            fail("accepted a kernel model mf_kernel_check refuses");
        free(text);
    }
    return 0;
}

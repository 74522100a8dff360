/*
 * check_rec.h - `mmafuzz check` of a recording (.npz, docs/recordings.md):
 * every recorded output of the GEMM call against a kernel model evaluated
 * by the C model (mf_kernel_eval_rows), reported per output element as
 * check reports the cases of .vec files.
 */
#ifndef MMAFUZZ_CHECK_REC_H
#define MMAFUZZ_CHECK_REC_H

typedef struct check_rec_opts {
    const char *kernel_file;    /* --kernel FILE: the model for every recording; NULL: the kernel table */
    const char *const *tables;  /* kernel tables searched in order (the last hit wins) */
    int ntables;
    long long max_errors;       /* failures printed, over all files */
    int jobs;                   /* threads (>= 1) */
    int json;                   /* one JSON object a recording instead of text */
} check_rec_opts;

typedef struct check_rec_totals {
    long pass, fail;
    long long shown;            /* failures printed so far */
} check_rec_totals;

/* Does path name a recording (ends in .npz)? */
int check_is_recording(const char *path);

/* Check one recording, adding to *t.  Prints the failures (up to
 * max_errors in all) and one line for the file.  @return 0 every output
 * reproduced, 1 some not, 2 bad input or no model (message "FILE: ..." on
 * stderr). */
int check_recording(const char *path, const check_rec_opts *o, check_rec_totals *t);

#endif

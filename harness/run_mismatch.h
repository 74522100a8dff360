/*
 * run_mismatch.h - what happens to one mismatching case: re-run it alone
 * (MZ_RERUNS times), minimize it when it repeats, classify it, and file it
 * in the store with its header.  Shared by `mmafuzz run` and `mmafuzz shrink`.
 */
#ifndef MMAFUZZ_RUN_MISMATCH_H
#define MMAFUZZ_RUN_MISMATCH_H

#include "run_minimize.h"
#include "run_store.h"

/* Where the case came from (for the file's header). */
typedef struct mm_origin {
    const char *device_spec;  /* as given to --device */
    unsigned long long seed;
    long long index;          /* tile * M * N + row * N + column; -1 if not generated */
    long long tile;
    int row, col, m, n;
    const char *generator;    /* generator name, or a note such as "shrink of FILE" */
} mm_origin;

typedef struct mm_outcome {
    int kind;                 /* MZ_REPEATS, MZ_NONDETERMINISTIC or MZ_CONTEXT */
    int is_new;               /* 1: a new file was written */
    char hex[ST_HASH_HEX];
    char path[1400];
    const char *sig;          /* signature class */
    mz_result res;            /* the minimized case (kind == MZ_REPEATS) */
    uint64_t runs[MZ_RERUNS];
} mm_outcome;

/* Handle one mismatch: orig with device output batch_d (model output is
 * recomputed).  @return 0, or -1 on a device or store error (message in err). */
int mm_handle(store *st, mz_dev *z, const mf_case *orig, uint64_t batch_d, const mm_origin *o, mm_outcome *out,
              char *err, size_t errlen);

/* Write the text of a mismatch file into buf.  @return its length or -1. */
int mm_format_file(const mz_dev *z, const mf_case *orig, uint64_t orig_d, const mm_origin *o, const mm_outcome *out,
                   char *buf, size_t len);

#endif

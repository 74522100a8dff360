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

/* What mm_handle ran into, as a value. */
typedef enum mm_err {
    MM_OK = 0,
    MM_ERR_DEVICE,   /* a re-run or the minimizer failed on the device (counted; the run goes on) */
    MM_ERR_FORMAT,   /* the file text did not fit (counted; the run goes on) */
    MM_ERR_STORE,    /* the store could not file it (the run ends) */
    MM_STOPPED       /* a stop request (z->stop) came first; nothing was filed */
} mm_err;

/* Handle one mismatch: orig with device output batch_d (model output is
 * recomputed).  @return MM_OK, or an mm_err (message in err). */
mm_err mm_handle(store *st, mz_dev *z, const mf_case *orig, uint64_t batch_d, const mm_origin *o, mm_outcome *out,
              char *err, size_t errlen);

/* Write the text of a mismatch file into buf.  @return its length or -1. */
int mm_format_file(const mz_dev *z, const mf_case *orig, uint64_t orig_d, const mm_origin *o, const mm_outcome *out,
                   char *buf, size_t len);

/* The header of a mismatch file (the "# key: value" lines mm_format_file
 * writes), read back.  Fields a file lacks are "" / 0 (has_* 0). */
typedef struct mm_header {
    char instr[160];          /* # instr: */
    char signature[64];       /* # signature: */
    char device_spec[128];    /* # device-spec: (as given to --device) */
    char device[200];         /* # device: */
    char version[64];         /* # mmafuzz: */
    char model[160];          /* # model: the row the model evaluated, when run --model filed it */
    const mf_instr *model_row;/* that row of the table, or NULL */
    int has_seed;
    unsigned long long seed;  /* # seed: */
    int has_index;
    long long index;          /* # index: */
    char generator[200];      /* # generator: */
} mm_header;

/* Parse the header text (lines before the first case; other lines are
 * ignored).  @return the number of known keys found; -1 when a known key
 * has a malformed value (message "LINE: ..." in err). */
int mm_header_parse(const char *text, mm_header *h, char *err, size_t errlen);

#endif

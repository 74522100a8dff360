/*
 * vecfile.h - reading and writing `.vec` dot-product case files
 * (shared/VECTORS.md), plain or gzip-compressed.
 *
 * Errors are values: every function that can fail returns a status and
 * leaves "FILE:LINE: what was expected" in the reader's message buffer.
 */
#ifndef MMAFUZZ_VECFILE_H
#define MMAFUZZ_VECFILE_H

#include "mmafuzz_model.h"

#include <stdio.h>

typedef struct mf_vec_reader mf_vec_reader;

/* Status of mf_vec_next. */
enum {
    MF_VEC_CASE = 1,     /* a case was read */
    MF_VEC_EOF = 0,      /* end of input */
    MF_VEC_ERROR = -1,   /* malformed input; see mf_vec_error */
    MF_VEC_UNKNOWN = -2  /* an `instr` line names no known instruction */
};

/* One case as read. */
typedef struct mf_vec_case {
    const mf_instr *instr; /* the table's row, or its row in the `form=` of the instr line: both live as long
                            * as the process (callers keep them past the reader, e.g. the mutation pool) */
    mf_case cs;
    uint64_t d;      /* expected output, if has_d */
    int has_d;
    long line;       /* 1-based line number */
} mf_vec_case;

/* Open a file; gzip-compressed input is detected from its bytes.
 * @return NULL on failure, with a message in err. */
mf_vec_reader *mf_vec_open(const char *path, char *err, size_t errlen);

/* Read from memory (len bytes, need not be NUL-terminated); `name` is used
 * in messages.  The buffer must outlive the reader. */
mf_vec_reader *mf_vec_open_mem(const char *name, const char *buf, size_t len);

/* When set, cases under an unknown `instr` are skipped (and counted) after a
 * single MF_VEC_UNKNOWN return for the `instr` line. */
void mf_vec_set_skip_unknown(mf_vec_reader *r, int on);

/* Read the next case.  @return an MF_VEC_* status. */
int mf_vec_next(mf_vec_reader *r, mf_vec_case *out);

/* The message of the last MF_VEC_ERROR/MF_VEC_UNKNOWN ("FILE:LINE: ..."). */
const char *mf_vec_error(const mf_vec_reader *r);
/* The name given by the last unknown `instr` line. */
const char *mf_vec_unknown_name(const mf_vec_reader *r);
/* Cases skipped under unknown instructions so far. */
long mf_vec_skipped(const mf_vec_reader *r);

void mf_vec_close(mf_vec_reader *r);

/* Bytes of the file (as stored: compressed for .gz) read so far, for
 * progress; in steps of zlib's buffer. */
long long mf_vec_offset(const mf_vec_reader *r);

/* The text of the line last read (without its newline), e.g. to read free
 * fields of a case; valid until the next mf_vec_next. */
const char *mf_vec_line(const mf_vec_reader *r);

/* Find free field `key` (e.g. "model") in a case line: copy its value into
 * val.  @return 1 if found, 0 if not. */
int mf_vec_field(const char *line, const char *key, char *val, size_t len);

/* Parse one case line for instruction `in` into *out.
 * @return 0, or -1 with a message (without FILE:LINE) in err. */
int mf_vec_parse_case(const mf_instr *in, const char *line, mf_vec_case *out, char *err, size_t errlen);

/* Format one case line (c, a, b, [sa, sb]; then d= if has_d) into buf.
 * @return the length written (excluding NUL), or -1 if buf is too small. */
int mf_vec_format_case(const mf_instr *in, const mf_case *cs, const uint64_t *d, char *buf, size_t len);

/* Format one value of format f in the file's hex width. */
int mf_vec_format_value(mf_format f, uint64_t v, char *buf, size_t len);

#endif /* MMAFUZZ_VECFILE_H */

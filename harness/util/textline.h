/*
 * textline.h - the strict line reader of the text files the tool writes
 * (index.tsv, campaign.def, shard.state, stats.jsonl): lines, fields and
 * decimal numbers, nothing taken in part.
 *
 * Every reader of such a file says a bad line as "FILE:LINE: what was
 * expected" and takes nothing of it: a NUL byte, a field with text after its
 * number ("21x88"), a number past its range (no wrap: 2^64, 10^23) or a
 * wrong count of fields is an error, never a part of the line.
 */
#ifndef MMAFUZZ_TEXTLINE_H
#define MMAFUZZ_TEXTLINE_H

#include <stddef.h>

enum {
    TL_END = 0,   /* no more lines */
    TL_LINE = 1,  /* a whole line (its newline replaced by a NUL) */
    TL_TORN = 2,  /* the last line, without a newline: a write cut short (the caller decides) */
    TL_NUL = -1,  /* the line holds a NUL byte (*line and *col say where) */
};

/* The next line of buf[0 .. len) from *pos (start at 0; *lineno at 0).
 * Writes a NUL over the newline.  @return TL_LINE, TL_TORN (the line is
 * terminated in place only when buf has room: len < the allocation; use
 * buffers from fs_read_all, which always have it), TL_END or TL_NUL (*col,
 * 1-based, is the NUL's column). */
int tl_next(char *buf, size_t len, size_t *pos, long *lineno, char **line, long *col);

/* Split line in place at each sep into at most max fields.  @return the
 * number of fields there are (which may be more than max: the rest are not
 * split off). */
int tl_split(char *line, char sep, char **field, int max);

/* s as a decimal number of digits only (no sign, no space, no other
 * character), at most max.  @return 0 and *v, or -1. */
int tl_decimal(const char *s, unsigned long long max, unsigned long long *v);

/* 1 if s is n lower-case hex digits exactly. */
int tl_hex(const char *s, size_t n);

#endif

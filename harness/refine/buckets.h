/*
 * buckets.h - the buckets of a fuzz campaign (refine.h): which disagreements
 * are minimized and filed (the first few of each bucket in each process),
 * how many were seen of each, and which buckets are new to the store.
 *
 * The store keeps OUT/buckets.tsv, one line per bucket:
 *     id <TAB> sightings <TAB> instruction <TAB> signature <TAB> explanation
 * merged under a lock at each flush (counts add up across processes), and
 * written atomically.  A bucket is "new" when the store's buckets.tsv did not
 * list it when this process opened it.
 *
 * Sightings are exact: `run` classifies every disagreement it finds (in its
 * model threads, rf_classify), so a bucket's count is the number of
 * disagreeing cases of that bucket among the cases run, whatever the batch
 * sizes, -jobs, sharding or resumes.
 */
#ifndef MMAFUZZ_BUCKETS_H
#define MMAFUZZ_BUCKETS_H

#include "refine.h"

typedef struct rf_buckets rf_buckets;

/* Open the buckets of store `root` (reading root/buckets.tsv if present);
 * per_bucket: disagreements filed per bucket by this process (default 4).
 * @return NULL on error (message in err). */
rf_buckets *rf_buckets_open(const char *root, int per_bucket, char *err, size_t errlen);
void rf_buckets_close(rf_buckets *bs);

/* @return 1 when this process holds the description of bucket `id` (seen by
 * it, or listed in buckets.tsv): rf_buckets_count may then be given the id
 * alone. */
int rf_buckets_known(const rf_buckets *bs, const char *id);
/* Count n sightings of bucket b of instruction `instr` (b->key and b->words
 * are read when the bucket is not known yet).  *is_new (may be NULL): this
 * is the bucket's first sighting in this process and the store did not know
 * it.  @return 0, or -1 when out of memory. */
int rf_buckets_count(rf_buckets *bs, const char *instr, const rf_bucket *b, long long n, int *is_new);

/* Take a case of bucket b for minimizing and filing if fewer than per_bucket
 * were taken by this process.  @return 1 when taken. */
int rf_buckets_take(rf_buckets *bs, const rf_bucket *b);

/* Buckets seen by this process, and of them new to the store. */
long long rf_buckets_seen(const rf_buckets *bs);
long long rf_buckets_new(const rf_buckets *bs);
/* Disagreements counted but not taken (bucket full, or not offered). */
long long rf_buckets_counted_only(const rf_buckets *bs);

/* One line of a buckets.tsv, as rf_buckets_read hands it out. */
typedef struct rf_bucket_line {
    const char *id, *instr, *sig, *words;
    long long count;
    long line;
} rf_bucket_line;

/* The one reader of buckets.tsv (the store's own and `triage`'s): strict.
 * Comment and empty lines aside, every line is ID (16 lower-case hex
 * digits, each ID once) TAB COUNT (decimal digits, at most 2^63-1) TAB
 * INSTRUCTION (not empty) TAB SIGNATURE TAB EXPLANATION, ended by a newline;
 * a NUL byte, a line cut short or any other line is an error, and nothing
 * is taken from the file.  Calls fn for each line once the whole file has
 * read well.  @return 0, 1 when the file does not exist, -1 on an error
 * ("FILE:LINE: what was expected" in err) or fn's non-zero value. */
int rf_buckets_read(const char *path, int (*fn)(const rf_bucket_line *l, void *ctx), void *ctx, char *err,
                    size_t errlen);

/* Merge this process's counts into root/buckets.tsv.  @return 0 or -1. */
int rf_buckets_flush(rf_buckets *bs, char *err, size_t errlen);

#endif /* MMAFUZZ_BUCKETS_H */

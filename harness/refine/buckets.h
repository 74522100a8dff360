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

/* Bucket a disagreeing case (instruction run `in`, model row `model`, device
 * output d_dev) and count one sighting.  *b receives the bucket, *is_new
 * (may be NULL) whether this is the bucket's first sighting in this process
 * and the store did not know it. */
void rf_buckets_classify(rf_buckets *bs, const mf_instr *in, const mf_instr *model, const mf_case *cs,
                         uint64_t d_dev, rf_bucket *b, int *is_new);

/* Take a case of bucket b for minimizing and filing if fewer than per_bucket
 * were taken by this process.  @return 1 when taken. */
int rf_buckets_take(rf_buckets *bs, const rf_bucket *b);

/* Buckets seen by this process, and of them new to the store. */
long long rf_buckets_seen(const rf_buckets *bs);
long long rf_buckets_new(const rf_buckets *bs);
/* Disagreements classified but not taken (bucket full, or not offered). */
long long rf_buckets_counted_only(const rf_buckets *bs);

/* Merge this process's counts into root/buckets.tsv.  @return 0 or -1. */
int rf_buckets_flush(rf_buckets *bs, char *err, size_t errlen);

#endif /* MMAFUZZ_BUCKETS_H */

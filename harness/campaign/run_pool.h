/*
 * run_pool.h - the pool of saved cases that the corpus-mutation generator
 * draws from: cases read from corpus folders and from earlier mismatches,
 * plus the minimized mismatches a campaign finds as it runs.  Bounded: when
 * full, a new case replaces the oldest one, so memory stays flat.
 */
#ifndef MMAFUZZ_RUN_POOL_H
#define MMAFUZZ_RUN_POOL_H

#include "mmafuzz_gen.h"

#include <stddef.h>

/* A saved case: its instruction and values (the case-generation library's
 * type, which the mutation generator reads). */
typedef gen_saved_case pool_entry;

typedef struct pool {
    pool_entry *e;
    size_t n, cap, next;  /* next: slot replaced when full */
    unsigned long long version;  /* counts the changes (a device's copy of a view is current while it is the same) */
} pool;

/* @return 0, or -1 when out of memory. */
int pool_init(pool *p, size_t cap);
void pool_free(pool *p);
/* Add a case (copied); replaces the oldest entry when full. */
void pool_add(pool *p, const mf_instr *in, const mf_case *cs);

/* @return 1 if a case of instruction `from` can be fed to instruction `to`
 * (same operand formats, K and scales). */
int pool_compatible(const mf_instr *from, const mf_instr *to);

/* Fill view[] with pointers to the entries compatible with `to` (at most
 * max).  @return how many. */
size_t pool_view(const pool *p, const mf_instr *to, const pool_entry **view, size_t max);

#endif

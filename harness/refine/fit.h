/*
 * fit.h - search of the row parameter space (family, F, L, e_zero, X, rho,
 * zero-sign rule, NaN rule, chunk order) for the rows that agree with every
 * observed case, and generation of the cases that separate two rows.
 */
#ifndef MMAFUZZ_FIT_H
#define MMAFUZZ_FIT_H

#include "refine.h"

/* One observed case: the case and the device's output. */
typedef struct rf_obs {
    mf_case cs;
    uint64_t d;
} rf_obs;

typedef struct rf_cases {
    rf_obs *v;
    size_t n, cap;
} rf_cases;

/* @return 0, or -1 out of memory. */
int rf_cases_add(rf_cases *c, const mf_case *cs, uint64_t d);
void rf_cases_free(rf_cases *c);

typedef struct rf_cand {
    rf_row row;
    int dist;        /* parameters differing from the start row */
    long agree;      /* cases agreed with (the full count only when computed) */
    int first_miss;  /* index of the first case missed, -1 if none */
    int equivalent;  /* 1: no case separating it from the chosen row was found */
    int mag;         /* size of the differences in F, e_zero and X (ties in sorting) */
    long order;      /* enumeration order (ties in sorting) */
} rf_cand;

typedef struct rf_space {
    rf_cand *c;
    size_t n, cap;
} rf_space;

/* Enumerate the space around `start` (and the extra seeds, e.g. the probes'
 * inferences, may be NULL): every family that accepts the row's formats and,
 * per family, F +-4, every chunk length dividing K, e_zero +-3, every output
 * conversion of D's format, both zero-sign and NaN rules, both chunk orders.
 * @return 0, or -1 out of memory. */
int rf_space_build(const mf_instr *start, const rf_row *seeds, int nseeds, rf_space *sp);
void rf_space_free(rf_space *sp);

/* Keep the candidates that agree with every case (cases may be reordered:
 * the ones that reject most move to the front).  *evals counts evaluations.
 * @return the number kept. */
size_t rf_space_filter(rf_space *sp, rf_cases *cs, long long *evals);

/* Count, for every candidate, the cases it agrees with (at most `limit`
 * cases); used when none agrees with all.  The count is exact for every
 * candidate that reaches the largest count; the others stop counting once
 * they cannot reach the best so far, so their count stays below it. */
void rf_space_count(rf_space *sp, const rf_cases *cs, size_t limit, long long *evals);

/* Sort candidates: closest to the start row first. */
void rf_space_sort(rf_space *sp);

/* Search a case on which rows x and y give different outputs: mutations of
 * the seed cases, then random cases.  @return 1 and *out when found within
 * `tries`, else 0. */
int rf_separate(const rf_row *x, const rf_row *y, const rf_cases *seeds, uint64_t *rng, long tries, mf_case *out,
                long long *evals);

/* @return 1 when point r agrees with observed case o (under r's NaN rule). */
int rf_agrees(const rf_row *r, const rf_obs *o);

#endif /* MMAFUZZ_FIT_H */

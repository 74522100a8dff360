/*
 * probe.h - the papers' directed experiments as data (shared/DOMAIN.md
 * section 6, ../shared/seeds): each probe is a row of a table naming the
 * feature, its source, the cases it builds (a sweep of one integer j) and the
 * rule that turns the observed outputs into a parameter value.  Probes run
 * in table order; later probes use what earlier ones inferred (the chunk
 * probe needs F, the rounding probe the output precision).
 *
 * The outputs come from a callback, so the same table runs on a device, on
 * a model row, or on a candidate row of `mmafuzz fit`.
 */
#ifndef MMAFUZZ_PROBE_H
#define MMAFUZZ_PROBE_H

#include "refine.h"

/* How a probe's cases are built (j is the sweep variable). */
typedef enum rf_probe_build {
    PB_CANCEL_SMALL, /* 2^E - 2^E + 2^(E-j), c = 0: alignment bits */
    PB_PRECISION,    /* 1 + c, c = 2^-j: output precision */
    PB_ROUND,        /* +-(1.5*1.5 + 1.5*2^(1-P)): rounding direction (j = 0: +, 1: -) */
    PB_CHUNK,        /* c = 2^E, -2^E at k = 0, 2^(E-F-3) at k = j: chunk length */
    PB_EZERO,        /* c = 0, product 2^-j (f16 D: 2^-25 + 2^-j, a tie): e_zero */
    PB_ZERO_SIGN,    /* a negative sum that rounds to zero, in the last chunk */
    PB_NAN,          /* a NaN input with a payload */
    PB_SUBNORMAL,    /* a subnormal input times 4 (Fasi et al.) */
    PB_TABLE8,       /* MMA-Sim Table 8: a = -2^13,-1/2,-1/4,-1/8, b = 2^10,1,1,1, c = 2^23 */
    PB_MONOTONIC,    /* pairs: c = 2^E - 2^(E-24), then c = 2^E, each plus n = j/2 products 2^(E-F-1) */
    PB_C_ALIGN,      /* c = 2^(E-j), products 2^E and -2^E: how c joins the sum */
    PB_ORDER         /* Big, -Big, Small at k = 0, 1, 2 in each of the 6 orders (j), c = 0 */
} rf_probe_build;

/* How outputs become a value. */
typedef enum rf_probe_rule {
    PR_LAST_KEPT,   /* value = largest j (from lo) whose d is the exact expected value */
    PR_FIRST_SEEN,  /* value = smallest j whose d is the expected value; none: K */
    PR_DIRECTION,   /* RZ / RNE / RU / RD from the two signs */
    PR_SIGN,        /* -0: sign kept (0), +0: +0 (1) */
    PR_NAN_KIND,    /* canonical NaN (0) / another NaN (1) / not NaN (2) */
    PR_EQUAL,       /* 1 if d is the expected value, else 0 */
    PR_VALUE,       /* no parameter: the output is shown */
    PR_MONOTONIC,   /* pairs (lower c, higher c): 1 when some pair gives the lower c the larger d */
    PR_ORDERS       /* the number of different outputs over the cases (1: order-independent) */
} rf_probe_rule;

/* Which parameter a probe infers. */
typedef enum rf_param {
    RP_NONE, RP_F, RP_P, RP_RHO, RP_L, RP_EZERO, RP_ZERO_PLUS, RP_NAN, RP_SUBNORMAL,
    RP_NO_NORMALISE, /* 1: partial sums are not normalised (a non-monotonic sum seen) */
    RP_C_BITS,       /* the fraction bits c keeps below e_max (= F: c is a term of the fused sum) */
    RP_ONE_SUM       /* 1: the products are summed at once (every order gives one output) */
} rf_param;

typedef struct rf_probe_def {
    const char *feature;  /* "alignment bits F" */
    const char *source;   /* "Fasi et al.; Hickmann & Bradford" */
    rf_param param;
    rf_probe_build build;
    int lo, hi;           /* sweep of j */
    rf_probe_rule rule;
} rf_probe_def;

extern const rf_probe_def rf_probes[];
extern const int rf_probe_count;

/* Runs n cases and writes their outputs.  @return 0, or nonzero on error. */
typedef int (*rf_run_fn)(void *ctx, const mf_case *cs, size_t n, uint64_t *out);

enum { RF_PROBE_OK, RF_PROBE_BOUND, RF_PROBE_NA, RF_PROBE_ERROR };

typedef struct rf_probe_result {
    int status;     /* RF_PROBE_*; BOUND: value is an upper bound (not observable below) */
    int value;      /* the inferred value (rho: an mf_rho; direction: 0 RZ 1 RNE 2 RU 3 RD) */
    uint64_t d;     /* PR_VALUE: the output */
    char text[96];  /* the answer in words */
} rf_probe_result;

/* Everything inferred from one instruction, probe by probe. */
typedef struct rf_probe_run {
    rf_probe_result r[16];
    int F, P, dir, L;  /* inferred so far (-1: unknown) */
    long cases;     /* cases run */
} rf_probe_run;

/* Run every probe of the table for instruction `in` (formats, K) through
 * `run`.  A sparse row is probed through its dense view (K = the kept
 * products): the cases `run` gets carry legal metadata and put the view's
 * products at the kept positions.  @return 0, or -1 when run failed. */
int rf_probe_all(const mf_instr *in, rf_run_fn run, void *ctx, rf_probe_run *out);

/* All the cases the probes built in the last rf_probe_all call are also
 * handed to this optional sink (fit uses them as data). */
typedef void (*rf_case_sink)(void *ctx, const mf_case *cs, uint64_t d);
void rf_probe_set_sink(rf_case_sink sink, void *ctx);

/* Check inferred parameters against a row (the probes against known truth):
 * writes one line per disagreement into buf.  @return the number of
 * disagreements (features that do not apply to the row's family are skipped). */
int rf_probe_check_row(const mf_instr *row, const rf_probe_run *pr, char *buf, size_t len);

/* A model row as a probe target: ctx is an rf_row. */
int rf_run_row(void *ctx, const mf_case *cs, size_t n, uint64_t *out);

#endif /* MMAFUZZ_PROBE_H */

/*
 * refine.h - from a disagreement to the parameter that explains it.
 *
 * A row of the instruction table is a point in a small parameter space
 * (family, F, chunk length L, e_zero, X, output conversion rho, zero-sign
 * rule, NaN rule, chunk order).  The *variant catalogue* of a row is every
 * single-parameter change of it, plus the same qualifier's row on every other
 * architecture; each variant is a modified copy of the row (struct mf_instr)
 * evaluated with mf_eval.  The *explanation* of a case (device output d) is
 * the set of variants whose output equals d.  The *bucket* of a case is
 * (instruction, signature class, explanation) where
 *   - the signature class is the instruction's type signature
 *     ("f16*f16+f32->f32", and its scales), with the model row compared
 *     with when it is not the instruction's own;
 *   - the explanation is the case's canonical explanation: the first
 *     variant, in the catalogue's fixed priority order, that reproduces d
 *     (the same qualifier's rows on the other architectures, then single
 *     parameter changes from the smallest, then families); the other
 *     variants that also reproduce d are reported with it (rf_bucket.also)
 *     but do not key the bucket;
 *   - a case no variant reproduces is "unexplained", keyed by its
 *     fingerprint (rf_fingerprint).
 * All three depend on the case alone (and on the table), never on the
 * other cases of a batch, a shard or a run.
 *
 * Library only: no I/O.  Used by `mmafuzz triage`, `probe`, `fit` and `run`.
 */
#ifndef MMAFUZZ_REFINE_H
#define MMAFUZZ_REFINE_H

#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- variants */

/* What a variant changes. */
typedef enum rf_kind {
    RF_F,          /* F +-1..3 */
    RF_L,          /* chunk length halved, doubled, whole K */
    RF_EZERO,      /* e_zero +-1 */
    RF_X,          /* P / F2 +-1 (or P 2 <-> 4) */
    RF_RHO,        /* another output rounding of D's format (RZ, RNE, RD, RU, RZ-E8M13) */
    RF_ZERO_SIGN,  /* zero_plus flipped */
    RF_NAN,        /* nan_any flipped */
    RF_ORDER,      /* chunks in reverse order */
    RF_FAMILY,     /* another family that accepts the row's formats */
    RF_ARCH,       /* the same qualifier's row on another architecture */
    RF_SPARSE,     /* mma.sp rows: another mf_sp_model (metadata order, chunks of logical K,
                      the dense model on the logical row) */
    RF_KIND_COUNT
} rf_kind;

const char *rf_kind_name(rf_kind k);

/* One point of the parameter space: a row plus the one parameter the model
 * has no field for (chunk order, evaluated by reordering the case). */
typedef struct rf_row {
    mf_instr in;        /* a modified copy of a table row */
    uint8_t reverse;    /* 1: chunks evaluated last first */
} rf_row;

typedef struct rf_variant {
    rf_row row;
    rf_kind kind;
    const mf_instr *table_row;  /* RF_ARCH: the table row itself, else NULL */
    char what[192];             /* in words: "F = 25 instead of 24" */
} rf_variant;

#define RF_MAX_VARIANTS 96

typedef struct rf_catalogue {
    const mf_instr *base;
    int n;
    rf_variant v[RF_MAX_VARIANTS];
} rf_catalogue;

/* The output roundings of D's format (T-FDPA step 6), for the catalogue and
 * the fit: binary32 RZ-FP32, RZ-E8M13, RNE, RD, RU; binary16 RNE-FP16, RZ,
 * RD, RU; other formats the row's own.  out holds 8.  @return the count. */
int rf_rhos_of(const mf_instr *in, mf_rho *out);

/* Build the variant catalogue of table row `base`. */
void rf_catalogue_build(const mf_instr *base, rf_catalogue *cat);

/* Evaluate a point of the parameter space on case cs (mf_eval of the copy,
 * the case's chunks reversed when r->reverse). */
uint64_t rf_row_eval(const rf_row *r, const mf_case *cs);
/* @return a row's point: the table row with reverse = 0. */
rf_row rf_row_of(const mf_instr *in);

/* A start row for `fit --start ARCH` when ARCH has no row of target's
 * qualifier (wgmma before Hopper, fp8 before Ada): the row of ARCH closest
 * to target (same A, B, C, D formats first, then the same opcode, then the
 * same K; integer rows only for integer targets, block-scaled only for
 * block-scaled, sparse only for sparse).  *out is target with that row's arithmetic parameters
 * (family, F, L cut to target's K, e_zero, x, rho, zero and NaN rules); its
 * name, shape, formats and architecture stay target's, so no part of
 * target's own row is borrowed.  @return the donor row, or NULL if ARCH has
 * no row of the same kind. */
const mf_instr *rf_nearest_start(const mf_instr *target, mf_arch arch, mf_instr *out);

/* ---------------------------------------------------------- explanation */

/* A set of variants, bit i = cat->v[i]. */
typedef struct rf_set {
    uint64_t w[2];
} rf_set;

static inline int rf_set_has(const rf_set *s, int i) { return (int)((s->w[i >> 6] >> (i & 63)) & 1); }
static inline int rf_set_empty(const rf_set *s) { return !(s->w[0] | s->w[1]); }
int rf_set_count(const rf_set *s);

/* The variants whose output equals d_dev (under each variant's NaN rule).
 * *evals (may be NULL) is increased by the candidate evaluations made. */
rf_set rf_explain(const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev, long long *evals);

/* The explanation in words: the variants' `what` joined, the first ones
 * named in full ("F = 25 instead of 24; or hopper's row"), "unexplained"
 * when empty.  @return buf. */
char *rf_explain_words(const rf_catalogue *cat, const rf_set *s, char *buf, size_t len);

/* --------------------------------------------------------------- bucket */

#define RF_BUCKET_ID 17  /* 16 hex digits and a NUL */

typedef struct rf_bucket {
    char id[RF_BUCKET_ID];  /* XXH3-64 of key, hex */
    char key[400];          /* "INSTR|SIGCLASS|[model ROW]|E:canonical explanation" or "...|U:fingerprint" */
    char words[300];        /* the canonical explanation in words, or "unexplained (fingerprint)" */
    char also[300];         /* the other variants that reproduce this case, in words ("" if none) */
    int explained;
} rf_bucket;

/* The fingerprint of a case no variant explains: the special values among
 * its inputs, the exponent of |d_dev - d_model| relative to e_max and F,
 * and the differing bits of the two outputs.  @return buf. */
char *rf_fingerprint(const mf_instr *model, const mf_case *cs, uint64_t d_dev, uint64_t d_model, char *buf,
                     size_t len);

/* The signature class of an instruction: its formats, "f16*f16+f32->f32",
 * and " scaled ue8m0/32" for block-scaled rows.  @return buf. */
char *rf_signature_class(const mf_instr *in, char *buf, size_t len);

/* The bucket of a disagreeing case: `in` is the instruction run, `cat` the
 * catalogue of the model row compared with (built once per row), d_model
 * that row's output.  Depends only on (in, cat->base, cs, d_dev). */
void rf_bucket_of(const mf_instr *in, const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev,
                  uint64_t d_model, rf_bucket *out, long long *evals);
/* The same bucket (id, key, words) without `also` (left ""): the variants
 * are tried in order up to the first that reproduces d_dev, so a case the
 * first variant explains costs one evaluation.  What `run` uses. */
void rf_bucket_id_of(const mf_instr *in, const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev,
                     uint64_t d_model, rf_bucket *out, long long *evals);

/* The index of the first variant of cat, in its priority order, whose
 * output equals d_dev, or -1: the canonical explanation.  Variants are
 * tried in order up to that one (*evals, may be NULL, increased by the
 * evaluations made).  Thread-safe (cat is only read). */
int rf_explain_first(const rf_catalogue *cat, const mf_case *cs, uint64_t d_dev, long long *evals);
/* The bucket (id, key, words; `also` left "") of a case whose canonical
 * explanation is variant `first` of cat (rf_explain_first), or -1 for an
 * unexplained case (keyed by its fingerprint, from cs, d_dev, d_model; for
 * first >= 0 they are not read).  rf_bucket_id_of is the two together. */
void rf_bucket_by_first(const mf_instr *in, const rf_catalogue *cat, int first, const mf_case *cs, uint64_t d_dev,
                        uint64_t d_model, rf_bucket *out);

/* The classifier of one instruction run against one model row: the row's
 * variant catalogue and the id of each explained bucket, computed once.
 * Read-only after rf_classifier_new, so threads share it. */
typedef struct rf_classifier rf_classifier;
/* @return NULL when out of memory. */
rf_classifier *rf_classifier_new(const mf_instr *in, const mf_instr *model);
void rf_classifier_free(rf_classifier *c);
/* The bucket id (the number whose 16 hex digits rf_bucket.id holds) of a
 * disagreeing case (device output d_dev, the model row's d_model): the
 * variants are tried up to the first that reproduces d_dev; an explained
 * case costs no string work.  Equal to rf_bucket_id_of's id.  Thread-safe. */
uint64_t rf_classify(const rf_classifier *c, const mf_case *cs, uint64_t d_dev, uint64_t d_model);
/* The whole bucket (id, key, words) of the same case. */
void rf_classify_bucket(const rf_classifier *c, const mf_case *cs, uint64_t d_dev, uint64_t d_model, rf_bucket *b);

/* --------------------------------------------------------------- helpers */

/* The bits of the value (-1)^sign * sig * 2^exp in format f, if it is
 * exactly representable (finite).  @return 0 and *x, or -1. */
int rf_exact(mf_format f, int sign, uint64_t sig, int exp, uint64_t *x);

/* A random finite-or-special case for row `in`, from a mix of shapes that
 * separate parameters (zero accumulator, zero products, cancellation, tiny
 * terms, one special value).  state: a splitmix64 state. */
void rf_random_case(const mf_instr *in, uint64_t *state, mf_case *cs);

/* Print the row as an instr_table.def line (no newline) into buf. */
char *rf_row_def_line(const rf_row *r, char *buf, size_t len);

/* Differences of b from a in words ("F 24 -> 25, L 8 -> 16"), "" if none. */
char *rf_row_diff(const rf_row *a, const rf_row *b, char *buf, size_t len);

/* @return 1 when the two points have the same parameters. */
int rf_row_same(const rf_row *a, const rf_row *b);

#endif /* MMAFUZZ_REFINE_H */

/*
 * run_minimize.h - re-running and minimizing a mismatching case on a device.
 *
 * Candidates are evaluated in batches: each candidate sits alone on the
 * diagonal of a zero tile (row s of A, column s of B, C[s][s]), so one
 * device call evaluates min(M, N) candidates per tile.  A candidate is kept
 * only while device and model still disagree (mf_output_equal).
 */
#ifndef MMAFUZZ_RUN_MINIMIZE_H
#define MMAFUZZ_RUN_MINIMIZE_H

#include "mf_device.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* A device bound to one instruction, with candidate buffers. */
typedef struct mz_dev {
    mf_device *dev;
    const mf_instr *in;      /* what the device runs */
    const mf_instr *model;   /* the row the model evaluates: `in` unless mmafuzz run --model */
    int m, n, k, diag;
    size_t cap_tiles;
    void *A, *B, *C, *SA, *SB, *D;
    long evals, batches;  /* candidates run, device calls made */
    char err[512];        /* the last device error */
    /* A stop request (Ctrl-C) the caller may set, or NULL: when *stop is
     * set, no further device call is made; mz_dev_run returns MZ_DEV_STOPPED,
     * mz_recheck -1 and mz_minimize MZ_STOPPED, and `stopped` is set. */
    const volatile sig_atomic_t *stop;
    int stopped;
} mz_dev;

/* mz_dev_run's code when a stop was requested (beside the MF_DEV_* codes). */
#define MZ_DEV_STOPPED 100
/* mz_minimize's result when a stop was requested. */
#define MZ_STOPPED (-2)

/* Bind z to instruction `in` on dev; the model evaluates row `model` (NULL:
 * `in` itself; mmafuzz run --model gives another architecture's row).
 * @return 0, or -1 (out of memory / bad shape, message in z->err). */
int mz_dev_init(mz_dev *z, mf_device *dev, const mf_instr *in, const mf_instr *model);
void mz_dev_free(mz_dev *z);

/* Run n cases on the device, each alone on a tile diagonal; out[i] = the
 * device's d.  @return MF_DEV_OK, or an MF_DEV_* code with z->err set. */
int mz_dev_run(mz_dev *z, const mf_case *cs, size_t n, uint64_t *out);

/* Outcome of re-running a mismatch alone. */
enum {
    MZ_REPEATS = 0,        /* the same d on every run, still disagreeing with the model */
    MZ_NONDETERMINISTIC,   /* different d on different runs */
    MZ_CONTEXT             /* repeatable alone, but alone it agrees with the model:
                              the batch result depended on the rest of its tile */
};

#define MZ_RERUNS 3

/* Re-run `cs` alone MZ_RERUNS times (separate device calls).  batch_d is
 * the d observed in the batch.  runs[] receives each run's d.
 * @return an MZ_* outcome, or -1 on a device error (z->err). */
int mz_recheck(mz_dev *z, const mf_case *cs, uint64_t batch_d, uint64_t runs[MZ_RERUNS]);

typedef struct mz_result {
    mf_case cs;        /* the minimized case */
    uint64_t d_dev, d_model;
    int products;      /* non-zero products left */
    int c_nonzero;
    long evals, batches;
    double seconds;
} mz_result;

/* Minimize a mismatching case: ddmin over the K products and c (replacing
 * them with +0), then simplification of each value left (clear low
 * mantissa bits, powers of two, exponents toward each other and toward 0,
 * scales toward 1), repeated until no single removal or simplification
 * keeps the mismatch.  @return 0, 1 if cs does not mismatch (nothing to
 * do), -1 on a device error (z->err), MZ_STOPPED on a stop request. */
int mz_minimize(mz_dev *z, const mf_case *cs, mz_result *res);

/* @return the number of products a_k*b_k of cs that are not zero (a zero
 * times a NaN or Inf counts as non-zero). */
int mz_count_products(const mf_instr *in, const mf_case *cs);

#endif

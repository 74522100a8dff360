/*
 * run_loop.h - the campaign loop of `mmafuzz run`: generates tiles, runs
 * them on the device, evaluates every output element with the model in
 * -jobs threads, and re-runs, minimizes and files each mismatch.
 *
 * Pipeline (one batch = tiles of one instruction): while the main thread
 * runs batch b on the device, the workers compare batch b-1 with the model
 * and generate batch b+1.  Mismatches of b-1 are then handled on the main
 * thread (the device is used by that thread only).  Three batch buffers
 * rotate, so memory stays flat however long the run.  With --verify gpu a
 * batch is one device call that generates, runs and checks its tiles on
 * the device (run_gpu.c).  The parts: run_select.c (which instructions),
 * run_loop.c (the loop and its host stage), run_gpu.c, run_batch.c (the
 * batches and the workers' jobs), run_file.c (counting and filing);
 * run_stage.h is what they share.
 */
#ifndef MMAFUZZ_RUN_LOOP_H
#define MMAFUZZ_RUN_LOOP_H

#include "mf_device.h"
#include "run_minimize.h"
#include "run_options.h"

/* One instruction of the campaign. */
typedef struct run_instr {
    const mf_instr *in;
    const mf_instr *model;         /* the row the model evaluates (in, unless --model) */
    int m, n, k;
    size_t tiles_per_batch;
    unsigned long long gpu_tiles;  /* --verify gpu: tiles per device call (follows the disagreement rate) */
    unsigned long long next_tile;  /* next tile to generate */
    unsigned long long done_tile;  /* tiles evaluated */
    unsigned long long start_tile; /* done_tile when this invocation started */
    long long quota;               /* cases left this invocation; -1: no limit */
    int cp;                        /* --campaign: its index in the definition and the shard state */
    mz_dev z;
    int z_ready;
    struct rf_classifier *cls;     /* its buckets (buckets.h), set up by run_loop */
} run_instr;

/* Choose the instructions of the campaign: those o's patterns select that
 * the device runs (and the --model architecture has), with their tile
 * shapes, resume counters and quotas.  With --campaign: the definition's
 * instructions (the device must give their tile shapes); the shard is
 * locked (cp_lock_shard) and its state read into o->cstate; next_tile and
 * done_tile count the shard's own tiles (global tile I + N * t).  @return RUN_OK and *ri (calloc'd),
 * *ni >= 1; or RUN_ERR_USAGE / RUN_ERR_INPUT / RUN_ERR_NOMEM (message printed). */
run_err run_select(const run_opts *o, mf_device *dev, run_instr **ri, int *ni);

/* Run the campaign until -runs, -max_total_time, a stop request (SIGINT,
 * SIGTERM) or an error; write the store, the state and the stats, and print
 * the summary.  *mismatches: mismatching cases seen.  @return RUN_OK, or
 * the error that ended the run. */
run_err run_loop(const run_opts *o, mf_device *dev, run_instr *ri, int ni, long long *mismatches);

#endif

/*
 * run_stage.h - what the parts of `mmafuzz run`'s loop share (run_loop.h):
 * the loop's context, its pipeline stages (the host stage in run_loop.c,
 * the GPU stage of --verify gpu in run_gpu.c) and the accounting and
 * filing of a checked batch (run_file.c).  Internal to the loop.
 *
 * One loop drives a stage: each turn it checks for a stop request, the time
 * limit and an error, takes the next instruction's tiles in turn (its
 * quota), and hands them to the stage; the stage generates, runs and checks
 * them its own way, and accounts each checked batch with account_batch.
 */
#ifndef MMAFUZZ_RUN_STAGE_H
#define MMAFUZZ_RUN_STAGE_H

#include "run_batch.h"
#include "run_fs.h"
#include "run_loop.h"
#include "run_mismatch.h"
#include "run_stats.h"
#include "run_workers.h"

#include <stdio.h>

#define POOL_CAP 8192
#define VIEW_CAP 4096   /* the pool's cases a batch draws from (pool_view) */

/* the stop request of SIGINT, SIGTERM, SIGHUP (run_fs.h: a second one ends the process) */
#define g_stop (*fs_stop_flag())

/* What the loop's steps share. */
typedef struct loop_ctx {
    const run_opts *o;
    mf_device *dev;
    run_instr *ri;
    int ni;
    store *st;
    rf_buckets *bs;           /* OUT/buckets.tsv; NULL under --campaign (the shard state keeps the counts) */
    pool *pl;
    rs_stats *rs;
    workers *wp;
    FILE **dump;              /* --dump-disagreements DIR: one file per instruction (ri order), or NULL */
    run_err status;
    const char *why;          /* why the loop ended */
    int stopped;              /* a stop request came while filing: the batch was not counted */
    int dev_fail;             /* device errors in a row */
    double t_start, last_save, ckpt_s;
    unsigned long long gpu_call_max; /* --verify gpu: GPU_CALL_MAX_CASES times the device's GPUs */
    long long bk_at_start;           /* a campaign shard's buckets when this process started */
    long long rechecked;      /* --verify gpu: tiles checked again on the host (a hit buffer overflowed) */
} loop_ctx;

/* A pipeline stage: the loop hands it the tiles of one instruction at a
 * time.  step: take tiles [first, first + nt) of r (r NULL: none left, or
 * stopping: a stop request, the time limit or an error; the stage then
 * finishes or drops what it holds).  @return 1 to go on, 0 when nothing is
 * left in flight.  tiles: the tiles one step of r takes (the loop caps them
 * at r's quota). */
typedef struct run_stage {
    size_t (*tiles)(const struct run_stage *s, const run_instr *r);
    int (*step)(loop_ctx *L, struct run_stage *s, run_instr *r, unsigned long long first, size_t nt, int stopping);
    void (*fini)(loop_ctx *L, struct run_stage *s);
    void *self;
} run_stage;

/* --verify gpu (run_gpu.c): set up the GPU stage over batch gb (a case
 * generated again on the host when asked for) and hb (the host path, when a
 * call's disagreements overflow its hit buffer).  @return 0, or -1 (out of
 * memory: L's status says so). */
int gpu_stage_init(loop_ctx *L, run_stage *s, batch *gb, batch *hb, const pool_entry **view);

/* An error ends the loop (the first one says why). */
void loop_fail(loop_ctx *L, run_err e);
/* A device call failed: counted; a campaign shard stops (its tiles are done in
 * order: resume runs the batch again), a plain run after three in a row. */
void loop_device_error(loop_ctx *L, int slot, const char *msg);
/* --dump-disagreements: one line of instruction `slot`'s file. */
void dump_line(loop_ctx *L, int slot, unsigned long long tile, int i, int j, uint64_t d, uint64_t mv);
/* The findings' index (and bucket counts), then the state: every ckpt_s. */
void checkpoint(loop_ctx *L);
/* Point batch b at tiles [first, first + nt) of r (view: the pool's cases for r). */
void loop_plan(loop_ctx *L, batch *b, run_instr *r, unsigned long long first, size_t nt, const pool_entry **view,
               size_t nview);

/* run_file.c: count a checked batch and file its disagreements, the same
 * way whichever stage checked it.  list holds the first disagreement of
 * each class in each tile, in tile order (--campaign); a plain run files
 * from b->recs.  ncls: the disagreements by class (--campaign), mis: all of
 * them, model_s: the model's seconds. */
void account_batch(loop_ctx *L, batch *b, const rec *list, size_t nlist, const long long ncls[CP_NCLASS],
                   long long mis, double model_s);
/* A batch checked on the host (its chunks evaluated by the workers). */
void account_host_batch(loop_ctx *L, batch *b);

#endif

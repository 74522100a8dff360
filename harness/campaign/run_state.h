/*
 * run_state.h - the campaign state file OUT/campaign.state of `mmafuzz
 * run`: the seed, device, generator mix, model, patterns and corpora of the
 * campaign, and per instruction the next tile, so that `run --resume OUT`
 * continues where it stopped.  Text, one "KEY VALUE" per line; written
 * atomically.
 */
#ifndef MMAFUZZ_RUN_STATE_H
#define MMAFUZZ_RUN_STATE_H

#include "run_ckpt.h"
#include "run_options.h"

/* One instruction's tile counter. */
typedef struct run_state_tile {
    char name[160];
    unsigned long long tile;
} run_state_tile;

/* What is left of a run's budget when its state is written: the line
 * "budget CASES SECONDS", '-' for no limit.  A resume without -runs or
 * -max_total_time finishes it; a state without the line (older versions)
 * resumes without a limit. */
typedef struct run_state_budget {
    long long cases;    /* of -runs; -1: no limit */
    long long seconds;  /* of -max_total_time; -1: no limit */
} run_state_budget;

/* Write OUT/campaign.state: o's settings, what is left of the budget, the n
 * counters and the hashes of the files it covers (run_ckpt.h; NULL: none).
 * @return RUN_OK, or RUN_ERR_STORE / RUN_ERR_NOMEM (message in err). */
run_err run_state_write(const run_opts *o, const run_state_budget *left, const run_state_tile *tiles, int n,
                        char files[CK_NFILES][CK_HASH], char *err, size_t errlen);

/* Read DIR/campaign.state into o (options given on the command line win:
 * have_mix, have_dev, o->model, o->npat, o->ncorpus, o->seed_given; the
 * budget line sets o->runs and o->max_time unless o->args has -runs or
 * -max_total_time, a spent budget as -runs 0) and the tile counters into
 * *tiles (malloc'd; free it), and into files (may be NULL) the hashes of the
 * covered files ("" for one the state does not name).  Strings read live
 * until the process ends.  Strict: a line that is not whole and well-formed
 * (a NUL byte, no newline at the end, a count past 2^47, a key twice, an
 * instruction's tile line twice, version, seed, device or mix missing) is an
 * error, nothing is taken from it.  @return RUN_OK, or RUN_ERR_INPUT with a
 * "FILE:LINE: what was expected" message printed. */
run_err run_state_read(const char *dir, run_opts *o, int have_mix, int have_dev, run_state_tile **tiles,
                       int *ntiles, char files[CK_NFILES][CK_HASH]);

#endif

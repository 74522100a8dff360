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

/* Write OUT/campaign.state: o's settings, the n counters and the hashes of
 * the files it covers (run_ckpt.h; NULL: none).
 * @return RUN_OK, or RUN_ERR_STORE / RUN_ERR_NOMEM (message in err). */
run_err run_state_write(const run_opts *o, const run_state_tile *tiles, int n, char files[CK_NFILES][CK_HASH],
                        char *err, size_t errlen);

/* Read DIR/campaign.state into o (options given on the command line win:
 * have_mix, have_dev, o->model, o->npat, o->ncorpus, o->seed_given) and the
 * tile counters into *tiles (malloc'd; free it), and into files (may be
 * NULL) the hashes of the covered files ("" for one the state does not
 * name).  Strings read live until the process ends.  Strict: a line that is
 * not whole and well-formed (a NUL byte, no newline at the end, a count past
 * 2^47, a key twice, an instruction's tile line twice, version, seed, device or mix
 * missing) is an error, nothing is taken from it.  @return RUN_OK, or
 * RUN_ERR_INPUT with a "FILE:LINE: what was expected" message printed. */
run_err run_state_read(const char *dir, run_opts *o, int have_mix, int have_dev, run_state_tile **tiles,
                       int *ntiles, char files[CK_NFILES][CK_HASH]);

#endif

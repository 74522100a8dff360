/*
 * run_options.h - the options of `mmafuzz run` (from the flags table,
 * cli_flags.def, and on --resume from the campaign's state file), and the
 * typed errors of the run's own layers.
 */
#ifndef MMAFUZZ_RUN_OPTIONS_H
#define MMAFUZZ_RUN_OPTIONS_H

#include "campaign.h"
#include "cli.h"
#include "mmafuzz_gen.h"
#include "run_pool.h"

/* What went wrong, as a value (the message is printed where it happens). */
typedef enum run_err {
    RUN_OK = 0,
    RUN_ERR_USAGE,   /* bad command line */
    RUN_ERR_INPUT,   /* a bad or unreadable input file (state file, ...) */
    RUN_ERR_STORE,   /* the mismatch store or a state/stats file could not be written */
    RUN_ERR_DEVICE,  /* the device failed (three times in a row, or could not be set up) */
    RUN_ERR_NOMEM    /* out of memory */
} run_err;

/* "usage", "input", "store", "device", "memory". */
const char *run_err_name(run_err e);

#define RUN_MAX_PATTERNS 64
#define RUN_MAX_CORPUS 16

typedef struct run_opts {
    const char *pat[RUN_MAX_PATTERNS];
    int npat;
    const char *device;
    const char *model;        /* --model ARCH, or NULL: the device's own architecture */
    unsigned long long seed;
    int seed_given;
    long long runs;           /* cases this invocation; -1: no limit */
    long long max_time;       /* seconds; 0: no limit */
    const char *corpus[RUN_MAX_CORPUS];
    int ncorpus;
    const char *out;
    int jobs;
    gen_mix mix;
    char mix_text[160];
    long long batch;          /* cases per batch */
    long long minimize;       /* mismatches handled per batch */
    long long per_bucket;     /* disagreements minimized and filed per bucket and process */
    const char *resume;
    double report_period;
    int verbose;              /* -v: a line per new file and per skipped instruction */
    int no_sync;              /* --no-sync: no fsync (fs_set_sync) and no checkpoints */
    const char *verify;       /* --verify: "gpu", "host", or NULL (the default: run_select decides) */
    int verify_gpu;           /* set by run_select: 1 when every instruction is verified on the GPU */
    long long hits;           /* --hits */
    const char *dump;         /* --dump-disagreements FILE, or NULL */
    /* run --campaign DIR -shard I/N: the definition, the shard and its state */
    const char *campaign;     /* DIR, or NULL */
    int shard_i, shard_n;
    cp_def *def;              /* malloc'd; NULL without --campaign */
    cp_state *cstate;         /* the shard's state, read once the shard is locked (run_select) */
    char shard_dir[1100];
    int lock_fd;              /* the shard's lock, held until the process exits */
    cli_opts_run args;        /* the parsed command line, typed (the strings above point into it) */
} run_opts;

/* Parse the command line of `mmafuzz run` (and on --resume the state file).
 * @return 0, 1 when --help was printed, -1 on bad usage or input (message
 * printed).  Free with run_opts_free. */
int run_opts_parse(int argc, char **argv, run_opts *o);
void run_opts_free(run_opts *o);

#endif

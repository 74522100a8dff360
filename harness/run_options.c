/*
 * run_options.c - the options of `mmafuzz run`.
 */
#include "run_options.h"

#include "run_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *run_err_name(run_err e)
{
    switch (e) {
    case RUN_OK: return "ok";
    case RUN_ERR_USAGE: return "usage";
    case RUN_ERR_INPUT: return "input";
    case RUN_ERR_STORE: return "store";
    case RUN_ERR_DEVICE: return "device";
    case RUN_ERR_NOMEM: return "memory";
    }
    return "?";
}

int run_opts_parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    cli_args *a = &o->args;
    int prc = cli_parse(CLI_CMD_run, argc, argv, a);
    if (prc)
        return prc;
    for (int p = 0; p < CLI_V(a, run, instr).n; p++)
        o->pat[o->npat++] = CLI_V(a, run, instr).list[p];
    for (int c = 0; c < CLI_V(a, run, corpus).n; c++)
        o->corpus[o->ncorpus++] = CLI_V(a, run, corpus).list[c];
    o->device = CLI_V(a, run, device).s;
    o->model = CLI_V(a, run, model).s;
    o->seed = CLI_V(a, run, seed).u;
    o->seed_given = CLI_V(a, run, seed).given;
    o->runs = CLI_V(a, run, runs).given ? CLI_V(a, run, runs).i : -1;
    o->max_time = CLI_V(a, run, max_total_time).i;
    o->out = CLI_V(a, run, out).s;
    if (CLI_V(a, run, jobs).given) {
        o->jobs = (int)CLI_V(a, run, jobs).i;
    } else {
        o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (o->jobs < 1)
            o->jobs = 1;
    }
    o->batch = CLI_V(a, run, batch).i;
    o->minimize = CLI_V(a, run, minimize).i;
    o->per_bucket = CLI_V(a, run, per_bucket).i;
    o->report_period = (double)CLI_V(a, run, report).i;
    o->resume = CLI_V(a, run, resume).s;
    o->verbose = CLI_V(a, run, verbose).given > 0;
    gen_mix_default(&o->mix);
    int have_mix = CLI_V(a, run, mix).given > 0, have_dev = CLI_V(a, run, device).given > 0;
    int have_out = CLI_V(a, run, out).given > 0;
    if (have_mix) {
        char err[200];
        if (gen_mix_parse(CLI_V(a, run, mix).s, &o->mix, err, sizeof err)) {
            fprintf(stderr, "mmafuzz run: %s\n", err);
            return -1;
        }
    }
    if (o->resume) {
        if (have_out && strcmp(o->out, o->resume)) {
            fprintf(stderr, "mmafuzz run: --resume DIR writes to DIR; --out names another folder\n");
            return -1;
        }
        o->out = o->resume;
        run_state_tile *t;
        int nt;
        if (run_state_read(o->resume, o, have_mix, have_dev, &t, &nt))
            return -1;
        free(t);  /* the tile counters are read again once the instructions are known */
    }
    if (!o->seed_given) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        o->seed = ((unsigned long long)ts.tv_sec * 1000003ULL ^ (unsigned long long)ts.tv_nsec) % 1000000000ULL;
    }
    gen_mix_format(&o->mix, o->mix_text, sizeof o->mix_text);
    return 0;
}

void run_opts_free(run_opts *o)
{
    cli_free(&o->args);
}

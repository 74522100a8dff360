/*
 * run_options.c - the options of `mmafuzz run`.
 */
#include "run_options.h"
#include "instr_select.h"

#include "run_fs.h"
#include "run_state.h"
#include "run_store.h"

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

/* Where a shard number comes from: the flag, else the environment. */
static int shard_from(const char *flag_val, const char *const *envs, long long *v, const char **from)
{
    if (flag_val) {
        *from = "-shard";
        return cli_parse_decimal(flag_val, v);
    }
    for (; *envs; envs++) {
        const char *e = getenv(*envs);
        if (e && *e) {
            *from = *envs;
            return cli_parse_decimal(e, v);
        }
    }
    return 1;
}

/* run --campaign DIR: everything but -jobs, -batch, -max_total_time,
 * --report, -v, --no-sync, --verify, -hits, --dump-disagreements and which
 * GPUs of the definition's kind (--device cuda:LIST) comes from the definition. */
static int run_opts_campaign(run_opts *o)
{
    cli_opts_run *a = &o->args;
    const struct { int given; cli_flag_id id; } fixed[] = {
        {a->given.instr, CLI_F_run_instr}, {a->given.model, CLI_F_run_model}, {a->given.seed, CLI_F_run_seed},
        {a->given.runs, CLI_F_run_runs},   {a->given.corpus, CLI_F_run_corpus}, {a->given.out, CLI_F_run_out},
        {a->given.mix, CLI_F_run_mix},     {a->given.minimize, CLI_F_run_minimize},
        {a->given.resume, CLI_F_run_resume},
    };
    for (size_t f = 0; f < sizeof fixed / sizeof *fixed; f++)
        if (fixed[f].given) {
            char name[64];
            fprintf(stderr, "mmafuzz run: %s: the campaign's definition fixes it (a shard resumes by running it "
                            "again)\n", cli_flag_display(fixed[f].id, name, sizeof name));
            return -1;
        }
    o->campaign = a->campaign;
    o->def = malloc(sizeof *o->def);
    o->cstate = calloc(1, sizeof *o->cstate);
    char err[1400];
    if (!o->def || !o->cstate) {
        fprintf(stderr, "mmafuzz run: out of memory\n");
        return -1;
    }
    if (cp_def_read(o->campaign, o->def, err, sizeof err)) {
        fprintf(stderr, "mmafuzz run: --campaign: %s\n", err);
        return -1;
    }
    /* the shard: -shard I/N, else I from the scheduler and N from -shards / MMAFUZZ_SHARDS */
    const char *shard = a->shard, *from_i = NULL, *from_n = NULL;
    long long i = -1, n = -1;
    if (shard && strchr(shard, '/')) {
        int si, sn;
        if (cp_parse_shard(shard, &si, &sn)) {
            fprintf(stderr, "mmafuzz run: -shard %s: expected I/N with 0 <= I < N\n", shard);
            return -1;
        }
        i = si;
        n = sn;
        from_i = from_n = "-shard";
    } else {
        static const char *const ienv[] = {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", NULL};
        static const char *const nenv[] = {"MMAFUZZ_SHARDS", NULL};
        int ri = shard_from(shard, ienv, &i, &from_i);
        int rn = a->given.shards ? (n = a->shards, from_n = "-shards", 0)
                                             : shard_from(NULL, nenv, &n, &from_n);
        if (ri == 1 && rn == 1) {  /* nothing says which shard: the whole campaign on this machine */
            i = 0;
            n = 1;
            from_i = from_n = "the default 0/1 (the whole campaign; -shard I/N runs a part)";
            ri = rn = 0;
        }
        if (ri || rn || i < 0 || n < 1 || i >= n) {
            fprintf(stderr, "mmafuzz run: --campaign: expected -shard I/N, or I from -shard, SLURM_ARRAY_TASK_ID or "
                            "JOB_COMPLETION_INDEX and N from -shards or MMAFUZZ_SHARDS, with 0 <= I < N "
                            "(got I %s%s%s, N %s%s%s)\n", ri ? "missing" : "from ", ri ? "" : from_i,
                    ri == -1 ? " (not a number)" : "", rn ? "missing" : "from ", rn ? "" : from_n,
                    rn == -1 ? " (not a number)" : "");
            return -1;
        }
    }
    o->shard_i = (int)i;
    o->shard_n = (int)n;
    if (from_i == from_n)
        fprintf(stderr, "mmafuzz run: campaign %s, shard %d/%d (from %s)\n", o->def->id, o->shard_i, o->shard_n,
                from_i);
    else
        fprintf(stderr, "mmafuzz run: campaign %s, shard %d/%d (I from %s, N from %s)\n", o->def->id, o->shard_i,
                o->shard_n, from_i, from_n);
    cp_shard_dir(o->campaign, o->shard_i, o->shard_n, o->shard_dir, sizeof o->shard_dir);
    o->out = o->shard_dir;
    o->device = o->def->device;
    if (a->given.device) {
        /* which GPUs run the shard is the process's choice (cuda:0,1 for one process over two GPUs), not the
         * campaign's: tiles and what is counted depend on the case alone.  The kind of device is the definition's. */
        const char *want = a->device, *def = o->def->device;
        size_t kw = strcspn(want, ":"), kd = strcspn(def, ":");
        int model = !strncmp(def, "model", 5);
        if (model ? strcmp(want, def) != 0 : kw != kd || strncmp(want, def, kw) != 0) {
            if (model)
                fprintf(stderr, "mmafuzz run: --device %s: the campaign's definition runs on the model device %s, "
                                "which a shard cannot change\n", want, def);
            else
                fprintf(stderr, "mmafuzz run: --device %s: the campaign's definition runs on %s; a shard may choose "
                                "other GPUs of that kind only (e.g. %.*s:0,1)\n", want, def, (int)kd, def);
            return -1;
        }
        o->device = want;
    }
    o->model = o->def->model[0] ? o->def->model : NULL;
    o->seed = o->def->seed;
    o->seed_given = 1;
    o->runs = -1;
    gen_mix_default(&o->mix);
    if (gen_mix_parse(o->def->mix, &o->mix, err, sizeof err)) {
        fprintf(stderr, "mmafuzz run: --campaign: the definition's mix: %s\n", err);
        return -1;
    }
    gen_mix_format(&o->mix, o->mix_text, sizeof o->mix_text);
    return 0;
}

int run_opts_parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    cli_opts_run *a = &o->args;
    int prc = cli_run_parse(argc, argv, a);
    if (prc)
        return prc;
    for (int p = 0; p < a->instr.n; p++)
        o->pat[o->npat++] = a->instr.v[p];
    /* before anything is written (the store is made before the device opens) */
    if (instr_select_check("run", "--instr ", o->pat, o->npat))
        return -1;
    for (int c = 0; c < a->corpus.n; c++)
        o->corpus[o->ncorpus++] = a->corpus.v[c];
    o->device = a->device;
    o->model = a->model;
    o->seed = a->seed;
    o->seed_given = a->given.seed;
    o->runs = a->given.runs ? a->runs : -1;
    o->max_time = a->max_total_time;
    o->out = a->out;
    if (a->given.jobs) {
        o->jobs = (int)a->jobs;
    } else {
        o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (o->jobs < 1)
            o->jobs = 1;
    }
    o->batch = a->batch;
    o->minimize = a->minimize;
    o->per_bucket = a->per_bucket;
    o->report_period = (double)a->report;
    o->resume = a->resume;
    o->verbose = a->verbose > 0;
    o->no_sync = a->no_sync > 0;
    o->verify = a->given.verify ? a->verify : NULL;
    if (o->verify && strcmp(o->verify, "gpu") && strcmp(o->verify, "host")) {
        fprintf(stderr, "mmafuzz run: --verify %s: expected gpu or host\n", o->verify);
        return -1;
    }
    o->hits = a->hits;
    o->dump = a->given.dump ? a->dump : NULL;
    fs_set_sync(!o->no_sync);
    if (o->no_sync)
        fprintf(stderr, "mmafuzz run: --no-sync: no fsync and no checkpoints (a crash loses this run's work)\n");
    gen_mix_default(&o->mix);
    int have_mix = a->given.mix > 0, have_dev = a->given.device > 0;
    int have_out = a->given.out > 0;
    if (have_mix) {
        char err[200];
        if (gen_mix_parse(a->mix, &o->mix, err, sizeof err)) {
            fprintf(stderr, "mmafuzz run: %s\n", err);
            return -1;
        }
    }
    o->lock_fd = -1;
    if (a->given.campaign)
        return run_opts_campaign(o);
    if (a->given.shard || a->given.shards) {
        fprintf(stderr, "mmafuzz run: -shard and -shards need --campaign DIR\n");
        return -1;
    }
    if (o->resume) {
        if (have_out && strcmp(o->out, o->resume)) {
            fprintf(stderr, "mmafuzz run: --resume DIR writes to DIR; --out names another folder\n");
            return -1;
        }
        o->out = o->resume;
    }
    /* one writer per store (a plain run's; a campaign shard locks its shard):
     * taken before its state is read, held until the process ends */
    char lerr[1300];
    if ((!o->resume || fs_is_dir(o->resume)) && (o->lock_fd = st_lock(o->out, 0, lerr, sizeof lerr)) < 0) {
        fprintf(stderr, "mmafuzz run: %s\n", lerr);
        return -1;
    }
    if (o->resume) {
        run_state_tile *t;
        int nt;
        long long runs0 = o->runs, time0 = o->max_time;
        if (run_state_read(o->resume, o, have_mix, have_dev, &t, &nt, NULL))
            return -1;
        free(t);  /* the tile counters are read again once the instructions are known */
        if (o->runs == 0 && runs0 != 0)
            fprintf(stderr, "mmafuzz run: --resume: the budget of the run in %s is spent; -runs N or "
                            "-max_total_time S runs more\n", o->resume);
        else if (o->runs != runs0 || o->max_time != time0) {
            char c[40] = "no limit of cases", sec[40] = "no limit of time";
            if (o->runs >= 0)
                snprintf(c, sizeof c, "%lld cases", o->runs);
            if (o->max_time)
                snprintf(sec, sizeof sec, "%lld s", o->max_time);
            fprintf(stderr, "mmafuzz run: --resume: finishing the interrupted run's budget: %s, %s left (-runs or "
                            "-max_total_time sets another)\n", c, sec);
        }
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
    free(o->def);
    if (o->cstate)
        cp_state_free(o->cstate);
    free(o->cstate);
    cli_run_free(&o->args);
}

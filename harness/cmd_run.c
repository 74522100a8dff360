/*
 * cmd_run.c - `mmafuzz run`: the fuzz driver.  Generates tiles, runs them
 * on the device, evaluates every output element with the model in -jobs
 * threads, and re-runs, minimizes and files each mismatch.
 *
 * Pipeline (one batch = tiles of one instruction): while the main thread
 * runs batch b on the device, the workers compare batch b-1 with the model
 * and generate batch b+1.  Mismatches of b-1 are then handled on the main
 * thread (the device is used by that thread only).  Three batch buffers
 * rotate, so memory stays flat however long the run.
 */
#include "cli.h"
#include "buckets.h"
#include "mf_device.h"
#include "run_fs.h"
#include "run_gen.h"
#include "run_mismatch.h"
#include "run_stats.h"
#include "run_values.h"
#include "run_workers.h"
#include "vecfile.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATTERNS 64
#define MAX_CORPUS 16
#define CHUNKS 1024         /* a batch is cut into this many chunks (fewer if it has fewer tiles) */
#define REC_PER_CHUNK 64     /* mismatches recorded per chunk (all are counted) */
#define POOL_CAP 8192
#define VIEW_CAP 4096

typedef struct run_opts {
    const char *pat[MAX_PATTERNS];
    int npat;
    const char *device;
    const char *model;        /* --model ARCH, or NULL: the device's own architecture */
    unsigned long long seed;
    int seed_given;
    long long runs;           /* cases this invocation; -1: no limit */
    long long max_time;       /* seconds; 0: no limit */
    const char *corpus[MAX_CORPUS];
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
} run_opts;

/* One recorded mismatch of a batch. */
typedef struct rec {
    unsigned long long tile;
    int i, j;
    uint64_t dev, model;
} rec;

typedef struct batch {
    int slot;                 /* index into the run's instruction list */
    const mf_instr *in;
    const mf_instr *model;    /* the row the model evaluates (in, unless --model) */
    int m, n, k;
    size_t ntiles;
    unsigned long long first_tile;
    void *A, *B, *C, *SA, *SB, *D;
    unsigned char *gen;       /* generator of each tile */
    size_t nchunks;           /* chunk c: tiles [ntiles*c/nchunks, ntiles*(c+1)/nchunks) */
    rec *recs;                /* REC_PER_CHUNK per chunk */
    int *nrec;                /* per chunk */
    long long *nmis;          /* per chunk */
    double *chunk_s;          /* per chunk: seconds spent generating it plus evaluating it */
    unsigned char *want;      /* per worker: the model's output tile */
    size_t want_bytes;
    gen_ctx g;
} batch;

typedef struct run_instr {
    const mf_instr *in;
    const mf_instr *model;
    int m, n, k;
    size_t tiles_per_batch;
    unsigned long long next_tile;  /* next tile to generate */
    unsigned long long done_tile;  /* tiles evaluated */
    long long quota;               /* cases left this invocation; -1: no limit */
    mz_dev z;
    int z_ready;
} run_instr;

/* One job of the workers: evaluate one batch and generate the next.  The
 * workers take chunks from the two counters, so a slow thread delays the
 * batch by one chunk at most; what is recorded depends on the chunks only,
 * not on the number of threads or their timing. */
typedef struct job {
    batch *eval, *gen;
    atomic_size_t next_eval, next_gen;
} job;

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    if (g_stop)
        _exit(130);  /* a second Ctrl-C: leave now */
    g_stop = 1;
}

/* ------------------------------------------------------------ options */

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: mmafuzz run [--instr PATTERN]... [--device SPEC] [--model ARCH] [-seed N] [-runs N]\n"
            "                   [-max_total_time S] [--corpus DIR]... [--out DIR] [-jobs N] [--mix LIST]\n"
            "                   [--resume DIR]\n\n"
            "Differential fuzzing: generates inputs, runs them on the device and the model, and files every\n"
            "disagreement, minimized, under OUT/<arch>/<qualifier>/<xxh3-128>.vec (index: OUT/index.tsv).\n\n"
            "  --instr PATTERN     glob over ARCH/QUALIFIER names (repeatable; default: all the device runs)\n"
            "  --device SPEC       cuda[:N], hip[:N] or model:ARCH (default cuda)\n"
            "  --model ARCH        compare with ARCH's model of each qualifier instead of the device's own\n"
            "                      architecture (cross-generation runs; a positive control on hardware)\n"
            "  -seed N             seed (default: from the clock, printed); case = (seed, index)\n"
            "  -runs N             dot-product cases to run, over all instructions (default: no limit)\n"
            "  -max_total_time S   stop after S seconds (default: no limit)\n"
            "  --corpus DIR        saved cases to mutate (repeatable; default corpus/golden and corpus/findings)\n"
            "  --out DIR           where mismatches, index.tsv, stats.jsonl and campaign.state go (default mismatches/)\n"
            "  -jobs N             model threads (default: all cores)\n"
            "  --mix LIST          generators and weights, e.g. uniform:1,special:2,mutate:1\n"
            "                      (uniform window cancel special boundary table mutate; default all)\n"
            "  -batch N            cases per device batch (default 4194304; three batches in memory)\n"
            "  -minimize N         mismatches re-run and minimized per batch (default 16)\n"
            "  -per_bucket N       disagreements minimized and filed per bucket (mmafuzz triage) and process;\n"
            "                      the rest are counted in OUT/buckets.tsv (default 4)\n"
            "  -report S           seconds between status lines and stats records when not on a terminal (10)\n"
            "  --resume DIR        continue the campaign whose state is DIR/campaign.state\n\n"
            "Ctrl-C finishes the current batch, writes everything and prints the summary (twice: quit at once).\n"
            "Exit status: 0 no mismatch, 1 mismatches found, 2 bad usage, input or device error.\n");
}

/* ------------------------------------------------------------ state file */

static int write_state(const run_opts *o, run_instr *ri, int ni, char *err, size_t errlen)
{
    char *buf = malloc(4096 + (size_t)ni * 240);
    if (!buf)
        return -1;
    size_t pos = 0;
    pos += (size_t)sprintf(buf + pos, "# mmafuzz campaign state: `mmafuzz run --resume DIR` continues from here\n");
    pos += (size_t)sprintf(buf + pos, "version 1\nseed %llu\ndevice %s\nmix %s\n", o->seed, o->device, o->mix_text);
    if (o->model)
        pos += (size_t)sprintf(buf + pos, "model %.40s\n", o->model);
    for (int p = 0; p < o->npat; p++)
        pos += (size_t)sprintf(buf + pos, "pattern %.200s\n", o->pat[p]);
    for (int c = 0; c < o->ncorpus; c++)
        pos += (size_t)sprintf(buf + pos, "corpus %.200s\n", o->corpus[c]);
    for (int i = 0; i < ni; i++)
        pos += (size_t)sprintf(buf + pos, "tile %s %llu\n", ri[i].in->name, ri[i].done_tile);
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.state", o->out);
    int rc = fs_write_atomic(path, buf, pos, 1, err, errlen);
    free(buf);
    return rc;
}

/* Read DIR/campaign.state into o (options given on the command line win)
 * and the tile counters into *tiles (name -> next tile). */
typedef struct state_tile {
    char name[160];
    unsigned long long tile;
} state_tile;

static char g_state_strings[MAX_PATTERNS + MAX_CORPUS + 4][256];

static int read_state(const char *dir, run_opts *o, int have_mix, int have_dev, state_tile **tiles, int *ntiles)
{
    char path[1100], err[600];
    snprintf(path, sizeof path, "%s/campaign.state", dir);
    size_t len;
    char *buf = fs_read_all(path, &len, err, sizeof err);
    if (!buf) {
        fprintf(stderr, "mmafuzz run: --resume: %s\n", err);
        return -1;
    }
    int ns = 0, lineno = 0, np = 0, nc = 0;
    *tiles = NULL;
    *ntiles = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (!line[0] || line[0] == '#')
            continue;
        char key[16], val[256];
        unsigned long long n;
        if (sscanf(line, "tile %159s %llu", val, &n) == 2) {
            state_tile *t = realloc(*tiles, (size_t)(*ntiles + 1) * sizeof *t);
            if (!t)
                break;
            *tiles = t;
            snprintf(t[*ntiles].name, sizeof t[*ntiles].name, "%.159s", val);
            t[(*ntiles)++].tile = n;
        } else if (sscanf(line, "%15s %255[^\n]", key, val) == 2 && ns < (int)(sizeof g_state_strings / 256)) {
            if (!strcmp(key, "seed")) {
                if (!o->seed_given)
                    o->seed = strtoull(val, NULL, 10);
            } else if (!strcmp(key, "version") && strcmp(val, "1")) {
                fprintf(stderr, "%s:%d: expected state version 1\n", path, lineno);
                free(buf);
                return -1;
            } else if (!strcmp(key, "version")) {
            } else if (!strcmp(key, "device") || !strcmp(key, "mix") || !strcmp(key, "pattern") ||
                       !strcmp(key, "corpus") || !strcmp(key, "model")) {
                snprintf(g_state_strings[ns], 256, "%s", val);
                const char *v = g_state_strings[ns++];
                if (!strcmp(key, "device") && !have_dev)
                    o->device = v;
                else if (!strcmp(key, "model") && !o->model) {
                    if (mf_arch_by_name(v) == MF_ARCH_COUNT) {
                        fprintf(stderr, "%s:%d: unknown model architecture '%s'\n", path, lineno, v);
                        free(buf);
                        return -1;
                    }
                    o->model = v;
                }
                else if (!strcmp(key, "mix") && !have_mix) {
                    char e[200];
                    if (gen_mix_parse(v, &o->mix, e, sizeof e)) {
                        fprintf(stderr, "%s:%d: %s\n", path, lineno, e);
                        free(buf);
                        return -1;
                    }
                } else if (!strcmp(key, "pattern") && np < MAX_PATTERNS && !o->npat)
                    o->pat[np++] = v;
                else if (!strcmp(key, "corpus") && nc < MAX_CORPUS && !o->ncorpus)
                    o->corpus[nc++] = v;
            } else {
                fprintf(stderr, "%s:%d: expected seed, device, model, mix, pattern, corpus or tile lines\n", path, lineno);
                free(buf);
                return -1;
            }
        } else {
            fprintf(stderr, "%s:%d: expected KEY VALUE\n", path, lineno);
            free(buf);
            return -1;
        }
    }
    if (!o->npat)
        o->npat = np;
    if (!o->ncorpus)
        o->ncorpus = nc;
    o->seed_given = 1;
    free(buf);
    return 0;
}

static int parse_opts(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->device = "cuda";
    o->runs = -1;
    o->out = "mismatches";
    o->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (o->jobs < 1)
        o->jobs = 1;
    o->batch = 1 << 22;
    o->minimize = 16;
    o->per_bucket = 4;
    o->report_period = 10;
    gen_mix_default(&o->mix);
    int have_mix = 0, have_dev = 0, have_out = 0;
    for (int i = 1; i < argc; i++) {
        int rc;
        const char *s;
        long long v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout);
            return 1;
        }
        if ((rc = cli_opt_str(argc, argv, &i, "instr", &s)) != 0) {
            if (rc < 0)
                return -1;
            if (o->npat == MAX_PATTERNS) {
                fprintf(stderr, "mmafuzz run: at most %d --instr patterns\n", MAX_PATTERNS);
                return -1;
            }
            o->pat[o->npat++] = s;
        } else if ((rc = cli_opt_str(argc, argv, &i, "device", &s)) != 0) {
            if (rc < 0)
                return -1;
            o->device = s;
            have_dev = 1;
        } else if ((rc = cli_opt_str(argc, argv, &i, "model", &s)) != 0) {
            if (rc < 0)
                return -1;
            if (mf_arch_by_name(s) == MF_ARCH_COUNT) {
                fprintf(stderr, "mmafuzz run: --model: unknown architecture '%s'\n", s);
                return -1;
            }
            o->model = s;
        } else if ((rc = cli_opt_str(argc, argv, &i, "corpus", &s)) != 0) {
            if (rc < 0)
                return -1;
            if (o->ncorpus == MAX_CORPUS) {
                fprintf(stderr, "mmafuzz run: at most %d --corpus folders\n", MAX_CORPUS);
                return -1;
            }
            o->corpus[o->ncorpus++] = s;
        } else if ((rc = cli_opt_str(argc, argv, &i, "out", &s)) != 0) {
            if (rc < 0)
                return -1;
            o->out = s;
            have_out = 1;
        } else if ((rc = cli_opt_str(argc, argv, &i, "resume", &s)) != 0) {
            if (rc < 0)
                return -1;
            o->resume = s;
        } else if ((rc = cli_opt_str(argc, argv, &i, "mix", &s)) != 0) {
            char err[200];
            if (rc < 0)
                return -1;
            if (gen_mix_parse(s, &o->mix, err, sizeof err)) {
                fprintf(stderr, "mmafuzz run: %s\n", err);
                return -1;
            }
            have_mix = 1;
        } else if ((rc = cli_opt_long(argc, argv, &i, "seed", &v)) != 0) {
            if (rc < 0)
                return -1;
            o->seed = (unsigned long long)v;
            o->seed_given = 1;
        } else if ((rc = cli_opt_long(argc, argv, &i, "runs", &v)) != 0) {
            if (rc < 0)
                return -1;
            o->runs = v < 0 ? -1 : v;
        } else if ((rc = cli_opt_long(argc, argv, &i, "max_total_time", &v)) != 0) {
            if (rc < 0 || v < 0) {
                if (rc > 0)
                    fprintf(stderr, "mmafuzz run: -max_total_time: expected seconds >= 0\n");
                return -1;
            }
            o->max_time = v;
        } else if ((rc = cli_opt_long(argc, argv, &i, "jobs", &v)) != 0) {
            if (rc < 0 || v < 1 || v > 1024) {
                if (rc > 0)
                    fprintf(stderr, "mmafuzz run: -jobs: expected 1..1024\n");
                return -1;
            }
            o->jobs = (int)v;
        } else if ((rc = cli_opt_long(argc, argv, &i, "batch", &v)) != 0) {
            if (rc < 0 || v < 1 || v > (1LL << 26)) {
                if (rc > 0)
                    fprintf(stderr, "mmafuzz run: -batch: expected 1..67108864 cases\n");
                return -1;
            }
            o->batch = v;
        } else if ((rc = cli_opt_long(argc, argv, &i, "minimize", &v)) != 0) {
            if (rc < 0 || v < 0) {
                if (rc > 0)
                    fprintf(stderr, "mmafuzz run: -minimize: expected a count >= 0\n");
                return -1;
            }
            o->minimize = v;
        } else if ((rc = cli_opt_long(argc, argv, &i, "per_bucket", &v)) != 0) {
            if (rc < 0 || v < 1) {
                if (rc > 0)
                    fprintf(stderr, "mmafuzz run: -per_bucket: expected a count >= 1\n");
                return -1;
            }
            o->per_bucket = v;
        } else if ((rc = cli_opt_long(argc, argv, &i, "report", &v)) != 0) {
            if (rc < 0 || v < 1) {
                if (rc > 0)
                    fprintf(stderr, "mmafuzz run: -report: expected seconds >= 1\n");
                return -1;
            }
            o->report_period = (double)v;
        } else {
            fprintf(stderr, "mmafuzz run: unknown argument '%s' (see mmafuzz run --help)\n", argv[i]);
            return -1;
        }
    }
    if (o->resume) {
        if (have_out && strcmp(o->out, o->resume)) {
            fprintf(stderr, "mmafuzz run: --resume DIR writes to DIR; --out names another folder\n");
            return -1;
        }
        o->out = o->resume;
        state_tile *t;
        int nt;
        if (read_state(o->resume, o, have_mix, have_dev, &t, &nt))
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

/* ------------------------------------------------------------ workers */

static size_t chunk_first(const batch *b, size_t c) { return b->ntiles * c / b->nchunks; }

/* Compare every output element of chunk c of batch b with the model
 * (mf_eval_tiles, one tile at a time into the scratch tile `want`). */
static void eval_chunk(batch *b, size_t c, unsigned char *want)
{
    const mf_instr *in = b->model;
    const int m = b->m, n = b->n, k = b->k;
    const size_t S = in->n_scales, mn = (size_t)m * (size_t)n;
    const size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ec = mf_abi_elem_bytes(in->fc),
                 ed = mf_abi_elem_bytes(in->fd), es = S ? mf_abi_elem_bytes(in->fs) : 1;
    int nrec = 0;
    long long nmis = 0;
    rec *recs = b->recs + c * REC_PER_CHUNK;
    const unsigned char *A = b->A, *B = b->B, *C = b->C, *SA = b->SA, *SB = b->SB, *D = b->D;
    for (size_t t = chunk_first(b, c), t1 = chunk_first(b, c + 1); t < t1; t++) {
        mf_eval_tiles(in, m, n, k, 1, A + t * (size_t)m * (size_t)k * ea, B + t * (size_t)n * (size_t)k * eb,
                      C + t * mn * ec, S ? SA + t * (size_t)m * S * es : NULL, S ? SB + t * (size_t)n * S * es : NULL,
                      want);
        const unsigned char *dt = D + t * mn * ed;
        if (!memcmp(dt, want, mn * ed))
            continue;   /* the common case: the whole tile agrees bit for bit */
        for (size_t o = 0; o < mn; o++) {
            uint64_t d = mf_elem_get(ed, dt, o), mv = mf_elem_get(ed, want, o);
            if (d != mv && !mf_output_equal(b->in, d, mv)) {
                nmis++;
                if (nrec < REC_PER_CHUNK)
                    recs[nrec++] = (rec){b->first_tile + t, (int)(o / (size_t)n), (int)(o % (size_t)n), d, mv};
            }
        }
    }
    b->nrec[c] = nrec;
    b->nmis[c] = nmis;
}

static void job_fn(void *ctx, int w, int nw)
{
    (void)nw;
    job *jb = ctx;
    size_t c;
    if (jb->eval) {
        batch *b = jb->eval;
        while ((c = atomic_fetch_add(&jb->next_eval, 1)) < b->nchunks) {
            double t0 = rs_now();
            eval_chunk(b, c, b->want + (size_t)w * b->want_bytes);
            b->chunk_s[c] += rs_now() - t0;
        }
    }
    if (jb->gen) {
        batch *b = jb->gen;
        while ((c = atomic_fetch_add(&jb->next_gen, 1)) < b->nchunks) {
            double t0 = rs_now();
            for (size_t t = chunk_first(b, c), t1 = chunk_first(b, c + 1); t < t1; t++)
                b->gen[t] = (unsigned char)gen_tile(&b->g, b->first_tile + t, t);
            b->chunk_s[c] = rs_now() - t0;
        }
    }
}

/* ------------------------------------------------------------ corpus */

typedef struct load_ctx {
    pool *p;
    run_instr *ri;
    int ni;
    long long loaded;
} load_ctx;

static int load_case(const st_case *c, void *vctx)
{
    load_ctx *lc = vctx;
    for (int i = 0; i < lc->ni; i++)
        if (pool_compatible(c->in, lc->ri[i].in)) {
            pool_add(lc->p, c->in, &c->cs);
            lc->loaded++;
            break;
        }
    return 0;
}

/* ------------------------------------------------------------ run */

static void print_unknown_pattern(const char *pat)
{
    const mf_instr *near[3];
    size_t n = mf_instr_closest(pat, near, 3);
    fprintf(stderr, "mmafuzz run: --instr '%s' matches no instruction", pat);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i ? ", " : "; closest: ", near[i]->name);
    fprintf(stderr, "\n");
}

static int pattern_match(const char *pat, const char *name)
{
    if (strpbrk(pat, "*?["))
        return mf_glob_match(pat, name);
    return !strcmp(pat, name);
}

/* The tile arrays come from the device's allocator (page-locked for CUDA:
 * copied without staging). */
static int alloc_batch(batch *b, mf_device *dev, size_t bytes[6], size_t tiles, size_t want_bytes, int nworkers)
{
    memset(b, 0, sizeof *b);
    void **arr[6] = {&b->A, &b->B, &b->C, &b->SA, &b->SB, &b->D};
    int ok = 1;
    for (int q = 0; q < 6; q++)
        ok &= (*arr[q] = mf_device_host_alloc(dev, bytes[q] + 8)) != NULL;
    b->gen = calloc(tiles + 1, 1);
    b->recs = calloc((size_t)CHUNKS * REC_PER_CHUNK, sizeof *b->recs);
    b->nrec = calloc(CHUNKS, sizeof *b->nrec);
    b->nmis = calloc(CHUNKS, sizeof *b->nmis);
    b->chunk_s = calloc(CHUNKS, sizeof *b->chunk_s);
    b->want_bytes = (want_bytes + 63) / 64 * 64;
    b->want = calloc((size_t)nworkers, b->want_bytes);
    return ok && b->gen && b->recs && b->nrec && b->nmis && b->chunk_s && b->want ? 0 : -1;
}

static void free_batch(batch *b, mf_device *dev)
{
    void *arr[6] = {b->A, b->B, b->C, b->SA, b->SB, b->D};
    for (int q = 0; q < 6; q++)
        mf_device_host_free(dev, arr[q]);
    free(b->gen);
    free(b->recs);
    free(b->nrec);
    free(b->nmis);
    free(b->chunk_s);
    free(b->want);
}

/* The buckets of this campaign (opened with the store). */
static rf_buckets *run_buckets;

/* Handle the recorded mismatches of an evaluated batch: the first of each
 * signature class first, then the rest in index order, up to o->minimize,
 * each only while its bucket has fewer than o->per_bucket files from this
 * process (the rest are counted in OUT/buckets.tsv). */
static int handle_mismatches(const run_opts *o, run_instr *ri, batch *b, store *st, pool *pl, rs_stats *rs,
                             mf_device *dev)
{
    rs_instr *ps = &rs->per[b->slot];
    run_instr *r = &ri[b->slot];
    long long total = 0;
    size_t nrec = 0;
    for (size_t c = 0; c < b->nchunks; c++) {
        total += b->nmis[c];
        nrec += (size_t)b->nrec[c];
    }
    ps->mismatches += total;
    if (!total || !o->minimize)
        return 0;
    rec *all = malloc(nrec * sizeof *all);
    unsigned char *chosen = calloc(nrec, 1);
    if (!all || !chosen) {
        free(all);
        free(chosen);
        return -1;
    }
    size_t n = 0;
    for (size_t c = 0; c < b->nchunks; c++)
        for (int q = 0; q < b->nrec[c]; q++)
            all[n++] = b->recs[c * REC_PER_CHUNK + (size_t)q];
    /* buckets (harness/refine/buckets.h), computed on each disagreeing case as generated:
     * only the first o->per_bucket of a bucket are minimized and filed, the rest counted;
     * the first of each signature class first, then the rest in index order */
    long long budget = o->minimize;
    rf_bucket *bk = calloc(n ? n : 1, sizeof *bk);
    if (!bk) {
        free(all);
        free(chosen);
        return -1;
    }
    for (size_t q = 0; q < n; q++) {
        mf_case cs;
        int is_new = 0;
        mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB,
                         (size_t)(all[q].tile - b->first_tile), all[q].i, all[q].j, &cs);
        rf_buckets_classify(run_buckets, b->in, r->model, &cs, all[q].dev, &bk[q], &is_new);
        if (is_new) {
            if (rs->tty)
                fprintf(stderr, "\n");
            fprintf(stderr, "NEW bucket %s %s: %s\n", bk[q].id, b->in->name, bk[q].words);
        }
    }
    rs->buckets_seen = rf_buckets_seen(run_buckets);
    rs->buckets_new = rf_buckets_new(run_buckets);
    const char *seen[16];
    int nseen = 0;
    for (size_t q = 0; q < n && budget > 0; q++) {  /* one per signature class */
        const char *sig = rv_signature(b->in->fd, all[q].dev, all[q].model);
        int known = 0;
        for (int s = 0; s < nseen; s++)
            known |= !strcmp(seen[s], sig);
        if (!known && nseen < 16) {
            seen[nseen++] = sig;
            if (rf_buckets_take(run_buckets, &bk[q])) {
                chosen[q] = 1;
                budget--;
            }
        }
    }
    for (size_t q = 0; q < n && budget > 0; q++)
        if (!chosen[q] && rf_buckets_take(run_buckets, &bk[q])) {
            chosen[q] = 1;
            budget--;
        }
    int rc = 0;
    if (!r->z_ready) {
        if (mz_dev_init(&r->z, dev, b->in, r->model)) {
            fprintf(stderr, "mmafuzz run: %s\n", r->z.err);
            rc = -1;
        } else {
            r->z_ready = 1;
        }
    }
    for (size_t q = 0; q < n && rc == 0; q++) {
        if (!chosen[q])
            continue;
        mf_case orig;
        size_t t = (size_t)(all[q].tile - b->first_tile);
        mf_tile_get_case(b->in, b->m, b->n, b->k, b->A, b->B, b->C, b->SA, b->SB, t, all[q].i, all[q].j, &orig);
        mm_origin origin = {o->device, o->seed, (long long)(all[q].tile * (unsigned long long)(b->m * b->n)) +
                                                     all[q].i * b->n + all[q].j,
                            (long long)all[q].tile, all[q].i, all[q].j, b->m, b->n, gen_name((gen_kind)b->gen[t])};
        mm_outcome out;
        char err[700];
        double t_handle = rs_now();
        if (mm_handle(st, &r->z, &orig, all[q].dev, &origin, &out, err, sizeof err)) {
            fprintf(stderr, "%smmafuzz run: %s\n", rs->tty ? "\n" : "", err);
            ps->dev_errors++;
            if (strstr(err, "cannot") || strstr(err, "memory"))
                rc = -1;  /* store errors end the run; device errors are counted */
            continue;
        }
        /* the time to handle it: re-runs, minimization and the file */
        t_handle = rs_now() - t_handle;
        ps->minimized++;
        ps->min_seconds += t_handle;
        if (t_handle > ps->min_max_seconds)
            ps->min_max_seconds = t_handle;
        if (out.kind != MZ_REPEATS)
            ps->nondet++;
        else
            pool_add(pl, b->in, &out.res.cs);
        pool_add(pl, b->in, &orig);
        st_entry *e = st_find(st, out.hex);
        if (out.is_new)
            ps->new_files++;
        int first_this_run = e && !e->run_seen;
        if (first_this_run) {
            e->run_seen = 1;
            ps->unique++;
        }
        if (first_this_run) {
            if (rs->tty)
                fprintf(stderr, "\n");
            fprintf(stderr, "%s %s %s%s\n", out.is_new ? "NEW " : "seen", out.sig, out.path,
                    out.kind == MZ_REPEATS ? "" : " (not minimized)");
        }
    }
    free(all);
    free(chosen);
    free(bk);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int prc = parse_opts(argc, argv, &o);
    if (prc)
        return prc > 0 ? 0 : 2;

    char err[700];
    mf_device *dev;
    if (mf_device_open(o.device, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz run: --device %s: %s\n", o.device, err);
        return 2;
    }
    /* the instructions: matching a pattern and runnable on the device */
    run_instr *ri = calloc(mf_instr_count, sizeof *ri);
    int ni = 0, status = 0;
    for (int p = 0; p < o.npat; p++) {
        int any = 0;
        for (size_t i = 0; i < mf_instr_count; i++)
            any |= pattern_match(o.pat[p], mf_instr_table[i].name);
        if (!any) {
            print_unknown_pattern(o.pat[p]);
            status = 2;
        }
    }
    for (size_t i = 0; ri && i < mf_instr_count && !status; i++) {
        const mf_instr *in = &mf_instr_table[i];
        int match = o.npat == 0;
        for (int p = 0; p < o.npat && !match; p++)
            match = pattern_match(o.pat[p], in->name);
        if (!match)
            continue;
        if (!mf_device_supports(dev, in, NULL)) {
            if (o.npat)
                fprintf(stderr, "mmafuzz run: %s: not runnable on %s, skipped\n", in->name, o.device);
            continue;
        }
        run_instr *r = &ri[ni];
        r->in = in;
        r->model = o.model ? mf_instr_on_arch(in, mf_arch_by_name(o.model)) : in;
        if (!r->model) {
            if (o.npat)
                fprintf(stderr, "mmafuzz run: %s: model %s has no such instruction, skipped\n", in->name, o.model);
            continue;
        }
        if (mf_device_tile_shape(dev, in, NULL, &r->m, &r->n, &r->k) || r->k != in->k || r->m < 1 || r->n < 1) {
            fprintf(stderr, "mmafuzz run: %s: the device gives no usable tile shape, skipped\n", in->name);
            continue;
        }
        r->tiles_per_batch = (size_t)(o.batch / (r->m * r->n));
        if (r->tiles_per_batch < 1)
            r->tiles_per_batch = 1;
        ni++;
    }
    if (!status && ni == 0) {
        fprintf(stderr, "mmafuzz run: no instruction to run on %s\n", o.device);
        status = 2;
    }
    if (status) {
        free(ri);
        mf_device_close(dev);
        return status;
    }
    /* resume: the tile counters */
    if (o.resume) {
        state_tile *t = NULL;
        int nt = 0;
        run_opts dummy = o;
        read_state(o.resume, &dummy, 1, 1, &t, &nt);
        for (int i = 0; i < ni; i++)
            for (int q = 0; q < nt; q++)
                if (!strcmp(t[q].name, ri[i].in->name))
                    ri[i].next_tile = ri[i].done_tile = t[q].tile;
        free(t);
    }
    /* quotas: -runs split evenly over the instructions */
    for (int i = 0; i < ni; i++)
        ri[i].quota = o.runs < 0 ? -1 : (o.runs + ni - 1) / ni;

    store st;
    if (st_open(&st, o.out, err, sizeof err)) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        free(ri);
        mf_device_close(dev);
        return 2;
    }
    run_buckets = rf_buckets_open(o.out, (int)o.per_bucket, err, sizeof err);
    if (!run_buckets) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        st_close(&st);
        free(ri);
        mf_device_close(dev);
        return 2;
    }
    pool pl;
    const pool_entry **view = malloc(VIEW_CAP * sizeof *view * 3);
    if (pool_init(&pl, POOL_CAP) || !view) {
        fprintf(stderr, "mmafuzz run: out of memory\n");
        return 2;
    }
    /* the mutation pool: corpus folders; on --resume also the campaign's earlier mismatches */
    {
        const char *paths[MAX_CORPUS + 2];
        int np = 0;
        /* default: the saved-case corpora (corpus/fuzz holds libFuzzer inputs,
         * some malformed on purpose, and is not one) */
        if (!o.ncorpus) {
            if (fs_is_dir("corpus/golden"))
                paths[np++] = "corpus/golden";
            if (fs_is_dir("corpus/findings"))
                paths[np++] = "corpus/findings";
        }
        for (int c = 0; c < o.ncorpus; c++)
            paths[np++] = o.corpus[c];
        if (o.resume)
            paths[np++] = o.out;
        load_ctx lc = {&pl, ri, ni, 0};
        long skipped = st_read(paths, np, load_case, &lc);
        if (np)
            fprintf(stderr, "mmafuzz run: %lld saved cases in the mutation pool%s\n", lc.loaded,
                    skipped > 0 ? " (some files skipped, see above)" : "");
    }

    rs_stats rs;
    memset(&rs, 0, sizeof rs);
    rs.per = calloc((size_t)ni, sizeof *rs.per);
    rs.n = ni;
    rs.device = o.device;
    rs.seed = o.seed;
    rs.jobs = o.jobs;
    for (int i = 0; i < ni; i++)
        rs.per[i].in = ri[i].in;
    rs_open(&rs, o.out);

    /* batch buffers, sized for the largest instruction */
    size_t bytes[6] = {0}, maxtiles = 0, want_bytes = 0;
    for (int i = 0; i < ni; i++) {
        const mf_instr *in = ri[i].in;
        size_t t = ri[i].tiles_per_batch, S = in->n_scales;
        size_t b6[6] = {t * ri[i].m * ri[i].k * mf_abi_elem_bytes(in->fa), t * ri[i].n * ri[i].k * mf_abi_elem_bytes(in->fb),
                        t * ri[i].m * ri[i].n * mf_abi_elem_bytes(in->fc), t * ri[i].m * S, t * ri[i].n * S,
                        t * ri[i].m * ri[i].n * mf_abi_elem_bytes(in->fd)};
        for (int q = 0; q < 6; q++)
            if (b6[q] > bytes[q])
                bytes[q] = b6[q];
        if (t > maxtiles)
            maxtiles = t;
        if (b6[5] / t > want_bytes)
            want_bytes = b6[5] / t;
    }
    workers *wp = workers_new(o.jobs);
    batch bufs[3];
    int ok = wp != NULL;
    for (int q = 0; q < 3; q++)
        ok &= alloc_batch(&bufs[q], dev, bytes, maxtiles, want_bytes, o.jobs) == 0;
    if (!ok) {
        fprintf(stderr, "mmafuzz run: out of memory for the batch buffers\n");
        return 2;
    }
    int nw = workers_count(wp);

    const mf_device_info *di = mf_device_get_info(dev);
    fprintf(stderr, "mmafuzz run: seed %llu, device %s (%s), %d instruction%s, %d model threads%s%s, mix %s, out %s\n",
            o.seed, di->name, di->arch, ni, ni == 1 ? "" : "s", nw, o.model ? ", model " : "", o.model ? o.model : "",
            o.mix_text, o.out);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    double t_start = rs_now(), last_save = t_start;
    int rot = 0;               /* round-robin position */
    batch *ready = NULL;       /* generated, not yet run */
    batch *ran = NULL;         /* run, not yet evaluated */
    int nextbuf = 0;
    const char *why = "runs done";
    int dev_fail = 0;
    for (;;) {
        int stopping = g_stop || (o.max_time && rs_now() - t_start >= (double)o.max_time) || status;
        if (g_stop)
            why = "interrupted";
        else if (o.max_time && rs_now() - t_start >= (double)o.max_time)
            why = "time limit";
        if (stopping)
            ready = NULL;  /* a generated batch not yet run is dropped; its tiles are generated again on resume */
        /* plan the next batch to generate */
        batch *gen = NULL;
        if (!stopping) {
            for (int tries = 0; tries < ni; tries++) {
                run_instr *r = &ri[(rot + tries) % ni];
                if (r->quota == 0)
                    continue;
                size_t per = (size_t)(r->m * r->n);
                size_t nt = r->tiles_per_batch;
                if (r->quota > 0 && (long long)(nt * per) > r->quota)
                    nt = (size_t)((r->quota + (long long)per - 1) / (long long)per);
                gen = &bufs[nextbuf];
                nextbuf = (nextbuf + 1) % 3;
                gen->slot = (int)(r - ri);
                gen->in = r->in;
                gen->model = r->model;
                gen->m = r->m;
                gen->n = r->n;
                gen->k = r->k;
                gen->ntiles = nt;
                gen->nchunks = nt < CHUNKS ? nt : CHUNKS;
                gen->first_tile = r->next_tile;
                r->next_tile += nt;
                if (r->quota > 0)
                    r->quota = r->quota > (long long)(nt * per) ? r->quota - (long long)(nt * per) : 0;
                const pool_entry **v = view + (size_t)(gen - bufs) * VIEW_CAP;
                gen->g = (gen_ctx){r->in, r->m, r->n, r->k, o.seed, o.mix, v, pool_view(&pl, r->in, v, VIEW_CAP),
                                   gen->A, gen->B, gen->C, gen->SA, gen->SB};
                rot = (int)(r - ri + 1) % ni;
                break;
            }
        }
        if (!ready && !ran && !gen)
            break;
        job jb = {ran, gen, 0, 0};
        workers_start(wp, job_fn, &jb);
        int run_ok = 0;
        if (ready) {
            char derr[600];
            double t_dev = rs_now();
            int rc = mf_device_run_tiles(dev, ready->in, NULL, ready->ntiles, ready->A, ready->B, ready->C,
                                         ready->in->n_scales ? ready->SA : NULL, ready->in->n_scales ? ready->SB : NULL,
                                         ready->D, derr, sizeof derr);
            if (rc) {
                fprintf(stderr, "%smmafuzz run: device error: %s\n", rs.tty ? "\n" : "", derr);
                rs.per[ready->slot].dev_errors++;
                if (++dev_fail >= 3) {
                    fprintf(stderr, "mmafuzz run: three device errors in a row; stopping\n");
                    status = 2;
                    why = "device errors";
                }
            } else {
                dev_fail = 0;
                run_ok = 1;
            }
            rs.per[ready->slot].device_s += rs_now() - t_dev;
        }
        workers_wait(wp);
        if (ran) {
            rs_instr *ps = &rs.per[ran->slot];
            ps->cases += (long long)ran->ntiles * ran->m * ran->n;
            for (size_t c = 0; c < ran->nchunks; c++)
                ps->model_s += ran->chunk_s[c];
            ps->tiles += (long long)ran->ntiles;
            ri[ran->slot].done_tile = ran->first_tile + ran->ntiles;
            if (handle_mismatches(&o, ri, ran, &st, &pl, &rs, dev)) {
                status = 2;
                why = "store error";
            }
            if (rs_now() - last_save >= 2.0) {  /* index and state: every 2 s and at the end */
                if (st_flush(&st, err, sizeof err) || rf_buckets_flush(run_buckets, err, sizeof err)) {
                    fprintf(stderr, "mmafuzz run: %s\n", err);
                    status = 2;
                }
                if (write_state(&o, ri, ni, err, sizeof err))
                    fprintf(stderr, "mmafuzz run: %s\n", err);
                last_save = rs_now();
            }
            rs_report(&rs, o.report_period, 0);
        }
        ran = run_ok ? ready : NULL;
        ready = gen;
    }
    rs_report(&rs, o.report_period, 1);
    rs_summary(&rs, stdout, why);
    printf("buckets: %lld seen, %lld new; %lld disagreements counted without a file\n",
           rf_buckets_seen(run_buckets), rf_buckets_new(run_buckets), rf_buckets_counted_only(run_buckets));
    if (st_flush(&st, err, sizeof err) || rf_buckets_flush(run_buckets, err, sizeof err))
        fprintf(stderr, "mmafuzz run: %s\n", err);
    rf_buckets_close(run_buckets);
    run_buckets = NULL;
    write_state(&o, ri, ni, err, sizeof err);
    long long mism = rs_total(&rs, RS_MISMATCHES);
    rs_close(&rs);
    for (int i = 0; i < ni; i++)
        if (ri[i].z_ready)
            mz_dev_free(&ri[i].z);
    for (int q = 0; q < 3; q++)
        free_batch(&bufs[q], dev);
    workers_free(wp);
    pool_free(&pl);
    free(view);
    st_close(&st);
    free(rs.per);
    free(ri);
    mf_device_close(dev);
    if (status)
        return status;
    return mism ? 1 : 0;
}

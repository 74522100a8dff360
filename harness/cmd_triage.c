/*
 * cmd_triage.c - `mmafuzz triage DIR...`: the mismatch files of stores,
 * grouped into buckets (harness/refine/refine.h), largest first, each with
 * its explanation in words, an exemplar and its `eval --trace` line, first
 * and last seen, and the devices; `--json` for tools.  `--bench` measures
 * candidate evaluations per second on one core.
 *
 * The disagreements each bucket counts (every one the runs found, filed or
 * not) come from the folders given: a run's OUT/buckets.tsv, a campaign's
 * shard states (DIR/shards/I-of-N/shard.state; a shard present in several
 * folders given, merged and not, counts once: its most advanced state), or
 * a shard folder's own.  Buckets are listed by those counts, then by files.
 */
#include "buckets.h"
#include "campaign.h"
#include "cli.h"
#include "instr_select.h"
#include "json.h"
#include "refine.h"
#include "run_fs.h"
#include "run_store.h"
#include "vecfile.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct tr_bucket {
    rf_bucket b;
    const mf_instr *in, *model;
    long files;
    long long count;       /* disagreements counted by the runs (buckets.tsv, shard states); -1: none read */
    char first[32], last[32];
    char devices[256];
    char exemplar[1024];   /* path */
    char eval_line[8400];  /* mmafuzz eval ... --trace */
    long vfiles[RF_MAX_VARIANTS];  /* files each variant of the model's catalogue reproduces */
} tr_bucket;

typedef struct tr_ctx {
    tr_bucket *bk;
    size_t n, cap;
    /* the last case of the file being read (the original: it comes last) */
    char path[1024];
    st_case last;
    char header[4096];
    int have;
    rf_catalogue *cats[1024];  /* per model row, built on first use */
    long files, skipped_agree;
    long long counted;         /* disagreements in the counts read */
    int have_counts;
    cp_state **sh;             /* campaign shard states read (one per shard: the most advanced) */
    int nsh;
} tr_ctx;

static void header_field(const char *header, const char *key, char *val, size_t len)
{
    val[0] = 0;
    const char *p = header;
    size_t kl = strlen(key);
    while (p && *p) {
        if (!strncmp(p, "# ", 2) && !strncmp(p + 2, key, kl) && p[2 + kl] == ':') {
            const char *v = p + 3 + kl;
            while (*v == ' ')
                v++;
            size_t n = strcspn(v, "\n");
            if (n >= len)
                n = len - 1;
            memcpy(val, v, n);
            val[n] = 0;
            return;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
}

/* The bucket with id `id`, added (zeroed, count -1) when new. */
static tr_bucket *bucket_get(tr_ctx *t, const char *id)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->bk[i].b.id, id))
            return &t->bk[i];
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        tr_bucket *p = realloc(t->bk, cap * sizeof *p);
        if (!p) {
            fprintf(stderr, "mmafuzz triage: out of memory\n");
            exit(2);
        }
        t->bk = p;
        t->cap = cap;
    }
    tr_bucket *e = &t->bk[t->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->b.id, sizeof e->b.id, "%s", id);
    e->count = -1;
    return e;
}

/* Count n disagreements of bucket id (instruction `instr`, explanation
 * `words`) read from a run's or a shard's counts. */
static void count_bucket(tr_ctx *t, const char *id, const char *instr, long long n, const char *words)
{
    const mf_instr *in = mf_instr_find(instr);
    if (!in) {
        fprintf(stderr, "mmafuzz triage: bucket %s: instruction %s is not in this build's table; its %lld "
                        "disagreements are left out\n", id, instr, n);
        return;
    }
    tr_bucket *e = bucket_get(t, id);
    if (!e->in) {  /* no file of it (yet): described by the counts */
        e->in = e->model = in;
        snprintf(e->b.words, sizeof e->b.words, "%s", words);
        e->b.explained = strncmp(words, "unexplained", 11) != 0;
        char sig[64] = "";
        if (e->in)
            rf_signature_class(e->in, sig, sizeof sig);
        snprintf(e->b.key, sizeof e->b.key, "%s|%s|", instr, sig);
    }
    e->count = (e->count < 0 ? 0 : e->count) + n;
    t->counted += n;
    t->have_counts = 1;
}

static int count_line(const rf_bucket_line *l, void *ctx)
{
    count_bucket(ctx, l->id, l->instr, l->count, l->words);
    return 0;
}

/* DIR/buckets.tsv of a run's store: the one strict reader (buckets.h). */
static int read_buckets_tsv(tr_ctx *t, const char *dir)
{
    char path[1200], err[1400] = "";
    snprintf(path, sizeof path, "%s/buckets.tsv", dir);
    if (rf_buckets_read(path, count_line, t, err, sizeof err) < 0) {
        fprintf(stderr, "mmafuzz triage: %s\n", err);
        return -1;
    }
    return 0;
}

static long long state_done(const cp_state *s)
{
    long long d = 0;
    for (int q = 0; q < s->ninstr; q++)
        d += (long long)s->in[q].done;
    return d;
}

/* A shard's state: kept unless the same shard (I of N, same campaign) was read already, then the more advanced. */
static int read_shard_state(tr_ctx *t, const char *shard_dir)
{
    char path[1400], err[1600];
    snprintf(path, sizeof path, "%s/shard.state", shard_dir);
    if (access(path, F_OK) != 0)
        return 0;  /* started, not yet checkpointed */
    cp_state *st = calloc(1, sizeof *st);
    if (!st || cp_state_read_file(path, st, err, sizeof err)) {
        fprintf(stderr, "mmafuzz triage: %s\n", st ? err : "out of memory");
        if (st)
            cp_state_free(st);
        free(st);
        return -1;
    }
    for (int k = 0; k < t->nsh; k++) {
        cp_state *o = t->sh[k];
        if (!strcmp(o->id, st->id) && o->shard == st->shard && o->nshards == st->nshards) {
            if (state_done(st) > state_done(o)) {
                t->sh[k] = st;
                st = o;
            }
            cp_state_free(st);
            free(st);
            return 0;
        }
    }
    cp_state **p = realloc(t->sh, (size_t)(t->nsh + 1) * sizeof *p);
    if (!p) {
        cp_state_free(st);
        free(st);
        fprintf(stderr, "mmafuzz triage: out of memory\n");
        return -1;
    }
    t->sh = p;
    t->sh[t->nsh++] = st;
    return 0;
}

/* The counts of a folder given: its buckets.tsv, its shard state, or its campaign's shard states. */
static int read_counts(tr_ctx *t, const char *dir)
{
    if (!fs_is_dir(dir))
        return 0;
    int rc = read_buckets_tsv(t, dir);
    if (read_shard_state(t, dir))
        rc = -1;
    char shards[1200];
    snprintf(shards, sizeof shards, "%s/shards", dir);
    DIR *d = opendir(shards);
    if (!d)
        return rc;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        int si, sn;
        if (cp_parse_shard(de->d_name, &si, &sn))
            continue;
        char sdir[1500];
        snprintf(sdir, sizeof sdir, "%s/%s", shards, de->d_name);
        if (read_shard_state(t, sdir))
            rc = -1;
    }
    closedir(d);
    return rc;
}

/* Count the shard states read; -1 (message printed) for shards of one
 * campaign cut into different numbers N, whose tiles overlap (as report). */
static int count_shards(tr_ctx *t)
{
    for (int k = 0; k < t->nsh; k++)
        for (int j = 0; j < k; j++)
            if (!strcmp(t->sh[j]->id, t->sh[k]->id) && t->sh[j]->nshards != t->sh[k]->nshards) {
                fprintf(stderr, "mmafuzz triage: campaign %s: shards of %d and of %d: their tiles overlap; triage the "
                                "shards of one N (merge them into separate folders)\n", t->sh[k]->id,
                        t->sh[j]->nshards, t->sh[k]->nshards);
                return -1;
            }
    for (int k = 0; k < t->nsh; k++) {
        const cp_state *s = t->sh[k];
        for (size_t b = 0; b < s->nbk; b++)
            count_bucket(t, s->bk[b].id, s->in[s->bk[b].instr].name, s->bk[b].count, s->bk[b].words);
        cp_state_free(t->sh[k]);
        free(t->sh[k]);
    }
    free(t->sh);
    t->sh = NULL;
    t->nsh = 0;
    return 0;
}

static void finish_file(tr_ctx *t)
{
    if (!t->have)
        return;
    t->have = 0;
    t->files++;
    const st_case *c = &t->last;
    char model_name[200];
    header_field(t->header, "model", model_name, sizeof model_name);
    model_name[strcspn(model_name, " ")] = 0;
    const mf_instr *model = model_name[0] ? mf_instr_find(model_name) : NULL;
    if (!model)
        model = c->in;
    uint64_t dm = mf_eval(model, &c->cs);
    if (!c->has_d || mf_output_equal(model, c->d, dm)) {
        t->skipped_agree++;
        return;
    }
    size_t row = (size_t)(model - mf_instr_table);
    if (!t->cats[row]) {
        t->cats[row] = malloc(sizeof *t->cats[row]);
        if (!t->cats[row]) {
            fprintf(stderr, "mmafuzz triage: out of memory\n");
            exit(2);
        }
        rf_catalogue_build(model, t->cats[row]);
    }
    rf_bucket b;
    rf_bucket_of(c->in, t->cats[row], &c->cs, c->d, dm, &b, NULL);
    tr_bucket *e = bucket_get(t, b.id);
    char when[32], dev[160];
    header_field(t->header, "time", when, sizeof when);
    header_field(t->header, "device", dev, sizeof dev);
    if (!e->files) {  /* its first file: the exemplar (the counts, if read, stay) */
        e->b = b;
        e->in = c->in;
        e->model = model;
        snprintf(e->first, sizeof e->first, "%s", when);
        snprintf(e->last, sizeof e->last, "%s", when);
        snprintf(e->exemplar, sizeof e->exemplar, "%s", t->path);
        char line[8192];
        mf_vec_format_case(model, &c->cs, NULL, line, sizeof line);
        snprintf(e->eval_line, sizeof e->eval_line, "mmafuzz eval %s %s --trace", model->name, line);
    }
    e->files++;
    rf_set vs = rf_explain(t->cats[row], &c->cs, c->d, NULL);
    for (int v = 0; v < t->cats[row]->n; v++)
        e->vfiles[v] += rf_set_has(&vs, v);
    if (when[0] && (!e->first[0] || strcmp(when, e->first) < 0))
        snprintf(e->first, sizeof e->first, "%s", when);
    if (when[0] && strcmp(when, e->last) > 0)
        snprintf(e->last, sizeof e->last, "%s", when);
    if (dev[0] && !strstr(e->devices, dev)) {
        size_t o = strlen(e->devices);
        snprintf(e->devices + o, sizeof e->devices - o, "%s%s", o ? "; " : "", dev);
    }
}

static int on_case(const st_case *c, void *vctx)
{
    tr_ctx *t = vctx;
    if (strcmp(t->path, c->path)) {
        finish_file(t);
        snprintf(t->path, sizeof t->path, "%s", c->path);
        snprintf(t->header, sizeof t->header, "%s", c->header ? c->header : "");
    }
    t->last = *c;
    t->have = 1;
    return 0;
}

/* The other variants that reproduce the bucket's files: "F = 25 instead of 24 (3 of 4 files); ...". */
static void print_also(const tr_ctx *t, const tr_bucket *e)
{
    size_t row = (size_t)(e->model - mf_instr_table);
    int first = 1;
    for (int v = 0; row < 1024 && v < RF_MAX_VARIANTS; v++) {
        const rf_catalogue *cat = e->vfiles[v] ? t->cats[row] : NULL;
        if (!cat || v >= cat->n || !strcmp(cat->v[v].what, e->b.words))
            continue;
        printf("%s%s (%ld of %ld files)", first ? "        also reproduced by: " : "; ", cat->v[v].what, e->vfiles[v],
               e->files);
        first = 0;
    }
    if (!first)
        printf("\n");
}

static int by_count(const void *x, const void *y)
{
    const tr_bucket *a = x, *b = y;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->files != b->files)
        return a->files > b->files ? -1 : 1;
    return strcmp(a->b.id, b->b.id);
}

/* Candidate evaluations per second on one core: explanations of random cases. */
static int triage_bench(const char *const *pats, int npat, long long runs)
{
    printf("%-52s %8s %14s\n", "instruction", "variants", "candidates/s");
    double tot_e = 0, tot_s = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects_any(pats, npat, in->name))
            continue;
        static rf_catalogue cat;
        rf_catalogue_build(in, &cat);
        uint64_t st = 0x1234 + i;
        static mf_case cs[256];
        for (int q = 0; q < 256; q++)
            rf_random_case(in, &st, &cs[q]);
        long long evals = 0;
        uint64_t sink = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long long r = 0; r < runs; r++) {
            rf_set s = rf_explain(&cat, &cs[r & 255], (uint64_t)r, &evals);
            sink += s.w[0];
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        printf("%-52s %8d %14.3e\n", in->name, cat.n, sec > 0 ? (double)evals / sec : 0.0);
        tot_e += (double)evals;
        tot_s += sec;
        if (sink == 42)
            printf(" ");
    }
    printf("all: %.3e candidate evaluations/s per core\n", tot_s > 0 ? tot_e / tot_s : 0.0);
    return 0;
}

int cmd_triage(int argc, char **argv)
{
    cli_opts_triage a;
    int prc = cli_triage_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    /* the strings point into argv: copied before cli_free */
    const char *paths[256], *pats[64];
    int np = a.npos < 256 ? a.npos : 256, npat = a.instr.n;
    int json = a.json > 0, bench = a.bench > 0;
    long long runs = a.runs;
    int too_many = a.npos > 256;
    for (int i = 0; i < np; i++)
        paths[i] = a.pos[i];
    for (int i = 0; i < npat; i++)
        pats[i] = a.instr.v[i];
    cli_triage_free(&a);
    if (too_many) {
        fprintf(stderr, "mmafuzz triage: at most 256 DIR|FILE\n");
        return 2;
    }
    if (instr_select_check("triage", "--instr ", pats, npat))
        return 2;
    if (bench)
        return triage_bench(pats, npat, runs);
    if (!np) {
        fprintf(stderr, "mmafuzz triage: give DIR|FILE... or --bench (see mmafuzz triage --help)\n");
        return 2;
    }
    static tr_ctx t;
    int bad_counts = 0;
    for (int i = 0; i < np; i++)  /* the counts first: a bucket's description from its files replaces theirs */
        bad_counts |= read_counts(&t, paths[i]) != 0;
    if (count_shards(&t))
        return 2;
    long skipped = st_read(paths, np, on_case, &t);
    finish_file(&t);
    if (t.n)  /* qsort's array may not be NULL, even for no element */
        qsort(t.bk, t.n, sizeof *t.bk, by_count);
    size_t unexplained = 0;
    for (size_t i = 0; i < t.n; i++)
        unexplained += !t.bk[i].b.explained;
    if (json) {
        printf("{\"files\": %ld, \"agreeing\": %ld, \"unreadable\": %ld, \"disagreements\": ", t.files,
               t.skipped_agree, skipped);
        if (t.have_counts)
            printf("%lld, \"buckets\": [", t.counted);
        else
            printf("null, \"buckets\": [");
        for (size_t i = 0; i < t.n; i++) {
            const tr_bucket *e = &t.bk[i];
            printf("%s\n  {\"id\": ", i ? "," : "");
            json_put_str(stdout, e->b.id);
            printf(", \"instr\": ");
            json_put_str(stdout, e->in->name);
            printf(", \"model\": ");
            json_put_str(stdout, e->model->name);
            printf(", \"key\": ");
            json_put_str(stdout, e->b.key);
            if (e->count >= 0)
                printf(", \"disagreements\": %lld", e->count);
            else
                printf(", \"disagreements\": null");
            printf(", \"files\": %ld, \"explained\": %s, \"explanation\": ", e->files,
                   e->b.explained ? "true" : "false");
            json_put_str(stdout, e->b.words);
            printf(", \"also\": [");
            size_t row = (size_t)(e->model - mf_instr_table);
            const rf_catalogue *cat = row < 1024 ? t.cats[row] : NULL;
            for (int v = 0, first = 1; cat && v < cat->n; v++) {
                if (!e->vfiles[v] || !strcmp(cat->v[v].what, e->b.words))
                    continue;
                printf("%s{\"variant\": ", first ? "" : ", ");
                json_put_str(stdout, cat->v[v].what);
                printf(", \"files\": %ld}", e->vfiles[v]);
                first = 0;
            }
            printf("], \"exemplar\": ");
            json_put_str(stdout, e->exemplar);
            printf(", \"eval\": ");
            json_put_str(stdout, e->eval_line);
            printf(", \"first_seen\": ");
            json_put_str(stdout, e->first);
            printf(", \"last_seen\": ");
            json_put_str(stdout, e->last);
            printf(", \"devices\": ");
            json_put_str(stdout, e->devices);
            printf("}");
        }
        printf("\n]}\n");
    } else {
        printf("%zu buckets (%zu unexplained) in %ld files", t.n, unexplained, t.files);
        if (t.have_counts)
            printf(", %lld disagreements counted by the runs", t.counted);
        if (t.skipped_agree)
            printf("; %ld files agree with the model now", t.skipped_agree);
        printf("\n");
        for (size_t i = 0; i < t.n; i++) {
            const tr_bucket *e = &t.bk[i];
            const char *sig = strchr(e->b.key, '|');
            char sigc[64] = "";
            if (sig)
                snprintf(sigc, sizeof sigc, "%.*s", (int)strcspn(sig + 1, "|"), sig + 1);
            printf("\n%6ld  %s  %s  [%s]\n", e->files, e->b.id, e->in->name, sigc);
            if (e->count >= 0)
                printf("        disagreements: %lld (every one the runs found, filed or not)\n", e->count);
            if (e->model != e->in)
                printf("        model: %s\n", e->model->name);
            printf("        explanation: %s\n", e->b.words);
            print_also(&t, e);
            if (e->files) {
                printf("        exemplar: %s\n", e->exemplar);
                printf("        %s\n", e->eval_line);
            } else {
                printf("        exemplar: none filed (counted only)\n");
            }
            printf("        seen: %s .. %s on %s\n", e->first[0] ? e->first : "?", e->last[0] ? e->last : "?",
                   e->devices[0] ? e->devices : "?");
        }
    }
    for (size_t i = 0; i < 1024; i++)
        free(t.cats[i]);
    free(t.bk);
    return skipped > 0 || bad_counts ? 2 : 0;
}

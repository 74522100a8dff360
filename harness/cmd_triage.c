/*
 * cmd_triage.c - `mmafuzz triage DIR...`: the mismatch files of stores,
 * grouped into buckets (harness/refine/refine.h), largest first, each with
 * its explanation in words, an exemplar and its `eval --trace` line, first
 * and last seen, and the devices; `--json` for tools.  `--bench` measures
 * candidate evaluations per second on one core.
 */
#include "cli.h"
#include "instr_select.h"
#include "refine.h"
#include "run_store.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct tr_bucket {
    rf_bucket b;
    const mf_instr *in, *model;
    long files;
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
    tr_bucket *e = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->bk[i].b.id, b.id)) {
            e = &t->bk[i];
            break;
        }
    char when[32], dev[160];
    header_field(t->header, "time", when, sizeof when);
    header_field(t->header, "device", dev, sizeof dev);
    if (!e) {
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
        e = &t->bk[t->n++];
        memset(e, 0, sizeof *e);
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
    if (a->files != b->files)
        return a->files > b->files ? -1 : 1;
    return strcmp(a->b.id, b->b.id);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
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
    cli_args a;
    int prc = cli_parse(CLI_CMD_triage, argc, argv, &a);
    if (prc) {
        cli_free(&a);
        return prc > 0 ? 0 : 2;
    }
    /* the strings point into argv: copied before cli_free */
    const char *paths[256], *pats[64];
    int np = a.npos < 256 ? a.npos : 256, npat = CLI_V(&a, triage, instr).n;
    int json = CLI_V(&a, triage, json).given > 0, bench = CLI_V(&a, triage, bench).given > 0;
    long long runs = CLI_V(&a, triage, runs).i;
    int too_many = a.npos > 256;
    for (int i = 0; i < np; i++)
        paths[i] = a.pos[i];
    for (int i = 0; i < npat; i++)
        pats[i] = CLI_V(&a, triage, instr).list[i];
    cli_free(&a);
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
    long skipped = st_read(paths, np, on_case, &t);
    finish_file(&t);
    qsort(t.bk, t.n, sizeof *t.bk, by_count);
    size_t unexplained = 0;
    for (size_t i = 0; i < t.n; i++)
        unexplained += !t.bk[i].b.explained;
    if (json) {
        printf("{\"files\": %ld, \"agreeing\": %ld, \"unreadable\": %ld, \"buckets\": [", t.files, t.skipped_agree,
               skipped);
        for (size_t i = 0; i < t.n; i++) {
            const tr_bucket *e = &t.bk[i];
            printf("%s\n  {\"id\": \"%s\", \"instr\": ", i ? "," : "", e->b.id);
            json_str(stdout, e->in->name);
            printf(", \"model\": ");
            json_str(stdout, e->model->name);
            printf(", \"key\": ");
            json_str(stdout, e->b.key);
            printf(", \"files\": %ld, \"explained\": %s, \"explanation\": ", e->files,
                   e->b.explained ? "true" : "false");
            json_str(stdout, e->b.words);
            printf(", \"also\": [");
            size_t row = (size_t)(e->model - mf_instr_table);
            const rf_catalogue *cat = row < 1024 ? t.cats[row] : NULL;
            for (int v = 0, first = 1; cat && v < cat->n; v++) {
                if (!e->vfiles[v] || !strcmp(cat->v[v].what, e->b.words))
                    continue;
                printf("%s{\"variant\": ", first ? "" : ", ");
                json_str(stdout, cat->v[v].what);
                printf(", \"files\": %ld}", e->vfiles[v]);
                first = 0;
            }
            printf("], \"exemplar\": ");
            json_str(stdout, e->exemplar);
            printf(", \"eval\": ");
            json_str(stdout, e->eval_line);
            printf(", \"first_seen\": ");
            json_str(stdout, e->first);
            printf(", \"last_seen\": ");
            json_str(stdout, e->last);
            printf(", \"devices\": ");
            json_str(stdout, e->devices);
            printf("}");
        }
        printf("\n]}\n");
    } else {
        printf("%zu buckets (%zu unexplained) in %ld files", t.n, unexplained, t.files);
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
            if (e->model != e->in)
                printf("        model: %s\n", e->model->name);
            printf("        explanation: %s\n", e->b.words);
            print_also(&t, e);
            printf("        exemplar: %s\n", e->exemplar);
            printf("        %s\n", e->eval_line);
            printf("        seen: %s .. %s on %s\n", e->first[0] ? e->first : "?", e->last[0] ? e->last : "?",
                   e->devices[0] ? e->devices : "?");
        }
    }
    for (size_t i = 0; i < 1024; i++)
        free(t.cats[i]);
    free(t.bk);
    return skipped > 0 ? 2 : 0;
}

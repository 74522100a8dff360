/*
 * campaign_report.c - `mmafuzz report DIR... [-o report.html] [--json]`:
 * a campaign's numbers from its shard states (cases, disagreements per
 * instruction and class), its stats files (dot products/s over time, per
 * GPU) and its definition (the generator mix); a plain-text summary, JSON,
 * or one self-contained HTML page with inline SVG plots.
 */
#define _GNU_SOURCE
#include "campaign.h"
#include "cli.h"
#include "json.h"
#include "run_fs.h"
#include "run_stats.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rp_shard {
    cp_state *st;
    long findings;
} rp_shard;

typedef struct rp_run {
    char id[200], shard[40], host[128], gpu[300], uuid[48], pci[24];
    double t0, t1;        /* first and last record: unix seconds */
    long long cases;      /* at the last record */
    int nrec;
    size_t cap;           /* of t and c */
    double *t;            /* per record: unix seconds (start + elapsed) */
    long long *c;         /* cumulative cases */
    int ngpu;             /* at the last record: the GPUs of the process (cuda:LIST) and the cases of each */
    char guuid[16][48];
    long long gcases[16];
} rp_run;

typedef struct report {
    cp_def def;
    int have_def;
    rp_shard *sh;
    int nsh;
    rp_run *runs;
    int nruns;
} report;

/* ------------------------------------------------------------ reading */

static int count_store_file(const char *path, void *ctx)
{
    const char *b = strrchr(path, '/');
    if (b && strlen(b + 1) == 36)
        (*(long *)ctx)++;
    return 0;
}

static const char *json_field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? p + strlen(pat) : NULL;
}

/* The string of field key of a stats record, its escapes decoded (json.h); "" when absent or malformed. */
static void json_str(const char *line, const char *key, char *out, size_t len)
{
    json_get_str(json_field(line, key), out, len);
}

/* "gpus":[{"uuid":"GPU-...","cases":N},...] of a stats record. */
static void read_gpus(const char *line, rp_run *run)
{
    const char *p = json_field(line, "gpus");
    run->ngpu = 0;
    if (!p || *p != '[')
        return;
    while (run->ngpu < 16 && (p = strchr(p, '{')) != NULL) {
        const char *end = strchr(p, '}');
        if (!end)
            return;
        char one[200];
        size_t len = (size_t)(end - p) < sizeof one - 1 ? (size_t)(end - p) : sizeof one - 1;
        memcpy(one, p, len);
        one[len] = 0;
        json_str(one, "uuid", run->guuid[run->ngpu], sizeof run->guuid[run->ngpu]);
        const char *c = json_field(one, "cases");
        run->gcases[run->ngpu++] = c ? strtoll(c, NULL, 10) : 0;
        p = end + 1;
        if (*p != ',')
            return;
    }
}

static int stats_record(const rs_record *rec, void *vrun)
{
    rp_run *run = vrun;
    const char *line = rec->line;
    double t = (double)rec->unix_time, e = rec->elapsed_s;
    if (!run->nrec)
        run->t0 = t - e;
    if ((size_t)run->nrec == run->cap) {
        size_t cap = run->cap ? run->cap * 2 : 16;
        double *nt = realloc(run->t, cap * sizeof *nt);
        if (nt)
            run->t = nt;
        long long *nc = nt ? realloc(run->c, cap * sizeof *nc) : NULL;
        if (!nc)
            return 1;
        run->c = nc;
        run->cap = cap;
    }
    run->t[run->nrec] = run->t0 + e;
    run->c[run->nrec] = rec->cases;
    run->t1 = run->t[run->nrec];
    run->cases = run->c[run->nrec];
    run->nrec++;
    json_str(line, "shard", run->shard, sizeof run->shard);
    json_str(line, "host", run->host, sizeof run->host);
    json_str(line, "gpu", run->gpu, sizeof run->gpu);
    json_str(line, "gpu_uuid", run->uuid, sizeof run->uuid);
    json_str(line, "gpu_pci_bus_id", run->pci, sizeof run->pci);
    read_gpus(line, run);
    return 0;
}

/* One process run's stats file, read strictly (rs_read_file): a damaged one
 * is an error; a last record cut short (the process was killed) is left
 * out with a note.  @return 0 or -1 (said on stderr). */
static int read_stats(report *r, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    for (int i = 0; i < r->nruns; i++)  /* a run's file present twice (merged and not) counts once */
        if (!strncmp(r->runs[i].id, b, strlen(r->runs[i].id)) && !strcmp(b + strlen(r->runs[i].id), ".jsonl"))
            return 0;
    char err[1400];
    rp_run *nr = realloc(r->runs, (size_t)(r->nruns + 1) * sizeof *nr);
    if (!nr) {
        fprintf(stderr, "mmafuzz report: out of memory\n");
        return -1;
    }
    r->runs = nr;
    rp_run *run = &r->runs[r->nruns];
    memset(run, 0, sizeof *run);
    snprintf(run->id, sizeof run->id, "%.*s", (int)(strlen(b) - 6), b);
    long torn = 0, n = rs_read_file(path, stats_record, run, &torn, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "mmafuzz report: %s\n", n == -2 ? "out of memory" : err);
        free(run->t);
        free(run->c);
        return -1;
    }
    if (torn)
        fprintf(stderr, "mmafuzz report: %s: a last record cut short (%ld bytes without a newline: the process was "
                        "killed or the disk was full) left out\n", path, torn);
    if (run->nrec)
        r->nruns++;
    else {
        free(run->t);
        free(run->c);
    }
    return 0;
}

static int read_stats_file(const char *path, void *ctx)
{
    return read_stats(ctx, path) ? 1 : 0;
}

static long long state_done(const cp_state *s)
{
    long long t = 0;
    for (int q = 0; q < s->ninstr; q++)
        t += (long long)s->in[q].done;
    return t;
}

static int read_campaign(report *r, const char *dir)
{
    char err[1400], path[2400];
    cp_def *d = malloc(sizeof *d);
    if (!d || cp_def_read(dir, d, err, sizeof err)) {
        fprintf(stderr, "mmafuzz report: %s\n", d ? err : "out of memory");
        free(d);
        return -1;
    }
    if (r->have_def && strcmp(d->id, r->def.id)) {
        fprintf(stderr, "mmafuzz report: %s: campaign %s, not %s: report one campaign at a time\n", dir, d->id,
                r->def.id);
        free(d);
        return -1;
    }
    r->def = *d;
    r->have_def = 1;
    free(d);
    snprintf(path, sizeof path, "%s/shards", dir);
    DIR *dd = opendir(path);
    if (!dd)
        return 0;
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(dd)) != NULL) {
        int si, sn;
        if (cp_parse_shard(de->d_name, &si, &sn))
            continue;
        char sdir[2400], spath[2600];
        snprintf(sdir, sizeof sdir, "%s/shards/%s", dir, de->d_name);
        snprintf(spath, sizeof spath, "%s/shard.state", sdir);
        static const char *const jsonl[] = {".jsonl", NULL};
        snprintf(path, sizeof path, "%.2300s/stats", sdir);
        if (fs_is_dir(path) && fs_walk(path, jsonl, read_stats_file, r, err, sizeof err)) {
            rc = -1;  /* a damaged stats file (said), or the folder unreadable */
            if (err[0])
                fprintf(stderr, "mmafuzz report: %s\n", err);
            break;
        }
        if (access(spath, F_OK) != 0)
            continue;  /* started, not yet checkpointed */
        cp_state *st = malloc(sizeof *st);
        if (!st || cp_state_read_file(spath, st, err, sizeof err) || strcmp(st->id, r->def.id)) {
            fprintf(stderr, "mmafuzz report: %s\n", !st ? "out of memory" : err[0] ? err : "another campaign's shard");
            if (st)
                cp_state_free(st);
            free(st);
            rc = -1;
            break;
        }
        long findings = 0;
        static const char *const vec[] = {".vec", NULL};
        fs_walk(sdir, vec, count_store_file, &findings, err, sizeof err);
        int dup = -1;
        for (int k = 0; k < r->nsh; k++)
            if (r->sh[k].st->shard == st->shard && r->sh[k].st->nshards == st->nshards)
                dup = k;
        if (dup >= 0) {  /* the same shard twice (merged and not): its most advanced state */
            if (state_done(st) > state_done(r->sh[dup].st)) {
                cp_state_free(r->sh[dup].st);
                free(r->sh[dup].st);
                r->sh[dup].st = st;
                r->sh[dup].findings = findings;
            } else {
                cp_state_free(st);
                free(st);
            }
            continue;
        }
        rp_shard *ns = realloc(r->sh, (size_t)(r->nsh + 1) * sizeof *ns);
        if (!ns) {
            cp_state_free(st);
            free(st);
            rc = -1;
            break;
        }
        r->sh = ns;
        r->sh[r->nsh].st = st;
        r->sh[r->nsh++].findings = findings;
    }
    closedir(dd);
    return rc;
}

/* ------------------------------------------------------------ totals */

typedef struct rp_instr {
    long long cases, planned, mis, cls[CP_NCLASS];
} rp_instr;

/* A bucket summed over the shards (the definition's instruction q). */
typedef struct rp_bucket {
    int q;
    const cp_bucket *b;   /* the first shard's line: id and words */
    long long count;
} rp_bucket;

#define RP_TOP_BUCKETS 20  /* buckets shown in the text and the HTML (JSON: all) */

typedef struct totals {
    rp_instr *in;
    rp_bucket *bk;        /* by count, largest first */
    size_t nbk;
    long long cases, planned, mis, cls[CP_NCLASS];
    long findings;
    int nshards;  /* N */
} totals;

static int cmp_shard(const void *a, const void *b)
{
    const cp_state *x = ((const rp_shard *)a)->st, *y = ((const rp_shard *)b)->st;
    return x->nshards != y->nshards ? (x->nshards > y->nshards) - (x->nshards < y->nshards)
                                    : (x->shard > y->shard) - (x->shard < y->shard);
}

static int by_bucket_count(const void *a, const void *b)
{
    const rp_bucket *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->q != y->q ? (x->q > y->q) - (x->q < y->q) : strcmp(x->b->id, y->b->id);
}

static int compute(report *r, totals *t)
{
    if (r->nsh > 1)
        qsort(r->sh, (size_t)r->nsh, sizeof *r->sh, cmp_shard);
    const cp_def *d = &r->def;
    memset(t, 0, sizeof *t);
    t->in = calloc((size_t)d->ninstr + 1, sizeof *t->in);
    if (!t->in)
        return -1;
    for (int k = 0; k < r->nsh; k++) {
        if (t->nshards && r->sh[k].st->nshards != t->nshards) {
            fprintf(stderr, "mmafuzz report: shards of %d and of %d: their tiles overlap; report the shards of one N "
                            "(merge them into separate folders)\n", t->nshards, r->sh[k].st->nshards);
            return -1;
        }
        t->nshards = r->sh[k].st->nshards;
    }
    for (int q = 0; q < d->ninstr; q++) {
        rp_instr *p = &t->in[q];
        p->planned = (long long)d->instr[q].tiles * d->instr[q].m * d->instr[q].n;
        t->planned += p->planned;
        for (int k = 0; k < r->nsh; k++) {
            const cp_state *s = r->sh[k].st;
            for (int x = 0; x < s->ninstr; x++) {
                if (strcmp(s->in[x].name, d->instr[q].name))
                    continue;
                p->cases += s->in[x].cases;
                p->mis += s->in[x].mismatches;
                for (int c = 0; c < CP_NCLASS; c++)
                    p->cls[c] += s->in[x].cls[c];
            }
        }
        t->cases += p->cases;
        t->mis += p->mis;
        for (int c = 0; c < CP_NCLASS; c++)
            t->cls[c] += p->cls[c];
    }
    for (int k = 0; k < r->nsh; k++)
        t->findings += r->sh[k].findings;
    /* the buckets: each shard's counts added up */
    size_t cap = 0;
    for (int k = 0; k < r->nsh; k++)
        cap += r->sh[k].st->nbk;
    t->bk = calloc(cap + 1, sizeof *t->bk);
    if (!t->bk)
        return -1;
    for (int k = 0; k < r->nsh; k++) {
        const cp_state *s = r->sh[k].st;
        for (size_t x = 0; x < s->nbk; x++) {
            const cp_bucket *b = &s->bk[x];
            int q = 0;
            while (q < d->ninstr && strcmp(d->instr[q].name, s->in[b->instr].name))
                q++;
            if (q == d->ninstr)
                continue;  /* not an instruction of the definition (a state is checked against it when run) */
            size_t y = 0;
            while (y < t->nbk && (t->bk[y].q != q || strcmp(t->bk[y].b->id, b->id)))
                y++;
            if (y == t->nbk)
                t->bk[t->nbk++] = (rp_bucket){q, b, 0};
            t->bk[y].count += b->count;
        }
    }
    qsort(t->bk, t->nbk, sizeof *t->bk, by_bucket_count);
    return 0;
}

static unsigned long long shard_own(const cp_def *d, const cp_state *s)
{
    unsigned long long own = 0;
    for (int q = 0; q < d->ninstr; q++)
        own += cp_shard_tiles(d->instr[q].tiles, s->shard, s->nshards);
    return own;
}

static long long shard_sum(const cp_state *s, int what)
{
    long long v = 0;
    for (int q = 0; q < s->ninstr; q++)
        v += what == 0 ? s->in[q].cases : what == 1 ? s->in[q].mismatches : (long long)s->in[q].done;
    return v;
}

/* ------------------------------------------------------------ text, JSON */

static void print_text(const report *r, const totals *t, FILE *f)
{
    const cp_def *d = &r->def;
    fprintf(f, "campaign %s: device %s%s%s, seed %llu, %d instructions, mix %s\n", d->id, d->device,
            d->model[0] ? ", model " : "", d->model, d->seed, d->ninstr, d->mix);
    fprintf(f, "cases %lld of %lld (%.1f%%), disagreements %lld, findings %ld, shards %d of %d reported, %d process "
               "runs\n", t->cases, t->planned, t->planned ? 100.0 * (double)t->cases / (double)t->planned : 0.0,
            t->mis, t->findings, r->nsh, t->nshards, r->nruns);
    fprintf(f, "%-56s %14s %14s %14s  %s\n", "instruction", "cases", "planned", "disagreements", "classes");
    for (int q = 0; q < d->ninstr; q++) {
        const rp_instr *p = &t->in[q];
        fprintf(f, "%-56s %14lld %14lld %14lld ", d->instr[q].name, p->cases, p->planned, p->mis);
        for (int c = 0; c < CP_NCLASS; c++)
            if (p->cls[c])
                fprintf(f, " %s:%lld", cp_class_names[c], p->cls[c]);
        fprintf(f, "\n");
    }
    fprintf(f, "buckets %zu (every disagreement counted in its bucket; mmafuzz triage explains them)%s\n", t->nbk,
            t->nbk > RP_TOP_BUCKETS ? ", the largest:" : "");
    for (size_t y = 0; y < t->nbk && y < RP_TOP_BUCKETS; y++)
        fprintf(f, "%14lld  %s  %s: %s\n", t->bk[y].count, t->bk[y].b->id, d->instr[t->bk[y].q].name,
                t->bk[y].b->words);
    for (int k = 0; k < r->nsh; k++) {
        const cp_state *s = r->sh[k].st;
        fprintf(f, "shard %d/%d: tiles %lld of %llu, cases %lld, disagreements %lld, findings %ld\n", s->shard,
                s->nshards, shard_sum(s, 2), shard_own(d, s), shard_sum(s, 0), shard_sum(s, 1), r->sh[k].findings);
    }
}

static void print_json(const report *r, const totals *t, FILE *f)
{
    const cp_def *d = &r->def;
    fprintf(f, "{\"campaign\":");
    json_put_str(f, d->id);
    fprintf(f, ",\"seed\":%llu,\"device\":", d->seed);
    json_put_str(f, d->device);
    fprintf(f, ",\"model\":");
    json_put_str(f, d->model);
    fprintf(f, ",\"nshards\":%d,\"cases\":%lld,\"planned\":%lld,\"disagreements\":%lld,\"findings\":%ld,\"runs\":%d,"
               "\"classes\":{",
            t->nshards, t->cases, t->planned, t->mis, t->findings, r->nruns);
    for (int c = 0, first = 1; c < CP_NCLASS; c++)
        if (t->cls[c]) {
            fprintf(f, "%s\"%s\":%lld", first ? "" : ",", cp_class_names[c], t->cls[c]);
            first = 0;
        }
    fprintf(f, "},\"instr\":{");
    for (int q = 0; q < d->ninstr; q++) {
        const rp_instr *p = &t->in[q];
        fprintf(f, "%s", q ? "," : "");
        json_put_str(f, d->instr[q].name);
        fprintf(f, ":{\"cases\":%lld,\"planned\":%lld,\"disagreements\":%lld,\"classes\":{", p->cases, p->planned,
                p->mis);
        for (int c = 0, first = 1; c < CP_NCLASS; c++)
            if (p->cls[c]) {
                fprintf(f, "%s\"%s\":%lld", first ? "" : ",", cp_class_names[c], p->cls[c]);
                first = 0;
            }
        fprintf(f, "}}");
    }
    fprintf(f, "},\"buckets\":[");
    for (size_t y = 0; y < t->nbk; y++) {
        fprintf(f, "%s{\"id\":", y ? "," : "");
        json_put_str(f, t->bk[y].b->id);
        fprintf(f, ",\"instr\":");
        json_put_str(f, d->instr[t->bk[y].q].name);
        fprintf(f, ",\"count\":%lld,\"explanation\":", t->bk[y].count);
        json_put_str(f, t->bk[y].b->words);
        fprintf(f, "}");
    }
    fprintf(f, "],\"shards\":[");
    for (int k = 0; k < r->nsh; k++) {
        const cp_state *s = r->sh[k].st;
        fprintf(f, "%s{\"shard\":%d,\"of\":%d,\"tiles_done\":%lld,\"tiles\":%llu,\"cases\":%lld,"
                   "\"disagreements\":%lld,\"findings\":%ld}", k ? "," : "", s->shard, s->nshards, shard_sum(s, 2),
                shard_own(d, s), shard_sum(s, 0), shard_sum(s, 1), r->sh[k].findings);
    }
    fprintf(f, "]}\n");
}

/* ------------------------------------------------------------ HTML */

static void esc(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

static const char *const palette[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948",
                                      "#9c755f"};

/* A horizontal bar chart: one row per label, up to two series (a, b). */
static void svg_bars(FILE *f, const char *title, int n, const char *const *labels, const double *a, const double *b,
                     const char *an, const char *bn, int logscale)
{
    double max = 0;
    for (int i = 0; i < n; i++) {
        double v = a[i] > (b ? b[i] : 0) ? a[i] : (b ? b[i] : 0);
        if (v > max)
            max = v;
    }
    /* the labels' column fits the longest label: at most 7 px a character at font-size 12 (the longest row
     * names, 66 characters, lost their first letters in a 380 px column) */
    size_t longest = 0;
    for (int i = 0; i < n; i++)
        if (strlen(labels[i]) > longest)
            longest = strlen(labels[i]);
    const int lw = 7 * (int)longest + 12 > 380 ? 7 * (int)longest + 12 : 380, bw = 420, rowh = b ? 30 : 20,
              h = 40 + n * rowh + (b ? 20 : 0);
    fprintf(f, "<h2>");
    esc(f, title);
    fprintf(f, "</h2>\n<svg width=\"%d\" height=\"%d\" role=\"img\">\n",
            lw + bw + 140, h);
    double lmax = logscale && max > 0 ? __builtin_log10(max + 1) : max;
    for (int i = 0; i < n; i++) {
        int y = 20 + i * rowh;
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">", lw - 6, y + 13);
        esc(f, labels[i]);
        fprintf(f, "</text>\n");
        for (int s = 0; s < (b ? 2 : 1); s++) {
            double v = s ? b[i] : a[i];
            double x = lmax > 0 ? (logscale ? __builtin_log10(v + 1) : v) / lmax * bw : 0;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
                       "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%.0f</text>\n",
                    lw, y + s * 13, x, b ? 12 : 16, palette[s], lw + x + 4, y + s * 13 + 11, v);
        }
    }
    if (b)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
                   "font-size=\"12\">%s</text><rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s%s</text>\n",
                lw, h - 18, palette[0], lw + 16, h - 8, an, lw + 160, h - 18, palette[1], lw + 176, h - 8, bn,
                logscale ? " (bars: log scale)" : "");
    fprintf(f, "</svg>\n");
}

/* Dot products per second over time: every run's cases binned by time. */
static void svg_rate(FILE *f, const report *r)
{
    fprintf(f, "<h2>Dot products per second over time (all shards)</h2>\n");
    double tmin = 0, tmax = 0;
    int any = 0;
    for (int i = 0; i < r->nruns; i++) {
        if (!any || r->runs[i].t0 < tmin)
            tmin = r->runs[i].t0;
        if (!any || r->runs[i].t1 > tmax)
            tmax = r->runs[i].t1;
        any = 1;
    }
    if (!any || tmax <= tmin) {
        fprintf(f, "<p>No stats records with elapsed time yet.</p>\n");
        return;
    }
    enum { NB = 60 };
    double bins[NB] = {0}, w = (tmax - tmin) / NB, ymax = 0;
    for (int i = 0; i < r->nruns; i++) {
        const rp_run *u = &r->runs[i];
        double tp = u->t0;
        long long cp = 0;
        for (int k = 0; k < u->nrec; k++) {  /* spread each interval's cases evenly over the bins it covers */
            double t = u->t[k], dc = (double)(u->c[k] - cp);
            if (t > tp && dc > 0)
                for (int bi = 0; bi < NB; bi++) {
                    double lo = tmin + bi * w, hi = lo + w;
                    double ov = (t < hi ? t : hi) - (tp > lo ? tp : lo);
                    if (ov > 0)
                        bins[bi] += dc * ov / (t - tp);
                }
            tp = t;
            cp = u->c[k];
        }
    }
    for (int bi = 0; bi < NB; bi++) {
        bins[bi] /= w;
        if (bins[bi] > ymax)
            ymax = bins[bi];
    }
    const int W = 800, H = 260, L = 70, B = 30;
    fprintf(f, "<svg width=\"%d\" height=\"%d\" role=\"img\">\n", W + L + 20,
            H + B + 10);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/><line x1=\"%d\" y1=\"10\" x2=\"%d\" "
               "y2=\"%d\" stroke=\"#333\"/>\n", L, H + 10, L + W, H + 10, L, L, H + 10);
    fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"11\" text-anchor=\"end\">%.3g</text>"
               "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>"
               "<text x=\"%d\" y=\"%d\" font-size=\"11\">0 s</text>"
               "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.0f s</text>\n",
            L - 4, ymax, L - 4, H + 10, L, H + 26, L + W, H + 26, tmax - tmin);
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", palette[0]);
    for (int bi = 0; bi < NB; bi++)
        fprintf(f, "%.1f,%.1f ", L + (bi + 0.5) * W / NB, H + 10 - (ymax > 0 ? bins[bi] / ymax * H : 0));
    fprintf(f, "\"/>\n</svg>\n");
}

static int write_html(const report *r, const totals *t, const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    const cp_def *d = &r->def;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mmafuzz campaign %s</title>\n"
               "<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse}"
               "table{font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child"
               "{text-align:left}h2{margin-top:28px;font-size:17px}.big{font-size:20px}</style></head><body>\n",
            d->id);
    fprintf(f, "<h1>mmafuzz campaign %s</h1>\n<p>device ", d->id);
    esc(f, d->device);
    if (d->model[0])
        fprintf(f, ", model %s", d->model);
    fprintf(f, ", seed %llu, %d instructions, generator table version %d, %lld saved cases in the frozen pool, "
               "minimize every %lld tiles</p>\n", d->seed, d->ninstr, d->gen_version, d->pool_cases,
            d->minimize_every);
    fprintf(f, "<h2>Totals</h2>\n<p class=\"big\">cases <b id=\"cases\">%lld</b> of %lld planned (%.1f%%) &middot; "
               "disagreements <b id=\"disagreements\">%lld</b> &middot; findings %ld &middot; shards %d of %d "
               "&middot; process runs %d</p>\n", t->cases, t->planned,
            t->planned ? 100.0 * (double)t->cases / (double)t->planned : 0.0, t->mis, t->findings, r->nsh,
            t->nshards, r->nruns);
    svg_rate(f, r);
    /* per instruction */
    int n = d->ninstr;
    const char **labels = calloc((size_t)n + CP_NCLASS + 64, sizeof *labels);
    double *a = calloc((size_t)n + CP_NCLASS + 64 + (size_t)r->nsh + (size_t)r->nruns, sizeof *a);
    double *b = calloc((size_t)n + CP_NCLASS + 64 + (size_t)r->nsh + (size_t)r->nruns, sizeof *b);
    char(*names)[64] = calloc((size_t)r->nsh + (size_t)r->nruns + 64, sizeof *names);
    if (!labels || !a || !b || !names) {
        fclose(f);
        free(buf);
        free(labels);
        free(a);
        free(b);
        free(names);
        return -1;
    }
    for (int q = 0; q < n; q++) {
        labels[q] = d->instr[q].name;
        a[q] = (double)t->in[q].cases;
        b[q] = (double)t->in[q].mis;
    }
    svg_bars(f, "Cases and disagreements per instruction", n, labels, a, b, "cases", "disagreements", 1);
    fprintf(f, "<table id=\"instr\"><tr><th>instruction</th><th>cases</th><th>planned</th><th>disagreements</th>");
    for (int c = 0; c < CP_NCLASS; c++) {
        fprintf(f, "<th>");
        esc(f, cp_class_names[c]);
        fprintf(f, "</th>");
    }
    fprintf(f, "</tr>\n");
    for (int q = 0; q < n; q++) {
        fprintf(f, "<tr><td>");
        esc(f, d->instr[q].name);
        fprintf(f, "</td><td>%lld</td><td>%lld</td><td>%lld</td>", t->in[q].cases, t->in[q].planned, t->in[q].mis);
        for (int c = 0; c < CP_NCLASS; c++)
            fprintf(f, "<td>%lld</td>", t->in[q].cls[c]);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    /* classes */
    for (int c = 0; c < CP_NCLASS; c++) {
        labels[c] = cp_class_names[c];
        a[c] = (double)t->cls[c];
    }
    svg_bars(f, "Disagreements per signature class", CP_NCLASS, labels, a, NULL, NULL, NULL, 0);
    /* the largest buckets */
    fprintf(f, "<h2>Buckets: %zu%s</h2>\n<p>Every disagreement counted in its bucket (the explanation: the first "
               "variant of the model row that reproduces the device's output); <code>mmafuzz triage</code> shows "
               "exemplars.</p>\n<table id=\"buckets\"><tr><th>bucket</th><th>instruction</th><th>disagreements</th>"
               "<th>explanation</th></tr>\n", t->nbk, t->nbk > RP_TOP_BUCKETS ? ", the largest" : "");
    for (size_t y = 0; y < t->nbk && y < RP_TOP_BUCKETS; y++) {
        fprintf(f, "<tr><td>%s</td><td>", t->bk[y].b->id);
        esc(f, d->instr[t->bk[y].q].name);
        fprintf(f, "</td><td>%lld</td><td style=\"text-align:left\">", t->bk[y].count);
        esc(f, t->bk[y].b->words);
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</table>\n");
    /* the generator mix, from the definition: "name:weight,..." */
    int nm = 0;
    char mix[160];
    snprintf(mix, sizeof mix, "%s", d->mix);
    char *save = NULL;
    for (char *it = strtok_r(mix, ",", &save); it && nm < 64; it = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(it, ':');
        snprintf(names[nm], sizeof names[nm], "%.*s", colon ? (int)(colon - it) : (int)strlen(it), it);
        labels[nm] = names[nm];
        a[nm++] = colon ? strtod(colon + 1, NULL) : 1;
    }
    svg_bars(f, "Generator mix (weights of the definition)", nm, labels, a, NULL, NULL, NULL, 0);
    /* shards */
    for (int k = 0; k < r->nsh; k++) {
        const cp_state *s = r->sh[k].st;
        snprintf(names[k], sizeof names[k], "shard %d/%d", s->shard, s->nshards);
        labels[k] = names[k];
        unsigned long long own = shard_own(d, s);
        a[k] = own ? 100.0 * (double)shard_sum(s, 2) / (double)own : 100.0;
    }
    svg_bars(f, "Per-shard progress (% of the shard's tiles done)", r->nsh, labels, a, NULL, NULL, NULL, 0);
    fprintf(f, "<table id=\"shards\"><tr><th>shard</th><th>tiles done</th><th>tiles</th><th>cases</th>"
               "<th>disagreements</th><th>findings</th></tr>\n");
    for (int k = 0; k < r->nsh; k++) {
        const cp_state *s = r->sh[k].st;
        fprintf(f, "<tr><td>%d/%d</td><td>%lld</td><td>%llu</td><td>%lld</td><td>%lld</td><td>%ld</td></tr>\n",
                s->shard, s->nshards, shard_sum(s, 2), shard_own(d, s), shard_sum(s, 0), shard_sum(s, 1),
                r->sh[k].findings);
    }
    fprintf(f, "</table>\n");
    /* per GPU (host and device of each process run, from the stats files) */
    fprintf(f, "<h2>Per GPU (process runs from the stats files)</h2>\n<table id=\"runs\"><tr><th>run</th><th>shard"
               "</th><th>host</th><th>GPU</th><th>GPU UUID</th><th>PCI bus id</th><th>cases</th><th>seconds</th><th>dot products/s</th></tr>\n");
    for (int i = 0; i < r->nruns; i++) {
        const rp_run *u = &r->runs[i];
        double el = u->t1 - u->t0;
        fprintf(f, "<tr><td>");
        esc(f, u->id);
        fprintf(f, "</td><td>");
        esc(f, u->shard);
        fprintf(f, "</td><td>");
        esc(f, u->host);
        fprintf(f, "</td><td>");
        esc(f, u->gpu);
        fprintf(f, "</td><td>");
        esc(f, u->uuid);
        fprintf(f, "</td><td>");
        esc(f, u->pci);
        fprintf(f, "</td><td>%lld</td><td>%.1f</td><td>%.3g</td></tr>\n", u->cases, el,
                el > 0 ? (double)u->cases / el : 0.0);
        for (int g = 0; u->ngpu > 1 && g < u->ngpu; g++) {  /* one process over several GPUs: each of them */
            fprintf(f, "<tr class=\"gpu\"><td>");
            esc(f, u->id);
            fprintf(f, " GPU %d</td><td>", g);
            esc(f, u->shard);
            fprintf(f, "</td><td>");
            esc(f, u->host);
            fprintf(f, "</td><td></td><td>");
            esc(f, u->guuid[g]);
            fprintf(f, "</td><td></td><td>%lld</td><td>%.1f</td><td>%.3g</td></tr>\n", u->gcases[g], el,
                    el > 0 ? (double)u->gcases[g] / el : 0.0);
        }
    }
    fprintf(f, "</table>\n<p>Counts are read from the shards' states (each case counted once, however often a "
               "shard was resumed); rates from the stats files, one per process run.</p>\n</body></html>\n");
    free(labels);
    free(a);
    free(b);
    free(names);
    if (fclose(f) != 0) {
        free(buf);
        return -1;
    }
    char err[1400];
    int rc = fs_write_atomic(path, buf, len, 1, err, sizeof err);
    if (rc)
        fprintf(stderr, "mmafuzz report: %s\n", err);
    free(buf);
    return rc ? -1 : 0;
}

int cmd_report(int argc, char **argv)
{
    cli_opts_report a;
    int prc = cli_report_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    report *r = calloc(1, sizeof *r);
    totals t;
    memset(&t, 0, sizeof t);
    int rc = r ? 0 : 2;
    for (int i = 0; i < a.npos && !rc; i++)
        if (read_campaign(r, a.pos[i]))
            rc = 2;
    if (!rc && compute(r, &t))
        rc = 2;
    if (!rc) {
        if (a.json)
            print_json(r, &t, stdout);
        else
            print_text(r, &t, stdout);
        const char *out = a.out;
        if (out && write_html(r, &t, out))
            rc = 2;
    }
    if (r) {
        for (int k = 0; k < r->nsh; k++) {
            cp_state_free(r->sh[k].st);
            free(r->sh[k].st);
        }
        for (int i = 0; i < r->nruns; i++) {
            free(r->runs[i].t);
            free(r->runs[i].c);
        }
        free(r->sh);
        free(r->runs);
    }
    free(r);
    free(t.in);
    free(t.bk);
    cli_report_free(&a);
    return rc;
}

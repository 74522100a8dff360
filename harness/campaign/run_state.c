/*
 * run_state.c - the campaign state file of `mmafuzz run`.
 */
#include "run_state.h"

#include "cli.h"
#include "run_fs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value the state records as "KEY VALUE" and run_state_read takes back
 * as it was: 1 to 200 characters, no control character, no space at the end. */
static int recordable(const char *v)
{
    size_t n = strlen(v);
    if (!n || n > 200 || v[n - 1] == ' ')
        return 0;
    for (; *v; v++)
        if ((unsigned char)*v < ' ' || (unsigned char)*v == 0x7f)
            return 0;
    return 1;
}

run_err run_state_write(const run_opts *o, const run_state_budget *left, const run_state_tile *tiles, int n,
                        char files[CK_NFILES][CK_HASH], char *err, size_t errlen)
{
    /* what --resume needs back: a value it could not read back exactly is refused, never cut or split */
    const char *what = NULL, *bad = NULL;
    if (!recordable(o->device))
        what = "--device", bad = o->device;
    for (int p = 0; !what && p < o->npat; p++)
        if (!recordable(o->pat[p]))
            what = "--instr", bad = o->pat[p];
    for (int c = 0; !what && c < o->ncorpus; c++)
        if (!recordable(o->corpus[c]))
            what = "--corpus", bad = o->corpus[c];
    if (what) {
        snprintf(err, errlen, "%s/campaign.state: cannot record %s '%.60s%s' (1 to 200 characters without a control "
                              "character such as a newline, and no space at the end, so that --resume reads it back "
                              "as it was); give another name", o->out, what, bad, strlen(bad) > 60 ? "..." : "");
        return RUN_ERR_USAGE;
    }
    char *buf = malloc(4096 + (size_t)(o->npat + o->ncorpus) * 220 + (size_t)n * 200);
    if (!buf) {
        snprintf(err, errlen, "campaign.state: out of memory");
        return RUN_ERR_NOMEM;
    }
    size_t pos = 0;
    pos += (size_t)sprintf(buf + pos, "# mmafuzz campaign state: `mmafuzz run --resume DIR` continues from here\n");
    pos += (size_t)sprintf(buf + pos, "version 1\nseed %llu\ndevice %s\nmix %s\n", o->seed, o->device,
                           o->mix_text);
    pos += (size_t)sprintf(buf + pos, "generators %d\n", MF_GEN_VERSION);   /* (seed, index) -> case holds within one */
    if (o->model)
        pos += (size_t)sprintf(buf + pos, "model %.40s\n", o->model);
    for (int p = 0; p < o->npat; p++)
        pos += (size_t)sprintf(buf + pos, "pattern %s\n", o->pat[p]);
    for (int c = 0; c < o->ncorpus; c++)
        pos += (size_t)sprintf(buf + pos, "corpus %s\n", o->corpus[c]);
    char cs[24] = "-", ss[24] = "-";
    if (left->cases >= 0)
        snprintf(cs, sizeof cs, "%lld", left->cases);
    if (left->seconds >= 0)
        snprintf(ss, sizeof ss, "%lld", left->seconds);
    pos += (size_t)sprintf(buf + pos, "budget %s %s\n", cs, ss);
    for (int i = 0; i < n; i++)
        pos += (size_t)sprintf(buf + pos, "tile %.159s %llu\n", tiles[i].name, tiles[i].tile);
    for (int f = 0; files && f < CK_NFILES; f++)
        pos += (size_t)sprintf(buf + pos, "file %s %s\n", ck_files[f], files[f]);
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.state", o->out);
    int rc = fs_write_atomic_at("state.write", path, buf, pos, 1, err, errlen);
    free(buf);
    return rc ? RUN_ERR_STORE : RUN_OK;
}

static char g_state_strings[RUN_MAX_PATTERNS + RUN_MAX_CORPUS + 4][256];

/* The largest tile count a state may hold: tile * M * N (cases) stays below
 * 2^63 for every tile shape (M * N <= 2^16). */
#define STATE_TILE_MAX (LLONG_MAX >> 16)

/* A tile count: decimal digits only, at most STATE_TILE_MAX (nothing wraps). */
static int parse_tile(const char *s, unsigned long long *out)
{
    unsigned long long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (STATE_TILE_MAX - (unsigned long long)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (unsigned long long)(*s - '0');
    }
    *out = v;
    return 0;
}

static int is_hash16(const char *s)
{
    if (!strcmp(s, "-"))
        return 1;
    if (strlen(s) != 16)
        return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return 0;
    return 1;
}

run_err run_state_read(const char *dir, run_opts *o, int have_mix, int have_dev, run_state_tile **tiles,
                       int *ntiles, char files[CK_NFILES][CK_HASH])
{
    char path[1100], err[600];
    snprintf(path, sizeof path, "%s/campaign.state", dir);
    size_t len;
    *tiles = NULL;
    *ntiles = 0;
    for (int f = 0; files && f < CK_NFILES; f++)
        files[f][0] = 0;
    char *buf = fs_read_all(path, &len, err, sizeof err);
    if (!buf) {
        fprintf(stderr, "mmafuzz run: --resume: %s\n", err);
        return RUN_ERR_INPUT;
    }
    int ns = 0, lineno = 0, np = 0, nc = 0;
    /* each key at most once (pattern, corpus, tile and file: once per value); version, seed, device and mix
     * required */
    enum { K_VERSION, K_SEED, K_DEVICE, K_MIX, K_GENERATORS, K_MODEL, K_NREQ = K_GENERATORS };
    static const char *const once[] = {"version", "seed", "device", "mix", "generators", "model"};
    int seen[6] = {0}, seen_budget = 0;
    char fh[CK_NFILES][CK_HASH] = {{0}};
    run_err rc = RUN_OK;
#define BAD(...) do { fprintf(stderr, "%s:%d: ", path, lineno); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
                      rc = RUN_ERR_INPUT; } while (0)
    const char *nul = memchr(buf, 0, len);
    for (char *line = buf, *next; line < buf + len && rc == RUN_OK; line = next) {
        next = memchr(line, '\n', (size_t)(buf + len - line));
        lineno++;
        if (nul && nul >= line && (!next || nul < next)) {
            BAD("a NUL byte (not a state file, or damaged)");
            break;
        }
        if (!next) {
            BAD("the line is cut short (no newline at its end: a damaged state)");
            break;
        }
        *next++ = 0;
        if (!line[0] || line[0] == '#')
            continue;
        char *sp = strchr(line, ' ');
        const char *key = line, *val = sp ? sp + 1 : "";
        if (sp)
            *sp = 0;
        if (!sp || !*val || strlen(val) > 255 || val[strlen(val) - 1] == ' ' || strchr(val, '\t') ||
            strchr(val, '\r')) {
            BAD("expected KEY VALUE (one space between, a value of 1 to 255 characters)");
            break;
        }
        int k = 0;
        while (k < 6 && strcmp(key, once[k]))
            k++;
        if (seen[K_VERSION] == 0 && k != K_VERSION) {
            BAD("expected 'version 1' first");
            break;
        }
        if (k < 6 && seen[k]++) {
            BAD("a second '%s' line", key);
            break;
        }
        if (k == K_VERSION) {
            if (strcmp(val, "1"))
                BAD("expected state version 1");
        } else if (k == K_SEED) {
            unsigned long long sd;
            if (cli_parse_seed(val, &sd))
                BAD("expected 'seed N' with a decimal or 0x hex seed, got '%s'", val);
            else if (!o->seed_given)
                o->seed = sd;
        } else if (k == K_GENERATORS) {
            unsigned long long gv;
            if (parse_tile(val, &gv) || gv > 1000000)
                BAD("expected 'generators N' with a decimal version, got '%s'", val);
            else if (gv != MF_GEN_VERSION)
                fprintf(stderr, "%s:%d: note: generator table version %s, now %d: the tiles from here on are not "
                                "those that version would give\n", path, lineno, val, MF_GEN_VERSION);
        } else if (!strcmp(key, "tile")) {
            char name[256];
            const char *num = strrchr(val, ' ');
            unsigned long long n;
            if (!num || num == val || (size_t)(num - val) >= sizeof name || strchr(val, ' ') != num ||
                parse_tile(num + 1, &n)) {
                BAD("expected 'tile NAME COUNT' with a decimal count of at most %lld, got '%s'",
                    (long long)STATE_TILE_MAX, val);
                break;
            }
            memcpy(name, val, (size_t)(num - val));
            name[num - val] = 0;
            if (strlen(name) >= sizeof(*tiles)->name) {
                BAD("an instruction name of %zu characters (at most %zu)", strlen(name), sizeof(*tiles)->name - 1);
                break;
            }
            for (int q = 0; q < *ntiles; q++)
                if (!strcmp((*tiles)[q].name, name))
                    BAD("a second 'tile %s' line", name);
            if (rc != RUN_OK)
                break;
            run_state_tile *t = realloc(*tiles, (size_t)(*ntiles + 1) * sizeof *t);
            if (!t) {
                rc = RUN_ERR_NOMEM;
                break;
            }
            *tiles = t;
            snprintf(t[*ntiles].name, sizeof t[*ntiles].name, "%s", name);
            t[(*ntiles)++].tile = n;
        } else if (!strcmp(key, "budget")) {
            char c[32], t[32], extra;
            long long v[2] = {-1, -1};
            int bad = seen_budget++ || sscanf(val, "%31s %31s %c", c, t, &extra) != 2;
            for (int q = 0; q < 2 && !bad; q++) {
                const char *x = q ? t : c;
                if (strcmp(x, "-") && cli_parse_decimal(x, &v[q]))
                    bad = 1;
            }
            if (bad) {
                BAD("expected 'budget CASES SECONDS' once (decimal numbers or '-')");
                break;
            }
            if (!o->args.given.runs && !o->args.given.max_total_time) {
                /* the interrupted run's budget: what was left of it (0 left of either: spent) */
                o->runs = v[0] == 0 || v[1] == 0 ? 0 : v[0];
                o->max_time = v[1] > 0 ? v[1] : 0;
            }
        } else if (!strcmp(key, "file")) {
            char name[64], hash[64], extra[8];
            int f;
            if (sscanf(val, "%63s %63s %7s", name, hash, extra) != 2 || (f = ck_file_index(name)) < 0 ||
                !is_hash16(hash)) {
                BAD("expected 'file NAME HASH' with NAME index.tsv or buckets.tsv and 16 hex digits or '-'");
                break;
            }
            if (fh[f][0]) {
                BAD("a second 'file %s' line", name);
                break;
            }
            snprintf(fh[f], CK_HASH, "%s", hash);
        } else if (k == K_DEVICE || k == K_MIX || k == K_MODEL || !strcmp(key, "pattern") ||
                   !strcmp(key, "corpus")) {
            if (ns >= (int)(sizeof g_state_strings / sizeof *g_state_strings)) {
                BAD("more pattern and corpus lines than a run takes (%d and %d)", RUN_MAX_PATTERNS, RUN_MAX_CORPUS);
                break;
            }
            snprintf(g_state_strings[ns], 256, "%s", val);
            const char *v = g_state_strings[ns++];
            if (k == K_DEVICE && !have_dev) {
                o->device = v;
            } else if (k == K_MODEL) {
                if (mf_arch_by_name(v) == MF_ARCH_COUNT)
                    BAD("unknown model architecture '%s'", v);
                else if (!o->model)
                    o->model = v;
            } else if (k == K_MIX) {
                char e[200];
                gen_mix m;
                if (gen_mix_parse(v, &m, e, sizeof e))
                    BAD("%s", e);
                else if (!have_mix)
                    o->mix = m;
            } else if (!strcmp(key, "pattern")) {
                if (np >= RUN_MAX_PATTERNS)
                    BAD("more than %d pattern lines", RUN_MAX_PATTERNS);
                else if (!o->npat)
                    o->pat[np++] = v;
            } else if (!strcmp(key, "corpus")) {
                if (nc >= RUN_MAX_CORPUS)
                    BAD("more than %d corpus lines", RUN_MAX_CORPUS);
                else if (!o->ncorpus)
                    o->corpus[nc++] = v;
            }
        } else {
            BAD("expected version, seed, device, model, mix, generators, pattern, corpus, budget, tile or file lines");
        }
    }
    for (int k = 0; k < K_NREQ && rc == RUN_OK; k++)
        if (!seen[k]) {
            lineno++;
            BAD("expected a '%s' line (the state is incomplete%s)", once[k], len ? "" : ": an empty file");
        }
#undef BAD
    free(buf);
    if (rc != RUN_OK) {
        free(*tiles);
        *tiles = NULL;
        *ntiles = 0;
        return rc;
    }
    for (int f = 0; files && f < CK_NFILES; f++)
        memcpy(files[f], fh[f], CK_HASH);
    if (!o->npat)
        o->npat = np;
    if (!o->ncorpus)
        o->ncorpus = nc;
    o->seed_given = 1;
    return RUN_OK;
}

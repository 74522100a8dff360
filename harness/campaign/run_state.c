/*
 * run_state.c - the campaign state file of `mmafuzz run`.
 */
#include "run_state.h"

#include "cli.h"
#include "run_fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

run_err run_state_write(const run_opts *o, const run_state_budget *left, const run_state_tile *tiles, int n,
                        char *err, size_t errlen)
{
    char *buf = malloc(4096 + (size_t)(o->npat + o->ncorpus) * 220 + (size_t)n * 200);
    if (!buf) {
        snprintf(err, errlen, "campaign.state: out of memory");
        return RUN_ERR_NOMEM;
    }
    size_t pos = 0;
    pos += (size_t)sprintf(buf + pos, "# mmafuzz campaign state: `mmafuzz run --resume DIR` continues from here\n");
    pos += (size_t)sprintf(buf + pos, "version 1\nseed %llu\ndevice %.200s\nmix %s\n", o->seed, o->device,
                           o->mix_text);
    pos += (size_t)sprintf(buf + pos, "generators %d\n", MF_GEN_VERSION);   /* (seed, index) -> case holds within one */
    if (o->model)
        pos += (size_t)sprintf(buf + pos, "model %.40s\n", o->model);
    for (int p = 0; p < o->npat; p++)
        pos += (size_t)sprintf(buf + pos, "pattern %.200s\n", o->pat[p]);
    for (int c = 0; c < o->ncorpus; c++)
        pos += (size_t)sprintf(buf + pos, "corpus %.200s\n", o->corpus[c]);
    char cs[24] = "-", ss[24] = "-";
    if (left->cases >= 0)
        snprintf(cs, sizeof cs, "%lld", left->cases);
    if (left->seconds >= 0)
        snprintf(ss, sizeof ss, "%lld", left->seconds);
    pos += (size_t)sprintf(buf + pos, "budget %s %s\n", cs, ss);
    for (int i = 0; i < n; i++)
        pos += (size_t)sprintf(buf + pos, "tile %.159s %llu\n", tiles[i].name, tiles[i].tile);
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.state", o->out);
    int rc = fs_write_atomic(path, buf, pos, 1, err, errlen);
    free(buf);
    return rc ? RUN_ERR_STORE : RUN_OK;
}

static char g_state_strings[RUN_MAX_PATTERNS + RUN_MAX_CORPUS + 4][256];

run_err run_state_read(const char *dir, run_opts *o, int have_mix, int have_dev, run_state_tile **tiles,
                       int *ntiles)
{
    char path[1100], err[600];
    snprintf(path, sizeof path, "%s/campaign.state", dir);
    size_t len;
    *tiles = NULL;
    *ntiles = 0;
    char *buf = fs_read_all(path, &len, err, sizeof err);
    if (!buf) {
        fprintf(stderr, "mmafuzz run: --resume: %s\n", err);
        return RUN_ERR_INPUT;
    }
    int ns = 0, lineno = 0, np = 0, nc = 0;
    run_err rc = RUN_OK;
    for (char *line = buf, *next; line && *line && rc == RUN_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (!line[0] || line[0] == '#')
            continue;
        char key[16], val[256], num[32];
        unsigned long long n;
        if (sscanf(line, "tile %159s %31s", val, num) == 2) {
            if (cli_parse_seed(num, &n) || !strncmp(num, "0x", 2)) {
                fprintf(stderr, "%s:%d: expected 'tile NAME COUNT' with a decimal count, got '%s'\n", path, lineno,
                        num);
                rc = RUN_ERR_INPUT;
                break;
            }
            run_state_tile *t = realloc(*tiles, (size_t)(*ntiles + 1) * sizeof *t);
            if (!t) {
                rc = RUN_ERR_NOMEM;
                break;
            }
            *tiles = t;
            snprintf(t[*ntiles].name, sizeof t[*ntiles].name, "%.159s", val);
            t[(*ntiles)++].tile = n;
        } else if (sscanf(line, "%15s %255[^\n]", key, val) == 2 && ns < (int)(sizeof g_state_strings / 256)) {
            if (!strcmp(key, "seed")) {
                unsigned long long s;
                if (cli_parse_seed(val, &s)) {
                    fprintf(stderr, "%s:%d: expected 'seed N' with a decimal or 0x hex seed, got '%s'\n", path,
                            lineno, val);
                    rc = RUN_ERR_INPUT;
                } else if (!o->seed_given) {
                    o->seed = s;
                }
            } else if (!strcmp(key, "version") && strcmp(val, "1")) {
                fprintf(stderr, "%s:%d: expected state version 1\n", path, lineno);
                rc = RUN_ERR_INPUT;
            } else if (!strcmp(key, "budget")) {
                char c[32], t[32], extra;
                long long v[2] = {-1, -1};
                int bad = sscanf(val, "%31s %31s %c", c, t, &extra) != 2;
                for (int q = 0; q < 2 && !bad; q++) {
                    const char *x = q ? t : c;
                    if (strcmp(x, "-") && cli_parse_decimal(x, &v[q]))
                        bad = 1;
                }
                if (bad) {
                    fprintf(stderr, "%s:%d: expected 'budget CASES SECONDS' (decimal numbers or '-'), got '%s'\n",
                            path, lineno, val);
                    rc = RUN_ERR_INPUT;
                } else if (!o->args.v[CLI_F_run_runs].given && !o->args.v[CLI_F_run_max_total_time].given) {
                    /* the interrupted run's budget: what was left of it (0 left of either: spent) */
                    o->runs = v[0] == 0 || v[1] == 0 ? 0 : v[0];
                    o->max_time = v[1] > 0 ? v[1] : 0;
                }
            } else if (!strcmp(key, "version")) {
            } else if (!strcmp(key, "generators")) {
                if (strtol(val, NULL, 10) != MF_GEN_VERSION)
                    fprintf(stderr, "%s:%d: note: generator table version %s, now %d: the tiles from here on are not "
                                    "those that version would give\n", path, lineno, val, MF_GEN_VERSION);
            } else if (!strcmp(key, "device") || !strcmp(key, "mix") || !strcmp(key, "pattern") ||
                       !strcmp(key, "corpus") || !strcmp(key, "model")) {
                snprintf(g_state_strings[ns], 256, "%s", val);
                const char *v = g_state_strings[ns++];
                if (!strcmp(key, "device") && !have_dev) {
                    o->device = v;
                } else if (!strcmp(key, "model") && !o->model) {
                    if (mf_arch_by_name(v) == MF_ARCH_COUNT) {
                        fprintf(stderr, "%s:%d: unknown model architecture '%s'\n", path, lineno, v);
                        rc = RUN_ERR_INPUT;
                    }
                    o->model = v;
                } else if (!strcmp(key, "mix") && !have_mix) {
                    char e[200];
                    if (gen_mix_parse(v, &o->mix, e, sizeof e)) {
                        fprintf(stderr, "%s:%d: %s\n", path, lineno, e);
                        rc = RUN_ERR_INPUT;
                    }
                } else if (!strcmp(key, "pattern") && np < RUN_MAX_PATTERNS && !o->npat) {
                    o->pat[np++] = v;
                } else if (!strcmp(key, "corpus") && nc < RUN_MAX_CORPUS && !o->ncorpus) {
                    o->corpus[nc++] = v;
                }
            } else {
                fprintf(stderr, "%s:%d: expected seed, device, model, mix, pattern, corpus, budget or tile lines\n",
                        path, lineno);
                rc = RUN_ERR_INPUT;
            }
        } else {
            fprintf(stderr, "%s:%d: expected KEY VALUE\n", path, lineno);
            rc = RUN_ERR_INPUT;
        }
    }
    free(buf);
    if (rc != RUN_OK) {
        free(*tiles);
        *tiles = NULL;
        *ntiles = 0;
        return rc;
    }
    if (!o->npat)
        o->npat = np;
    if (!o->ncorpus)
        o->ncorpus = nc;
    o->seed_given = 1;
    return RUN_OK;
}

/*
 * campaign.c - campaign definition, shards, shard state and lock (see campaign.h).
 */
#include "campaign.h"

#include "cli.h"
#include "run_fs.h"
#include "run_store.h"
#include "textline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

const char *const cp_class_names[CP_NCLASS] = {"nan-vs-number", "nan-payload", "inf", "zero-sign",
                                               "sign",          "last-bit-rounding", "ulp>1"};

int cp_class_index(const char *sig)
{
    for (int c = 0; c < CP_NCLASS; c++)
        if (!strcmp(sig, cp_class_names[c]))
            return c;
    return -1;
}

/* ------------------------------------------------------------ definition */

static size_t def_body(const cp_def *d, char *buf, size_t len)
{
    size_t pos = 0;
#define PUT(...) pos += (size_t)snprintf(buf + pos, pos < len ? len - pos : 0, __VA_ARGS__)
    PUT("version %d\nseed %llu\ndevice %s\nmodel %s\nmix %s\nruns %lld\nminimize-every %lld\ngenerators %d\n",
        CP_DEF_VERSION, d->seed, d->device, d->model[0] ? d->model : "-", d->mix, d->runs, d->minimize_every,
        d->gen_version);
    PUT("pool %s %lld\n", d->pool_hash, d->pool_cases);
    for (int i = 0; i < d->ninstr; i++)
        PUT("instr %s %d %d %d %llu\n", d->instr[i].name, d->instr[i].m, d->instr[i].n, d->instr[i].k,
            d->instr[i].tiles);
#undef PUT
    return pos;
}

static const char def_head[] = "# mmafuzz campaign definition (written once by `mmafuzz campaign init`; the id is\n"
                               "# XXH3-64 of the lines after it).  Shards: `mmafuzz run --campaign DIR -shard I/N`.\n";

static char *def_text(cp_def *d, size_t *len)
{
    size_t cap = 4096 + (size_t)d->ninstr * 256;
    char *body = malloc(cap), *text = malloc(cap + 256);
    if (!body || !text) {
        free(body);
        free(text);
        return NULL;
    }
    size_t n = def_body(d, body, cap);
    snprintf(d->id, sizeof d->id, "%016llx", (unsigned long long)XXH3_64bits(body, n));
    *len = (size_t)snprintf(text, cap + 256, "%sid %s\n%s", def_head, d->id, body);
    free(body);
    return text;
}

int cp_def_write(const char *dir, cp_def *d, char *err, size_t errlen)
{
    size_t len;
    char *text = def_text(d, &len);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.def", dir);
    int rc = fs_write_atomic(path, text, len, 0, err, errlen);
    if (rc == 1) {
        size_t olen;
        char *old = fs_read_all(path, &olen, err, errlen);
        if (!old)
            rc = -1;
        else if (olen == len && !memcmp(old, text, len))
            rc = 1;
        else {
            snprintf(err, errlen, "%s: a different campaign is defined there already (a definition is never replaced; "
                                  "choose another folder)", path);
            rc = 2;
        }
        free(old);
    }
    free(text);
    return rc;
}

/* A value of 1 to cap - 1 printable characters (spaces inside allowed when
 * spaces is set). */
static int def_text_ok(const char *s, size_t cap, int spaces)
{
    size_t n = strlen(s);
    if (!n || n >= cap || s[n - 1] == ' ')
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s < ' ' || (unsigned char)*s == 0x7f || (*s == ' ' && !spaces))
            return 0;
    return 1;
}

/* The largest tile count: tiles * M * N (cases) stays below 2^63 for every tile shape (M * N <= 2^16). */
#define DEF_TILE_MAX ((unsigned long long)LLONG_MAX >> 16)

int cp_def_read(const char *dir, cp_def *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.def", dir);
    size_t len, pos = 0;
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    static const char *const keys[] = {"id", "version", "seed", "device", "model", "mix", "runs", "minimize-every",
                                       "generators", "pool", "instr"};
    enum { K_ID, K_VERSION, K_SEED, K_DEVICE, K_MODEL, K_MIX, K_RUNS, K_MINEVERY, K_GEN, K_POOL, K_INSTR, K_N };
    int seen[K_N] = {0};
    char id[64] = "", *line;
    long lineno = 0, col = 0;
    int rc = 0, t;
#define BAD(...) do { int w_ = snprintf(err, errlen, "%s:%ld: ", path, lineno); \
                      size_t o_ = w_ > 0 && (size_t)w_ < errlen ? (size_t)w_ : 0; \
                      snprintf(err + o_, errlen - o_, __VA_ARGS__); rc = -1; } while (0)
    while (!rc && (t = tl_next(buf, len, &pos, &lineno, &line, &col)) != TL_END) {
        if (t == TL_NUL) {
            BAD("a NUL byte at column %ld (the definition is text: damaged)", col);
            break;
        }
        if (t == TL_TORN) {
            BAD("the last line is cut short (no newline at its end: the definition is written whole, so the file was "
                "damaged)");
            break;
        }
        if (!line[0] || line[0] == '#')
            continue;
        char *sp = strchr(line, ' ');
        const char *val = sp ? sp + 1 : "";
        if (sp)
            *sp = 0;
        int k = 0;
        while (k < K_N && strcmp(line, keys[k]))
            k++;
        if (k == K_N) {
            BAD("expected id, version, seed, device, model, mix, runs, minimize-every, generators, pool or instr "
                "(KEY VALUE), got '%.40s'", line);
            break;
        }
        if (k != K_INSTR && seen[k]++) {
            BAD("a second '%s' line", keys[k]);
            break;
        }
        char *f[6], tmp[400];
        unsigned long long u[4];
        if (strlen(val) >= sizeof tmp) {
            BAD("a '%s' line of %zu characters (at most %zu)", keys[k], strlen(val), sizeof tmp - 1);
            break;
        }
        snprintf(tmp, sizeof tmp, "%s", val);
        switch (k) {
        case K_ID:
            if (!tl_hex(val, 16))
                BAD("expected 'id HASH' with 16 lower-case hex digits");
            else
                snprintf(id, sizeof id, "%s", val);
            break;
        case K_VERSION:
            if (tl_decimal(val, 1000000, &u[0]) || u[0] != CP_DEF_VERSION)
                BAD("expected definition version %d", CP_DEF_VERSION);
            break;
        case K_SEED:
            if (tl_decimal(val, ULLONG_MAX, &d->seed))
                BAD("expected 'seed N' with a decimal number of at most 2^64-1 (digits only)");
            break;
        case K_DEVICE:
            if (!def_text_ok(val, sizeof d->device, 1))
                BAD("expected 'device SPEC' of 1 to %zu printable characters", sizeof d->device - 1);
            else
                snprintf(d->device, sizeof d->device, "%s", val);
            break;
        case K_MODEL:
            if (!def_text_ok(val, sizeof d->model, 0))
                BAD("expected 'model ARCH' or 'model -'");
            else
                snprintf(d->model, sizeof d->model, "%s", strcmp(val, "-") ? val : "");
            break;
        case K_MIX:
            if (!def_text_ok(val, sizeof d->mix, 0))
                BAD("expected 'mix MIX' of 1 to %zu characters without spaces", sizeof d->mix - 1);
            else
                snprintf(d->mix, sizeof d->mix, "%s", val);
            break;
        case K_RUNS:
        case K_MINEVERY:
            if (tl_decimal(val, LLONG_MAX, &u[0]) || (k == K_MINEVERY && u[0] < 1))
                BAD("expected '%s N' with a decimal number of %d to 2^63-1 (digits only)", keys[k], k == K_MINEVERY);
            else
                *(k == K_RUNS ? &d->runs : &d->minimize_every) = (long long)u[0];
            break;
        case K_GEN:
            if (tl_decimal(val, 1000000, &u[0]))
                BAD("expected 'generators N' with a decimal version");
            else
                d->gen_version = (int)u[0];
            break;
        case K_POOL:
            if (tl_split(tmp, ' ', f, 6) != 2 || !tl_hex(f[0], 32) || tl_decimal(f[1], LLONG_MAX, &u[0]))
                BAD("expected 'pool HASH CASES' with 32 lower-case hex digits and a decimal count");
            else {
                snprintf(d->pool_hash, sizeof d->pool_hash, "%s", f[0]);
                d->pool_cases = (long long)u[0];
            }
            break;
        case K_INSTR: {
            if (d->ninstr >= CP_MAX_INSTR) {
                BAD("more than %d instr lines", CP_MAX_INSTR);
                break;
            }
            cp_instr *ci = &d->instr[d->ninstr];
            int nf = tl_split(tmp, ' ', f, 6);
            if (nf != 5 || !def_text_ok(f[0], sizeof ci->name, 0) || tl_decimal(f[1], 65536, &u[0]) ||
                tl_decimal(f[2], 65536, &u[1]) || tl_decimal(f[3], 65536, &u[2]) || !u[0] || !u[1] ||
                u[0] * u[1] > 65536 || tl_decimal(f[4], DEF_TILE_MAX, &u[3])) {
                BAD("expected 'instr NAME M N K TILES' with M, N and K decimal numbers of 1 to 65536 (M x N at "
                    "most 65536) and TILES of at most %llu", DEF_TILE_MAX);
                break;
            }
            for (int q = 0; q < d->ninstr && !rc; q++)
                if (!strcmp(d->instr[q].name, f[0]))
                    BAD("a second 'instr %s' line", f[0]);
            if (rc)
                break;
            snprintf(ci->name, sizeof ci->name, "%s", f[0]);
            ci->m = (int)u[0];
            ci->n = (int)u[1];
            ci->k = (int)u[2];
            ci->tiles = u[3];
            d->ninstr++;
            break;
        }
        }
    }
#undef BAD
    free(buf);
    if (rc)
        return rc;
    static const int need[] = {K_ID, K_VERSION, K_SEED, K_DEVICE, K_MIX, K_RUNS, K_MINEVERY, K_GEN, K_POOL};
    for (size_t q = 0; q < sizeof need / sizeof *need; q++)
        if (!seen[need[q]]) {
            snprintf(err, errlen, "%s:%ld: expected a '%s' line (the definition is incomplete)", path, lineno + 1,
                     keys[need[q]]);
            return -1;
        }
    if (!d->ninstr) {
        snprintf(err, errlen, "%s:%ld: expected at least one 'instr' line", path, lineno + 1);
        return -1;
    }
    size_t tl;
    char *text = def_text(d, &tl);
    free(text);
    if (strcmp(id, d->id)) {
        snprintf(err, errlen, "%s: the id %s is not the hash of the definition (%s): the file was edited", path, id,
                 d->id);
        return -1;
    }
    /* the frozen pool */
    snprintf(path, sizeof path, "%s/pool.vec", dir);
    char *pool = fs_read_all(path, &len, err, errlen);
    if (!pool)
        return -1;
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(pool, len));
    free(pool);
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", c.digest[i]);
    if (strcmp(hex, d->pool_hash)) {
        snprintf(err, errlen, "%s: its hash is %s, the definition says %s: the frozen pool was changed", path, hex,
                 d->pool_hash);
        return -1;
    }
    return 0;
}

int cp_tile_sampled(const cp_def *d, const char *name, unsigned long long tile)
{
    if (d->minimize_every <= 1)
        return 1;
    unsigned long long key[2] = {d->seed, tile};
    uint64_t h = XXH3_64bits_withSeed(key, sizeof key, XXH3_64bits(name, strlen(name)));
    return h % (uint64_t)d->minimize_every == 0;
}

/* ------------------------------------------------------------ shards */

unsigned long long cp_shard_tiles(unsigned long long T, int i, int n)
{
    return (unsigned long long)i < T ? (T - (unsigned long long)i + (unsigned long long)n - 1) / (unsigned long long)n
                                     : 0;
}

int cp_parse_shard(const char *s, int *i, int *n)
{
    long long a, b;
    char x[32], y[32];
    const char *sep = strchr(s, '/');
    size_t sl = 1;
    if (!sep) {
        sep = strstr(s, "-of-");
        sl = 4;
    }
    if (!sep || (size_t)(sep - s) >= sizeof x || strlen(sep + sl) >= sizeof y)
        return -1;
    memcpy(x, s, (size_t)(sep - s));
    x[sep - s] = 0;
    snprintf(y, sizeof y, "%s", sep + sl);
    if (cli_parse_decimal(x, &a) || cli_parse_decimal(y, &b) || a < 0 || b < 1 || a >= b || b > 1000000)
        return -1;
    *i = (int)a;
    *n = (int)b;
    return 0;
}

void cp_shard_dir(const char *dir, int i, int n, char *buf, size_t len)
{
    snprintf(buf, len, "%s/shards/%d-of-%d", dir, i, n);
}

int cp_lock_shard(const char *shard_dir, char *err, size_t errlen)
{
    char path[1100], who[300];
    if (strlen(shard_dir) > ST_ROOT_MAX) {
        snprintf(err, errlen, "%.60s...: a folder name of %zu characters; a shard's is at most %d", shard_dir,
                 strlen(shard_dir), ST_ROOT_MAX);
        errno = ENAMETOOLONG;
        return -1;
    }
    /* DIR/shards/I-of-N and its stats folder are the campaign's own folders, not links out of it */
    snprintf(path, sizeof path, "%s", shard_dir);
    for (int up = 0; up < 2 && strrchr(path, '/'); up++)
        *strrchr(path, '/') = 0;
    if (fs_mkdir_below(path, shard_dir, err, errlen))
        return -1;
    snprintf(path, sizeof path, "%s/stats", shard_dir);
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        snprintf(err, errlen, "%s: a symbolic link (the store's files are never written through links)", path);
        errno = ELOOP;
        return -1;
    }
    snprintf(path, sizeof path, "%s/.shard-lock", shard_dir);
    int stale = 0;
    int fd = fs_lock(path, 0, who, sizeof who, &stale);
    if (fd < 0) {
        int e = errno;
        if (e == EWOULDBLOCK)
            snprintf(err, errlen, "%s: another process runs this shard (%s); one process per shard", shard_dir, who);
        else
            snprintf(err, errlen, "%s: cannot lock (%s)", path, fs_strerror(e));
        errno = e;
        return -1;
    }
    if (stale)
        fprintf(stderr, "mmafuzz: %s: the lock of %s, which is no longer running, taken over\n", shard_dir, who);
    return fd;
}

/* ------------------------------------------------------------ state */

/* shard.state, read strictly (textline.h): every line whole and
 * well-formed, each key once (instr once per instruction, class and bucket
 * once per instruction, after its instr line), numbers of digits only that
 * fit; anything else is a FILE:LINE error and nothing of the file is taken. */
static int state_parse(char *buf, size_t len, const char *path, cp_state *st, char *err, size_t errlen)
{
    long lineno = 0, col = 0;
    size_t pos = 0;
    int have = 0, rc = 0, t, cls_seen = 0;
    char *line;
#define BAD(...) do { int w_ = snprintf(err, errlen, "%s:%ld: ", path, lineno); \
                      size_t o_ = w_ > 0 && (size_t)w_ < errlen ? (size_t)w_ : 0; \
                      snprintf(err + o_, errlen - o_, __VA_ARGS__); rc = -1; } while (0)
    while (!rc && (t = tl_next(buf, len, &pos, &lineno, &line, &col)) != TL_END) {
        if (t == TL_NUL) {
            BAD("a NUL byte at column %ld (the state is text: damaged)", col);
            break;
        }
        if (t == TL_TORN) {
            BAD("the last line is cut short (no newline at its end: the state is replaced whole, so the file was "
                "damaged)");
            break;
        }
        if (!line[0] || line[0] == '#')
            continue;
        char *f[5];
        int nf = tl_split(line, ' ', f, 5);
        unsigned long long u[3];
        const char *key = f[0];
        cp_istate *cur = st->ninstr ? &st->in[st->ninstr - 1] : NULL;
        if (!strcmp(key, "version")) {
            if (have & 1)
                BAD("a second 'version' line");
            else if (nf != 2 || tl_decimal(f[1], 1000000, &u[0]))
                BAD("expected 'version %d'", CP_STATE_VERSION);
            else if (u[0] != CP_STATE_VERSION)
                BAD("expected version %d, got %llu (a state of an older mmafuzz keeps no bucket counts: run the "
                    "campaign again in a fresh folder)", CP_STATE_VERSION, u[0]);
            have |= 1;
        } else if (!strcmp(key, "campaign")) {
            if (have & 2)
                BAD("a second 'campaign' line");
            else if (nf != 2 || !tl_hex(f[1], 16))
                BAD("expected 'campaign ID' with 16 lower-case hex digits");
            else
                snprintf(st->id, sizeof st->id, "%s", f[1]);
            have |= 2;
        } else if (!strcmp(key, "shard")) {
            if (have & 4)
                BAD("a second 'shard' line");
            else if (nf != 3 || tl_decimal(f[1], 999999, &u[0]) || tl_decimal(f[2], 1000000, &u[1]) || u[0] >= u[1])
                BAD("expected 'shard I N' with 0 <= I < N <= 1000000");
            else {
                st->shard = (int)u[0];
                st->nshards = (int)u[1];
            }
            have |= 4;
        } else if (!strcmp(key, "instr")) {
            if (nf != 5 || !f[1][0] || strlen(f[1]) >= sizeof st->in[0].name ||
                tl_decimal(f[2], (unsigned long long)LLONG_MAX >> 16, &u[0]) ||
                tl_decimal(f[3], LLONG_MAX, &u[1]) || tl_decimal(f[4], LLONG_MAX, &u[2])) {
                BAD("expected 'instr NAME DONE CASES MISMATCHES' with decimal numbers (DONE at most %llu, the others "
                    "at most 2^63-1)", (unsigned long long)LLONG_MAX >> 16);
                break;
            }
            if (st->ninstr >= CP_MAX_INSTR) {
                BAD("more than %d instr lines", CP_MAX_INSTR);
                break;
            }
            for (int q = 0; q < st->ninstr && !rc; q++)
                if (!strcmp(st->in[q].name, f[1]))
                    BAD("a second 'instr %s' line", f[1]);
            if (rc)
                break;
            cp_istate *s2 = &st->in[st->ninstr++];
            memset(s2, 0, sizeof *s2);
            snprintf(s2->name, sizeof s2->name, "%s", f[1]);
            s2->done = u[0];
            s2->cases = (long long)u[1];
            s2->mismatches = (long long)u[2];
            cls_seen = 0;
        } else if (!strcmp(key, "class")) {
            int c = nf == 5 ? cp_class_index(f[2]) : -1;
            if (c < 0 || tl_decimal(f[3], LLONG_MAX, &u[0]) || (!tl_hex(f[4], 32) && strcmp(f[4], "-")))
                BAD("expected 'class NAME CLASS COUNT HASH' with a signature class, a decimal count and 32 hex "
                    "digits or '-'");
            else if (!cur || strcmp(f[1], cur->name))
                BAD("a class line of %s not after its instr line", f[1]);
            else if (cls_seen & (1 << c))
                BAD("a second 'class %s %s' line", f[1], f[2]);
            else {
                cls_seen |= 1 << c;
                cur->cls[c] = (long long)u[0];
                snprintf(cur->cls_hex[c], 33, "%.32s", strcmp(f[4], "-") ? f[4] : "");
            }
        } else if (!strcmp(key, "bucket")) {
            if (nf < 4 || !tl_hex(f[2], 16) || tl_decimal(f[3], LLONG_MAX, &u[0]))
                BAD("expected 'bucket NAME ID COUNT WORDS' with 16 hex digits and a decimal count");
            else if (!cur || strcmp(f[1], cur->name))
                BAD("a bucket line of %s not after its instr line", f[1]);
            else if (cp_state_bucket_find(st, st->ninstr - 1, f[2]) >= 0)
                BAD("a second 'bucket %s %s' line", f[1], f[2]);
            else if (cp_state_bucket_add(st, st->ninstr - 1, f[2], (long long)u[0], nf >= 5 ? f[4] : ""))
                BAD("out of memory");
        } else {
            BAD("expected version %d, campaign ID, shard I N, 'instr NAME DONE CASES MISMATCHES', 'class NAME CLASS "
                "COUNT HASH' or 'bucket NAME ID COUNT WORDS'", CP_STATE_VERSION);
        }
    }
#undef BAD
    if (!rc && (have & 6) != 6) {
        snprintf(err, errlen, "%s:%ld: expected campaign and shard lines (the state is incomplete)", path, lineno + 1);
        rc = -1;
    }
    return rc;
}

int cp_state_read_file(const char *path, cp_state *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    size_t len;
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    int rc = state_parse(buf, len, path, st, err, errlen);
    free(buf);
    return rc;
}

int cp_state_read(const char *shard_dir, const cp_def *d, int i, int n, cp_state *st, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/shard.state", shard_dir);
    int rc;
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        memset(st, 0, sizeof *st);
        snprintf(st->id, sizeof st->id, "%s", d->id);
        st->shard = i;
        st->nshards = n;
        st->ninstr = d->ninstr;
        for (int q = 0; q < d->ninstr; q++)
            snprintf(st->in[q].name, sizeof st->in[q].name, "%s", d->instr[q].name);
        return 1;
    }
    cp_state *tmp = malloc(sizeof *tmp);
    if (!tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if ((rc = cp_state_read_file(path, tmp, err, errlen))) {
        cp_state_free(tmp);
        free(tmp);
        return rc;
    }
    if (strcmp(tmp->id, d->id) || tmp->shard != i || tmp->nshards != n) {
        snprintf(err, errlen, "%s: the state of campaign %s shard %d/%d, not of campaign %s shard %d/%d", path, tmp->id,
                 tmp->shard, tmp->nshards, d->id, i, n);
        cp_state_free(tmp);
        free(tmp);
        return -1;
    }
    /* in the definition's order (the bucket lines follow their instruction) */
    memset(st, 0, sizeof *st);
    snprintf(st->id, sizeof st->id, "%s", tmp->id);
    st->shard = tmp->shard;
    st->nshards = tmp->nshards;
    st->ninstr = d->ninstr;
    rc = 0;
    for (int q = 0; q < d->ninstr && !rc; q++) {
        int found = -1;
        for (int r = 0; r < tmp->ninstr; r++)
            if (!strcmp(tmp->in[r].name, d->instr[q].name))
                found = r;
        if (found < 0) {
            memset(&st->in[q], 0, sizeof st->in[q]);
            snprintf(st->in[q].name, sizeof st->in[q].name, "%s", d->instr[q].name);
        } else {
            st->in[q] = tmp->in[found];
            for (size_t b = 0; b < tmp->nbk && !rc; b++)
                if (tmp->bk[b].instr == found && cp_state_bucket_add(st, q, tmp->bk[b].id, tmp->bk[b].count,
                                                                     tmp->bk[b].words)) {
                    snprintf(err, errlen, "%s: out of memory", path);
                    rc = -1;
                }
        }
        if (rc)
            break;
        if (st->in[q].done > cp_shard_tiles(d->instr[q].tiles, i, n)) {
            snprintf(err, errlen, "%s: %s: %llu tiles done, more than the shard's %llu", path, st->in[q].name,
                     st->in[q].done, cp_shard_tiles(d->instr[q].tiles, i, n));
            rc = -1;
        }
    }
    cp_state_free(tmp);
    free(tmp);
    return rc;
}

long cp_state_bucket_find(const cp_state *st, int q, const char *id)
{
    for (size_t b = 0; b < st->nbk; b++)
        if (st->bk[b].instr == q && !strcmp(st->bk[b].id, id))
            return (long)b;
    return -1;
}

int cp_state_bucket_reserve(cp_state *st, size_t extra)
{
    if (st->nbk + extra <= st->capbk)
        return 0;
    size_t cap = st->capbk ? st->capbk : 16;
    while (cap < st->nbk + extra)
        cap *= 2;
    cp_bucket *p = realloc(st->bk, cap * sizeof *p);
    if (!p)
        return -1;
    st->bk = p;
    st->capbk = cap;
    return 0;
}

int cp_state_bucket_add(cp_state *st, int q, const char *id, long long n, const char *words)
{
    long b = cp_state_bucket_find(st, q, id);
    if (b >= 0) {
        st->bk[b].count += n;
        return 0;
    }
    if (cp_state_bucket_reserve(st, 1))
        return -1;
    cp_bucket *e = &st->bk[st->nbk++];
    e->instr = q;
    snprintf(e->id, sizeof e->id, "%s", id);
    e->count = n;
    snprintf(e->words, sizeof e->words, "%s", words ? words : "");
    for (char *p = e->words; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return 0;
}

void cp_state_free(cp_state *st)
{
    free(st->bk);
    st->bk = NULL;
    st->nbk = st->capbk = 0;
}

int cp_state_write(const char *shard_dir, const cp_state *st, char *err, size_t errlen)
{
    size_t cap = 1024 + (size_t)st->ninstr * (300 + CP_NCLASS * 260) + st->nbk * (sizeof(cp_bucket) + 200);
    char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "shard.state: out of memory");
        return -1;
    }
    size_t pos = 0;
#define PUT(...) pos += (size_t)snprintf(buf + pos, cap - pos, __VA_ARGS__)
    PUT("# mmafuzz shard state: tiles done, cases, disagreements per class and per bucket, written together after "
        "the findings they count\nversion %d\ncampaign %s\nshard %d %d\n", CP_STATE_VERSION, st->id, st->shard, st->nshards);
    for (int q = 0; q < st->ninstr; q++) {
        const cp_istate *s = &st->in[q];
        PUT("instr %s %llu %lld %lld\n", s->name, s->done, s->cases, s->mismatches);
        for (int c = 0; c < CP_NCLASS; c++)
            if (s->cls[c] || s->cls_hex[c][0])
                PUT("class %s %s %lld %s\n", s->name, cp_class_names[c], s->cls[c],
                    s->cls_hex[c][0] ? s->cls_hex[c] : "-");
        for (size_t b = 0; b < st->nbk; b++)
            if (st->bk[b].instr == q)
                PUT("bucket %s %s %lld %s\n", s->name, st->bk[b].id, st->bk[b].count, st->bk[b].words);
    }
#undef PUT
    char path[1100];
    snprintf(path, sizeof path, "%s/shard.state", shard_dir);
    int rc = fs_write_atomic_at("state.write", path, buf, pos, 1, err, errlen);
    free(buf);
    if (rc == 0 && fs_sync_dir(path) != 0) {
        snprintf(err, errlen, "%s: cannot flush the folder (%s)", shard_dir, strerror(errno));
        return -1;
    }
    return rc ? -1 : 0;
}

void cp_run_id(char *buf, size_t len)
{
    char host[64] = "host";
    const char *h = getenv("MMAFUZZ_HOSTNAME");  /* as the stats records (run_stats.c) */
    if (h && *h)
        snprintf(host, sizeof host, "%s", h);
    else
        gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'))
            *p = '_';
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    unsigned long long r = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32);
    unsigned char rnd[4] = {0};
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, rnd, sizeof rnd) != (ssize_t)sizeof rnd)
            memset(rnd, 0, sizeof rnd);
        close(fd);
    }
    snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ-%s-%ld-%02x%02x%02x%02x%04llx", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, host, (long)getpid(), rnd[0], rnd[1], rnd[2], rnd[3],
             r & 0xffff);
}

/*
 * campaign.c - campaign definition, shards, shard state and lock (see campaign.h).
 */
#include "campaign.h"

#include "cli.h"
#include "run_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

int cp_def_read(const char *dir, cp_def *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    char path[1100];
    snprintf(path, sizeof path, "%s/campaign.def", dir);
    size_t len;
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    char id[64] = "";
    int lineno = 0, rc = 0, have = 0;
    for (char *line = buf, *next; line && *line && !rc; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (!line[0] || line[0] == '#')
            continue;
        int v;
        char s1[200];
        cp_instr *ci = &d->instr[d->ninstr];
        if (sscanf(line, "id %63s", id) == 1)
            have |= 1;
        else if (sscanf(line, "version %d", &v) == 1) {
            if (v != CP_DEF_VERSION) {
                snprintf(err, errlen, "%s:%d: expected definition version %d", path, lineno, CP_DEF_VERSION);
                rc = -1;
            }
        } else if (sscanf(line, "seed %llu", &d->seed) == 1)
            have |= 2;
        else if (!strncmp(line, "device ", 7))
            snprintf(d->device, sizeof d->device, "%s", line + 7), have |= 4;
        else if (sscanf(line, "model %39s", d->model) == 1) {
            if (!strcmp(d->model, "-"))
                d->model[0] = 0;
        } else if (!strncmp(line, "mix ", 4))
            snprintf(d->mix, sizeof d->mix, "%s", line + 4);
        else if (sscanf(line, "runs %lld", &d->runs) == 1)
            ;
        else if (sscanf(line, "minimize-every %lld", &d->minimize_every) == 1)
            ;
        else if (sscanf(line, "generators %d", &d->gen_version) == 1)
            ;
        else if (sscanf(line, "pool %32s %lld", d->pool_hash, &d->pool_cases) == 2)
            ;
        else if (d->ninstr < CP_MAX_INSTR &&
                 sscanf(line, "instr %159s %d %d %d %llu", ci->name, &ci->m, &ci->n, &ci->k, &ci->tiles) == 5 &&
                 ci->m > 0 && ci->n > 0)
            d->ninstr++;
        else {
            snprintf(s1, sizeof s1, "%.40s", line);
            snprintf(err, errlen, "%s:%d: expected id, version, seed, device, model, mix, runs, minimize-every, "
                                  "generators, pool or 'instr NAME M N K TILES', got '%s'", path, lineno, s1);
            rc = -1;
        }
    }
    free(buf);
    if (rc)
        return rc;
    if (have != 7 || !d->ninstr || d->minimize_every < 1) {
        snprintf(err, errlen, "%s: expected id, seed, device, minimize-every and at least one instr line", path);
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

static int state_parse(char *buf, const char *path, cp_state *st, char *err, size_t errlen)
{
    int lineno = 0, have = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (!line[0] || line[0] == '#')
            continue;
        int v;
        char name[160], cls[40], hex[40];
        long long a, b;
        unsigned long long done;
        if (sscanf(line, "version %d", &v) == 1) {
            if (v == CP_STATE_VERSION)
                continue;
            snprintf(err, errlen, "%s:%d: expected version %d, got %d (a state of an older mmafuzz keeps no bucket "
                                  "counts: run the campaign again in a fresh folder)", path, lineno, CP_STATE_VERSION, v);
            return -1;
        }
        if (sscanf(line, "campaign %16s", st->id) == 1) {
            have |= 1;
            continue;
        }
        if (sscanf(line, "shard %d %d", &st->shard, &st->nshards) == 2) {
            have |= 2;
            continue;
        }
        if (sscanf(line, "instr %159s %llu %lld %lld", name, &done, &a, &b) == 4 && st->ninstr < CP_MAX_INSTR) {
            cp_istate *s = &st->in[st->ninstr++];
            memset(s, 0, sizeof *s);
            snprintf(s->name, sizeof s->name, "%s", name);
            s->done = done;
            s->cases = a;
            s->mismatches = b;
            continue;
        }
        if (sscanf(line, "class %159s %39s %lld %39s", name, cls, &a, hex) == 4 && st->ninstr &&
            !strcmp(name, st->in[st->ninstr - 1].name) && cp_class_index(cls) >= 0 &&
            (strlen(hex) == 32 || !strcmp(hex, "-"))) {
            int c = cp_class_index(cls);
            st->in[st->ninstr - 1].cls[c] = a;
            snprintf(st->in[st->ninstr - 1].cls_hex[c], 33, "%.32s", strcmp(hex, "-") ? hex : "");
            continue;
        }
        int wpos = 0;
        char bid[40];
        if (sscanf(line, "bucket %159s %39s %lld %n", name, bid, &a, &wpos) == 3 && wpos > 0 && st->ninstr &&
            !strcmp(name, st->in[st->ninstr - 1].name) && strlen(bid) == 16 && strspn(bid, "0123456789abcdef") == 16 &&
            a >= 0 && cp_state_bucket_find(st, st->ninstr - 1, bid) < 0) {
            if (cp_state_bucket_add(st, st->ninstr - 1, bid, a, line + wpos)) {
                snprintf(err, errlen, "%s:%d: out of memory", path, lineno);
                return -1;
            }
            continue;
        }
        snprintf(err, errlen, "%s:%d: expected version %d, campaign ID, shard I N, 'instr NAME DONE CASES "
                              "MISMATCHES', 'class NAME CLASS COUNT HASH' or 'bucket NAME ID COUNT WORDS' (after its "
                              "instr line, each bucket once)",
                 path, lineno, CP_STATE_VERSION);
        return -1;
    }
    if (have != 3) {
        snprintf(err, errlen, "%s: expected campaign and shard lines", path);
        return -1;
    }
    return 0;
}

int cp_state_read_file(const char *path, cp_state *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    size_t len;
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    int rc = state_parse(buf, path, st, err, errlen);
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

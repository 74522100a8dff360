/*
 * buckets.c - the buckets of a campaign and root/buckets.tsv (buckets.h).
 */
#include "buckets.h"

#include "grow.h"
#include "run_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

typedef struct bk_entry {
    char id[RF_BUCKET_ID];
    char instr[160];
    char sig[64];
    char words[300];
    long long count;  /* as read from the file */
    long long delta;  /* sightings by this process not yet flushed */
    int filed;        /* filed by this process */
    int known;        /* listed in buckets.tsv when opened (or by an earlier flush) */
    int seen;         /* seen by this process */
} bk_entry;

struct rf_buckets {
    char root[1024];
    int per_bucket;
    bk_entry *e;
    size_t n, cap;
    long long seen, fresh, counted_only;
};

static bk_entry *find(rf_buckets *bs, const char *id)
{
    for (size_t i = 0; i < bs->n; i++)
        if (!strcmp(bs->e[i].id, id))
            return &bs->e[i];
    return NULL;
}

static bk_entry *add(rf_buckets *bs, const char *id)
{
    if (grow_room(&bs->e, &bs->cap, bs->n, sizeof *bs->e))
        return NULL;
    bk_entry *e = &bs->e[bs->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", id);
    return e;
}

int rf_buckets_read(const char *path, int (*fn)(const rf_bucket_line *l, void *ctx), void *ctx, char *err,
                    size_t errlen)
{
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return 1;
    size_t len;
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    rf_bucket_line *v = NULL;
    size_t n = 0, cap = 0;
    long lineno = 0;
    int rc = 0;
    const char *nul = memchr(buf, 0, len);
    for (char *line = buf, *next; line < buf + len && rc == 0; line = next) {
        lineno++;
        next = memchr(line, '\n', (size_t)(buf + len - line));
        const char *why = NULL;
        if (nul && nul >= line && (!next || nul < next))
            why = "a NUL byte (not a buckets file, or damaged)";
        else if (!next)
            why = "the line is cut short (no newline at its end)";
        if (!why) {
            *next++ = 0;
            if (!line[0] || line[0] == '#')
                continue;
            char *f[5] = {line, NULL, NULL, NULL, NULL};
            int k = 1;
            for (; k < 5 && (f[k] = strchr(f[k - 1], '\t')) != NULL; k++)
                *f[k]++ = 0;
            long long c = 0;
            int ok = k == 5 && !strchr(f[4], '\t') && strlen(f[0]) == RF_BUCKET_ID - 1 && f[1][0] && f[2][0];
            for (const char *p = f[0]; ok && *p; p++)
                ok = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f');
            for (const char *p = f[1]; ok && *p; p++) {
                ok = *p >= '0' && *p <= '9' && c <= (LLONG_MAX - (*p - '0')) / 10;
                c = ok ? c * 10 + (*p - '0') : c;
            }
            for (size_t q = 0; ok && q < n; q++)
                if (!strcmp(v[q].id, f[0]))
                    why = "a bucket listed twice";
            if (!ok)
                why = "expected ID<TAB>COUNT<TAB>INSTRUCTION<TAB>SIGNATURE<TAB>EXPLANATION (ID 16 hex digits, "
                      "COUNT decimal digits up to 2^63-1)";
            if (!why) {
                if (grow_room(&v, &cap, n, sizeof *v)) {
                    snprintf(err, errlen, "%s: out of memory", path);
                    rc = -1;
                    break;
                }
                v[n++] = (rf_bucket_line){f[0], f[2], f[3], f[4], c, lineno};
            }
        }
        if (why) {
            snprintf(err, errlen, "%s:%ld: %s", path, lineno, why);
            rc = -1;
        }
    }
    for (size_t q = 0; q < n && rc == 0; q++)
        rc = fn(&v[q], ctx);
    free(v);
    free(buf);
    return rc;
}

static int take_line(const rf_bucket_line *l, void *vctx)
{
    rf_buckets *bs = vctx;
    bk_entry *e = find(bs, l->id);
    if (!e && !(e = add(bs, l->id)))
        return -1;
    e->count = l->count;
    e->known = 1;
    snprintf(e->instr, sizeof e->instr, "%s", l->instr);
    snprintf(e->sig, sizeof e->sig, "%s", l->sig);
    snprintf(e->words, sizeof e->words, "%s", l->words);
    return 0;
}

/* Read buckets.tsv into bs (counts as in the file; known = 1). */
static int read_tsv(rf_buckets *bs, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/buckets.tsv", bs->root);
    int rc = rf_buckets_read(path, take_line, bs, err, errlen);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "%s: out of memory", path);
    return rc < 0 ? -1 : 0;
}

rf_buckets *rf_buckets_open(const char *root, int per_bucket, char *err, size_t errlen)
{
    rf_buckets *bs = calloc(1, sizeof *bs);
    if (!bs) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(bs->root, sizeof bs->root, "%s", root);
    bs->per_bucket = per_bucket > 0 ? per_bucket : 4;
    if (read_tsv(bs, err, errlen)) {
        rf_buckets_close(bs);
        return NULL;
    }
    return bs;
}

void rf_buckets_close(rf_buckets *bs)
{
    if (!bs)
        return;
    free(bs->e);
    free(bs);
}

int rf_buckets_known(const rf_buckets *bs, const char *id)
{
    bk_entry *e = find((rf_buckets *)bs, id);
    return e && e->instr[0];
}

int rf_buckets_count(rf_buckets *bs, const char *instr, const rf_bucket *b, long long n, int *is_new)
{
    if (is_new)
        *is_new = 0;
    bk_entry *e = find(bs, b->id);
    if (!e && !(e = add(bs, b->id)))
        return -1;
    if (!e->instr[0]) {
        snprintf(e->instr, sizeof e->instr, "%s", instr);
        const char *s = strchr(b->key, '|');
        snprintf(e->sig, sizeof e->sig, "%.*s", s ? (int)strcspn(s + 1, "|") : 0, s ? s + 1 : "");
        snprintf(e->words, sizeof e->words, "%s", b->words);
        for (char *p = e->words; *p; p++)
            if (*p == '\t' || *p == '\n')
                *p = ' ';
    }
    e->delta += n;
    bs->counted_only += n;  /* until taken */
    if (!e->seen) {
        e->seen = 1;
        bs->seen++;
        if (!e->known) {
            bs->fresh++;
            if (is_new)
                *is_new = 1;
        }
    }
    return 0;
}

int rf_buckets_take(rf_buckets *bs, const rf_bucket *b)
{
    if (!b->id[0])
        return 1;
    bk_entry *e = find(bs, b->id);
    if (!e || e->filed >= bs->per_bucket)
        return 0;
    e->filed++;
    bs->counted_only--;
    return 1;
}

long long rf_buckets_seen(const rf_buckets *bs) { return bs->seen; }
long long rf_buckets_new(const rf_buckets *bs) { return bs->fresh; }
long long rf_buckets_counted_only(const rf_buckets *bs) { return bs->counted_only; }

int rf_buckets_flush(rf_buckets *bs, char *err, size_t errlen)
{
    int dirty = 0;
    for (size_t i = 0; i < bs->n; i++)
        dirty |= bs->e[i].delta != 0;
    if (!dirty)
        return 0;
    char lock[1100], path[1100];
    snprintf(lock, sizeof lock, "%s/.buckets.lock", bs->root);
    snprintf(path, sizeof path, "%s/buckets.tsv", bs->root);
    int fd = fs_open_nofollow(lock, O_RDWR | O_CREAT, 0666);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        snprintf(err, errlen, "%s: cannot lock (%s)", lock, fs_strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    /* what other processes wrote meanwhile: counts from the file, plus ours */
    int was_known[4096];
    size_t nk = bs->n < 4096 ? bs->n : 4096;
    for (size_t i = 0; i < nk; i++)
        was_known[i] = bs->e[i].known;
    int rc = read_tsv(bs, err, errlen);
    for (size_t i = 0; i < nk; i++)
        bs->e[i].known = was_known[i];  /* "new" is relative to the file as first opened */
    size_t cap = 256 + bs->n * 600, len = 0;
    char *text = rc ? NULL : malloc(cap);
    if (!text) {
        if (!rc)
            snprintf(err, errlen, "out of memory");
        flock(fd, LOCK_UN);
        close(fd);
        return -1;
    }
    len += (size_t)snprintf(text + len, cap - len,
                            "# mmafuzz buckets: id, sightings, instruction, signature class, explanation\n");
    for (size_t i = 0; i < bs->n; i++) {
        bk_entry *e = &bs->e[i];
        int n = snprintf(text + len, cap - len, "%s\t%lld\t%s\t%s\t%s\n", e->id, e->count + e->delta, e->instr,
                         e->sig, e->words);
        if (n > 0 && (size_t)n < cap - len)
            len += (size_t)n;
    }
    rc = fs_write_atomic(path, text, len, 1, err, errlen);
    if (rc == 0)
        for (size_t i = 0; i < bs->n; i++) {
            bs->e[i].count += bs->e[i].delta;
            bs->e[i].delta = 0;
        }
    free(text);
    flock(fd, LOCK_UN);
    close(fd);
    return rc ? -1 : 0;
}

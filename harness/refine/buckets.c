/*
 * buckets.c - the buckets of a campaign and root/buckets.tsv (buckets.h).
 */
#include "buckets.h"

#include "run_fs.h"

#include <errno.h>
#include <fcntl.h>
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
    if (bs->n == bs->cap) {
        size_t cap = bs->cap ? 2 * bs->cap : 64;
        bk_entry *e = realloc(bs->e, cap * sizeof *e);
        if (!e)
            return NULL;
        bs->e = e;
        bs->cap = cap;
    }
    bk_entry *e = &bs->e[bs->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", id);
    return e;
}

/* Read buckets.tsv into bs (counts as in the file; known = 1). */
static int read_tsv(rf_buckets *bs, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/buckets.tsv", bs->root);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : (snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = 0;
        char *id = strtok(line, "\t"), *cnt = strtok(NULL, "\t"), *in = strtok(NULL, "\t"),
             *sig = strtok(NULL, "\t"), *words = strtok(NULL, "");
        if (!id || !cnt || strlen(id) != RF_BUCKET_ID - 1)
            continue;  /* a line that does not parse is dropped at the next write */
        bk_entry *e = find(bs, id);
        if (!e && !(e = add(bs, id))) {
            fclose(f);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        e->count = atoll(cnt);
        e->known = 1;
        if (in)
            snprintf(e->instr, sizeof e->instr, "%s", in);
        if (sig)
            snprintf(e->sig, sizeof e->sig, "%s", sig);
        if (words)
            snprintf(e->words, sizeof e->words, "%s", words);
    }
    fclose(f);
    return 0;
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
    int fd = open(lock, O_RDWR | O_CREAT, 0666);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        snprintf(err, errlen, "%s: cannot lock (%s)", lock, strerror(errno));
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

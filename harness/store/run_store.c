/*
 * run_store.c - the mismatch store and its reader (see run_store.h).
 */
#include "run_store.h"

#include "grow.h"
#include "run_fs.h"
#include "vecfile.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int st_canonical(const mf_instr *in, const mf_case *cs, char *buf, size_t len)
{
    int n = snprintf(buf, len, "mmafuzz-case %d\n%s\n", ST_FORMAT_VERSION, in->name);
    if (n < 0 || (size_t)n >= len)
        return -1;
    int m = mf_vec_format_case(in, cs, NULL, buf + n, len - (size_t)n);
    if (m < 0 || (size_t)(n + m + 1) >= len)
        return -1;
    buf[n + m] = '\n';
    buf[n + m + 1] = 0;
    return n + m + 1;
}

void st_hash(const mf_instr *in, const mf_case *cs, char hex[ST_HASH_HEX])
{
    char buf[8192];
    int n = st_canonical(in, cs, buf, sizeof buf);
    XXH128_hash_t h = XXH3_128bits(buf, n > 0 ? (size_t)n : 0);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", c.digest[i]);
}

void st_path(const char *root, const mf_instr *in, const char *hex, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s/%s.vec", root, in->name, hex);  /* name is ARCH/QUALIFIER */
}

const char *st_error_name(st_error e)
{
    switch (e) {
    case ST_OK: return "ok";
    case ST_ERR_IO: return "input/output error";
    case ST_ERR_FULL: return "disk full";
    case ST_ERR_READONLY: return "not writable";
    case ST_ERR_NOMEM: return "out of memory";
    }
    return "unknown error";
}

/* The code of a failed file-system call's errno. */
static st_error from_errno(int e)
{
    if (e == ENOSPC || e == EFBIG
#ifdef EDQUOT
        || e == EDQUOT
#endif
    )
        return ST_ERR_FULL;
    if (e == EACCES || e == EPERM || e == EROFS)
        return ST_ERR_READONLY;
    if (e == ENOMEM)
        return ST_ERR_NOMEM;
    return ST_ERR_IO;
}

/* Record the store's first error and return it. */
static st_error fail(store *s, st_error e)
{
    if (s->error == ST_OK)
        s->error = e;
    return e;
}

/* ------------------------------------------------------------ index */

static st_entry *add_entry(store *s, const char *hex)
{
    if (grow_room(&s->e, &s->cap, s->n, sizeof *s->e))
        return NULL;
    st_entry *e = &s->e[s->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->hex, sizeof e->hex, "%s", hex);
    return e;
}

st_entry *st_find(store *s, const char *hex)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->e[i].hex, hex))
            return &s->e[i];
    return NULL;
}

static int is_hex32(const char *p, size_t n)
{
    if (n != 32)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return 0;
    return 1;
}

/* A count: decimal digits only; a value past LONG_MAX saturates there.
 * @return 1 and *count, or 0 if the text is not a count (end after it). */
static int parse_count(const char *p, long *count, const char **end)
{
    if (*p < '0' || *p > '9')
        return 0;
    long v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        int d = *p - '0';
        v = v > (LONG_MAX - d) / 10 ? LONG_MAX : v * 10 + d;
    }
    *count = v;
    *end = p;
    return 1;
}

/* Read index.tsv: "HASH<TAB>COUNT<TAB>INSTR<TAB>SIGNATURE".  Entries found
 * get count = the file's count (deltas kept); bad lines are kept (and
 * reported when report is set). */
static st_error read_index(store *s, int report, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/index.tsv", s->root);
    size_t len;
    if (access(path, F_OK) != 0)
        return ST_OK;  /* a new store */
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return fail(s, ST_ERR_IO);
    for (size_t i = 0; i < s->nother; i++)
        free(s->other[i]);
    s->nother = 0;
    long lineno = 0, nbad = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        if (line[0] == '#' || !line[0])
            continue;
        char hex[64] = "", instr[160] = "", sig[32] = "";
        long count = 0;
        const char *after = NULL;
        char *t1 = strchr(line, '\t');
        int ok = t1 && is_hex32(line, (size_t)(t1 - line)) && parse_count(t1 + 1, &count, &after) &&
                 *after == '\t' && sscanf(after + 1, "%159s\t%31s", instr, sig) >= 1;
        if (!ok) {
            if (report && ++nbad <= 5)
                fprintf(stderr, "%s:%ld: expected HASH<TAB>COUNT<TAB>INSTR<TAB>SIGNATURE (line kept as it is)\n",
                        path, lineno);
            char **o = realloc(s->other, (s->nother + 1) * sizeof *o);
            if (o) {
                s->other = o;
                s->other[s->nother] = strdup(line);
                if (s->other[s->nother])
                    s->nother++;
            }
            continue;
        }
        memcpy(hex, line, 32);
        hex[32] = 0;
        st_entry *e = st_find(s, hex);
        if (!e && !(e = add_entry(s, hex))) {
            free(buf);
            snprintf(err, errlen, "out of memory");
            return fail(s, ST_ERR_NOMEM);
        }
        e->count = count;
        if (!e->instr[0])
            snprintf(e->instr, sizeof e->instr, "%s", instr);
        if (!e->sig[0])
            snprintf(e->sig, sizeof e->sig, "%s", sig);
    }
    free(buf);
    if (nbad > 5)
        fprintf(stderr, "%s: %ld more lines like that (kept as they are)\n", path, nbad - 5);
    return ST_OK;
}

st_error st_check_writable(const char *root, char *err, size_t errlen)
{
    if (fs_mkdir_p(root)) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot create the folder (%s)", root, strerror(e));
        return from_errno(e);
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/.write-test", root);
    static const char probe[] = "mmafuzz: checking that this folder is writable\n";
    char why[1300];
    if (fs_write_atomic(path, probe, sizeof probe - 1, 1, why, sizeof why)) {
        int e = errno;
        snprintf(err, errlen, "%s: the folder is not writable: %s", root, why);
        return from_errno(e);
    }
    unlink(path);  /* another process may have removed it already */
    return ST_OK;
}

int st_lock(const char *root, int shared, char *err, size_t errlen)
{
    if (fs_mkdir_p(root)) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot create the folder (%s)", root, strerror(e));
        return -1;
    }
    char path[1100], who[300];
    snprintf(path, sizeof path, "%s/.store-lock", root);
    int stale = 0;
    int fd = fs_lock(path, shared, who, sizeof who, &stale);
    if (fd < 0 && errno == EWOULDBLOCK)
        snprintf(err, errlen, "%s: another process writes this store (%s); one writer per store", root, who);
    else if (fd < 0)
        snprintf(err, errlen, "%s: cannot lock (%s)", path, fs_strerror(errno));
    else if (stale)
        fprintf(stderr, "mmafuzz: %s: the lock of %s, which is no longer running, taken over\n", root, who);
    return fd;
}

st_error st_open(store *s, const char *root, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    snprintf(s->root, sizeof s->root, "%s", root);
    st_error e = st_check_writable(root, err, errlen);
    if (e)
        return fail(s, e);
    return read_index(s, 1, err, errlen);
}

void st_close(store *s)
{
    for (size_t i = 0; i < s->nother; i++)
        free(s->other[i]);
    free(s->other);
    free(s->e);
    memset(s, 0, sizeof *s);
}

int st_file(store *s, const mf_instr *in, const char *hex, const char *sig, const char *text, size_t len,
            char *err, size_t errlen)
{
    char path[1400], dir[1400];
    st_path(s->root, in, hex, path, sizeof path);
    snprintf(dir, sizeof dir, "%s/%s", s->root, in->name);
    st_entry *e = st_find(s, hex);
    if (!e) {
        if (!(e = add_entry(s, hex))) {
            snprintf(err, errlen, "out of memory");
            return fail(s, ST_ERR_NOMEM);
        }
        snprintf(e->instr, sizeof e->instr, "%s", in->name);
        snprintf(e->sig, sizeof e->sig, "%s", sig);
    }
    if (e->reconciled)
        e->reconciled = 0;  /* this sighting was counted when its file was found outside the index */
    else if (e->delta < LONG_MAX)
        e->delta++;
    s->dirty = 1;
    if (fs_mkdir_p(dir)) {
        int en = errno;
        snprintf(err, errlen, "%s: cannot create the folder (%s)", dir, strerror(en));
        return fail(s, from_errno(en));
    }
    /* the instruction's folders (ARCH, ARCH/QUALIFIER) are the store's own, not links out of it */
    char *cut = dir + strlen(s->root) + 1;
    for (int level = 0; level < 2; level++) {
        char keep = 0, *slash = level == 0 ? strchr(cut, '/') : NULL;
        if (slash) {
            keep = *slash;
            *slash = 0;
        }
        struct stat lst;
        int link = lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode);
        if (link) {
            snprintf(err, errlen, "%s: cannot file %s there (a symbolic link: the store's files are never written "
                                  "through links)", dir, hex);
            return fail(s, ST_ERR_IO);
        }
        if (slash)
            *slash = keep;
    }
    int rc = fs_write_atomic_at("finding.write", path, text, len, 0, err, errlen);
    return rc < 0 ? fail(s, from_errno(errno)) : rc == 0 ? 1 : 0;
}

static int store_name(const char *path, char hex[ST_HASH_HEX]);

typedef struct reconcile_ctx {
    store *s;
    size_t rootlen;
    long added, odd;
    int oom;
} reconcile_ctx;

static int reconcile_one(const char *path, void *vctx)
{
    reconcile_ctx *c = vctx;
    char hex[ST_HASH_HEX], instr[160];
    const char *rel = path + c->rootlen + 1, *base = strrchr(path, '/');
    if (!base || base <= rel || !store_name(path, hex) || st_find(c->s, hex))
        return 0;
    size_t n = (size_t)(base - rel);
    if (n >= sizeof instr) {
        c->odd++;
        return 0;
    }
    memcpy(instr, rel, n);
    instr[n] = 0;
    if (!mf_instr_find(instr)) {
        c->odd++;  /* not in a folder of an instruction: not a finding of this store */
        return 0;
    }
    /* its signature class, from the header the store wrote */
    char sig[32] = "-", err[300];
    size_t len;
    char *text = fs_read_all(path, &len, err, sizeof err);
    const char *p = text ? strstr(text, "\n# signature: ") : NULL;
    if (p)
        snprintf(sig, sizeof sig, "%.*s", (int)strcspn(p + 14, " \n\t"), p + 14);
    free(text);
    st_entry *e = add_entry(c->s, hex);
    if (!e) {
        c->oom = 1;
        return 1;
    }
    snprintf(e->instr, sizeof e->instr, "%s", instr);
    snprintf(e->sig, sizeof e->sig, "%s", sig[0] ? sig : "-");
    e->delta = 1;
    e->reconciled = 1;
    c->s->dirty = 1;
    c->added++;
    return 0;
}

long st_reconcile(store *s, char *err, size_t errlen)
{
    static const char *const vec[] = {".vec", NULL};
    reconcile_ctx c = {s, strlen(s->root), 0, 0, 0};
    if (fs_walk(s->root, vec, reconcile_one, &c, err, errlen) < 0)
        return fail(s, ST_ERR_IO);
    if (c.oom) {
        snprintf(err, errlen, "out of memory");
        return fail(s, ST_ERR_NOMEM);
    }
    return c.added;
}

st_error st_flush(store *s, char *err, size_t errlen)
{
    if (!s->dirty)
        return ST_OK;
    char lock[1100];
    snprintf(lock, sizeof lock, "%s/.lock", s->root);
    int fd = fs_open_nofollow(lock, O_RDWR | O_CREAT, 0666);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        int en = errno;
        snprintf(err, errlen, "%s: cannot lock (%s)", lock, fs_strerror(en));
        if (fd >= 0)
            close(fd);
        return fail(s, from_errno(en));
    }
    st_error rc = read_index(s, 0, err, errlen);  /* counts as other processes left them */
    /* the size of the text: every kept line and every entry in full */
    static const char head[] = "# mmafuzz mismatch index: hash, times seen, instruction, signature class\n";
    size_t cap = sizeof head, pos = 0;
    for (size_t i = 0; i < s->nother; i++)
        cap += strlen(s->other[i]) + 1;
    for (size_t i = 0; i < s->n; i++)
        cap += 32 + 1 + 20 + 1 + strlen(s->e[i].instr) + 1 + (s->e[i].sig[0] ? strlen(s->e[i].sig) : 1) + 1;
    char *buf = rc ? NULL : malloc(cap);
    if (!rc && !buf) {
        snprintf(err, errlen, "out of memory");
        rc = fail(s, ST_ERR_NOMEM);
    }
    if (!rc) {
        pos += (size_t)snprintf(buf + pos, cap - pos, "%s", head);
        for (size_t i = 0; i < s->nother; i++)
            pos += (size_t)snprintf(buf + pos, cap - pos, "%s\n", s->other[i]);
        for (size_t i = 0; i < s->n; i++) {
            st_entry *e = &s->e[i];
            e->count = e->count > LONG_MAX - e->delta ? LONG_MAX : e->count + e->delta;  /* saturates */
            e->delta = 0;
            pos += (size_t)snprintf(buf + pos, cap - pos, "%s\t%ld\t%s\t%s\n", e->hex, e->count, e->instr,
                                    e->sig[0] ? e->sig : "-");
        }
        char path[1100];
        snprintf(path, sizeof path, "%s/index.tsv", s->root);
        if (fs_write_atomic(path, buf, pos, 1, err, errlen))
            rc = fail(s, from_errno(errno));
        else
            s->dirty = 0;
    }
    free(buf);
    flock(fd, LOCK_UN);
    close(fd);
    return rc;
}

/* ------------------------------------------------------------ reader */

typedef struct read_ctx {
    int (*fn)(const st_case *c, void *ctx);
    void *ctx;
    long skipped;
    int stop;
    st_case *cases;
    size_t n, cap;
} read_ctx;

static int parse_hex_field(const char *line, const char *key, mf_format f, uint64_t *v)
{
    char val[40];
    if (!mf_vec_field(line, key, val, sizeof val))
        return 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(val, &end, 16);
    if (errno || *end || end == val || (int)strlen(val) != mf_format_get(f)->hex_width)
        return -1;
    *v = x;
    return 1;
}

/* The folder-name check: a store file is "<32 hex>.vec". */
static int store_name(const char *path, char hex[ST_HASH_HEX])
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n != 36 || strcmp(base + 32, ".vec") || !is_hex32(base, 32))
        return 0;
    memcpy(hex, base, 32);
    hex[32] = 0;
    return 1;
}

static int read_one(const char *path, void *vctx)
{
    read_ctx *rc = vctx;
    char err[600];
    mf_vec_reader *r = mf_vec_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s (file skipped)\n", err);
        rc->skipped++;
        return 0;
    }
    /* the header: comment lines before the first case (first 4 KiB) */
    char header[4096] = "";
    {
        FILE *f = fopen(path, "rb");
        unsigned char magic[2] = {0, 0};
        if (f && fread(magic, 1, 2, f) == 2 && !(magic[0] == 0x1f && magic[1] == 0x8b)) {
            rewind(f);
            char line[1024];
            size_t pos = 0;
            while (fgets(line, sizeof line, f) && line[0] == '#' && pos + strlen(line) < sizeof header) {
                memcpy(header + pos, line, strlen(line) + 1);
                pos += strlen(line);
            }
        }
        if (f)
            fclose(f);
    }
    rc->n = 0;
    mf_vec_case vc;
    int st, bad = 0;
    while ((st = mf_vec_next(r, &vc)) == MF_VEC_CASE) {
        if (grow_room(&rc->cases, &rc->cap, rc->n, sizeof *rc->cases)) {
            fprintf(stderr, "%s: out of memory (file skipped)\n", path);
            bad = 1;
            break;
        }
        st_case *c = &rc->cases[rc->n++];
        memset(c, 0, sizeof *c);
        c->path = path;
        c->line = vc.line;
        c->in = vc.instr;
        c->cs = vc.cs;
        c->has_d = vc.has_d;
        c->d = vc.d;
        const char *line = mf_vec_line(r);
        int hm = parse_hex_field(line, "model", vc.instr->fd, &c->model);
        if (hm < 0) {
            fprintf(stderr, "%s:%ld: field model: expected %d hex digits of %s (file skipped)\n", path, vc.line,
                    mf_format_get(vc.instr->fd)->hex_width, mf_format_get(vc.instr->fd)->name);
            bad = 1;
            break;
        }
        c->has_model = hm > 0;
        char role[32];
        c->original = mf_vec_field(line, "role", role, sizeof role) && !strcmp(role, "original");
    }
    if (!bad && st != MF_VEC_EOF) {
        fprintf(stderr, "%s (file skipped)\n", mf_vec_error(r));
        bad = 1;
    }
    mf_vec_close(r);
    char hex[ST_HASH_HEX], want[ST_HASH_HEX];
    if (!bad && store_name(path, hex)) {
        if (rc->n == 0) {
            fprintf(stderr, "%s:1: expected an 'instr' line and at least one case (file skipped)\n", path);
            bad = 1;
        } else {
            st_hash(rc->cases[0].in, &rc->cases[0].cs, want);
            if (strcmp(hex, want)) {
                fprintf(stderr, "%s:%ld: expected the first case to hash to the file's name, it hashes to %s "
                                "(file skipped)\n", path, rc->cases[0].line, want);
                bad = 1;
            }
        }
    }
    if (bad) {
        rc->skipped++;
        return 0;
    }
    for (size_t i = 0; i < rc->n; i++) {
        rc->cases[i].header = header;
        if (rc->fn(&rc->cases[i], rc->ctx)) {
            rc->stop = 1;
            return 1;
        }
    }
    return 0;
}

long st_read(const char *const *paths, int npaths, int (*fn)(const st_case *c, void *ctx), void *ctx)
{
    static const char *const suffixes[] = {".vec", ".vec.gz", NULL};
    read_ctx rc = {fn, ctx, 0, 0, NULL, 0, 0};
    for (int i = 0; i < npaths && !rc.stop; i++) {
        char err[600];
        if (fs_walk(paths[i], suffixes, read_one, &rc, err, sizeof err) < 0) {
            fprintf(stderr, "%s (skipped)\n", err);
            rc.skipped++;
        }
    }
    free(rc.cases);
    return rc.stop ? -1 : rc.skipped;
}

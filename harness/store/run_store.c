/*
 * run_store.c - the mismatch store and its reader (see run_store.h).
 */
#include "run_store.h"

#include "grow.h"
#include "run_fs.h"
#include "textline.h"
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
    case ST_ERR_FORMAT: return "a damaged file";
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

/* ------------------------------------------------------------ index.tsv */

static int by_hex(const void *a, const void *b)
{
    const st_index_line *x = a, *y = b;
    int c = strcmp(x->hex, y->hex);
    return c ? c : (x->lineno > y->lineno) - (x->lineno < y->lineno);
}

/* A name field (instruction, signature class): 1 to cap - 1 printable
 * characters, no space. */
static int name_field(const char *s, size_t cap)
{
    size_t n = strlen(s);
    if (!n || n >= cap)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

long st_index_read(const char *path, int (*fn)(const st_index_line *l, void *ctx), void *ctx, char *err,
                   size_t errlen)
{
    size_t len;
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return 0;  /* a new store */
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    st_index_line *v = NULL;
    size_t n = 0, cap = 0, pos = 0;
    long lineno = 0, col = 0, rc = 0;
    char *line;
    int t;
#define BAD(...) do { int w_ = snprintf(err, errlen, "%s:%ld: ", path, lineno); \
                      snprintf(err + (w_ > 0 && (size_t)w_ < errlen ? (size_t)w_ : 0), \
                               w_ > 0 && (size_t)w_ < errlen ? errlen - (size_t)w_ : errlen, __VA_ARGS__); \
                      rc = -1; } while (0)
    while (!rc && (t = tl_next(buf, len, &pos, &lineno, &line, &col)) != TL_END) {
        if (t == TL_NUL) {
            BAD("a NUL byte at column %ld (index.tsv is text: damaged)", col);
            break;
        }
        if (t == TL_TORN) {
            BAD("the last line is cut short (no newline at its end: index.tsv is replaced whole, so the file was "
                "damaged)");
            break;
        }
        if (!line[0] || line[0] == '#')
            continue;
        char *f[4];
        int nf = tl_split(line, '\t', f, 4);
        unsigned long long count;
        if (nf != 4) {
            BAD("expected HASH<TAB>COUNT<TAB>INSTR<TAB>SIGNATURE (4 fields separated by tabs), got %d field%s", nf,
                nf == 1 ? "" : "s");
        } else if (!tl_hex(f[0], 32)) {
            BAD("expected HASH: 32 lower-case hex digits, got '%.40s'", f[0]);
        } else if (tl_decimal(f[1], LONG_MAX, &count)) {
            BAD("expected COUNT: a decimal number of at most %ld (digits only), got '%.40s'", LONG_MAX, f[1]);
        } else if (!name_field(f[2], sizeof((st_entry *)0)->instr)) {
            BAD("expected INSTR: an instruction name of 1 to %zu characters without spaces",
                sizeof((st_entry *)0)->instr - 1);
        } else if (!name_field(f[3], sizeof((st_entry *)0)->sig)) {
            BAD("expected SIGNATURE: a signature class of 1 to %zu characters without spaces (or '-')",
                sizeof((st_entry *)0)->sig - 1);
        }
        if (rc)
            break;
        if (n == cap) {
            st_index_line *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v);
            if (!nv) {
                BAD("out of memory");
                break;
            }
            v = nv;
        }
        v[n].hex = f[0];
        v[n].count = (long)count;
        v[n].instr = f[2];
        v[n].sig = f[3];
        v[n++].lineno = lineno;
    }
    if (!rc && n > 1) {  /* each hash once: a second line would be counted twice */
        st_index_line *sorted = malloc(n * sizeof *sorted);
        if (!sorted) {
            BAD("out of memory");
        } else {
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *sorted, by_hex);
            long first = 0, second = 0;
            for (size_t i = 1; i < n; i++)
                if (!strcmp(sorted[i].hex, sorted[i - 1].hex) && (!second || sorted[i].lineno < second)) {
                    first = sorted[i - 1].lineno;
                    second = sorted[i].lineno;
                }
            free(sorted);
            if (second) {
                lineno = second;
                BAD("a second line of a hash (the first is line %ld): each finding is listed once", first);
            }
        }
    }
#undef BAD
    for (size_t i = 0; !rc && i < n; i++)
        if (fn && fn(&v[i], ctx))
            rc = -2;
    free(v);
    free(buf);
    return rc ? rc : (long)n;
}

/* Read index.tsv strictly (st_index_read): entries found get count = the
 * file's count (deltas kept).  A damaged index is an error: nothing of it is
 * taken and nothing is written over it. */
static int index_entry(const st_index_line *l, void *vs)
{
    store *s = vs;
    st_entry *e = st_find(s, l->hex);
    if (!e && !(e = add_entry(s, l->hex)))
        return 1;
    e->count = l->count;
    if (!e->instr[0])
        snprintf(e->instr, sizeof e->instr, "%s", l->instr);
    if (!e->sig[0])
        snprintf(e->sig, sizeof e->sig, "%s", l->sig);
    return 0;
}

static st_error read_index(store *s, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/index.tsv", s->root);
    long n = st_index_read(path, index_entry, s, err, errlen);
    if (n == -2)
        snprintf(err, errlen, "%s: out of memory", path);
    return n == -2 ? fail(s, ST_ERR_NOMEM) : n < 0 ? fail(s, ST_ERR_FORMAT) : ST_OK;
}

static int root_fits(const char *root, char *err, size_t errlen);

st_error st_check_writable(const char *root, char *err, size_t errlen)
{
    if (!root_fits(root, err, errlen))
        return ST_ERR_IO;
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

/* A root every path of the store fits under (ST_ROOT_MAX): else an error,
 * never a name cut short. */
static int root_fits(const char *root, char *err, size_t errlen)
{
    size_t n = strlen(root);
    if (n <= ST_ROOT_MAX)
        return 1;
    snprintf(err, errlen, "%.60s...: a folder name of %zu characters; a store's is at most %d", root, n, ST_ROOT_MAX);
    errno = ENAMETOOLONG;
    return 0;
}

int st_lock(const char *root, int shared, char *err, size_t errlen)
{
    if (!root_fits(root, err, errlen))
        return -1;
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
    return read_index(s, err, errlen);
}

void st_close(store *s)
{
    free(s->e);
    memset(s, 0, sizeof *s);
}

/* The seed and tile a finding file's header names ("# seed: S" and
 * "# index: I (tile T, ..."; run_mismatch.c), in its first len bytes.
 * @return 1, or 0 when it names none. */
static int header_origin(const char *text, size_t len, unsigned long long *seed, long long *tile)
{
    char head[4096];
    size_t n = len < sizeof head - 1 ? len : sizeof head - 1;
    memcpy(head, text, n);
    head[n] = 0;
    const char *ps = strstr(head, "\n# seed: "), *pi = strstr(head, "\n# index: ");
    const char *pt = pi ? strstr(pi, " (tile ") : NULL;
    char num[24];
    unsigned long long t;
    if (!ps || !pt)
        return 0;
    size_t k = strspn(ps + 9, "0123456789");
    if (!k || k >= sizeof num || ps[9 + k] != '\n')
        return 0;
    memcpy(num, ps + 9, k);
    num[k] = 0;
    if (tl_decimal(num, ULLONG_MAX, seed))
        return 0;
    k = strspn(pt + 7, "0123456789");
    if (!k || k >= sizeof num || pt[7 + k] != ',')
        return 0;
    memcpy(num, pt + 7, k);
    num[k] = 0;
    if (tl_decimal(num, LLONG_MAX, &t))
        return 0;
    *tile = (long long)t;
    return 1;
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
    unsigned long long seed;
    long long tile;
    if (e->absorb && header_origin(text, len, &seed, &tile) && seed == e->absorb_seed && tile == e->absorb_tile)
        e->absorb = 0;  /* its tile run again: this sighting was counted when st_reconcile indexed its file */
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
    int (*reruns)(const char *instr, unsigned long long seed, unsigned long long tile, void *ctx);
    void *ctx;
} reconcile_ctx;

static int reconcile_one(const char *path, void *vctx)
{
    reconcile_ctx *c = vctx;
    char hex[ST_HASH_HEX], instr[160];
    const char *rel = path + c->rootlen + 1, *base = strrchr(path, '/');
    if (!base || base <= rel || !store_name(path, hex))
        return 0;
    st_entry *e = st_find(c->s, hex);
    if (e && !c->reruns)
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
    /* its signature class and origin, from the header the store wrote */
    char sig[32] = "-", err[300];
    size_t len;
    char *text = fs_read_all(path, &len, err, sizeof err);
    const char *p = text ? strstr(text, "\n# signature: ") : NULL;
    if (p)
        snprintf(sig, sizeof sig, "%.*s", (int)strcspn(p + 14, " \n\t"), p + 14);
    unsigned long long seed = 0;
    long long tile = -1;
    int origin = text && header_origin(text, len, &seed, &tile);
    free(text);
    if (!e) {
        if (!(e = add_entry(c->s, hex))) {
            c->oom = 1;
            return 1;
        }
        snprintf(e->instr, sizeof e->instr, "%s", instr);
        snprintf(e->sig, sizeof e->sig, "%s", sig[0] ? sig : "-");
        e->delta = 1;
        c->s->dirty = 1;
        c->added++;
    }
    /* its tile runs again: that sighting is the one counted here (or when an earlier process indexed the file) */
    if (origin && c->reruns && c->reruns(instr, seed, (unsigned long long)tile, c->ctx)) {
        e->absorb = 1;
        e->absorb_seed = seed;
        e->absorb_tile = tile;
    }
    return 0;
}

long st_reconcile(store *s,
                  int (*reruns)(const char *instr, unsigned long long seed, unsigned long long tile, void *ctx),
                  void *ctx, char *err, size_t errlen)
{
    static const char *const vec[] = {".vec", NULL};
    reconcile_ctx c = {s, strlen(s->root), 0, 0, 0, reruns, ctx};
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
    st_error rc = read_index(s, err, errlen);  /* counts as other processes left them */
    /* the size of the text: every kept line and every entry in full */
    static const char head[] = "# mmafuzz mismatch index: hash, times seen, instruction, signature class\n";
    size_t cap = sizeof head, pos = 0;
    for (size_t i = 0; i < s->n; i++)
        cap += 32 + 1 + 20 + 1 + strlen(s->e[i].instr) + 1 + (s->e[i].sig[0] ? strlen(s->e[i].sig) : 1) + 1;
    char *buf = rc ? NULL : malloc(cap);
    if (!rc && !buf) {
        snprintf(err, errlen, "out of memory");
        rc = fail(s, ST_ERR_NOMEM);
    }
    if (!rc) {
        pos += (size_t)snprintf(buf + pos, cap - pos, "%s", head);
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

/*
 * run_fs.c - atomic writes, mkdir -p, folder walks (see run_fs.h).
 */
#define _GNU_SOURCE /* syncfs */
#include "run_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int fs_mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char saved = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = saved;
        }
    }
    return fs_is_dir(path) ? 0 : -1;
}

int fs_mkdir_below(const char *root, const char *path, char *err, size_t errlen)
{
    char buf[4096];
    size_t rl = strlen(root), n = strlen(path);
    if (n >= sizeof buf || strncmp(path, root, rl) || (path[rl] != '/' && path[rl] != 0)) {
        snprintf(err, errlen, "%s: not a folder below %s", path, root);
        errno = EINVAL;
        return -1;
    }
    if (fs_mkdir_p(root)) {
        snprintf(err, errlen, "%s: cannot create the folder (%s)", root, strerror(errno));
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = rl + 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0)
            continue;
        char saved = buf[i];
        buf[i] = 0;
        struct stat st;
        int e = mkdir(buf, 0777) != 0 && errno != EEXIST ? errno : 0;
        if (!e && lstat(buf, &st) != 0)
            e = errno;
        if (e) {
            snprintf(err, errlen, "%s: cannot create the folder (%s)", buf, strerror(e));
            errno = e;
            return -1;
        }
        if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: %s (the store's files are never written through links)", buf,
                     S_ISLNK(st.st_mode) ? "a symbolic link" : "not a folder");
            errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
            return -1;
        }
        buf[i] = saved;
    }
    return 0;
}

/* ------------------------------------------------------------ fault points */

typedef struct fault_point {
    const char *name;
    int err;               /* errno of a "fail" */
    unsigned long long after, passed;
    int armed, kill;
} fault_point;

static fault_point g_faults[] = {
    {"fs.create", EACCES, 0, 0, 0, 0}, {"fs.write", ENOSPC, 0, 0, 0, 0}, {"fs.fsync", EIO, 0, 0, 0, 0},
    {"fs.rename", EIO, 0, 0, 0, 0},    {"stats.write", ENOSPC, 0, 0, 0, 0},
    /* the windows of a campaign (kill tests): inside a finding's write and the
     * shard state's write (the temporary file whole, not yet in place), and
     * between filing a finding and the state that counts it */
    {"finding.write", EIO, 0, 0, 0, 0}, {"state.write", EIO, 0, 0, 0, 0}, {"finding.filed", EIO, 0, 0, 0, 0},
};
static int g_faults_state;  /* 0 not read, 1 being read, 2 read */

static void faults_parse(void)
{
    const char *env = getenv("MMAFUZZ_FAULT");
    if (!env || !*env)
        return;
    char spec[512];
    snprintf(spec, sizeof spec, "%s", env);
    char *save = NULL;
    for (char *item = strtok_r(spec, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(item, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c1)
            *c1 = 0;
        if (c2)
            *c2 = 0;
        char *end = NULL;
        unsigned long long n = c1 ? strtoull(c1 + 1, &end, 10) : 0;
        int kill = c2 && !strcmp(c2 + 1, "kill");
        int ok = c1 && end != c1 + 1 && !*end && (!c2 || kill || !strcmp(c2 + 1, "fail"));
        size_t i = 0;
        while (ok && i < sizeof g_faults / sizeof *g_faults && strcmp(g_faults[i].name, item))
            i++;
        if (!ok || i == sizeof g_faults / sizeof *g_faults) {
            fprintf(stderr, "MMAFUZZ_FAULT: '%s': expected POINT:N[:fail|kill] with POINT one of fs.create, "
                            "fs.write, fs.fsync, fs.rename, stats.write, finding.write, state.write, finding.filed "
                            "(ignored)\n", item);
            continue;
        }
        g_faults[i].after = n;
        g_faults[i].armed = 1;
        g_faults[i].kill = kill;
    }
}

int fs_fault(const char *point, size_t units)
{
    int st = __atomic_load_n(&g_faults_state, __ATOMIC_ACQUIRE);
    if (st != 2) {
        int zero = 0;
        if (__atomic_compare_exchange_n(&g_faults_state, &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            faults_parse();
            __atomic_store_n(&g_faults_state, 2, __ATOMIC_RELEASE);
        }
        while (__atomic_load_n(&g_faults_state, __ATOMIC_ACQUIRE) != 2)
            ;
    }
    for (size_t i = 0; i < sizeof g_faults / sizeof *g_faults; i++) {
        fault_point *f = &g_faults[i];
        if (!f->armed || strcmp(f->name, point))
            continue;
        unsigned long long was = __atomic_fetch_add(&f->passed, (unsigned long long)units, __ATOMIC_RELAXED);
        int hit = was + units > f->after;
        if (!hit)
            return 0;
        if (f->kill)
            raise(SIGKILL);
        return f->err;
    }
    return 0;
}

/* ------------------------------------------------------------ atomic writes */

/* Create a fresh temporary file beside path.  A name taken already (left by
 * a writer killed before it could remove it, perhaps with the same PID, as
 * every run has PID 1 in a container) is passed over, never reused or
 * removed: it may belong to a live writer in another PID namespace. */
static int create_temp(const char *path, char *tmp, size_t len)
{
    static unsigned counter;
    for (int tries = 0;; tries++) {
        unsigned n = __atomic_fetch_add(&counter, 1u, __ATOMIC_RELAXED);
        snprintf(tmp, len, "%s.%ld.%u.tmp", path, (long)getpid(), n);
        int e = fs_fault("fs.create", 1);
        if (e) {
            errno = e;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST || tries >= 100000)
            return fd;
    }
}

static int g_sync = 1;       /* fs_set_sync */
static char g_pending[4096]; /* a folder holding findings written since the last flush, or "" */

void fs_set_sync(int on) { g_sync = on != 0; }

/* Flush the pending findings (see fs_set_sync): syncfs on their file
 * system.  @return 0, or an errno value. */
static int flush_pending(void)
{
    if (!g_pending[0])
        return 0;
    int e = fs_fault("fs.fsync", 1);
    if (!e) {
        int fd = open(g_pending, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || syncfs(fd) != 0)
            e = errno;
        if (fd >= 0)
            close(fd);
    }
    if (!e)
        g_pending[0] = 0;
    return e;
}

int fs_write_atomic(const char *path, const void *data, size_t len, int replace, char *err, size_t errlen)
{
    return fs_write_atomic_at(NULL, path, data, len, replace, err, errlen);
}

int fs_write_atomic_at(const char *point, const char *path, const void *data, size_t len, int replace, char *err,
                       size_t errlen)
{
    char tmp[4200];
    int fd = create_temp(path, tmp, sizeof tmp);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot create (%s)", tmp, strerror(e));
        errno = e;
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        int e = fs_fault("fs.write", left);
        ssize_t w = e ? -1 : write(fd, p, left);
        if (w < 0) {
            if (!e)
                e = errno;
            if (e == EINTR)
                continue;
            snprintf(err, errlen, "%s: write failed (%s)", tmp, strerror(e));
            close(fd);
            unlink(tmp);
            errno = e;
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    int group = g_sync && point && !strcmp(point, "finding.write"); /* committed with the next flush */
    int e = g_sync && !group ? flush_pending() : 0;                /* nothing written after them first */
    if (!e && g_sync && !group)
        e = fs_fault("fs.fsync", 1);
    if (!e && g_sync && !group && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        snprintf(err, errlen, "%s: cannot flush (%s)", tmp, strerror(e));
        unlink(tmp);
        errno = e;
        return -1;
    }
    e = point ? fs_fault(point, 1) : 0;
    if (!e)
        e = fs_fault("fs.rename", 1);
    if (replace) {
        if (e || rename(tmp, path) != 0) {
            if (!e)
                e = errno;
            snprintf(err, errlen, "%s: cannot rename into place (%s)", path, strerror(e));
            unlink(tmp);
            errno = e;
            return -1;
        }
        return 0;
    }
    int rc = e ? -1 : link(tmp, path);
    if (!e)
        e = errno;
    unlink(tmp);
    if (rc == 0 && group && !g_pending[0]) {
        snprintf(g_pending, sizeof g_pending, "%s", path);
        char *slash = strrchr(g_pending, '/');
        if (slash)
            *slash = 0;
        else
            snprintf(g_pending, sizeof g_pending, ".");
    }
    if (rc == 0)
        return 0;
    if (e == EEXIST)
        return 1;
    snprintf(err, errlen, "%s: cannot link into place (%s)", path, strerror(e));
    errno = e;
    return -1;
}

char *fs_read_all(const char *path, size_t *len, char *err, size_t errlen)
{
    /* a regular file only: opened without blocking (a FIFO with no writer would wait for ever), then checked */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (%s)", path,
                 S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            snprintf(err, errlen, "%s: out of memory", path);
            fclose(f);
            return NULL;
        }
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static int has_suffix(const char *name, const char *const *suffixes)
{
    size_t n = strlen(name);
    for (; *suffixes; suffixes++) {
        size_t s = strlen(*suffixes);
        if (n >= s && !strcmp(name + n - s, *suffixes))
            return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The walk below root: *nlinks counts symbolic links to folders passed over
 * (first: the first of them). */
static int walk(const char *root, const char *const *suffixes, int (*fn)(const char *path, void *ctx), void *ctx,
                char *err, size_t errlen, long *nlinks, char *first, size_t firstlen)
{
    DIR *d = opendir(root);
    if (!d) {
        snprintf(err, errlen, "%s: cannot read folder (%s)", root, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;  /* ., .., hidden files and lock files */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        names[n] = strdup(de->d_name);
        if (names[n])
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && fs_stop_requested())
            rc = FS_WALK_STOPPED;
        if (rc == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", root, names[i]);
            struct stat st, lst;
            if (lstat(path, &lst) == 0 && stat(path, &st) == 0) {
                if (S_ISDIR(st.st_mode) && S_ISLNK(lst.st_mode)) {
                    if (!(*nlinks)++)  /* a link to a folder: never followed (it may loop) */
                        snprintf(first, firstlen, "%s", path);
                } else if (S_ISDIR(st.st_mode)) {
                    rc = walk(path, suffixes, fn, ctx, err, errlen, nlinks, first, firstlen);
                } else if (S_ISREG(st.st_mode) && has_suffix(names[i], suffixes)) {
                    rc = fn(path, ctx);
                }
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int fs_walk(const char *root, const char *const *suffixes, int (*fn)(const char *path, void *ctx), void *ctx,
            char *err, size_t errlen)
{
    struct stat st;
    if (stat(root, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open (%s)", root, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return fn(root, ctx);
    long nlinks = 0;
    char first[4096] = "";
    int rc = walk(root, suffixes, fn, ctx, err, errlen, &nlinks, first, sizeof first);
    /* said once per folder and process (a command may walk a folder twice) */
    static char said[8][512];
    static int nsaid;
    int before = 0;
    for (int i = 0; i < nsaid && i < 8; i++)
        before |= !strncmp(said[i], root, sizeof said[i] - 1);
    if (nlinks && !before) {
        snprintf(said[nsaid++ % 8], sizeof said[0], "%s", root);
        fprintf(stderr, "mmafuzz: %s: %ld symbolic link%s to folders not followed (%s%s)\n", root, nlinks,
                nlinks == 1 ? "" : "s", first, nlinks > 1 ? " and others" : "");
    }
    return rc;
}

/* ------------------------------------------------------------ stop requests */

static volatile sig_atomic_t g_stop_flag;

static void on_stop_signal(int sig)
{
    (void)sig;
    if (g_stop_flag)
        _exit(130);  /* a second signal: leave now */
    g_stop_flag = 1;
}

void fs_stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int fs_stop_requested(void) { return g_stop_flag != 0; }

volatile sig_atomic_t *fs_stop_flag(void) { return &g_stop_flag; }

/* ------------------------------------------------------------ files of the store */

const char *fs_strerror(int e)
{
    return e == ELOOP ? "a symbolic link: the store's files are never written through links" : strerror(e);
}

int fs_open_nofollow(const char *path, int flags, mode_t mode)
{
    return open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

int fs_lock(const char *path, int shared, char *who, size_t wholen, int *stale)
{
    who[0] = 0;
    *stale = 0;
    int fd = fs_open_nofollow(path, O_RDWR | O_CREAT, 0666);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    char text[300] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = 0;
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = 0;
    long pid = 0;
    char host[128] = "?", lhost[128] = "?", tail[8];
    gethostname(host, sizeof host - 1);
    int named = text[0] && sscanf(text, "pid %ld on host %127s%7s", &pid, lhost, tail) == 2;
    int dead = named && !strcmp(host, lhost) && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        int e = errno;
        /* shared holders write no name: a dead one named is the last exclusive holder, not this one */
        snprintf(who, wholen, "%s", named && !dead ? text : "held shared, by a merge or another process");
        close(fd);
        errno = e;
        return -1;
    }
    /* free: the last holder (if named) has ended; said when it was a process of this host that died */
    if (dead && pid != (long)getpid() && !shared) {
        snprintf(who, wholen, "%s", text);
        *stale = 1;
    }
    if (!shared) {
        char me[300];
        int m = snprintf(me, sizeof me, "pid %ld on host %s\n", (long)getpid(), host);
        if (ftruncate(fd, 0) == 0 && pwrite(fd, me, (size_t)m, 0) < 0) {
            /* the holder's name is only for messages */
        }
    }
    return fd;
}

int fs_sync_dir(const char *path)
{
    if (!g_sync)
        return 0;
    int pe = flush_pending();
    if (pe) {
        errno = pe;
        return -1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

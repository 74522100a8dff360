/*
 * run_fs.c - atomic writes, mkdir -p, folder walks (see run_fs.h).
 */
#include "run_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int fs_write_atomic(const char *path, const void *data, size_t len, int replace, char *err, size_t errlen)
{
    char tmp[4200];
    static unsigned counter;
    snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create (%s)", tmp, strerror(errno));
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "%s: write failed (%s)", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        snprintf(err, errlen, "%s: cannot flush (%s)", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (replace) {
        if (rename(tmp, path) != 0) {
            snprintf(err, errlen, "%s: cannot rename into place (%s)", path, strerror(errno));
            unlink(tmp);
            return -1;
        }
        return 0;
    }
    int rc = link(tmp, path);
    int e = errno;
    unlink(tmp);
    if (rc == 0)
        return 0;
    if (e == EEXIST)
        return 1;
    snprintf(err, errlen, "%s: cannot link into place (%s)", path, strerror(e));
    return -1;
}

char *fs_read_all(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
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
        if (rc == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", root, names[i]);
            if (stat(path, &st) == 0) {
                if (S_ISDIR(st.st_mode))
                    rc = fs_walk(path, suffixes, fn, ctx, err, errlen);
                else if (S_ISREG(st.st_mode) && has_suffix(names[i], suffixes))
                    rc = fn(path, ctx);
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

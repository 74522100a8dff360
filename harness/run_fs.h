/*
 * run_fs.h - file-system helpers of the fuzz driver: atomic writes,
 * creating folders, walking a folder tree.  POSIX only; nothing else in the
 * driver touches the file system directly.
 */
#ifndef MMAFUZZ_RUN_FS_H
#define MMAFUZZ_RUN_FS_H

#include <stddef.h>

/* Create a folder and its parents (like mkdir -p).  @return 0 or -1 (errno). */
int fs_mkdir_p(const char *path);

/* Write len bytes to path atomically: a temporary file in the same folder,
 * fsync, then rename (replace = 1) or link (replace = 0: never overwrite an
 * existing file).  @return 0, 1 if replace == 0 and path already exists,
 * -1 on error (message in err). */
int fs_write_atomic(const char *path, const void *data, size_t len, int replace, char *err, size_t errlen);

/* Read a whole file (NUL-terminated, *len without the NUL).  @return a
 * malloc'd buffer or NULL (message in err). */
char *fs_read_all(const char *path, size_t *len, char *err, size_t errlen);

/* Call fn(path, ctx) for every regular file under root whose name ends in
 * one of the suffixes (NULL-terminated list), in sorted order; root may be
 * a file itself.  Stops when fn returns non-zero and returns that value.
 * @return 0, fn's value, or -1 when root cannot be read (message in err). */
int fs_walk(const char *root, const char *const *suffixes, int (*fn)(const char *path, void *ctx), void *ctx,
            char *err, size_t errlen);

/* @return 1 if path is a folder. */
int fs_is_dir(const char *path);

#endif

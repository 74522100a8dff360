/*
 * run_fs.h - file-system helpers of the fuzz driver: atomic writes,
 * creating folders, walking a folder tree.  POSIX only; nothing else in the
 * driver touches the file system directly.
 */
#ifndef MMAFUZZ_RUN_FS_H
#define MMAFUZZ_RUN_FS_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Create a folder and its parents (like mkdir -p).  @return 0 or -1 (errno). */
int fs_mkdir_p(const char *path);

/* Write len bytes to path atomically: a temporary file in the same folder
 * (<path>.<pid>.<n>.tmp, created with O_EXCL; a name left by a killed writer
 * is passed over for a fresh one), fsync, then rename (replace = 1) or link
 * (replace = 0: never overwrite an existing file).  @return 0, 1 if
 * replace == 0 and path already exists, -1 on error (message in err, errno
 * the cause: ENOSPC when the disk is full). */
int fs_write_atomic(const char *path, const void *data, size_t len, int replace, char *err, size_t errlen);

/* fs_write_atomic with a named fault point (fs_fault) passed once the
 * temporary file is complete and flushed, before it is moved into place
 * (NULL: none). */
int fs_write_atomic_at(const char *point, const char *path, const void *data, size_t len, int replace, char *err,
                       size_t errlen);

/* fsync the folder that holds path (so a rename into it survives a power
 * loss).  @return 0 or -1 (errno). */
int fs_sync_dir(const char *path);

/* Whether fs_write_atomic and fs_sync_dir fsync (1, the default) or not
 * (0: `run --no-sync`, for measuring what crash safety costs; files are
 * still written whole and renamed into place, but a power loss or a kernel
 * crash may lose or empty them).  The only setting of this module; set it
 * once, before any write.
 *
 * Findings are committed as a group: a write through the fault point
 * "finding.write" (a mismatch file, immutable, named by its hash) is not
 * fsynced on its own; the next write of any other file (the index, a state
 * file that counts the findings) or fs_sync_dir first flushes the whole file
 * system of the pending findings (syncfs), so that nothing counts a finding
 * before it is durable, at one flush per checkpoint instead of one per
 * finding. */
void fs_set_sync(int on);

/* Read a whole regular file (NUL-terminated, *len without the NUL); a FIFO,
 * device or folder is refused at once, never waited on.  @return a
 * malloc'd buffer or NULL (message in err). */
char *fs_read_all(const char *path, size_t *len, char *err, size_t errlen);

/* Call fn(path, ctx) for every regular file under root whose name ends in
 * one of the suffixes (NULL-terminated list), in sorted order; root may be
 * a file itself (or a link to a folder).  Below root, symbolic links to
 * folders are not followed (they may loop): one line on stderr says how
 * many were passed over.  Stops when fn returns non-zero and returns that
 * value, or FS_WALK_STOPPED when a stop request came (fs_stop_requested).
 * @return 0, fn's value, or -1 when root cannot be read (message in err). */
#define FS_WALK_STOPPED 130
int fs_walk(const char *root, const char *const *suffixes, int (*fn)(const char *path, void *ctx), void *ctx,
            char *err, size_t errlen);

/* Stop requests: fs_stop_install makes SIGINT, SIGTERM and SIGHUP set a
 * flag that long loops poll (fs_stop_requested, or the flag itself); a
 * second signal ends the process at once (exit 130). */
void fs_stop_install(void);
int fs_stop_requested(void);
volatile sig_atomic_t *fs_stop_flag(void);

/* open(2) that never follows a symbolic link in the last component (ELOOP)
 * and closes on exec: every file of a store not written by fs_write_atomic
 * (locks, stats.jsonl) is opened so, and nothing is written outside it. */
int fs_open_nofollow(const char *path, int flags, mode_t mode);
/* strerror, but ELOOP (what fs_open_nofollow gives for a link) said as "a symbolic link: ...". */
const char *fs_strerror(int e);

/* Take the lock file path (created if missing, never through a link):
 * flock(2), exclusive or shared, without waiting.  Exclusive holders write
 * "pid N on host H" into it.  @return the descriptor (held until closed or
 * the process ends), or -1: errno EWOULDBLOCK when another process holds it
 * (who: its "pid N on host H"), else the cause (ELOOP: a link).  *stale = 1
 * when the lock was free but names a process of this host that is dead
 * (who: that name): the caller says it takes it over. */
int fs_lock(const char *path, int shared, char *who, size_t wholen, int *stale);

/* Create the folders of path below root (root itself with fs_mkdir_p: the
 * user named it, links and all), none of them a symbolic link: a link or a
 * file among them is an error, so nothing under it is written outside root.
 * @return 0, or -1 (message in err). */
int fs_mkdir_below(const char *root, const char *path, char *err, size_t errlen);

/* @return 1 if path is a folder. */
int fs_is_dir(const char *path);

/* Named fault points, for tests of what happens when the file system fails.
 * The environment variable MMAFUZZ_FAULT="POINT:N[:ACTION][,POINT:N[:ACTION]...]"
 * makes POINT act once more than N units have passed it (bytes for fs.write,
 * calls otherwise; N = 0: at once).  ACTION "fail" (the
 * default) makes the operation fail with the point's errno, "kill" makes the
 * process kill itself with SIGKILL there (a crash at a chosen moment).
 * Points: fs.create (EACCES: creating a temporary file), fs.write (ENOSPC:
 * writing it), fs.fsync (EIO), fs.rename (EIO: moving it into place),
 * stats.write (ENOSPC: a line of stats.jsonl); the windows of a campaign,
 * for kill tests: finding.write (inside a finding's write: the temporary
 * file complete, not yet linked into place), state.write (the same for a
 * shard's state, and a plain run's campaign.state), finding.filed (a
 * finding filed, the state that counts it not yet written).  Unset: no
 * faults.
 * @return 0 to go on, or the errno value the operation must fail with. */
int fs_fault(const char *point, size_t units);

#endif

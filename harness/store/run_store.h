/*
 * run_store.h - the mismatch store: mismatches/<arch>/<qualifier>/<hash>.vec
 * plus an index (index.tsv) of how often each was seen.
 *
 * Each file is named by XXH3-128 over the canonical serialization
 *     "mmafuzz-case 1\n" + instruction name + "\n" + case line + "\n"
 * where the case line is c=, a=, b= (and sa=, sb=) exactly as
 * mf_vec_format_case writes them.  Files are written atomically and never
 * overwritten; a mismatch seen again bumps its count in index.tsv.
 */
#ifndef MMAFUZZ_RUN_STORE_H
#define MMAFUZZ_RUN_STORE_H

#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

#define ST_FORMAT_VERSION 1
#define ST_HASH_HEX 33  /* 32 hex digits and a NUL */
#define ST_ROOT_MAX 800 /* the longest store folder name: every path the store builds under it fits its buffers */

/* Canonical serialization of a case.  @return its length or -1 if buf is too small. */
int st_canonical(const mf_instr *in, const mf_case *cs, char *buf, size_t len);
/* XXH3-128 of the canonical serialization, as 32 lower-case hex digits
 * (the canonical big-endian form, as `xxhsum -H2` prints it). */
void st_hash(const mf_instr *in, const mf_case *cs, char hex[ST_HASH_HEX]);

/* Path of a mismatch file under root. */
void st_path(const char *root, const mf_instr *in, const char *hex, char *buf, size_t len);

/* What a store function returns: ST_OK or one of the errors (all < 0;
 * st_file returns 1 or 0 for success).  A caller tells a store error from
 * its own by this code, never by the message text. */
typedef enum st_error {
    ST_OK = 0,
    ST_ERR_IO = -1,        /* a file or folder of the store could not be created, written, flushed, renamed or locked */
    ST_ERR_FULL = -2,      /* no space left: ENOSPC, EDQUOT, EFBIG (a file size limit) */
    ST_ERR_READONLY = -3,  /* the folder is not writable: EACCES, EPERM, EROFS */
    ST_ERR_NOMEM = -4,     /* out of memory */
    ST_ERR_FORMAT = -5,    /* index.tsv is damaged (a FILE:LINE message in err); it is left as it is */
} st_error;

/* A short name of an error code ("disk full", ...). */
const char *st_error_name(st_error e);

typedef struct st_entry {
    char hex[ST_HASH_HEX];
    char instr[160];
    char sig[32];
    long count;  /* as last read or written; saturates at LONG_MAX */
    long delta;  /* seen by this process since the last flush */
    int run_seen; /* for the caller: seen by this run */
    int absorb;     /* the sighting of tile absorb_tile of seed absorb_seed is counted already (st_reconcile):
                       when that tile runs again, its sighting is not counted a second time */
    unsigned long long absorb_seed;
    long long absorb_tile;
} st_entry;

typedef struct store {
    char root[1024];
    st_entry *e;
    size_t n, cap;
    int dirty;
    st_error error;  /* ST_OK, or the first error any call on this store returned */
} store;

/* Check that folder root (created if missing) is writable by creating and
 * removing a file in it; a root longer than ST_ROOT_MAX is an error (as for
 * st_lock and st_open).  @return ST_OK or an error (message in err). */
st_error st_check_writable(const char *root, char *err, size_t errlen);

/* One writer per store: take root/.store-lock (root created if missing;
 * fs_lock in run_fs.h), exclusive for a process that writes the store
 * (`run`), shared for one that adds to it beside others (`merge`).  A lock
 * left by a dead process of this host is taken over with a message.
 * @return the descriptor, held until the process ends, or -1 (message in
 * err: "ROOT: another process writes this store (pid N on host H)"). */
int st_lock(const char *root, int shared, char *err, size_t errlen);

/* One line of index.tsv: HASH<TAB>COUNT<TAB>INSTR<TAB>SIGNATURE. */
typedef struct st_index_line {
    const char *hex;    /* 32 lower-case hex digits */
    long count;         /* 0 .. LONG_MAX */
    const char *instr;  /* 1 to 159 characters, no space */
    const char *sig;    /* 1 to 31 characters, no space ("-": none) */
    long lineno;
} st_index_line;

/* Read an index.tsv strictly (docs/user-guide.md): comment lines (#) and
 * empty lines aside, every line is HASH<TAB>COUNT<TAB>INSTR<TAB>SIGNATURE,
 * each hash once, and the file ends in a newline.  A bad line (a NUL byte,
 * a field taken in part such as a count "21x88", a count past LONG_MAX, a
 * hash listed twice) makes the whole file an error: nothing is handed out.
 * A file that does not exist has no lines.  Then fn(line, ctx) for each
 * line in file order.  @return the number of lines, -1 on a damaged or
 * unreadable file ("FILE:LINE: what was expected" in err), -2 when fn
 * returned non-zero. */
long st_index_read(const char *path, int (*fn)(const st_index_line *l, void *ctx), void *ctx, char *err,
                   size_t errlen);

/* Open (create) a store under root, check that it is writable
 * (st_check_writable) and read its index (st_index_read: ST_ERR_FORMAT
 * when it is damaged).  @return ST_OK or an error. */
st_error st_open(store *s, const char *root, char *err, size_t errlen);
void st_close(store *s);

/* @return the entry of hex, or NULL. */
st_entry *st_find(store *s, const char *hex);

/* File a mismatch with the full file text.  Writes <hash>.vec if it does
 * not exist (never overwrites) and counts one sighting in the index.
 * @return 1 if a new file was written, 0 if it was known, an st_error (< 0)
 * on error. */
int st_file(store *s, const mf_instr *in, const char *hex, const char *sig, const char *text, size_t len,
            char *err, size_t errlen);

/* Index the finding files under root that the index lacks (written after
 * its last checkpoint by a process that then died or hit a full disk):
 * each counted once.  Then, for every finding file under root whose header
 * names its seed and tile ("# seed:", "# index: ... (tile T"), indexed now
 * or by an earlier process, ask reruns(instr, seed, tile, ctx) whether this
 * process runs that tile again (a resume from a checkpoint before it); if
 * so, the sighting of that tile (st_file of a text whose header names the
 * same seed and tile) is that counted one, not a second.  So a finding is
 * counted once however often the process is killed between its filing and
 * the checkpoint that covers its tile.  reruns may be NULL (no tile runs
 * again).  @return how many files were indexed, or an st_error (< 0;
 * message in err). */
long st_reconcile(store *s,
                  int (*reruns)(const char *instr, unsigned long long seed, unsigned long long tile, void *ctx),
                  void *ctx, char *err, size_t errlen);

/* Write the index (under a lock, merging with what other processes wrote).
 * @return ST_OK or an error. */
st_error st_flush(store *s, char *err, size_t errlen);

/* ------------------------------------------------------------ reader */

/* One case of a saved file, as the reader hands it out. */
typedef struct st_case {
    const char *path;
    long line;
    const mf_instr *in;
    mf_case cs;
    int has_d;
    uint64_t d;         /* the recorded device output */
    int has_model;
    uint64_t model;     /* the model output recorded with it (free field model=) */
    int original;       /* role=original: the case as first generated */
    const char *header; /* the file's comment lines before the first case (may be "") */
} st_case;

/* Read every .vec / .vec.gz file under paths (files or folders).  Calls
 * fn for each case of each file that reads completely; a file with any
 * error (bad syntax, unknown instruction, a store file whose name is not
 * the hash of its first case) is reported on stderr as FILE:LINE: what was
 * expected, skipped as a whole and left untouched.
 * @return the number of files skipped (0 when all were read), or -1 when
 * fn asked to stop (returned non-zero). */
long st_read(const char *const *paths, int npaths, int (*fn)(const st_case *c, void *ctx), void *ctx);

#endif

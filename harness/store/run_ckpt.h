/*
 * run_ckpt.h - the checkpoint of a plain run's store as one unit: the files
 * the state counts with (index.tsv, buckets.tsv) and campaign.state.
 *
 * A checkpoint replaces each covered file (fs_write_atomic), then the
 * state, which records each file's hash (XXH3-64 of its bytes) as
 * "file NAME HASH".  Before a covered file is replaced, the version the
 * current state records is kept beside it as .NAME.ckpt (a hard link, no
 * copy).  A process killed between the files and the state leaves files
 * newer than the state: ck_restore, before the store is opened, puts the
 * recorded version back, so that the tiles run again on resume are counted
 * once.
 */
#ifndef MMAFUZZ_RUN_CKPT_H
#define MMAFUZZ_RUN_CKPT_H

#include <stddef.h>

#define CK_NFILES 2
#define CK_HASH 17 /* 16 hex digits and a NUL; "-" for a file that does not exist */

/* The covered files, in the order a checkpoint writes them. */
extern const char *const ck_files[CK_NFILES];
/* @return the index of name in ck_files, or -1. */
int ck_file_index(const char *name);

/* The hash of root/name ("-" when it does not exist).  @return 0 or -1
 * (message in err). */
int ck_hash(const char *root, const char *name, char hex[CK_HASH], char *err, size_t errlen);

/* Keep root/name as root/.name.ckpt before it is replaced (the copy is
 * removed when name does not exist).  @return 0 or -1 (message in err). */
int ck_keep(const char *root, const char *name, char *err, size_t errlen);

/* Make root/name the version whose hash is want: nothing when it is;
 * otherwise .name.ckpt put back when it is that version (or name removed
 * when want is "-"), said on stderr.  A checkpoint cut short always leaves
 * that copy; when neither is that version, the file was changed since by
 * another command (`shrink --out`) or by hand, and is taken as it is (said
 * on stderr).  @return 0 as it was, 1 rolled back, 2 taken as changed, -1
 * on an error (message in err). */
int ck_restore(const char *root, const char *name, const char *want, char *err, size_t errlen);

#endif

/*
 * run_ckpt.c - a plain run's checkpoint as one unit (see run_ckpt.h).
 */
#include "run_ckpt.h"

#include "run_fs.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const ck_files[CK_NFILES] = {"index.tsv", "buckets.tsv"};

int ck_file_index(const char *name)
{
    for (int i = 0; i < CK_NFILES; i++)
        if (!strcmp(ck_files[i], name))
            return i;
    return -1;
}

static int hash_path(const char *path, char hex[CK_HASH], char *err, size_t errlen)
{
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        snprintf(hex, CK_HASH, "-");
        return 0;
    }
    size_t len;
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    snprintf(hex, CK_HASH, "%016llx", (unsigned long long)XXH3_64bits(buf, len));
    free(buf);
    return 0;
}

int ck_hash(const char *root, const char *name, char hex[CK_HASH], char *err, size_t errlen)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", root, name);
    return hash_path(path, hex, err, errlen);
}

int ck_keep(const char *root, const char *name, char *err, size_t errlen)
{
    char path[1200], keep[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/%s", root, name);
    snprintf(keep, sizeof keep, "%s/.%s.ckpt", root, name);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", keep, (long)getpid());
    unlink(tmp);
    if (link(path, tmp) != 0) {
        if (errno == ENOENT && (unlink(keep) == 0 || errno == ENOENT))
            return 0;
        snprintf(err, errlen, "%s: cannot keep a copy (%s)", path, strerror(errno));
        return -1;
    }
    if (rename(tmp, keep) != 0) {
        snprintf(err, errlen, "%s: cannot rename into place (%s)", keep, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int ck_restore(const char *root, const char *name, const char *want, char *err, size_t errlen)
{
    char path[1200], keep[1200], have[CK_HASH], kept[CK_HASH];
    snprintf(path, sizeof path, "%s/%s", root, name);
    snprintf(keep, sizeof keep, "%s/.%s.ckpt", root, name);
    if (hash_path(path, have, err, errlen))
        return -1;
    if (!strcmp(have, want))
        return 0;
    if (!strcmp(want, "-")) {
        if (unlink(path) != 0) {
            snprintf(err, errlen, "%s: cannot remove (%s)", path, strerror(errno));
            return -1;
        }
    } else {
        if (hash_path(keep, kept, err, errlen))
            return -1;
        if (strcmp(kept, want)) {
            /* not a checkpoint cut short (that leaves the copy the state records): changed since by another
             * command (shrink --out) or by hand; taken as it is */
            fprintf(stderr, "mmafuzz run: %s: changed since campaign.state was written, not by a run; taken as it "
                            "is\n", path);
            return 2;
        }
        if (rename(keep, path) != 0) {
            snprintf(err, errlen, "%s: cannot put back %s (%s)", path, keep, strerror(errno));
            return -1;
        }
    }
    fprintf(stderr, "mmafuzz run: %s: newer than campaign.state (a checkpoint cut short); rolled back to the "
                    "checkpoint's version, its tiles run again\n", path);
    return 1;
}

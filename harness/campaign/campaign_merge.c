/*
 * campaign_merge.c - `mmafuzz merge DST SRC...`: combine the shard folders
 * of campaigns (or single shard folders) into DST.
 *
 * Per shard folder S (shards/I-of-N) of a source, into DST/shards/I-of-N
 * (locked like a running shard, so a shard still running is refused):
 *   1. findings: every store file (<arch>/<qualifier>/<hash>.vec) DST lacks,
 *      copied whole (link(2): never replaced; files are named by hash);
 *   2. stats: every stats/RUNID.jsonl DST lacks (one per process run);
 *   3. index.tsv: each hash once, with the larger of the two counts;
 *   4. shard.state: the source's when it contains DST's (every instruction's
 *      tiles done >= DST's), DST's when DST's contains it; otherwise an error.
 * Every step gives the same result when repeated, so merging twice, or a
 * folder into itself, changes nothing.
 */
#include "campaign.h"
#include "cli.h"
#include "run_fs.h"
#include "run_store.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct copy_ctx {
    const char *src_root, *dst_root;
    long copied;
    int failed;
} copy_ctx;

static int is_store_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (strlen(b) != 36 || strcmp(b + 32, ".vec"))
        return 0;
    for (int i = 0; i < 32; i++)
        if (!((b[i] >= '0' && b[i] <= '9') || (b[i] >= 'a' && b[i] <= 'f')))
            return 0;
    return 1;
}

/* Copy one file to the same relative path under dst_root, unless it is there. */
static int copy_one(const char *path, void *vctx)
{
    copy_ctx *c = vctx;
    if (!is_store_name(path) && !strstr(path, "/stats/"))
        return 0;
    char dst[4200], err[1400];
    snprintf(dst, sizeof dst, "%s%s", c->dst_root, path + strlen(c->src_root));
    if (access(dst, F_OK) == 0)
        return 0;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", dst);
    *strrchr(dir, '/') = 0;
    size_t len;
    char *buf = fs_read_all(path, &len, err, sizeof err);
    int rc = -1;
    if (buf && fs_mkdir_below(c->dst_root, dir, err, sizeof err))
        ;  /* a link among DST's folders: never written through (message in err) */
    else if (buf)
        rc = fs_write_atomic(dst, buf, len, 0, err, sizeof err);
    free(buf);
    if (rc < 0) {
        fprintf(stderr, "mmafuzz merge: %s\n", err);
        c->failed = 1;
        return 1;
    }
    c->copied += rc == 0;
    return 0;
}

/* ------------------------------------------------------------ index.tsv */

typedef struct ix_line {
    char hex[33];
    long long count;
    char rest[256];  /* INSTR<TAB>SIGNATURE */
    int parsed;
} ix_line;

typedef struct ix_vec {
    ix_line *v;
    size_t n, cap;
} ix_vec;

static int ix_add(const st_index_line *l, void *vctx)
{
    ix_vec *x = vctx;
    if (x->n == x->cap) {
        ix_line *nv = realloc(x->v, (x->cap = x->cap ? x->cap * 2 : 16) * sizeof *nv);
        if (!nv)
            return 1;
        x->v = nv;
    }
    ix_line *o = &x->v[x->n++];
    snprintf(o->hex, sizeof o->hex, "%s", l->hex);
    o->count = l->count;
    snprintf(o->rest, sizeof o->rest, "%s\t%s", l->instr, l->sig);
    o->parsed = 1;
    return 0;
}

/* DIR/index.tsv, read strictly (st_index_read); a damaged one is an error
 * (said as FILE:LINE), never merged in part. */
static ix_line *ix_read(const char *dir, size_t *n)
{
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    ix_vec x = {calloc(1, sizeof(ix_line)), 0, 1};
    long rc = x.v ? st_index_read(path, ix_add, &x, err, sizeof err) : -2;
    if (rc < 0) {
        fprintf(stderr, "mmafuzz merge: %s\n", rc == -2 ? "out of memory" : err);
        free(x.v);
        return NULL;
    }
    *n = x.n;
    return x.v;
}

static int ix_merge(const char *src, const char *dst)
{
    size_t ns, nd;
    ix_line *s = ix_read(src, &ns), *d = ix_read(dst, &nd);
    if (!s || !d) {
        free(s);
        free(d);
        return -1;
    }
    size_t cap = (nd + ns + 1) * 300 + 64, pos = 0;
    char *out = malloc(cap);
    int changed = 0;
    for (size_t i = 0; out && i < nd; i++) {
        long long c = d[i].count;
        for (size_t j = 0; d[i].parsed && j < ns; j++)
            if (s[j].parsed && !strcmp(s[j].hex, d[i].hex) && s[j].count > c) {
                c = s[j].count;
                changed = 1;
            }
        if (d[i].parsed)
            pos += (size_t)snprintf(out + pos, cap - pos, "%s\t%lld\t%s\n", d[i].hex, c, d[i].rest);
        else
            pos += (size_t)snprintf(out + pos, cap - pos, "%s\n", d[i].rest);
    }
    for (size_t j = 0; out && j < ns; j++) {
        int known = !s[j].parsed;
        for (size_t i = 0; i < nd && !known; i++)
            known = d[i].parsed && !strcmp(s[j].hex, d[i].hex);
        for (size_t k = 0; k < j && !known; k++)  /* a hash twice in the source: once */
            known = s[k].parsed && !strcmp(s[j].hex, s[k].hex);
        if (!known) {
            pos += (size_t)snprintf(out + pos, cap - pos, "%s\t%lld\t%s\n", s[j].hex, s[j].count, s[j].rest);
            changed = 1;
        }
    }
    int rc = 0;
    if (!out) {
        rc = -1;
    } else if (changed) {
        char path[1200], err[1400];
        snprintf(path, sizeof path, "%.1100s/index.tsv", dst);
        if (fs_write_atomic(path, out, pos, 1, err, sizeof err)) {
            fprintf(stderr, "mmafuzz merge: %s\n", err);
            rc = -1;
        }
    }
    free(out);
    free(s);
    free(d);
    return rc;
}

/* ------------------------------------------------------------ shards */

/* The absolute path of p with symbolic links resolved, also for a p that does
 * not exist yet (its longest existing ancestor resolved, the rest appended). */
static int abs_path(const char *p, char out[PATH_MAX])
{
    char head[PATH_MAX];
    if (snprintf(head, sizeof head, "%s", p) >= (int)sizeof head)
        return -1;
    size_t n = strlen(head);
    while (n > 1 && head[n - 1] == '/')
        head[--n] = 0;
    if (realpath(head, out))
        return 0;
    char *slash = strrchr(head, '/');
    const char *tail = slash ? slash + 1 : head;
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", slash == head ? "/" : slash ? (*slash = 0, head) : ".");
    char up[PATH_MAX];
    if (!strcmp(tail, ".") || !strcmp(tail, "..") || abs_path(parent, up))
        return -1;
    return snprintf(out, PATH_MAX, "%s/%s", strcmp(up, "/") ? up : "", tail) >= PATH_MAX ? -1 : 0;
}

/* 1 if folder a lies strictly inside folder b (both absolute, resolved). */
static int inside(const char *a, const char *b)
{
    size_t n = strlen(b);
    return !strncmp(a, b, n) && (a[n] == '/' || !strcmp(b, "/")) && strcmp(a, b);
}

/* @return 1 if a contains b (every instruction's tiles done >= b's). */
static int state_contains(const cp_state *a, const cp_state *b)
{
    for (int q = 0; q < b->ninstr; q++) {
        unsigned long long da = 0;
        for (int r = 0; r < a->ninstr; r++)
            if (!strcmp(a->in[r].name, b->in[q].name))
                da = a->in[r].done;
        if (da < b->in[q].done)
            return 0;
    }
    return 1;
}

static int merge_shard(const char *src, const char *dst_campaign, const char *id, cp_state *ss, cp_state *ds)
{
    char err[1400], spath[1200], dpath[1200], dst[1200];
    cp_state_free(ss);  /* the previous shard's bucket lists */
    cp_state_free(ds);
    snprintf(spath, sizeof spath, "%s/shard.state", src);
    if (cp_state_read_file(spath, ss, err, sizeof err)) {
        fprintf(stderr, "mmafuzz merge: %s\n", err);
        return -1;
    }
    if (strcmp(ss->id, id)) {
        fprintf(stderr, "mmafuzz merge: %s: a shard of campaign %s, not of %s\n", src, ss->id, id);
        return -1;
    }
    cp_shard_dir(dst_campaign, ss->shard, ss->nshards, dst, sizeof dst);
    char rs[PATH_MAX], rd[PATH_MAX];
    if (fs_mkdir_below(dst_campaign, dst, err, sizeof err)) {  /* DST/shards/I-of-N: no link out of DST */
        fprintf(stderr, "mmafuzz merge: %s\n", err);
        return -1;
    }
    if (realpath(src, rs) && realpath(dst, rd) && !strcmp(rs, rd))
        return 0;  /* into itself */
    if (realpath(src, rs) && realpath(dst, rd) && (inside(rs, rd) || inside(rd, rs))) {
        fprintf(stderr, "mmafuzz merge: %s and %s: one folder lies inside the other; merge into a folder outside "
                        "the sources\n", src, dst);
        return -1;
    }
    int lock = cp_lock_shard(dst, err, sizeof err);
    if (lock < 0) {
        fprintf(stderr, "mmafuzz merge: %s\n", err);
        return -1;
    }
    for (int k = 0; k < 2; k++) {  /* both indexes whole before anything is copied */
        snprintf(spath, sizeof spath, "%.1150s/index.tsv", k ? dst : src);
        if (st_index_read(spath, NULL, NULL, err, sizeof err) < 0) {
            fprintf(stderr, "mmafuzz merge: %s\n", err);
            close(lock);
            return -1;
        }
    }
    static const char *const all[] = {".vec", ".jsonl", NULL};
    copy_ctx c = {src, dst, 0, 0};
    int rc = fs_walk(src, all, copy_one, &c, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "mmafuzz merge: %s\n", err);
    if (rc || c.failed || ix_merge(src, dst)) {
        close(lock);
        return -1;
    }
    snprintf(dpath, sizeof dpath, "%.1150s/shard.state", dst);
    int have = access(dpath, F_OK) == 0;
    if (have && cp_state_read_file(dpath, ds, err, sizeof err)) {
        fprintf(stderr, "mmafuzz merge: %s\n", err);
        close(lock);
        return -1;
    }
    rc = 0;
    if (!have || (state_contains(ss, ds) && !state_contains(ds, ss))) {
        if (cp_state_write(dst, ss, err, sizeof err)) {
            fprintf(stderr, "mmafuzz merge: %s\n", err);
            rc = -1;
        }
    } else if (!state_contains(ds, ss)) {
        fprintf(stderr, "mmafuzz merge: %s and %s: two states of shard %d/%d where neither contains the other "
                        "(the shard was run twice from different starts?)\n", src, dst, ss->shard, ss->nshards);
        rc = -1;
    }
    printf("shard %d/%d: %ld files copied from %s\n", ss->shard, ss->nshards, c.copied, src);
    close(lock);
    cp_state_free(ds);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    cli_opts_merge a;
    int prc = cli_merge_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *dst = a.pos[0];
    char err[1400], path[1200], dpath[1200];
    cp_def *d = malloc(sizeof *d);
    cp_state *ss = calloc(1, sizeof *ss), *ds = calloc(1, sizeof *ds);
    int rc = d && ss && ds ? 0 : 2;
    /* before anything is written: a source that is DST changes nothing; DST inside a source would copy the
     * source into itself (its walk then finds the copy), a campaign inside DST would be merged into itself */
    static char rd[PATH_MAX], rs[PATH_MAX];
    if (!rc && abs_path(dst, rd)) {
        fprintf(stderr, "mmafuzz merge: %s: cannot resolve the folder's path (%s)\n", dst, strerror(errno));
        rc = 2;
    }
    for (int i = 1; i < a.npos && !rc; i++) {
        snprintf(path, sizeof path, "%s/campaign.def", a.pos[i]);
        if (abs_path(a.pos[i], rs)) {
            fprintf(stderr, "mmafuzz merge: %s: cannot resolve the folder's path (%s)\n", a.pos[i], strerror(errno));
            rc = 2;
        } else if (!strcmp(rs, rd)) {
            printf("%s is DST: nothing to merge from it\n", a.pos[i]);
            a.pos[i] = NULL;
        } else if (inside(rd, rs)) {
            fprintf(stderr, "mmafuzz merge: %s lies inside %s: merging a folder into a folder inside it would copy "
                            "it into itself; merge into a folder outside the sources\n", dst, a.pos[i]);
            rc = 2;
        } else if (inside(rs, rd) && access(path, F_OK) == 0) {
            fprintf(stderr, "mmafuzz merge: %s lies inside %s: a campaign cannot be merged into a folder that holds "
                            "it\n", a.pos[i], dst);
            rc = 2;
        }
    }
    /* DST may be a plain run's store: not while a run writes it (merges may share it); taken after the
     * checks above, so that a refused merge, or one with nothing to merge, leaves no lock file behind */
    int any_source = 0;
    for (int i = 1; i < a.npos; i++)
        any_source |= a.pos[i] != NULL;
    if (!rc && any_source && fs_is_dir(dst) && st_lock(dst, 1, err, sizeof err) < 0) {
        fprintf(stderr, "mmafuzz merge: %s\n", err);
        rc = 2;
    }
    /* DST's definition: its own, or the first source campaign's (copied) */
    snprintf(dpath, sizeof dpath, "%s/campaign.def", dst);
    for (int i = 1; i < a.npos && !rc && access(dpath, F_OK) != 0; i++) {
        if (!a.pos[i])
            continue;
        snprintf(path, sizeof path, "%s/campaign.def", a.pos[i]);
        if (access(path, F_OK) != 0)
            continue;
        if (cp_def_read(a.pos[i], d, err, sizeof err)) {
            fprintf(stderr, "mmafuzz merge: %s\n", err);
            rc = 2;
            break;
        }
        static const char *const files[] = {"pool.vec", "campaign.def"};  /* the definition last */
        for (int f = 0; f < 2 && !rc; f++) {
            size_t len;
            snprintf(path, sizeof path, "%s/%s", a.pos[i], files[f]);
            char *buf = fs_read_all(path, &len, err, sizeof err);
            snprintf(path, sizeof path, "%s/%s", dst, files[f]);
            int bad = !buf;
            if (!bad && fs_mkdir_p(dst)) {
                snprintf(err, sizeof err, "%.1200s: cannot create the folder (%s)", dst, strerror(errno));
                bad = 1;
            }
            if (bad || fs_write_atomic(path, buf, len, 0, err, sizeof err) < 0) {
                fprintf(stderr, "mmafuzz merge: %s\n", err);
                rc = 2;
            }
            free(buf);
        }
    }
    if (!rc && cp_def_read(dst, d, err, sizeof err)) {
        fprintf(stderr, "mmafuzz merge: %s (DST needs a definition: give a campaign folder among the sources)\n",
                err);
        rc = 2;
    }
    for (int i = 1; i < a.npos && !rc; i++) {
        const char *src = a.pos[i];
        if (!src)
            continue;
        snprintf(path, sizeof path, "%s/campaign.def", src);
        if (access(path, F_OK) == 0) {
            static cp_def sd;
            int bad = cp_def_read(src, &sd, err, sizeof err);
            if (bad || strcmp(sd.id, d->id)) {
                fprintf(stderr, "mmafuzz merge: %s: %s\n", src, bad ? err : "another campaign (its id differs)");
                rc = 2;
                break;
            }
            char shards[1200];
            snprintf(shards, sizeof shards, "%s/shards", src);
            DIR *dir = opendir(shards);
            if (!dir)
                continue;  /* a campaign no shard has run yet */
            char **names = NULL;
            size_t n = 0;
            struct dirent *de;
            while ((de = readdir(dir)) != NULL) {
                int si, sn;
                char **nn;
                if (cp_parse_shard(de->d_name, &si, &sn) == 0 && (nn = realloc(names, (n + 1) * sizeof *nn))) {
                    names = nn;
                    names[n++] = strdup(de->d_name);
                }
            }
            closedir(dir);
            for (size_t k = 0; k < n; k++) {
                char sdir[2400];
                snprintf(sdir, sizeof sdir, "%s/%s", shards, names[k]);
                snprintf(path, sizeof path, "%.1150s/shard.state", sdir);
                if (!rc && access(path, F_OK) == 0 && merge_shard(sdir, dst, d->id, ss, ds))
                    rc = 2;
                free(names[k]);
            }
            free(names);
        } else {
            snprintf(path, sizeof path, "%s/shard.state", src);
            if (access(path, F_OK) != 0) {
                fprintf(stderr, "mmafuzz merge: %s: neither a campaign (campaign.def) nor a shard (shard.state)\n",
                        src);
                rc = 2;
            } else if (merge_shard(src, dst, d->id, ss, ds)) {
                rc = 2;
            }
        }
    }
    free(d);
    if (ss)
        cp_state_free(ss);
    if (ds)
        cp_state_free(ds);
    free(ss);
    free(ds);
    cli_merge_free(&a);
    return rc;
}

/*
 * test_store.c - the mismatch store under hostile conditions: a corrupt
 * index, temporary files left by a killed writer, counts at the top of
 * their range, a full disk, a folder that cannot be written.
 *   test_store TEST WORKDIR
 * Each TEST runs in a process of its own (the fault points of run_fs.h are
 * read from the environment once per process).  Expected values come from
 * the store's contract in run_store.h / run_fs.h and from the input each
 * test writes itself; none is copied from the code under test.
 */
#include "run_fs.h"
#include "run_store.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_check.h"


#define INSTR "hopper/mma.m16n8k16.f32.f16.f16.f32"

static const char *g_dir;

static void fresh_dir(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) {
        printf("FAIL: cannot make %s\n", g_dir);
        exit(1);
    }
}

static char *slurp(const char *path, size_t *n)
{
    char err[600];
    size_t len;
    char *b = fs_read_all(path, n ? n : &len, err, sizeof err);
    return b;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        printf("FAIL: cannot write %s\n", path);
        exit(1);
    }
}

/* A case of INSTR and its store name, with a distinct c per k. */
static void some_case(int k, mf_case *cs, char hex[ST_HASH_HEX])
{
    memset(cs, 0, sizeof *cs);
    cs->c = 0xb3000000u + (uint64_t)k;
    cs->a[0] = cs->b[0] = 0x3c00;
    st_hash(mf_instr_find(INSTR), cs, hex);
}

/* Lines of text starting with prefix. */
static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t pl = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += !strncmp(p, prefix, pl);
    return n;
}

/* Files under the folder whose name ends in .tmp (left-over temporaries). */
static int count_tmp(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.tmp' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (!p || fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

/* A damaged index.tsv (the strict contract of st_index_read in run_store.h
 * and docs/findings.md): each kind of bad line makes st_open fail with
 * ST_ERR_FORMAT and "FILE:LINE: ..." naming the bad line, the file is left
 * byte for byte as it was, and a good index around the same lines opens. */
static void test_bad_index_lines(void)
{
    char hex[2][ST_HASH_HEX], good[2][400], path[1200];
    mf_case cs;
    for (int k = 0; k < 2; k++) {
        some_case(1 + k, &cs, hex[k]);
        snprintf(good[k], sizeof good[k], "%s\t3\t%s\tsig\n", hex[k], INSTR);
    }
    struct {
        const char *what, *line;  /* line: the bad line 3 (between the two good ones), as a printf format of hex[0] */
        size_t len;               /* of line, when it holds a NUL; else 0 */
    } bad[] = {
        {"a count taken in part", "%s\t21x88\t" INSTR "\tsig\n", 0},
        {"a count of 10^23", "%s\t100000000000000000000000\t" INSTR "\tsig\n", 0},
        {"a count of 2^63", "%s\t9223372036854775808\t" INSTR "\tsig\n", 0},
        {"a negative count", "%s\t-1\t" INSTR "\tsig\n", 0},
        {"a short hash", "0123\t1\t" INSTR "\tsig\n", 0},
        {"an upper-case hash", "0123456789ABCDEF0123456789ABCDEF\t1\t" INSTR "\tsig\n", 0},
        {"three fields", "%s\t1\t" INSTR "\n", 0},
        {"five fields", "%s\t1\t" INSTR "\tsig\textra\n", 0},
        {"spaces, not tabs", "%s 1 " INSTR " sig\n", 0},
        {"an empty signature", "%s\t1\t" INSTR "\t\n", 0},
        {"a hash listed twice", "%s\t1\t" INSTR "\tsig\n", 0},
        {"a NUL byte", "%s\t1\t" INSTR "\tsig\0junk\n", 0},
        {"no newline at the end", "%s\t1\t" INSTR "\tsig", 0},
        {"not an index line", "not an index line xxxxxxxxxxxxxxxxxxxx\n", 0},
    };
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        fresh_dir();
        snprintf(path, sizeof path, "%s/index.tsv", g_dir);
        char text[2000], line[600];
        int ll = snprintf(line, sizeof line, bad[b].line, hex[0]);
        if (strstr(bad[b].what, "NUL")) {  /* the format stops at its NUL: the rest put after it */
            memcpy(line + ll, "\0junk\n", 6);
            ll += 6;
        }
        size_t pos = (size_t)snprintf(text, sizeof text, "# comment\n%s", good[0]);
        int last = strstr(bad[b].what, "newline") != NULL;
        if (!last) {
            memcpy(text + pos, line, (size_t)ll);
            pos += (size_t)ll;
            pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s", good[1]);
        } else {
            pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s", good[1]);
            memcpy(text + pos, line, (size_t)ll);
            pos += (size_t)ll;
        }
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(text, 1, pos, f) == pos && fclose(f) == 0, "cannot write %s", path);
        store st;
        char err[2000], want[1300];
        snprintf(want, sizeof want, "%s:%d: ", path, last ? 4 : 3);
        st_error e = st_open(&st, g_dir, err, sizeof err);
        CHECK(e == ST_ERR_FORMAT, "%s: st_open gave %d (%s), expected ST_ERR_FORMAT", bad[b].what, (int)e, err);
        CHECK(!strncmp(err, want, strlen(want)), "%s: expected a message starting '%s', got '%s'", bad[b].what, want,
              err);
        st_close(&st);
        size_t n;
        char *back = slurp(path, &n);
        CHECK(back && n == pos && !memcmp(back, text, pos), "%s: index.tsv was changed", bad[b].what);
        free(back);
    }
    /* the control: the two good lines alone open, with their counts */
    fresh_dir();
    snprintf(path, sizeof path, "%s/index.tsv", g_dir);
    char text[1000];
    snprintf(text, sizeof text, "# comment\n%s\n%s", good[0], good[1]);
    put(path, text);
    store st;
    char err[2000];
    CHECK(st_open(&st, g_dir, err, sizeof err) == ST_OK, "the good index: st_open: %s", err);
    for (int k = 0; k < 2; k++) {
        st_entry *e = st_find(&st, hex[k]);
        CHECK(e && e->count == 3, "the good index: entry %d count %ld, expected 3", k, e ? e->count : -1L);
    }
    st_close(&st);
}

/* Temporary files named as this process will name its own, left by a
 * writer that was killed (with the same PID: PID 1 in a container): they
 * are passed over, not reused and not removed, and the write succeeds. */
static void test_stale_temp(void)
{
    fresh_dir();
    const mf_instr *in = mf_instr_find(INSTR);
    char hex[ST_HASH_HEX], vec[1400], dir[1400], index[1200], tmp[1500];
    mf_case cs;
    some_case(2, &cs, hex);
    st_path(g_dir, in, hex, vec, sizeof vec);
    snprintf(dir, sizeof dir, "%s/%s", g_dir, in->name);
    snprintf(index, sizeof index, "%s/index.tsv", g_dir);
    CHECK(fs_mkdir_p(dir) == 0, "mkdir %s", dir);
    const char *targets[3] = {vec, index, NULL};
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/.write-test", g_dir);
    targets[2] = probe;
    for (int t = 0; t < 3; t++)
        for (int n = 0; n < 64; n++) {
            snprintf(tmp, sizeof tmp, "%s.%ld.%d.tmp", targets[t], (long)getpid(), n);
            put(tmp, "stale\n");
        }
    store st;
    char err[2000];
    CHECK(st_open(&st, g_dir, err, sizeof err) == ST_OK, "st_open: %s", err);
    CHECK(st_file(&st, in, hex, "sig", "the case\n", 9, err, sizeof err) == 1, "st_file: %s", err);
    CHECK(st_flush(&st, err, sizeof err) == ST_OK, "st_flush: %s", err);
    st_close(&st);
    char *back = slurp(vec, NULL);
    CHECK(back && !strcmp(back, "the case\n"), "the mismatch file was not written");
    free(back);
    back = slurp(index, NULL);
    CHECK(back && count_lines(back, hex) == 1, "index.tsv lacks the entry");
    free(back);
    for (int t = 0; t < 3; t++)
        for (int n = 0; n < 64; n++) {
            snprintf(tmp, sizeof tmp, "%s.%ld.%d.tmp", targets[t], (long)getpid(), n);
            back = slurp(tmp, NULL);
            CHECK(back && !strcmp(back, "stale\n"), "%s was removed or changed (it may belong to a live writer)", tmp);
            free(back);
        }
}

/* Counts at the top of the range: LONG_MAX (twice), LONG_MAX - 1; one or
 * two more sightings saturate at LONG_MAX, each hash stays one line (a
 * count beyond LONG_MAX in the file is an error: test_bad_index_lines). */
static void test_count_overflow(void)
{
    fresh_dir();
    const mf_instr *in = mf_instr_find(INSTR);
    char hex[3][ST_HASH_HEX], path[1200], text[2000];
    mf_case cs;
    for (int k = 0; k < 3; k++)
        some_case(10 + k, &cs, hex[k]);
    snprintf(path, sizeof path, "%s/index.tsv", g_dir);
    snprintf(text, sizeof text, "%s\t%ld\t%s\tsig\n%s\t%ld\t%s\tsig\n%s\t%ld\t%s\tsig\n", hex[0], LONG_MAX, INSTR,
             hex[1], LONG_MAX, INSTR, hex[2], LONG_MAX - 1, INSTR);
    put(path, text);
    char err[2000];
    for (int round = 0; round < 2; round++) {
        store st;
        CHECK(st_open(&st, g_dir, err, sizeof err) == ST_OK, "st_open: %s", err);
        for (int k = 0; k < 3; k++) {
            st_entry *e = st_find(&st, hex[k]);
            CHECK(e && e->count >= LONG_MAX - 1, "round %d: entry %d count %ld", round, k, e ? e->count : -1L);
            CHECK(st_file(&st, in, hex[k], "sig", "x\n", 2, err, sizeof err) >= 0, "st_file: %s", err);
        }
        CHECK(st_file(&st, in, hex[2], "sig", "x\n", 2, err, sizeof err) >= 0, "st_file: %s", err);
        CHECK(st_flush(&st, err, sizeof err) == ST_OK, "st_flush: %s", err);
        st_close(&st);
        char *back = slurp(path, NULL);
        for (int k = 0; k < 3 && back; k++) {
            char line[300];
            snprintf(line, sizeof line, "%s\t%ld\t%s\tsig\n", hex[k], LONG_MAX, INSTR);
            CHECK(count_lines(back, hex[k]) == 1, "round %d: hash %d on %d lines", round, k, count_lines(back, hex[k]));
            CHECK(strstr(back, line) != NULL, "round %d: expected the line %s", round, line);
        }
        free(back);
    }
}

/* A full disk (a real file size limit, RLIMIT_FSIZE: EFBIG): st_file and st_flush return ST_ERR_FULL, the store remembers
 * it, no partial or temporary file is left and the old index stays whole. */
static void test_disk_full(void)
{
    fresh_dir();
    const mf_instr *in = mf_instr_find(INSTR);
    char err[2000], hex[ST_HASH_HEX], vec[1400], path[1200];
    mf_case cs;
    store st;
    CHECK(st_open(&st, g_dir, err, sizeof err) == ST_OK, "st_open: %s", err);
    /* an index of 20 entries (about 1,600 bytes) while there is room */
    for (int k = 0; k < 20; k++) {
        some_case(100 + k, &cs, hex);
        CHECK(st_file(&st, in, hex, "sig", "small\n", 6, err, sizeof err) == 1, "st_file: %s", err);
    }
    CHECK(st_flush(&st, err, sizeof err) == ST_OK, "st_flush: %s", err);
    snprintf(path, sizeof path, "%s/index.tsv", g_dir);
    size_t len0;
    char *index0 = slurp(path, &len0);
    CHECK(index0 && len0 > 1024, "index.tsv: %zu bytes, expected more than 1024", len0);

    /* files of at most 1024 bytes from now on */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 1024;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit: %s", strerror(errno));
    static char big[4000];
    memset(big, 'a', sizeof big);
    some_case(200, &cs, hex);
    st_path(g_dir, in, hex, vec, sizeof vec);
    int rc = st_file(&st, in, hex, "sig", big, sizeof big, err, sizeof err);
    CHECK(rc == ST_ERR_FULL, "st_file of 4000 bytes past a 1024-byte limit: %d (%s), expected ST_ERR_FULL", rc, err);
    CHECK(st.error == ST_ERR_FULL, "the store did not remember the error: %d", (int)st.error);
    CHECK(access(vec, F_OK) != 0, "a partial mismatch file was left");
    rc = st_flush(&st, err, sizeof err);
    CHECK(rc == ST_ERR_FULL, "st_flush of a 1,700-byte index: %d (%s), expected ST_ERR_FULL", rc, err);
    setrlimit(RLIMIT_FSIZE, &old);
    size_t len1;
    char *index1 = slurp(path, &len1);
    CHECK(index0 && index1 && len0 == len1 && !memcmp(index0, index1, len0), "the old index.tsv was changed");
    CHECK(count_tmp(g_dir) == 0, "temporary files left: %d", count_tmp(g_dir));
    free(index0);
    free(index1);
    st_close(&st);
    CHECK(strcmp(st_error_name(ST_ERR_FULL), "disk full") == 0, "st_error_name");
}

/* The fault point fs.write: room for 100 bytes, then ENOSPC. */
static void test_disk_full_fault(void)
{
    setenv("MMAFUZZ_FAULT", "fs.write:100", 1);  /* read when a fault point is first passed */
    fresh_dir();
    char err[2000], path[1200];
    static char big[4000];
    memset(big, 'a', sizeof big);
    snprintf(path, sizeof path, "%s/f.txt", g_dir);
    CHECK(fs_write_atomic(path, big, 60, 1, err, sizeof err) == 0, "60 bytes of 100: %s", err);
    errno = 0;
    CHECK(fs_write_atomic(path, big, 60, 1, err, sizeof err) == -1 && errno == ENOSPC,
          "60 more bytes: expected ENOSPC, got errno %d", errno);
    CHECK(strstr(err, "No space left on device") != NULL, "message: %s", err);
    size_t len;
    char *f = slurp(path, &len);
    CHECK(f && len == 60, "the first file was changed");
    free(f);
    CHECK(count_tmp(g_dir) == 0, "temporary files left: %d", count_tmp(g_dir));
    /* the store: no space for the mismatch file */
    store st;
    const mf_instr *in = mf_instr_find(INSTR);
    char hex[ST_HASH_HEX];
    mf_case cs;
    some_case(300, &cs, hex);
    st_open(&st, g_dir, err, sizeof err);  /* its write test may fail already: the budget is spent */
    int rc = st_file(&st, in, hex, "sig", big, 200, err, sizeof err);
    CHECK(rc == ST_ERR_FULL && st.error == ST_ERR_FULL, "st_file on a full disk: %d (%s)", rc, err);
    st_close(&st);
}

/* A folder that cannot be written: st_check_writable and st_open say so. */
static void test_unwritable(void)
{
    fresh_dir();
    char err[2000], sub[1200];
    store st;
    if (geteuid() != 0) {  /* permissions bind only those who are not root */
        snprintf(sub, sizeof sub, "%s/ro", g_dir);
        CHECK(mkdir(sub, 0555) == 0, "mkdir %s", sub);
        st_error e = st_check_writable(sub, err, sizeof err);
        CHECK(e == ST_ERR_READONLY, "read-only folder: %d (%s)", (int)e, err);
        CHECK(st_open(&st, sub, err, sizeof err) == ST_ERR_READONLY, "st_open of a read-only folder");
        st_close(&st);
        chmod(sub, 0755);
    }
    /* a path below a regular file cannot be made a folder */
    snprintf(sub, sizeof sub, "%s/file", g_dir);
    put(sub, "x\n");
    snprintf(sub, sizeof sub, "%s/file/store", g_dir);
    CHECK(st_check_writable(sub, err, sizeof err) == ST_ERR_IO && strstr(err, "Not a directory"),
          "below a file: %s", err);
}

/* Creating a file refused (the fault point fs.create: EACCES), root or not. */
static void test_unwritable_fault(void)
{
    setenv("MMAFUZZ_FAULT", "fs.create:0", 1);  /* read when a fault point is first passed */
    fresh_dir();
    char err[2000];
    store st;
    st_error e = st_open(&st, g_dir, err, sizeof err);
    CHECK(e == ST_ERR_READONLY && strstr(err, "not writable") && strstr(err, "Permission denied"),
          "st_open with fs.create failing: %d (%s)", (int)e, err);
    CHECK(st.error == ST_ERR_READONLY, "the store did not remember the error");
    st_close(&st);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"bad_index_lines", test_bad_index_lines}, {"stale_temp", test_stale_temp},
        {"count_overflow", test_count_overflow},   {"disk_full", test_disk_full},
        {"disk_full_fault", test_disk_full_fault}, {"unwritable", test_unwritable},
        {"unwritable_fault", test_unwritable_fault},
    };
    if (argc != 3) {
        fprintf(stderr, "usage: test_store TEST WORKDIR\n");
        return 2;
    }
    g_dir = argv[2];
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
        if (!strcmp(argv[1], tests[i].name)) {
            tests[i].fn();
            if (failures) {
                printf("%s: %d failures\n", argv[1], failures);
                return 1;
            }
            printf("%s: ok\n", argv[1]);
            return 0;
        }
    fprintf(stderr, "test_store: unknown test '%s'\n", argv[1]);
    return 2;
}

/*
 * fuzz_vec.c - libFuzzer entry point: the `.vec` reader (harness/vec/vecfile.h)
 * and the mismatch-store reader (harness/store/run_store.h) on arbitrary bytes.
 *
 * What must hold, for every input: no crash, no undefined behaviour, no
 * leak, no hang; malformed input comes back as an error value whose message
 * starts with "FILE:LINE: "; every case that is read formats back to a line
 * that reads as the same case (round trip).
 *
 * Inputs starting with the gzip magic go through a file (the reader's zlib
 * path); the store reader always reads the input as a file in a folder.
 */
#include "run_store.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/fuzz_vec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_vec: mkdtemp");
        exit(2);
    }
    return 0;
}

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_vec: %s: %s\n", what, detail);
    abort();
}

/* The message must read "NAME:LINE: ..." with LINE a positive number. */
static void check_message(const char *name, const char *msg)
{
    size_t n = strlen(name);
    if (strncmp(msg, name, n) || msg[n] != ':')
        fail("error message without FILE:", msg);
    const char *p = msg + n + 1;
    if (*p < '1' || *p > '9')
        fail("error message without :LINE:", msg);
    while (*p >= '0' && *p <= '9')
        p++;
    if (p[0] != ':' || p[1] != ' ')
        fail("error message without ': ' after LINE", msg);
}

/* Read everything from r; check messages and the round trip of each case. */
static void drain(mf_vec_reader *r, const char *name)
{
    mf_vec_case vc, back;
    int rc;
    long guard = 0;
    while ((rc = mf_vec_next(r, &vc)) != MF_VEC_EOF) {
        if (++guard > 1000000)
            fail("reader does not end", name);
        if (rc == MF_VEC_ERROR) {
            check_message(name, mf_vec_error(r));
            return;
        }
        if (rc == MF_VEC_UNKNOWN) {
            check_message(name, mf_vec_error(r));
            continue;
        }
        if (rc != MF_VEC_CASE)
            fail("unexpected status", name);
        char line[8192], err[300];
        if (mf_vec_format_case(vc.instr, &vc.cs, vc.has_d ? &vc.d : NULL, line, sizeof line) < 0)
            fail("case does not format", vc.instr->name);
        if (mf_vec_parse_case(vc.instr, line, &back, err, sizeof err))
            fail("formatted case does not parse", err);
        if (memcmp(&back.cs, &vc.cs, sizeof vc.cs) || back.has_d != vc.has_d || back.d != vc.d)
            fail("round trip changed the case", line);
    }
}

static int count_case(const st_case *c, void *ctx)
{
    (void)c;
    ++*(long *)ctx;
    return 0;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, size, f);
    fclose(f);
    return w == size ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. the .vec reader from memory, with and without skipping unknown
          instructions */
    for (int skip = 0; skip < 2; skip++) {
        mf_vec_reader *r = mf_vec_open_mem("input.vec", (const char *)data, size);
        if (!r)
            return 0;
        mf_vec_set_skip_unknown(r, skip);
        drain(r, "input.vec");
        mf_vec_close(r);
    }
    /* 2. the same bytes as a file: the gzip path when they start with the
          gzip magic, and the store reader, which skips bad files */
    char path[400], err[512];
    snprintf(path, sizeof path, "%s/0123456789abcdef0123456789abcdef.vec", dir);
    if (write_file(path, data, size))
        fail("cannot write", path);
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        mf_vec_reader *r = mf_vec_open(path, err, sizeof err);
        if (r) {
            drain(r, path);
            mf_vec_close(r);
        }
    }
    const char *paths[1] = {dir};
    long cases = 0;
    long skipped = st_read(paths, 1, count_case, &cases);
    if (skipped < 0 || skipped > 1)
        fail("store reader: unexpected number of skipped files", path);
    unlink(path);
    return 0;
}

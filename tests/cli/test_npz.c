/*
 * test_npz.c - the .npz writer of `mmafuzz gemm --record` (harness/recording/npz.h)
 * against the zip and .npy layouts it promises, and read back by the reader.
 *
 * Expected values: the arrays the test itself writes (a round trip), and
 * the fixed bytes of the formats: the zip's local header signature
 * 50 4b 03 04 with method 8 (deflate), the member name, the end record
 * 50 4b 05 06 with the member count (PKWARE APPNOTE 4.3.7, 4.3.16), and,
 * inflated with zlib, the .npy magic "\x93NUMPY" 1.0, its header dict and a
 * data offset that is a multiple of 64 (NumPy's format.py, version 1.0).
 */
#include "npz.h"
#include "test_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/test_npz.npz", dir);
    const char *hdr = "{\"format\": \"mmafuzz-recording\"}";
    uint16_t d[6] = {1, 2, 3, 0x8000, 0x7c00, 0xffff};
    int64_t rows[2] = {0, 4095};
    npz_array a[3];
    memset(a, 0, sizeof a);
    a[0] = (npz_array){.kind = 'u', .width = 1, .ndim = 1, .shape = {strlen(hdr), 1}, .count = strlen(hdr),
                       .data = (void *)hdr};
    strcpy(a[0].name, "header");
    a[1] = (npz_array){.kind = 'u', .width = 2, .ndim = 2, .shape = {2, 3}, .count = 6, .data = d};
    strcpy(a[1].name, "d");
    a[2] = (npz_array){.kind = 'i', .width = 8, .ndim = 1, .shape = {2, 1}, .count = 2, .data = rows};
    strcpy(a[2].name, "d_rows");
    CHECK(npz_write(path, a, 3, err, sizeof err) == 0, "npz_write: %s", err);

    unsigned char *buf;
    size_t len;
    CHECK(npz_slurp(path, 1 << 20, &buf, &len, err, sizeof err) == 0, "read back: %s", err);
    if (failures)
        return 1;
    /* the first member: local header, method 8, name "header.npy" */
    CHECK(len > 30 && !memcmp(buf, "PK\x03\x04", 4), "no local header signature at 0");
    CHECK(buf[8] == 8 && buf[9] == 0, "method %u, expected 8 (deflate)", buf[8]);
    unsigned nl = buf[26] | buf[27] << 8, xl = buf[28] | buf[29] << 8;
    CHECK(nl == 10 && !memcmp(buf + 30, "header.npy", 10), "first member name");
    /* inflate it: the .npy v1.0 header */
    unsigned csize = buf[18] | buf[19] << 8 | (unsigned)buf[20] << 16 | (unsigned)buf[21] << 24;
    unsigned usize = buf[22] | buf[23] << 8 | (unsigned)buf[24] << 16 | (unsigned)buf[25] << 24;
    unsigned char *npy = malloc(usize);
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, -MAX_WBITS);
    z.next_in = buf + 30 + nl + xl;
    z.avail_in = csize;
    z.next_out = npy;
    z.avail_out = usize;
    CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == usize, "member does not inflate to its size");
    inflateEnd(&z);
    CHECK(!memcmp(npy, "\x93NUMPY\x01\x00", 8), ".npy magic and version 1.0");
    unsigned hl = npy[8] | npy[9] << 8;
    CHECK((10 + hl) % 64 == 0, "data offset %u not a multiple of 64", 10 + hl);
    CHECK(npy[10 + hl - 1] == '\n', "header dict does not end in a newline");
    CHECK(!memcmp(npy + 10, "{'descr': '|u1', 'fortran_order': False, 'shape': (31,), }", 58),
          "header dict: %.58s", npy + 10);
    CHECK(10 + hl + strlen(hdr) == usize && !memcmp(npy + 10 + hl, hdr, strlen(hdr)), "header data");
    free(npy);
    /* the end record: 3 members */
    CHECK(!memcmp(buf + len - 22, "PK\x05\x06", 4) && buf[len - 22 + 10] == 3, "end record with 3 members");

    /* and the reader gives the arrays back */
    npz_file f;
    CHECK(npz_read_mem(buf, len, 1 << 20, &f, err, sizeof err) == 0, "npz_read_mem: %s", err);
    const npz_array *rd = npz_get(&f, "d"), *rr = npz_get(&f, "d_rows");
    CHECK(f.n == 3 && rd && rr, "members");
    if (rd && rr) {
        CHECK(rd->kind == 'u' && rd->width == 2 && rd->ndim == 2 && rd->shape[0] == 2 && rd->shape[1] == 3,
              "d's type and shape");
        CHECK(!memcmp(rd->data, d, sizeof d), "d's data");
        CHECK(rr->kind == 'i' && rr->width == 8 && rr->ndim == 1 && !memcmp(rr->data, rows, sizeof rows), "d_rows");
    }
    npz_free(&f);
    free(buf);
    remove(path);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}

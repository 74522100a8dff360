/*
 * npz.c - NumPy .npz files read and written (npz.h).  A zip's central
 * directory (zip64 fields too: np.savez writes its members with
 * force_zip64), members stored or deflated (zlib), each an .npy v1-v3
 * array; written as np.savez_compressed does (deflated .npy v1.0 members).
 */
#include "npz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum { MAX_MEMBERS = 64 };

static uint32_t rd16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* ------------------------------------------------------------------ .npy */

/* A quoted Python string literal of the header ('...'), into out. */
static const char *py_str(const char *p, const char *end, char *out, size_t len)
{
    if (p >= end || (*p != '\'' && *p != '"'))
        return NULL;
    char q = *p++;
    size_t n = 0;
    while (p < end && *p != q) {
        if (*p == '\\' || n + 1 >= len)
            return NULL;
        out[n++] = *p++;
    }
    if (p >= end)
        return NULL;
    out[n] = 0;
    return p + 1;
}

static const char *skip_sp(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    return p;
}

/* Parse the header dict of an .npy into a; @return 0 or -1 with err. */
static int npy_dict(const char *p, const char *end, npz_array *a, char *err, size_t errlen)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    p = skip_sp(p, end);
    if (p >= end || *p != '{') {
        snprintf(err, errlen, "expected the .npy header dict ('{')");
        return -1;
    }
    p++;
    for (;;) {
        p = skip_sp(p, end);
        if (p < end && *p == '}') {
            p++;
            break;
        }
        char key[32], val[32];
        p = py_str(p, end, key, sizeof key);
        if (!p) {
            snprintf(err, errlen, "expected a quoted key in the .npy header");
            return -1;
        }
        p = skip_sp(p, end);
        if (p >= end || *p != ':') {
            snprintf(err, errlen, "expected ':' after '%s' in the .npy header", key);
            return -1;
        }
        p = skip_sp(p + 1, end);
        if (!strcmp(key, "descr") && !have_descr) {
            p = py_str(p, end, val, sizeof val);
            if (!p || strlen(val) != 3 || (val[0] != '<' && val[0] != '|') || (val[1] != 'u' && val[1] != 'i') ||
                (val[2] != '1' && val[2] != '2' && val[2] != '4' && val[2] != '8') ||
                (val[0] == '|') != (val[2] == '1')) {
                snprintf(err, errlen, "expected descr '|u1', '<u2', '<u4', '<u8' or a signed one ('<i8'): "
                                      "little-endian integers");
                return -1;
            }
            a->kind = val[1];
            a->width = val[2] - '0';
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order") && !have_order) {
            if ((size_t)(end - p) >= 5 && !memcmp(p, "False", 5)) {
                p += 5;
            } else {
                snprintf(err, errlen, "expected fortran_order False (C order)");
                return -1;
            }
            have_order = 1;
        } else if (!strcmp(key, "shape") && !have_shape) {
            if (p >= end || *p != '(') {
                snprintf(err, errlen, "expected a shape tuple");
                return -1;
            }
            p++;
            a->ndim = 0;
            a->shape[0] = a->shape[1] = 1;
            for (;;) {
                p = skip_sp(p, end);
                if (p < end && *p == ')') {
                    p++;
                    break;
                }
                if (a->ndim == 2 || p >= end || *p < '0' || *p > '9') {
                    snprintf(err, errlen, "expected a shape of at most 2 dimensions, (R, C)");
                    return -1;
                }
                uint64_t x = 0;
                while (p < end && *p >= '0' && *p <= '9') {
                    x = x * 10 + (uint64_t)(*p++ - '0');
                    if (x > (1ull << 40)) {
                        snprintf(err, errlen, "a dimension above 2^40");
                        return -1;
                    }
                }
                a->shape[a->ndim++] = x;
                p = skip_sp(p, end);
                if (p < end && *p == ',')
                    p++;
                else if (p >= end || *p != ')') {
                    snprintf(err, errlen, "expected ',' or ')' in the shape");
                    return -1;
                }
            }
            have_shape = 1;
        } else {
            snprintf(err, errlen, "unexpected key '%s' in the .npy header (descr, fortran_order, shape, once each)",
                     key);
            return -1;
        }
        p = skip_sp(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p >= end || *p != '}') {
            snprintf(err, errlen, "expected ',' or '}' in the .npy header");
            return -1;
        }
    }
    while (p < end && (*p == ' ' || *p == '\n'))
        p++;
    if (p != end) {
        snprintf(err, errlen, "text after the .npy header dict");
        return -1;
    }
    if (!have_descr || !have_order || !have_shape) {
        snprintf(err, errlen, "the .npy header lacks %s", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
        return -1;
    }
    return 0;
}

/* An .npy member's bytes into *a (data copied). */
static int npy_parse(const unsigned char *b, size_t len, uint64_t max_bytes, npz_array *a, char *err, size_t errlen)
{
    if (len < 10 || memcmp(b, "\x93NUMPY", 6)) {
        snprintf(err, errlen, "not an .npy array (expected the magic \\x93NUMPY)");
        return -1;
    }
    unsigned major = b[6];
    size_t hl, start;
    if (major == 1) {
        hl = rd16(b + 8);
        start = 10;
    } else if ((major == 2 || major == 3) && len >= 12) {
        hl = rd32(b + 8);
        start = 12;
    } else {
        snprintf(err, errlen, ".npy version %u.%u (expected 1.0, 2.0 or 3.0)", major, b[7]);
        return -1;
    }
    if (hl > len - start || hl > 65536) {
        snprintf(err, errlen, ".npy header of %zu bytes runs past the member's %zu", hl, len);
        return -1;
    }
    if (npy_dict((const char *)b + start, (const char *)b + start + hl, a, err, errlen))
        return -1;
    uint64_t count = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] && count > (UINT64_MAX >> 1) / a->shape[d]) {
            snprintf(err, errlen, "shape too large");
            return -1;
        }
        count *= a->shape[d];
    }
    if (count > max_bytes / (uint64_t)a->width) {
        snprintf(err, errlen, "array of %llu elements is over the limit of %llu bytes", (unsigned long long)count,
                 (unsigned long long)max_bytes);
        return -1;
    }
    size_t bytes = (size_t)count * (size_t)a->width;
    if (len - start - hl != bytes) {
        snprintf(err, errlen, "%zu data bytes; the header's shape and descr need %zu", len - start - hl, bytes);
        return -1;
    }
    a->count = count;
    a->data = malloc(bytes ? bytes : 1);
    if (!a->data) {
        snprintf(err, errlen, "out of memory for %zu bytes", bytes);
        return -1;
    }
    memcpy(a->data, b + start + hl, bytes);
    return 0;
}

/* ------------------------------------------------------------------- zip */

static int inflate_raw(const unsigned char *src, size_t slen, unsigned char *dst, size_t dlen, char *err,
                       size_t errlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
        snprintf(err, errlen, "zlib: inflateInit2 failed");
        return -1;
    }
    int rc = Z_OK;
    size_t in_done = 0, out_done = 0;
    while (rc == Z_OK) {
        size_t in_chunk = slen - in_done > (1u << 30) ? (1u << 30) : slen - in_done;
        size_t out_chunk = dlen - out_done > (1u << 30) ? (1u << 30) : dlen - out_done;
        z.next_in = (Bytef *)(src + in_done);
        z.avail_in = (uInt)in_chunk;
        z.next_out = dst + out_done;
        z.avail_out = (uInt)out_chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        in_done += in_chunk - z.avail_in;
        out_done += out_chunk - z.avail_out;
        if (rc == Z_OK && in_chunk == 0 && out_chunk == 0)
            break;
        if (rc == Z_BUF_ERROR)
            break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || out_done != dlen) {
        snprintf(err, errlen, "deflated data is corrupt or not of its stated size %zu (zlib: %s)", dlen,
                 rc == Z_STREAM_END ? "ended early" : z.msg ? z.msg : "incomplete");
        return -1;
    }
    return 0;
}

int npz_read_mem(const unsigned char *buf, size_t len, uint64_t max_bytes, npz_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* the end-of-central-directory record: the last signature */
    if (len < 22) {
        snprintf(err, errlen, "not a zip archive (.npz): %zu bytes", len);
        return -1;
    }
    size_t eocd = (size_t)-1;
    size_t lo = len - 22 > 65535 ? len - 22 - 65535 : 0;
    for (size_t i = len - 22 + 1; i-- > lo;)
        if (rd32(buf + i) == 0x06054b50u && i + 22 + rd16(buf + i + 20) == len) {
            eocd = i;
            break;
        }
    if (eocd == (size_t)-1) {
        snprintf(err, errlen, "not a zip archive (.npz): no end-of-central-directory record");
        return -1;
    }
    uint64_t entries = rd16(buf + eocd + 10), cd_size = rd32(buf + eocd + 12), cd_off = rd32(buf + eocd + 16);
    if (entries == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
        /* zip64: the locator just before, pointing at the zip64 record */
        if (eocd < 20 || rd32(buf + eocd - 20) != 0x07064b50u) {
            snprintf(err, errlen, "zip64 archive without its end-of-central-directory locator");
            return -1;
        }
        uint64_t z64 = rd64(buf + eocd - 20 + 8);
        if (len < 56 || z64 > len - 56 || rd32(buf + (size_t)z64) != 0x06064b50u) {
            snprintf(err, errlen, "zip64 end-of-central-directory record missing or out of the file");
            return -1;
        }
        entries = rd64(buf + (size_t)z64 + 32);
        cd_size = rd64(buf + (size_t)z64 + 40);
        cd_off = rd64(buf + (size_t)z64 + 48);
    }
    if (cd_off > len || cd_size > len - cd_off) {
        snprintf(err, errlen, "central directory (offset %llu, %llu bytes) out of the file's %zu bytes",
                 (unsigned long long)cd_off, (unsigned long long)cd_size, len);
        return -1;
    }
    if (entries > MAX_MEMBERS) {
        snprintf(err, errlen, "%llu members (at most %d expected)", (unsigned long long)entries, MAX_MEMBERS);
        return -1;
    }
    out->arrays = calloc(entries ? entries : 1, sizeof *out->arrays);
    if (!out->arrays) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t p = (size_t)cd_off, cd_end = (size_t)(cd_off + cd_size);
    char msg[256];
    for (uint64_t e = 0; e < entries; e++) {
        if (p + 46 > cd_end || rd32(buf + p) != 0x02014b50u) {
            snprintf(err, errlen, "central directory entry %llu malformed", (unsigned long long)e);
            return -1;
        }
        unsigned flags = rd16(buf + p + 8), method = rd16(buf + p + 10);
        uint32_t crc = rd32(buf + p + 16);
        uint64_t csize = rd32(buf + p + 20), usize = rd32(buf + p + 24), loff = rd32(buf + p + 42);
        size_t nl = rd16(buf + p + 28), xl = rd16(buf + p + 30), cl = rd16(buf + p + 32);
        if (p + 46 + nl + xl + cl > cd_end) {
            snprintf(err, errlen, "central directory entry %llu runs past the directory", (unsigned long long)e);
            return -1;
        }
        const unsigned char *name = buf + p + 46, *x = name + nl, *xend = x + xl;
        while (x + 4 <= xend) {   /* zip64 extra field: the 32-bit fields that are 0xFFFFFFFF, in order */
            unsigned id = rd16(x), sz = rd16(x + 2);
            if (x + 4 + sz > xend)
                break;
            if (id == 1) {
                const unsigned char *f = x + 4, *fe = f + sz;
                if (usize == 0xFFFFFFFFu && f + 8 <= fe)
                    usize = rd64(f), f += 8;
                if (csize == 0xFFFFFFFFu && f + 8 <= fe)
                    csize = rd64(f), f += 8;
                if (loff == 0xFFFFFFFFu && f + 8 <= fe)
                    loff = rd64(f), f += 8;
            }
            x += 4 + sz;
        }
        p += 46 + nl + xl + cl;
        npz_array *a = &out->arrays[out->n];
        if (nl < 5 || nl - 4 >= sizeof a->name || memcmp(name + nl - 4, ".npy", 4) || memchr(name, 0, nl)) {
            snprintf(err, errlen, "member '%.*s' is not NAME.npy (NAME below %zu characters)", (int)(nl > 80 ? 80 : nl),
                     (const char *)name, sizeof a->name);
            return -1;
        }
        memcpy(a->name, name, nl - 4);
        a->name[nl - 4] = 0;
        if (npz_get(out, a->name)) {
            snprintf(err, errlen, "two members named %s.npy", a->name);
            return -1;
        }
        if (flags & 1) {
            snprintf(err, errlen, "member %s.npy is encrypted", a->name);
            return -1;
        }
        if (method != 0 && method != 8) {
            snprintf(err, errlen, "member %s.npy: compression method %u (expected 0 stored or 8 deflate)", a->name,
                     method);
            return -1;
        }
        if (len < 30 || loff > len - 30 || rd32(buf + (size_t)loff) != 0x04034b50u) {
            snprintf(err, errlen, "member %s.npy: no local header at offset %llu", a->name, (unsigned long long)loff);
            return -1;
        }
        uint64_t data = loff + 30 + rd16(buf + loff + 26) + rd16(buf + loff + 28);
        if (data > len || csize > len - data) {
            snprintf(err, errlen, "member %s.npy: its %llu bytes run past the end of the file", a->name,
                     (unsigned long long)csize);
            return -1;
        }
        /* an .npy header is at most 64 KiB; deflate expands at most ~1032 times */
        if (usize > max_bytes + 65536 + 12 || (method == 0 && usize != csize) ||
            (method == 8 && usize > csize * 1032 + 1024)) {
            snprintf(err, errlen, "member %s.npy: size %llu (stored as %llu) is inconsistent or over the limit",
                     a->name, (unsigned long long)usize, (unsigned long long)csize);
            return -1;
        }
        unsigned char *raw = NULL;
        const unsigned char *bytes = buf + data;
        if (method == 8) {
            raw = malloc(usize ? (size_t)usize : 1);
            if (!raw) {
                snprintf(err, errlen, "out of memory for member %s.npy (%llu bytes)", a->name, (unsigned long long)usize);
                return -1;
            }
            if (inflate_raw(buf + data, (size_t)csize, raw, (size_t)usize, msg, sizeof msg)) {
                snprintf(err, errlen, "member %s.npy: %s", a->name, msg);
                free(raw);
                return -1;
            }
            bytes = raw;
        }
        uint32_t c = (uint32_t)crc32(0L, Z_NULL, 0);
        for (uint64_t off = 0; off < usize;) {
            uInt chunk = usize - off > (1u << 30) ? (1u << 30) : (uInt)(usize - off);
            c = (uint32_t)crc32(c, bytes + off, chunk);
            off += chunk;
        }
        if (c != crc) {
            snprintf(err, errlen, "member %s.npy: CRC-32 %08x, the directory says %08x", a->name, c, crc);
            free(raw);
            return -1;
        }
        int rc = npy_parse(bytes, (size_t)usize, max_bytes, a, msg, sizeof msg);
        free(raw);
        if (rc) {
            snprintf(err, errlen, "member %s.npy: %s", a->name, msg);
            return -1;
        }
        out->n++;
    }
    return 0;
}

int npz_slurp(const char *path, uint64_t limit, unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return -1;
    }
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap > limit) {
                snprintf(err, errlen, "file over the size limit of %llu bytes", (unsigned long long)limit);
                free(buf);
                fclose(f);
                return -1;
            }
            cap = cap ? cap * 2 : 1 << 16;
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                snprintf(err, errlen, "out of memory");
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "read error");
        free(buf);
        return -1;
    }
    *out = buf;
    *outlen = len;
    return 0;
}

int npz_read(const char *path, uint64_t max_bytes, npz_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    unsigned char *buf;
    size_t len;
    if (npz_slurp(path, max_bytes * 2 + (64u << 20), &buf, &len, err, errlen))
        return -1;
    int rc = npz_read_mem(buf, len, max_bytes, out, err, errlen);
    free(buf);
    return rc;
}

void npz_free(npz_file *f)
{
    if (!f)
        return;
    if (f->arrays)
        for (int i = 0; i < f->n; i++)
            free(f->arrays[i].data);
    free(f->arrays);
    memset(f, 0, sizeof *f);
}

const npz_array *npz_get(const npz_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->arrays[i].name, name))
            return &f->arrays[i];
    return NULL;
}

/* ----------------------------------------------------------------- write */

static void wr16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void wr32(unsigned char *p, uint32_t v) { wr16(p, v & 0xFFFF), wr16(p + 2, v >> 16); }

int npz_write(const char *path, const npz_array *arrays, int n, char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "path too long");
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    unsigned char *central = calloc((size_t)n, 46 + 80);
    size_t clen = 0;
    uint64_t off = 0;
    int rc = -1;
    unsigned char *member = NULL, *packed = NULL;
    if (!central) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const npz_array *a = &arrays[i];
        /* the .npy v1.0 member: magic, header dict padded to 64 bytes, data */
        char dict[256];
        if (a->ndim == 1)
            snprintf(dict, sizeof dict, "{'descr': '%c%c%d', 'fortran_order': False, 'shape': (%llu,), }",
                     a->width == 1 ? '|' : '<', a->kind, a->width, (unsigned long long)a->shape[0]);
        else
            snprintf(dict, sizeof dict, "{'descr': '%c%c%d', 'fortran_order': False, 'shape': (%llu, %llu), }",
                     a->width == 1 ? '|' : '<', a->kind, a->width, (unsigned long long)a->shape[0],
                     (unsigned long long)a->shape[1]);
        size_t dl = strlen(dict), hl = (10 + dl + 1 + 63) / 64 * 64 - 10;
        size_t bytes = (size_t)a->count * (size_t)a->width, mlen = 10 + hl + bytes;
        free(member);
        member = malloc(mlen);
        if (!member) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        memcpy(member, "\x93NUMPY\x01\x00", 8);
        wr16(member + 8, (uint32_t)hl);
        memset(member + 10, ' ', hl);
        memcpy(member + 10, dict, dl);
        member[10 + hl - 1] = '\n';
        memcpy(member + 10 + hl, a->data, bytes);
        uLong bound = compressBound((uLong)mlen);
        free(packed);
        packed = malloc(bound);
        if (!packed) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        z_stream z;
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            snprintf(err, errlen, "zlib: deflateInit2 failed");
            goto out;
        }
        z.next_in = member;
        z.avail_in = (uInt)mlen;
        z.next_out = packed;
        z.avail_out = (uInt)bound;
        int zr = deflate(&z, Z_FINISH);
        size_t plen = (size_t)z.total_out;
        deflateEnd(&z);
        if (zr != Z_STREAM_END || mlen > 0xFFFFFFF0u || off + plen > 0xFFFFFFF0u) {
            snprintf(err, errlen, "array %s: deflate failed or over 4 GiB (no zip64 writing)", a->name);
            goto out;
        }
        uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), member, (uInt)mlen);
        char name[80];
        size_t nl = (size_t)snprintf(name, sizeof name, "%s.npy", a->name);
        unsigned char lh[30] = {0};
        wr32(lh, 0x04034b50u);
        wr16(lh + 4, 20);
        wr16(lh + 8, 8);
        wr16(lh + 12, 0x21);   /* 1980-01-01: no time stamp, reproducible files */
        wr32(lh + 14, crc);
        wr32(lh + 18, (uint32_t)plen);
        wr32(lh + 22, (uint32_t)mlen);
        wr16(lh + 26, (uint32_t)nl);
        if (fwrite(lh, 1, 30, f) != 30 || fwrite(name, 1, nl, f) != nl || fwrite(packed, 1, plen, f) != plen) {
            snprintf(err, errlen, "write error on %s", tmp);
            goto out;
        }
        unsigned char *c = central + clen;
        wr32(c, 0x02014b50u);
        wr16(c + 4, 20);
        wr16(c + 6, 20);
        memcpy(c + 8, lh + 6, 24);   /* flags, method, time, date, crc, sizes, name length */
        wr16(c + 30, 0);             /* extra, comment, disk, attributes */
        wr32(c + 42, (uint32_t)off);
        memcpy(c + 46, name, nl);
        clen += 46 + nl;
        off += 30 + nl + plen;
    }
    unsigned char e[22] = {0};
    wr32(e, 0x06054b50u);
    wr16(e + 8, (uint32_t)n);
    wr16(e + 10, (uint32_t)n);
    wr32(e + 12, (uint32_t)clen);
    wr32(e + 16, (uint32_t)off);
    if (fwrite(central, 1, clen, f) != clen || fwrite(e, 1, 22, f) != 22) {
        snprintf(err, errlen, "write error on %s", tmp);
        goto out;
    }
    rc = 0;
out:
    free(member);
    free(packed);
    free(central);
    if (fclose(f) && !rc) {
        snprintf(err, errlen, "write error on %s", tmp);
        rc = -1;
    }
    if (!rc && rename(tmp, path)) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        rc = -1;
    }
    if (rc)
        remove(tmp);
    return rc;
}

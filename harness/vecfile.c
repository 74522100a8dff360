/*
 * vecfile.c - `.vec` reader and writer (shared/VECTORS.md).
 */
#include "vecfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct mf_vec_reader {
    char name[256];
    gzFile gz;             /* file source, or NULL */
    const char *mem;       /* memory source */
    size_t mem_len, mem_pos;
    char *buf;             /* current line */
    size_t cap;
    long line;
    const mf_instr *instr; /* current instruction, NULL if none/unknown */
    int in_unknown;        /* under an unknown `instr` line */
    int skip_unknown;
    long skipped;
    char unknown[160];
    char msg[512];
};

static void set_msg(mf_vec_reader *r, const char *fmt, ...)
{
    char tmp[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    snprintf(r->msg, sizeof r->msg, "%s:%ld: %s", r->name, r->line, tmp);
}

static mf_vec_reader *reader_new(const char *name)
{
    mf_vec_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->cap = 4096;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        free(r);
        return NULL;
    }
    return r;
}

mf_vec_reader *mf_vec_open(const char *path, char *err, size_t errlen)
{
    mf_vec_reader *r = reader_new(path);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    errno = 0;
    r->gz = gzopen(path, "rb");  /* reads plain files as they are */
    if (!r->gz) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, errno ? strerror(errno) : "out of memory");
        free(r->buf);
        free(r);
        return NULL;
    }
    gzbuffer(r->gz, 1 << 17);
    return r;
}

mf_vec_reader *mf_vec_open_mem(const char *name, const char *buf, size_t len)
{
    mf_vec_reader *r = reader_new(name);
    if (!r)
        return NULL;
    r->mem = buf;
    r->mem_len = len;
    return r;
}

void mf_vec_set_skip_unknown(mf_vec_reader *r, int on) { r->skip_unknown = on; }
const char *mf_vec_error(const mf_vec_reader *r) { return r->msg; }
const char *mf_vec_unknown_name(const mf_vec_reader *r) { return r->unknown; }
long mf_vec_skipped(const mf_vec_reader *r) { return r->skipped; }

void mf_vec_close(mf_vec_reader *r)
{
    if (!r)
        return;
    if (r->gz)
        gzclose(r->gz);
    free(r->buf);
    free(r);
}

/* Read one line into r->buf without its newline.
 * @return 1 line read, 0 end of input, -1 error. */
static int read_line(mf_vec_reader *r)
{
    size_t n = 0;
    for (;;) {
        int ch;
        if (r->gz) {
            ch = gzgetc(r->gz);
            if (ch < 0) {
                int zerr;
                const char *zmsg = gzerror(r->gz, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END) {
                    r->line++;
                    set_msg(r, "read error or truncated compressed data (%s)", zmsg);
                    return -1;
                }
            }
        } else {
            ch = r->mem_pos < r->mem_len ? (unsigned char)r->mem[r->mem_pos++] : -1;
        }
        if (ch < 0) {
            if (n == 0)
                return 0;
            break;
        }
        if (ch == '\n')
            break;
        if (n + 2 > r->cap) {
            if (r->cap >= (1u << 20)) {
                r->line++;
                set_msg(r, "line longer than 1 MiB");
                return -1;
            }
            char *nb = realloc(r->buf, r->cap * 2);
            if (!nb) {
                r->line++;
                set_msg(r, "out of memory");
                return -1;
            }
            r->buf = nb;
            r->cap *= 2;
        }
        r->buf[n++] = (char)ch;
    }
    if (n && r->buf[n - 1] == '\r')
        n--;
    r->buf[n] = 0;
    r->line++;
    return 1;
}

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Parse a comma-separated list of `want` values of format f from s[0..len).
 * @return 0 or -1 with a message. */
static int parse_list(const char *key, mf_format f, const char *s, size_t len, uint64_t *out, int want,
                      char *err, size_t errlen)
{
    const mf_format_info *fi = mf_format_get(f);
    int count = 0;
    size_t i = 0;
    for (;;) {
        size_t start = i;
        uint64_t v = 0;
        while (i < len && s[i] != ',') {
            int h = hexval((unsigned char)s[i]);
            if (h < 0) {
                snprintf(err, errlen, "field %s: '%c' is not a hex digit (value %d)", key,
                         isprint((unsigned char)s[i]) ? s[i] : '?', count + 1);
                return -1;
            }
            v = (v << 4) | (uint64_t)h;
            i++;
        }
        size_t w = i - start;
        if (w != fi->hex_width) {
            snprintf(err, errlen, "field %s: value %d has %zu hex digits, expected %d for %s", key, count + 1, w,
                     fi->hex_width, fi->name);
            return -1;
        }
        if (fi->bits < 64 && (v >> fi->bits)) {
            snprintf(err, errlen, "field %s: value %d (%.*s) does not fit in %d bits of %s", key, count + 1, (int)w,
                     s + start, fi->bits, fi->name);
            return -1;
        }
        if (count >= want) {
            snprintf(err, errlen, "field %s: more than the %d values expected", key, want);
            return -1;
        }
        out[count++] = v;
        if (i >= len)
            break;
        i++;  /* the comma */
    }
    if (count != want) {
        snprintf(err, errlen, "field %s: %d values, expected %d", key, count, want);
        return -1;
    }
    return 0;
}

int mf_vec_parse_case(const mf_instr *in, const char *line, mf_vec_case *out, char *err, size_t errlen)
{
    int seen_c = 0, seen_a = 0, seen_b = 0, seen_sa = 0, seen_sb = 0;
    memset(&out->cs, 0, sizeof out->cs);
    out->has_d = 0;
    out->d = 0;
    out->instr = in;
    const char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *tok = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        size_t tlen = (size_t)(p - tok);
        const char *eq = memchr(tok, '=', tlen);
        if (!eq || eq == tok) {
            snprintf(err, errlen, "expected key=value, found '%.*s'", (int)(tlen > 40 ? 40 : tlen), tok);
            return -1;
        }
        size_t klen = (size_t)(eq - tok);
        const char *val = eq + 1;
        size_t vlen = tlen - klen - 1;
        int rc = 0;
#define KEY(k) (klen == sizeof(k) - 1 && memcmp(tok, k, klen) == 0)
        if (KEY("c")) {
            rc = parse_list("c", in->fc, val, vlen, &out->cs.c, 1, err, errlen);
            seen_c++;
        } else if (KEY("a")) {
            rc = parse_list("a", in->fa, val, vlen, out->cs.a, in->k, err, errlen);
            seen_a++;
        } else if (KEY("b")) {
            rc = parse_list("b", in->fb, val, vlen, out->cs.b, in->k, err, errlen);
            seen_b++;
        } else if (KEY("d")) {
            rc = parse_list("d", in->fd, val, vlen, &out->d, 1, err, errlen);
            out->has_d++;
        } else if (KEY("sa") || KEY("sb")) {
            int is_a = tok[1] == 'a';
            if (!in->n_scales) {
                snprintf(err, errlen, "field s%c: %s takes no block scales", is_a ? 'a' : 'b', in->name);
                return -1;
            }
            rc = parse_list(is_a ? "sa" : "sb", in->fs, val, vlen, is_a ? out->cs.sa : out->cs.sb, in->n_scales,
                            err, errlen);
            if (is_a)
                seen_sa++;
            else
                seen_sb++;
        }
        else if (klen <= 2) {
            /* keys of one or two characters are the operand namespace */
            snprintf(err, errlen, "unknown key '%.*s' (operand keys are c, a, b, sa, sb, d; free fields have "
                                  "names of three or more characters)", (int)klen, tok);
            return -1;
        }
        /* any longer key is a free field (src=, note=, mix=...): ignored (VECTORS.md) */
#undef KEY
        if (rc)
            return -1;
    }
    if (seen_c != 1 || seen_a != 1 || seen_b != 1 || out->has_d > 1 ||
        (in->n_scales && (seen_sa != 1 || seen_sb != 1))) {
        snprintf(err, errlen, "expected exactly one each of c=, a=, b=%s (and at most one d=)",
                 in->n_scales ? ", sa=, sb=" : "");
        return -1;
    }
    return 0;
}

int mf_vec_next(mf_vec_reader *r, mf_vec_case *out)
{
    for (;;) {
        int rc = read_line(r);
        if (rc <= 0)
            return rc == 0 ? MF_VEC_EOF : MF_VEC_ERROR;
        const char *p = r->buf;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == 0 || *p == '#')
            continue;
        if (strncmp(p, "instr", 5) == 0 && (p[5] == ' ' || p[5] == '\t' || p[5] == 0)) {
            p += 5;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t n = strcspn(p, " \t");
            if (n == 0) {
                set_msg(r, "expected an instruction name after 'instr'");
                return MF_VEC_ERROR;
            }
            if (p[n + strspn(p + n, " \t")] != 0) {
                set_msg(r, "expected one instruction name after 'instr'");
                return MF_VEC_ERROR;
            }
            snprintf(r->unknown, sizeof r->unknown, "%.*s", (int)(n < 159 ? n : 159), p);
            r->instr = mf_instr_find(r->unknown);
            r->in_unknown = r->instr == NULL;
            if (r->in_unknown) {
                set_msg(r, "unknown instruction '%s'", r->unknown);
                return MF_VEC_UNKNOWN;
            }
            continue;
        }
        if (r->in_unknown) {
            if (r->skip_unknown) {
                r->skipped++;
                continue;
            }
            set_msg(r, "case under unknown instruction '%s'", r->unknown);
            return MF_VEC_ERROR;
        }
        if (!r->instr) {
            set_msg(r, "expected an 'instr ARCH/QUALIFIER' line before the first case");
            return MF_VEC_ERROR;
        }
        char err[300];
        if (mf_vec_parse_case(r->instr, p, out, err, sizeof err)) {
            set_msg(r, "%s", err);
            return MF_VEC_ERROR;
        }
        out->line = r->line;
        return MF_VEC_CASE;
    }
}

int mf_vec_format_value(mf_format f, uint64_t v, char *buf, size_t len)
{
    const mf_format_info *fi = mf_format_get(f);
    int n = snprintf(buf, len, "%0*llx", fi->hex_width, (unsigned long long)v);
    return (n < 0 || (size_t)n >= len) ? -1 : n;
}

/* Append "key=v0,v1,..." to buf at *pos. */
static int put_list(char *buf, size_t len, size_t *pos, const char *key, mf_format f, const uint64_t *v, int n)
{
    int w = snprintf(buf + *pos, len - *pos, "%s%s=", *pos ? " " : "", key);
    if (w < 0 || (size_t)w >= len - *pos)
        return -1;
    *pos += (size_t)w;
    for (int i = 0; i < n; i++) {
        if (i) {
            if (*pos + 1 >= len)
                return -1;
            buf[(*pos)++] = ',';
            buf[*pos] = 0;
        }
        w = mf_vec_format_value(f, v[i], buf + *pos, len - *pos);
        if (w < 0)
            return -1;
        *pos += (size_t)w;
    }
    return 0;
}

int mf_vec_format_case(const mf_instr *in, const mf_case *cs, const uint64_t *d, char *buf, size_t len)
{
    size_t pos = 0;
    if (len == 0)
        return -1;
    buf[0] = 0;
    if (put_list(buf, len, &pos, "c", in->fc, &cs->c, 1) || put_list(buf, len, &pos, "a", in->fa, cs->a, in->k) ||
        put_list(buf, len, &pos, "b", in->fb, cs->b, in->k))
        return -1;
    if (in->n_scales &&
        (put_list(buf, len, &pos, "sa", in->fs, cs->sa, in->n_scales) ||
         put_list(buf, len, &pos, "sb", in->fs, cs->sb, in->n_scales)))
        return -1;
    if (d && put_list(buf, len, &pos, "d", in->fd, d, 1))
        return -1;
    return (int)pos;
}

const char *mf_vec_line(const mf_vec_reader *r) { return r->buf; }

int mf_vec_field(const char *line, const char *key, char *val, size_t len)
{
    size_t klen = strlen(key);
    const char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *tok = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if ((size_t)(p - tok) > klen && !strncmp(tok, key, klen) && tok[klen] == '=') {
            size_t n = (size_t)(p - tok) - klen - 1;
            if (n >= len)
                n = len ? len - 1 : 0;
            if (len) {
                memcpy(val, tok + klen + 1, n);
                val[n] = 0;
            }
            return 1;
        }
    }
    return 0;
}

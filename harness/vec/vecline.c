/*
 * vecline.c - one `.vec` line at a time (shared/VECTORS.md): parsing a case
 * line, formatting one, reading a free field.  No I/O and no zlib, so that
 * the Python package links it without the file reader (vecfile.c).
 */
#include "vecfile.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

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

/* Parse meta= of a sparse row: n_meta hex digits, group 0 first, each a
 * legal nibble for the row (mf_sparse_meta_ok).  @return 0 or -1 with a message. */
static int parse_meta(const mf_instr *in, const char *s, size_t len, uint8_t *out, char *err, size_t errlen)
{
    if (len != (size_t)in->n_meta) {
        snprintf(err, errlen, "field meta: %zu hex digits, expected %d (one per group of %d K positions of %s)", len,
                 in->n_meta, in->sp_group, in->name);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        int h = hexval((unsigned char)s[i]);
        if (h < 0) {
            snprintf(err, errlen, "field meta: '%c' is not a hex digit (group %zu)",
                     isprint((unsigned char)s[i]) ? s[i] : '?', i);
            return -1;
        }
        if (!mf_sparse_meta_ok(in, (unsigned)h)) {
            snprintf(err, errlen, "field meta: group %zu: %x is not legal metadata for %s (%s)", i, h, in->name,
                     in->sp_group == 2 ? "tf32: 4 or e"
                     : mf_sparse_sorted_only(in) ? "two different indices, increasing"
                                                   : "two different indices");
            return -1;
        }
        out[i] = (uint8_t)h;
    }
    return 0;
}

int mf_vec_parse_case(const mf_instr *in, const char *line, mf_vec_case *out, char *err, size_t errlen)
{
    int seen_c = 0, seen_a = 0, seen_b = 0, seen_sa = 0, seen_sb = 0, seen_meta = 0;
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
        else if (KEY("meta")) {
            /* the one operand key longer than two characters (sparse rows only) */
            if (!in->sparse) {
                snprintf(err, errlen, "field meta: %s is not sparse (meta= is for mma.sp and wgmma.sp rows)", in->name);
                return -1;
            }
            rc = parse_meta(in, val, vlen, out->cs.meta, err, errlen);
            seen_meta++;
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
    if (in->sparse) {
        const char *why = NULL;
        if (seen_meta != 1) {
            snprintf(err, errlen, "expected exactly one meta= (%s is sparse: one hex digit per group of %d)", in->name,
                     in->sp_group);
            return -1;
        }
        if (mf_sparse_check(in, &out->cs, &why)) {
            snprintf(err, errlen, "%s", why);
            return -1;
        }
    }
    return 0;
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
    if (in->sparse) {
        if (pos + 6 + (size_t)in->n_meta >= len)
            return -1;
        memcpy(buf + pos, " meta=", 6);
        pos += 6;
        for (int g = 0; g < in->n_meta; g++)
            buf[pos++] = "0123456789abcdef"[cs->meta[g] & 15];
        buf[pos] = 0;
    }
    if (d && put_list(buf, len, &pos, "d", in->fd, d, 1))
        return -1;
    return (int)pos;
}

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

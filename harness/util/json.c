/*
 * json.c - JSON strings, written and read (json.h; RFC 8259 section 7).
 */
#include "json.h"

#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

void json_put_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    fputc('"', f);
    while (*p) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p++, f);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            size_t n = utf8_len(p);
            if (n)
                fwrite(p, 1, n, f);
            else
                fputs("\\ufffd", f);
            p += n ? n : 1;
        }
    }
    fputc('"', f);
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return -1;
        *v = *v * 16 + d;
    }
    return 0;
}

/* Append code point u as UTF-8 if it fits whole (with the terminating NUL); else set *full. */
static void put_cp(char *out, size_t len, size_t *n, int *full, unsigned u)
{
    char b[4];
    size_t k;
    if (u < 0x80) {
        b[0] = (char)u;
        k = 1;
    } else if (u < 0x800) {
        b[0] = (char)(0xc0 | u >> 6);
        b[1] = (char)(0x80 | (u & 0x3f));
        k = 2;
    } else if (u < 0x10000) {
        b[0] = (char)(0xe0 | u >> 12);
        b[1] = (char)(0x80 | (u >> 6 & 0x3f));
        b[2] = (char)(0x80 | (u & 0x3f));
        k = 3;
    } else {
        b[0] = (char)(0xf0 | u >> 18);
        b[1] = (char)(0x80 | (u >> 12 & 0x3f));
        b[2] = (char)(0x80 | (u >> 6 & 0x3f));
        b[3] = (char)(0x80 | (u & 0x3f));
        k = 4;
    }
    if (!*full && *n + k < len) {
        memcpy(out + *n, b, k);
        *n += k;
    } else {
        *full = 1;  /* nothing more is appended (a character is never cut) */
    }
}

const char *json_get_str(const char *p, char *out, size_t len)
{
    size_t n = 0;
    int full = 0;
    if (len)
        out[0] = 0;
    if (!p || *p != '"' || !len)
        return NULL;
    for (p++;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            break;
        if (c < 0x20)
            goto bad;  /* the end of the text, or a raw control character */
        if (c != '\\') {
            size_t k = utf8_len((const unsigned char *)p);
            if (!k)
                goto bad;
            if (!full && n + k < len) {
                memcpy(out + n, p, k);
                n += k;
            } else {
                full = 1;
            }
            p += k - 1;
            continue;
        }
        unsigned u;
        switch (*++p) {
        case '"': u = '"'; break;
        case '\\': u = '\\'; break;
        case '/': u = '/'; break;
        case 'b': u = '\b'; break;
        case 'f': u = '\f'; break;
        case 'n': u = '\n'; break;
        case 'r': u = '\r'; break;
        case 't': u = '\t'; break;
        case 'u':
            if (hex4(p + 1, &u))
                goto bad;
            p += 4;
            if (u >= 0xd800 && u <= 0xdbff) {  /* a high surrogate: its low one must follow */
                unsigned lo;
                if (p[1] != '\\' || p[2] != 'u' || hex4(p + 3, &lo) || lo < 0xdc00 || lo > 0xdfff)
                    goto bad;
                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            } else if (u >= 0xdc00 && u <= 0xdfff) {
                goto bad;
            }
            if (u == 0)
                u = 0xfffd;  /* C strings end at NUL */
            break;
        default:
            goto bad;
        }
        put_cp(out, len, &n, &full, u);
    }
    out[n] = 0;
    return p + 1;
bad:
    out[0] = 0;
    return NULL;
}

/* ------------------------------------------------------------ a whole value */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

const char *json_number_end(const char *p)
{
    const char *s = p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        if (*++p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        if (*++p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p > s ? p : NULL;
}

/* The end of the value at p, or NULL (*at: where it went wrong). */
static const char *skip_value(const char *p, int depth, const char **at)
{
    char one[1];
    p = ws(p);
    *at = p;
    if (depth > 64)
        return NULL;
    if (*p == '"')
        return json_get_str(p, one, sizeof one);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                *at = p;
                if (*p != '"' || !(p = json_get_str(p, one, sizeof one)))
                    return NULL;
                p = ws(p);
                *at = p;
                if (*p++ != ':')
                    return NULL;
            }
            if (!(p = skip_value(p, depth + 1, at)))
                return NULL;
            p = ws(p);
            *at = p;
            if (*p == close)
                return p + 1;
            if (*p++ != ',')
                return NULL;
            p = ws(p);
        }
    }
    if (!strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    if (!strncmp(p, "null", 4))
        return p + 4;
    return json_number_end(p);
}

long json_check_object(const char *text)
{
    const char *at = text, *p = ws(text);
    if (*p != '{')
        return (long)(p - text) + 1;
    p = skip_value(p, 0, &at);
    if (!p)
        return (long)(at - text) + 1;
    p = ws(p);
    return *p ? (long)(p - text) + 1 : 0;
}

const char *json_member(const char *obj, const char *key)
{
    char name[64];
    const char *at, *p = ws(obj);
    if (*p != '{')
        return NULL;
    p = ws(p + 1);
    while (*p == '"') {
        const char *q = json_get_str(p, name, sizeof name);
        if (!q)
            return NULL;
        int hit = !strcmp(name, key) && strlen(key) < sizeof name - 1;
        p = ws(q);
        if (*p++ != ':')
            return NULL;
        p = ws(p);
        if (hit)
            return p;
        if (!(p = skip_value(p, 1, &at)))
            return NULL;
        p = ws(p);
        if (*p != ',')
            return NULL;
        p = ws(p + 1);
    }
    return NULL;
}

/*
 * json_value.c - a small strict JSON reader into a tree (json_value.h).
 */
#include "json_value.h"

#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 32, MAX_ITEMS = 1 << 16 };

typedef struct rd {
    const char *p, *s, *end;
    char *err;
    size_t errlen;
    int failed;
} rd;

static int fail(rd *r, const char *what)
{
    if (!r->failed)
        snprintf(r->err, r->errlen, "offset %zu: %s", (size_t)(r->p - r->s), what);
    r->failed = 1;
    return -1;
}

static void ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int lit(rd *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
        return fail(r, "expected a JSON value");
    r->p += n;
    return 0;
}

/* A string at r->p (its quote); its bytes end before r->end (json_get_str
 * reads a NUL-terminated text: the caller's copy is terminated). */
static int str(rd *r, char **out)
{
    const char *q = r->p + 1;
    size_t len = 0;   /* an upper bound of the decoded length: the raw length */
    while (q < r->end && *q != '"') {
        if (*q == '\\')
            q++;
        q++;
    }
    if (q >= r->end)
        return fail(r, "unterminated string");
    len = (size_t)(q - r->p) + 1;
    char *buf = malloc(len + 4);
    if (!buf)
        return fail(r, "out of memory");
    const char *after = json_get_str(r->p, buf, len + 4);
    if (!after || after > r->end) {
        free(buf);
        return fail(r, "malformed string (escapes, control characters or UTF-8)");
    }
    r->p = after;
    *out = buf;
    return 0;
}

static int number(rd *r, jv *v)
{
    const char *q = r->p;
    if (q < r->end && *q == '-')
        q++;
    if (q >= r->end || *q < '0' || *q > '9')
        return fail(r, "expected a JSON value");
    if (*q == '0')
        q++;
    else
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    int whole = 1;
    if (q < r->end && *q == '.') {
        whole = 0;
        q++;
        if (q >= r->end || *q < '0' || *q > '9')
            return fail(r, "expected digits after '.'");
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        whole = 0;
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= r->end || *q < '0' || *q > '9')
            return fail(r, "expected digits in the exponent");
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    size_t n = (size_t)(q - r->p);
    v->kind = JV_NUMBER;
    v->str = malloc(n + 1);
    if (!v->str)
        return fail(r, "out of memory");
    memcpy(v->str, r->p, n);
    v->str[n] = 0;
    if (whole) {
        errno = 0;
        char *e;
        long long x = strtoll(v->str, &e, 10);
        if (!errno && !*e) {
            v->is_int = 1;
            v->i = x;
        }
    }
    r->p = q;
    return 0;
}

static int value(rd *r, jv *v, int depth);

static int grow(rd *r, jv *v, size_t *cap, int obj)
{
    if (v->n < *cap)
        return 0;
    if (v->n >= MAX_ITEMS)
        return fail(r, "too many elements");
    size_t nc = *cap ? *cap * 2 : 8;
    jv *it = realloc(v->items, nc * sizeof *it);
    if (!it)
        return fail(r, "out of memory");
    v->items = it;
    if (obj) {
        char **k = realloc(v->keys, nc * sizeof *k);
        if (!k)
            return fail(r, "out of memory");
        v->keys = k;
    }
    *cap = nc;
    return 0;
}

static int container(rd *r, jv *v, int depth, int obj)
{
    if (depth >= MAX_DEPTH)
        return fail(r, "nested too deeply");
    v->kind = obj ? JV_OBJECT : JV_ARRAY;
    size_t cap = 0;
    r->p++;
    ws(r);
    char close = obj ? '}' : ']';
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return 0;
    }
    for (;;) {
        if (grow(r, v, &cap, obj))
            return -1;
        jv *it = &v->items[v->n];
        memset(it, 0, sizeof *it);
        if (obj) {
            ws(r);
            if (r->p >= r->end || *r->p != '"')
                return fail(r, "expected a string key");
            char *key = NULL;
            if (str(r, &key))
                return -1;
            v->keys[v->n] = key;
            ws(r);
            if (r->p >= r->end || *r->p != ':') {
                v->n++;
                return fail(r, "expected ':'");
            }
            r->p++;
        }
        v->n++;
        if (value(r, it, depth + 1))
            return -1;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 0;
        }
        return fail(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int value(rd *r, jv *v, int depth)
{
    ws(r);
    if (r->p >= r->end)
        return fail(r, "expected a JSON value");
    switch (*r->p) {
    case '{': return container(r, v, depth, 1);
    case '[': return container(r, v, depth, 0);
    case '"':
        v->kind = JV_STRING;
        return str(r, &v->str);
    case 't': v->kind = JV_TRUE; return lit(r, "true");
    case 'f': v->kind = JV_FALSE; return lit(r, "false");
    case 'n': v->kind = JV_NULL; return lit(r, "null");
    default: return number(r, v);
    }
}

int jv_parse(const char *text, size_t len, jv *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* json_get_str reads NUL-terminated text: work on a terminated copy */
    char *copy = malloc(len + 1);
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    if (memchr(copy, 0, len)) {
        snprintf(err, errlen, "offset %zu: a NUL byte", (size_t)((char *)memchr(copy, 0, len) - copy));
        free(copy);
        return -1;
    }
    rd r = {copy, copy, copy + len, err, errlen, 0};
    int rc = value(&r, out, 0);
    if (!rc) {
        ws(&r);
        if (r.p != r.end)
            rc = fail(&r, "text after the JSON value");
    }
    free(copy);
    if (rc)
        jv_free(out);
    return rc;
}

void jv_free(jv *v)
{
    if (!v)
        return;
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        if (v->kind == JV_OBJECT)
            free(v->keys[i]);
        jv_free(&v->items[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

const jv *jv_get(const jv *o, const char *key)
{
    if (!o || o->kind != JV_OBJECT)
        return NULL;
    for (size_t i = o->n; i-- > 0;)
        if (!strcmp(o->keys[i], key))
            return &o->items[i];
    return NULL;
}

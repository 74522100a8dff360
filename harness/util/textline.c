/*
 * textline.c - the strict line reader (see textline.h).
 */
#include "textline.h"

#include <string.h>

int tl_next(char *buf, size_t len, size_t *pos, long *lineno, char **line, long *col)
{
    if (*pos >= len)
        return TL_END;
    char *start = buf + *pos, *nl = memchr(start, '\n', len - *pos);
    size_t n = nl ? (size_t)(nl - start) : len - *pos;
    ++*lineno;
    *line = start;
    char *nul = memchr(start, 0, n);
    if (nul) {
        *col = (long)(nul - start) + 1;
        return TL_NUL;
    }
    if (!nl) {
        start[n] = 0;  /* fs_read_all leaves a byte after the text */
        *pos = len;
        return TL_TORN;
    }
    *nl = 0;
    *pos += n + 1;
    return TL_LINE;
}

int tl_split(char *line, char sep, char **field, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n < max)
            field[n] = p;
        n++;
        char *s = strchr(p, sep);
        if (!s)
            return n;
        if (n < max)
            *s = 0;
        p = s + 1;
    }
}

int tl_decimal(const char *s, unsigned long long max, unsigned long long *v)
{
    unsigned long long x = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (x > (max - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

int tl_hex(const char *s, size_t n)
{
    if (strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/*
 * kernel_text.c - the text form of a kernel model (docs/kernels.md): one
 * `key value` line a field, in a fixed order, `#` to the end of a line a
 * comment, so that two models diff line by line.
 */
#include "mmafuzz_kernel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const split_names[MF_KSPLIT_COUNT] = {"ceil", "balanced"};
static const char *const reduce_names[MF_KRED_COUNT] = {"serial", "tree"};

static int name_index(const char *const *names, int n, const char *v)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], v))
            return i;
    return -1;
}

static int parse_u32(const char *v, uint32_t *out)
{
    char *end;
    errno = 0;
    if (*v < '0' || *v > '9')
        return -1;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x > 0xFFFFFFFFull)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

int mf_kernel_parse(const char *text, mf_kernel *kr, char *err, size_t errlen)
{
    memset(kr, 0, sizeof *kr);
    kr->split = 1;
    kr->out = MF_FMT_NONE;
    int line = 0, have_bk = 0;
    const char *p = text;
    while (*p) {
        line++;
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char buf[256];
        if (len >= sizeof buf) {
            snprintf(err, errlen, "line %d: longer than %zu characters", line, sizeof buf - 1);
            return -1;
        }
        memcpy(buf, p, len);
        buf[len] = 0;
        p = nl ? nl + 1 : p + len;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char key[64], val[192], extra[8];
        int n = sscanf(buf, "%63s %191s %7s", key, val, extra);
        if (n <= 0)
            continue;
        if (n != 2) {
            snprintf(err, errlen, "line %d: expected 'key value', got '%s'", line, buf);
            return -1;
        }
        int bad = 0;
        if (!strcmp(key, "instr")) {
            kr->in = mf_instr_find(val);
            if (!kr->in) {
                snprintf(err, errlen, "line %d: no instruction '%s' in the table", line, val);
                return -1;
            }
        } else if (!strcmp(key, "bk")) {
            bad = parse_u32(val, &kr->bk);
            have_bk = 1;
        } else if (!strcmp(key, "split")) {
            bad = parse_u32(val, &kr->split);
        } else if (!strcmp(key, "split_rule")) {
            int i = name_index(split_names, MF_KSPLIT_COUNT, val);
            bad = i < 0;
            kr->split_rule = (uint8_t)(i < 0 ? 0 : i);
        } else if (!strcmp(key, "reduce")) {
            int i = name_index(reduce_names, MF_KRED_COUNT, val);
            bad = i < 0;
            kr->reduce = (uint8_t)(i < 0 ? 0 : i);
        } else if (!strcmp(key, "promote")) {
            bad = parse_u32(val, &kr->promote);
        } else if (!strcmp(key, "out")) {
            kr->out = mf_format_by_name(val);
            bad = kr->out == MF_FMT_NONE;
        } else {
            snprintf(err, errlen, "line %d: unknown key '%s' (instr, bk, split, split_rule, reduce, promote, out)",
                     line, key);
            return -1;
        }
        if (bad) {
            snprintf(err, errlen, "line %d: bad value '%s' for %s", line, val, key);
            return -1;
        }
    }
    if (kr->in && !have_bk)
        kr->bk = kr->in->k;
    if (kr->in && kr->out == MF_FMT_NONE)
        kr->out = kr->in->fd;
    const char *why = mf_kernel_check(kr);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

int mf_kernel_format(const mf_kernel *kr, char *buf, size_t len)
{
    return snprintf(buf, len,
                    "instr %s\nbk %u\nsplit %u\nsplit_rule %s\nreduce %s\npromote %u\nout %s\n",
                    kr->in ? kr->in->name : "?", kr->bk, kr->split,
                    kr->split_rule < MF_KSPLIT_COUNT ? split_names[kr->split_rule] : "?",
                    kr->reduce < MF_KRED_COUNT ? reduce_names[kr->reduce] : "?", kr->promote,
                    mf_format_get(kr->out)->name);
}

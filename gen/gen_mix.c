/*
 * gen_mix.c - parsing and formatting generator mixes ("uniform:2,special:1")
 * from the generator table.  Host only (the generation code is elsewhere).
 */
#include "mmafuzz_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void gen_names(char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = 0;
    for (int g = 0; g < GEN_COUNT && pos < len; g++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", g ? " " : "", gen_table[g].name);
}

int gen_mix_parse(const char *s, gen_mix *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    unsigned char seen[GEN_COUNT] = {0};
    const char *p = s;
    while (*p) {
        size_t len = strcspn(p, ",");
        size_t nlen = strcspn(p, ":,");
        int g;
        for (g = 0; g < GEN_COUNT; g++)
            if (strlen(gen_table[g].name) == nlen && !strncasecmp(p, gen_table[g].name, nlen))
                break;
        if (g == GEN_COUNT) {
            char names[256];
            gen_names(names, sizeof names);
            snprintf(err, errlen, "--mix: unknown generator '%.*s' (expected one of: %s; each optionally :WEIGHT)",
                     (int)nlen, p, names);
            return -1;
        }
        if (seen[g]++) {
            snprintf(err, errlen, "--mix: generator '%s' named twice (give each once, with its weight)",
                     gen_table[g].name);
            return -1;
        }
        unsigned long w = 1;
        if (nlen < len) {
            char buf[16];
            size_t wl = len - nlen - 1;
            char *end;
            if (wl == 0 || wl >= sizeof buf) {
                snprintf(err, errlen, "--mix: expected a weight 0..1000 after '%s:'", gen_table[g].name);
                return -1;
            }
            memcpy(buf, p + nlen + 1, wl);
            buf[wl] = 0;
            w = strtoul(buf, &end, 10);
            if (*end || w > 1000) {
                snprintf(err, errlen, "--mix: expected a weight 0..1000 after '%s:', found '%s'", gen_table[g].name,
                         buf);
                return -1;
            }
        }
        m->w[g] = (uint32_t)w;
        p += len;
        if (*p == ',')
            p++;
    }
    uint32_t total = 0;
    for (int g = 0; g < GEN_COUNT; g++)
        total += m->w[g];
    if (!total) {
        snprintf(err, errlen, "--mix: expected at least one generator with a non-zero weight");
        return -1;
    }
    return 0;
}

void gen_mix_format(const gen_mix *m, char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = 0;
    for (int g = 0; g < GEN_COUNT; g++)
        if (m->w[g] && pos < len)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%s:%u", pos ? "," : "", gen_table[g].name, m->w[g]);
}

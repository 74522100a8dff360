/*
 * cli.c - the flags table of cli_flags.def, and the parser and usage text
 * every command takes from it.
 */
#include "cli.h"

#include "mmafuzz_gen.h"
#include "mmafuzz_model.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const cli_flag cli_flags[CLI_NFLAGS] = {
#define CLI_COMMAND(cmd, pos, min_pos, max_pos, about, epilog)
#define CLI_FLAG(cmd, id, names, type, metavar, def, min, max, help) \
    {CLI_CMD_##cmd, names, type, metavar, def, min, max, help},
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

typedef struct cli_command {
    const char *name, *pos;
    int min_pos, max_pos;
    const char *about, *epilog;
} cli_command;

static const cli_command cli_commands[CLI_CMD_COUNT] = {
#define CLI_COMMAND(cmd, pos, min_pos, max_pos, about, epilog) {#cmd, pos, min_pos, max_pos, about, epilog},
#define CLI_FLAG(cmd, id, names, type, metavar, def, min, max, help)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

int cli_parse_decimal(const char *s, long long *out)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return -1;
    errno = 0;
    char *end;
    long long x = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

int cli_parse_seed(const char *s, unsigned long long *out)
{
    int base = 10;
    const char *p = s;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (!*p)
        return -1;
    for (const char *q = p; *q; q++)
        if (!(base == 16 ? (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') || (*q >= 'A' && *q <= 'F')
                         : *q >= '0' && *q <= '9'))
            return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(p, &end, base);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

/* 1 if arg (without its dashes, up to '=' or its end) is one of names "a|b". */
static int name_is(const char *names, const char *arg, size_t alen)
{
    for (const char *p = names; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == alen && !strncmp(p, arg, n))
            return 1;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

static const char *first_name(const char *names, char *buf, size_t len)
{
    size_t n = strcspn(names, "|");
    snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), names);
    return buf;
}

static int single_dash(const cli_flag *f)
{
    return f->type == CLI_INT || f->type == CLI_SEED || strcspn(f->names, "|") == 1;
}

/* Store value text v of flag f in *val; -1 with a message when it is not a
 * value of the flag's type and range. */
static int set_value(const char *cmd, const cli_flag *f, const char *v, cli_val *val, int is_default)
{
    char nm[64];
    first_name(f->names, nm, sizeof nm);
    const char *dash = single_dash(f) ? "-" : "--";
    switch (f->type) {
    case CLI_BOOL:
        return 0;
    case CLI_STR:
        if (!*v) {  /* an empty folder or file name is not the current folder, nor a name the system refuses */
            const char *mv = f->metavar ? f->metavar : "";
            if (strstr(mv, "DIR"))
                fprintf(stderr, "mmafuzz %s: %s%s: the folder name is empty\n", cmd, dash, nm);
            else if (strstr(mv, "FILE"))
                fprintf(stderr, "mmafuzz %s: %s%s: the file name is empty\n", cmd, dash, nm);
            else
                fprintf(stderr, "mmafuzz %s: %s%s: empty value (expected %s)\n", cmd, dash, nm, mv);
            return -1;
        }
        val->s = v;
        return 0;
    case CLI_ARCH:
        if (mf_arch_by_name(v) == MF_ARCH_COUNT) {
            fprintf(stderr, "mmafuzz %s: %s%s: unknown architecture '%s'\n", cmd, dash, nm, v);
            return -1;
        }
        val->s = v;
        return 0;
    case CLI_LIST:
        if (val->n >= f->max) {
            fprintf(stderr, "mmafuzz %s: at most %lld %s%s values\n", cmd, f->max, dash, nm);
            return -1;
        }
        if (!val->list && !(val->list = calloc((size_t)f->max, sizeof *val->list))) {
            fprintf(stderr, "mmafuzz %s: out of memory\n", cmd);
            return -1;
        }
        val->list[val->n++] = v;
        return 0;
    case CLI_INT: {
        long long x;
        if (cli_parse_decimal(v, &x)) {
            fprintf(stderr, "mmafuzz %s: %s%s: '%s' is not a number (expected a decimal integer %lld..%lld)\n",
                    cmd, dash, nm, v, f->min, f->max);
            return -1;
        }
        if (!is_default && (x < f->min || x > f->max)) {
            fprintf(stderr, "mmafuzz %s: %s%s: expected %lld..%lld, got %s\n", cmd, dash, nm, f->min, f->max, v);
            return -1;
        }
        val->i = x;
        return 0;
    }
    case CLI_SEED:
        if (cli_parse_seed(v, &val->u)) {
            fprintf(stderr,
                    "mmafuzz %s: %s%s: '%s' is not a seed (expected decimal 0..18446744073709551615 or 0x hex)\n",
                    cmd, dash, nm, v);
            return -1;
        }
        return 0;
    }
    return -1;
}

int cli_parse(cli_cmd_id cmd, int argc, char **argv, cli_args *a)
{
    const char *cname = cli_commands[cmd].name;
    memset(a, 0, sizeof *a);
    a->pos = calloc((size_t)(argc > 0 ? argc : 1), sizeof *a->pos);
    if (!a->pos) {
        fprintf(stderr, "mmafuzz %s: out of memory\n", cname);
        return -1;
    }
    for (int f = 0; f < CLI_NFLAGS; f++)
        if (cli_flags[f].cmd == cmd && cli_flags[f].def && cli_flags[f].type != CLI_LIST &&
            set_value(cname, &cli_flags[f], cli_flags[f].def, &a->v[f], 1))
            return -1;  /* a bad default in the table */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-help") || !strcmp(arg, "-h")) {
            cli_usage(cmd, stdout);
            return 1;
        }
        if (arg[0] != '-' || !arg[1] || (arg[1] >= '0' && arg[1] <= '9')) {
            a->pos[a->npos++] = arg;
            continue;
        }
        const char *name = arg + (arg[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        int f = 0;
        for (; f < CLI_NFLAGS; f++)
            if (cli_flags[f].cmd == cmd && name_is(cli_flags[f].names, name, nlen))
                break;
        if (f == CLI_NFLAGS) {
            fprintf(stderr, "mmafuzz %s: unknown option '%s' (see mmafuzz %s --help)\n", cname, arg, cname);
            return -1;
        }
        const cli_flag *fl = &cli_flags[f];
        a->v[f].given++;
        if (fl->type == CLI_BOOL) {
            if (eq) {
                fprintf(stderr, "mmafuzz %s: option '%.*s' takes no value\n", cname, (int)(eq - arg), arg);
                return -1;
            }
            continue;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (!v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "mmafuzz %s: option %s needs a value (%s)\n", cname, arg, fl->metavar);
                return -1;
            }
            v = argv[++i];
        }
        if (set_value(cname, fl, v, &a->v[f], 0))
            return -1;
    }
    const cli_command *c = &cli_commands[cmd];
    if (a->npos < c->min_pos || (c->max_pos >= 0 && a->npos > c->max_pos)) {
        if (a->npos > c->max_pos && c->max_pos >= 0)
            fprintf(stderr, "mmafuzz %s: unexpected argument '%s'\n", cname, a->pos[c->max_pos]);
        else
            fprintf(stderr, "mmafuzz %s: expected %s\n", cname, c->pos);
        fprintf(stderr, "usage: mmafuzz %s [OPTIONS]%s%s (see mmafuzz %s --help)\n", cname, *c->pos ? " " : "",
                c->pos, cname);
        return -1;
    }
    return 0;
}

void cli_free(cli_args *a)
{
    for (int f = 0; f < CLI_NFLAGS; f++)
        free(a->v[f].list);
    free(a->pos);
    memset(a, 0, sizeof *a);
}

void cli_usage(cli_cmd_id cmd, FILE *f)
{
    const cli_command *c = &cli_commands[cmd];
    fprintf(f, "usage: mmafuzz %s [OPTIONS]%s%s\n\n%s\n\n", c->name, *c->pos ? " " : "", c->pos, c->about);
    int any = 0;
    for (int i = 0; i < CLI_NFLAGS; i++) {
        const cli_flag *fl = &cli_flags[i];
        if (fl->cmd != cmd)
            continue;
        if (!any++)
            fprintf(f, "options:\n");
        char left[96], nm[64];
        int n = 0;
        for (const char *p = fl->names; *p;) {
            size_t len = strcspn(p, "|");
            snprintf(nm, sizeof nm, "%.*s", (int)len, p);
            int sd = fl->type == CLI_INT || fl->type == CLI_SEED || len == 1;
            n += snprintf(left + n, sizeof left - (size_t)n, "%s%s%s", n ? ", " : "", sd ? "-" : "--", nm);
            p += len;
            if (*p == '|')
                p++;
        }
        if (fl->metavar)
            snprintf(left + n, sizeof left - (size_t)n, " %s", fl->metavar);
        /* the help text, continuation lines indented under the first */
        const char *h = fl->help;
        int first = 1;
        while (*h) {
            size_t len = strcspn(h, "\n");
            if (first)
                fprintf(f, "  %-20s %.*s", left, (int)len, h);
            else
                fprintf(f, "\n  %-20s %.*s", "", (int)len, h);
            first = 0;
            h += len;
            if (*h == '\n')
                h++;
        }
        if (fl->def && fl->type != CLI_BOOL)
            fprintf(f, " (default %s)", fl->def);
        if (fl->type == CLI_LIST)
            fprintf(f, " [at most %lld]", fl->max);
        fprintf(f, "\n");
        if (!strcmp(fl->names, "mix"))  /* the generators, from their table (gen/generators.def) */
            for (int g = 0; g < GEN_COUNT; g++)
                fprintf(f, "  %-20s   %-9s weight %u: %s\n", "", gen_table[g].name, (unsigned)gen_table[g].weight,
                        gen_table[g].help);
    }
    fprintf(f, "%s%s\n", any ? "\n" : "", c->epilog);
}

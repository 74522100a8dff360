/*
 * cli.c - the flags table of cli_flags.def, and the parser and usage text
 * every command takes from it.
 */
#include "cli.h"

#include "mmafuzz_gen.h"
#include "mmafuzz_model.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

const cli_flag cli_flags[CLI_NFLAGS] = {
#define CLI_COMMAND(cmd, ...)
#define CLI_FLAG(cmd, id, names, type, metavar, def, min, max, help) \
    {CLI_CMD_##cmd, names, type, metavar, def, min, max, help},
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

const cli_command cli_commands[CLI_CMD_COUNT] = {
#define CLI_COMMAND(cmd, pos, min_pos, max_pos, summary, about, epilog) \
    {#cmd, pos, min_pos, max_pos, summary, about, epilog},
#define CLI_FLAG(cmd, ...)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

/* Where each command's options struct keeps its positional arguments, and
 * its size; where each flag's value and its count (given) are. */
static const struct { size_t pos, npos, size; } cli_opts_layout[CLI_CMD_COUNT] = {
#define CLI_COMMAND(cmd, ...) \
    {offsetof(cli_opts_##cmd, pos), offsetof(cli_opts_##cmd, npos), sizeof(cli_opts_##cmd)},
#define CLI_FLAG(cmd, ...)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

static const struct { size_t val, given; } cli_flag_layout[CLI_NFLAGS] = {
#define CLI_COMMAND(cmd, ...)
#define CLI_FLAG(cmd, id, ...) {offsetof(cli_opts_##cmd, id), offsetof(cli_opts_##cmd, given.id)},
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

/* cli_parse_opts copies each value into the struct as these types hold it */
_Static_assert(sizeof(CLI_CTYPE_CLI_BOOL) == sizeof(int), "CLI_BOOL: int (times given)");
_Static_assert(sizeof(CLI_CTYPE_CLI_STR) == sizeof(const char *) &&
                   sizeof(CLI_CTYPE_CLI_ARCH) == sizeof(const char *), "CLI_STR, CLI_ARCH: const char *");
_Static_assert(sizeof(CLI_CTYPE_CLI_INT) == sizeof(long long), "CLI_INT: long long");
_Static_assert(sizeof(CLI_CTYPE_CLI_SEED) == sizeof(unsigned long long), "CLI_SEED: unsigned long long");
_Static_assert(sizeof(CLI_CTYPE_CLI_LIST) == sizeof(cli_list), "CLI_LIST: cli_list");

/* The value of one flag while parsing. */
typedef struct cli_val {
    int given;              /* times given on the command line */
    const char *s;          /* CLI_STR, CLI_ARCH: the value (or the default) */
    long long i;            /* CLI_INT: the value (or the default) */
    unsigned long long u;   /* CLI_SEED: the value */
    const char **list;      /* CLI_LIST: the values in order */
    int n;                  /* CLI_LIST: how many */
} cli_val;

/* The parsed command line of one command, before it is copied into the
 * command's options struct. */
typedef struct cli_args {
    cli_val v[CLI_NFLAGS];  /* indexed by CLI_F_*; only the command's own flags are set */
    const char **pos;       /* positional arguments, in order */
    int npos;
} cli_args;

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

static int cli_parse(cli_cmd_id cmd, int argc, char **argv, cli_args *a)
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

static void cli_free(cli_args *a)
{
    for (int f = 0; f < CLI_NFLAGS; f++)
        free(a->v[f].list);
    free(a->pos);
    memset(a, 0, sizeof *a);
}

int cli_parse_opts(cli_cmd_id cmd, int argc, char **argv, void *opts)
{
    char *o = opts;
    memset(o, 0, cli_opts_layout[cmd].size);
    cli_args *a = malloc(sizeof *a);
    if (!a) {
        fprintf(stderr, "mmafuzz %s: out of memory\n", cli_commands[cmd].name);
        return -1;
    }
    int rc = cli_parse(cmd, argc, argv, a);
    if (rc) {
        cli_free(a);
        free(a);
        return rc;
    }
    /* the values, typed (the lists and the positional arguments change owner) */
    memcpy(o + cli_opts_layout[cmd].pos, &a->pos, sizeof a->pos);
    memcpy(o + cli_opts_layout[cmd].npos, &a->npos, sizeof a->npos);
    a->pos = NULL;
    for (int f = 0; f < CLI_NFLAGS; f++) {
        if (cli_flags[f].cmd != cmd)
            continue;
        cli_val *v = &a->v[f];
        char *at = o + cli_flag_layout[f].val;
        memcpy(o + cli_flag_layout[f].given, &v->given, sizeof v->given);
        switch (cli_flags[f].type) {
        case CLI_BOOL: memcpy(at, &v->given, sizeof v->given); break;
        case CLI_STR:
        case CLI_ARCH: memcpy(at, &v->s, sizeof v->s); break;
        case CLI_INT: memcpy(at, &v->i, sizeof v->i); break;
        case CLI_SEED: memcpy(at, &v->u, sizeof v->u); break;
        case CLI_LIST: {
            cli_list l = {v->list, v->n};
            memcpy(at, &l, sizeof l);
            v->list = NULL;
            break;
        }
        }
    }
    cli_free(a);
    free(a);
    return 0;
}

void cli_free_opts(cli_cmd_id cmd, void *opts)
{
    char *o = opts;
    const char **pos;
    memcpy(&pos, o + cli_opts_layout[cmd].pos, sizeof pos);
    free(pos);
    for (int f = 0; f < CLI_NFLAGS; f++)
        if (cli_flags[f].cmd == cmd && cli_flags[f].type == CLI_LIST) {
            cli_list l;
            memcpy(&l, o + cli_flag_layout[f].val, sizeof l);
            free(l.v);
        }
    memset(o, 0, cli_opts_layout[cmd].size);
}

size_t cli_opts_size(cli_cmd_id cmd)
{
    return cli_opts_layout[cmd].size;
}

int cli_opts_given(const void *opts, cli_flag_id f)
{
    int g;
    memcpy(&g, (const char *)opts + cli_flag_layout[f].given, sizeof g);
    return g;
}

const char *cli_flag_display(cli_flag_id id, char *buf, size_t len)
{
    char nm[64];
    first_name(cli_flags[id].names, nm, sizeof nm);
    snprintf(buf, len, "%s%s", single_dash(&cli_flags[id]) ? "-" : "--", nm);
    return buf;
}

void cli_commands_usage(FILE *f)
{
    for (int c = 0; c < CLI_CMD_COUNT; c++) {
        char left[128];
        snprintf(left, sizeof left, "%s%s%s", cli_commands[c].name, *cli_commands[c].pos ? " " : "",
                 cli_commands[c].pos);
        fprintf(f, "  %-24s%s%s\n", left, strlen(left) < 24 ? " " : "  ", cli_commands[c].summary);
    }
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

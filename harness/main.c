/*
 * main.c - `mmafuzz`: differential fuzzing of GPU matrix-multiply-accumulate
 * instructions against a bit-accurate reference model.
 */
#include "cli.h"
#include "mmafuzz_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"list", cmd_list, "list [PATTERN]            instructions of the table (name, shape, formats, family)"},
    {"eval", cmd_eval, "eval INSTR c=.. a=.. b=.. [sa=.. sb=..] [--trace]   evaluate one case"},
    {"check", cmd_check, "check [--skip-unknown] [-errors N] FILE...   check the model against .vec files"},
    {"bench", cmd_bench, "bench [--instr PATTERN] [-runs N]   model dot products per second, one core"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: mmafuzz COMMAND [OPTIONS]\n\n"
               "mmafuzz %s: differential fuzzing of GPU MMA instructions against a bit-accurate model.\n\n"
               "commands:\n",
            MF_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].help);
    fprintf(f, "\n`mmafuzz COMMAND --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("mmafuzz %s\n", MF_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "mmafuzz: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

static int match_opt(const char *arg, const char *name, const char **inline_val)
{
    /* accepts -name, --name, -name=V, --name=V */
    if (arg[0] != '-')
        return 0;
    arg += arg[1] == '-' ? 2 : 1;
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *inline_val = arg + n + 1;
        return 1;
    }
    if (arg[n] == 0) {
        *inline_val = NULL;
        return 1;
    }
    return 0;
}

int cli_opt_str(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *v;
    if (!match_opt(argv[*i], name, &v))
        return 0;
    if (!v) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "mmafuzz: option -%s needs a value\n", name);
            return -1;
        }
        v = argv[++*i];
    }
    *value = v;
    return 1;
}

int cli_opt_long(int argc, char **argv, int *i, const char *name, long long *value)
{
    const char *v;
    int rc = cli_opt_str(argc, argv, i, name, &v);
    if (rc <= 0)
        return rc;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 0);
    if (errno || end == v || *end) {
        fprintf(stderr, "mmafuzz: option -%s: '%s' is not a number\n", name, v);
        return -1;
    }
    *value = x;
    return 1;
}

/*
 * cli.c - option parsing shared by the subcommands, in libFuzzer's style:
 * -name=V, -name V, --name=V and --name V are all accepted.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

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

/* The commands of the table (cli_flags.def), in its order. */
static int (*const commands[CLI_CMD_COUNT])(int, char **) = {
#define CLI_COMMAND(cmd, ...) cmd_##cmd,
#define CLI_FLAG(cmd, ...)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

static void usage(FILE *f)
{
    fprintf(f, "usage: mmafuzz COMMAND [OPTIONS]\n\n"
               "mmafuzz %s: differential fuzzing of GPU MMA instructions against a bit-accurate model.\n\n"
               "commands:\n",
            MF_VERSION);
    cli_commands_usage(f);
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
    for (int c = 0; c < CLI_CMD_COUNT; c++)
        if (!strcmp(argv[1], cli_commands[c].name))
            return commands[c](argc - 1, argv + 1);
    fprintf(stderr, "mmafuzz: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

/*
 * cli.h - the subcommands of the `mmafuzz` command-line tool and the one
 * flags table they are parsed from.  Each command returns the process exit
 * status: 0 success, 1 a mismatch or failure was found, 2 bad usage or bad
 * input.
 *
 * Every flag of every command is one line of cli_flags.def (in the manner
 * of libFuzzer's FuzzerFlags.def): its name, type, range, default and help
 * text.  The parser (cli_parse), the `--help` text (cli_usage) and the
 * validation of values (type and range) all come from that table, so a flag
 * cannot be parsed without being documented, or documented without being
 * parsed.  Forms accepted for a flag NAME: -NAME=V, -NAME V, --NAME=V,
 * --NAME V (and -NAME / --NAME for flags without a value).
 */
#ifndef MMAFUZZ_CLI_H
#define MMAFUZZ_CLI_H

#include <stdio.h>

int cmd_list(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_triage(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_campaign(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* The value types of a flag. */
typedef enum cli_type {
    CLI_BOOL,  /* no value: given or not */
    CLI_STR,   /* a string; the last one given wins */
    CLI_LIST,  /* a string, repeatable: every value kept in order (at most `max`) */
    CLI_INT,   /* a decimal integer in [min, max] */
    CLI_SEED,  /* a seed: decimal or explicit 0x hex, 0 .. 2^64-1 */
    CLI_ARCH   /* an architecture name of the model's table (mf_arch_by_name) */
} cli_type;

/* The commands that have a flags table. */
typedef enum cli_cmd_id {
#define CLI_COMMAND(cmd, pos, min_pos, max_pos, about, epilog) CLI_CMD_##cmd,
#define CLI_FLAG(cmd, id, names, type, metavar, def, min, max, help)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
    CLI_CMD_COUNT
} cli_cmd_id;

/* Every flag of every command: CLI_F_<command>_<id>. */
typedef enum cli_flag_id {
#define CLI_COMMAND(cmd, pos, min_pos, max_pos, about, epilog)
#define CLI_FLAG(cmd, id, names, type, metavar, def, min, max, help) CLI_F_##cmd##_##id,
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
    CLI_NFLAGS
} cli_flag_id;

/* One row of the table. */
typedef struct cli_flag {
    cli_cmd_id cmd;
    const char *names;    /* "seed", or "v|verbose" (alternatives) */
    cli_type type;
    const char *metavar;  /* "N", "PATTERN"; NULL for CLI_BOOL */
    const char *def;      /* default value as text, or NULL */
    long long min, max;   /* CLI_INT: the range; CLI_LIST: at most max values */
    const char *help;
} cli_flag;

extern const cli_flag cli_flags[CLI_NFLAGS];

/* The value of one flag after cli_parse. */
typedef struct cli_val {
    int given;              /* times given on the command line */
    const char *s;          /* CLI_STR, CLI_ARCH: the value (or the default) */
    long long i;            /* CLI_INT: the value (or the default) */
    unsigned long long u;   /* CLI_SEED: the value */
    const char **list;      /* CLI_LIST: the values in order */
    int n;                  /* CLI_LIST: how many */
} cli_val;

/* The parsed command line of one command. */
typedef struct cli_args {
    cli_val v[CLI_NFLAGS];  /* indexed by CLI_F_*; only the command's own flags are set */
    const char **pos;       /* positional arguments, in order */
    int npos;
} cli_args;

/* The value of flag `id` of command `cmd`: CLI_V(&a, run, seed).u */
#define CLI_V(args, cmd, id) ((args)->v[CLI_F_##cmd##_##id])

/* Parse argv[1..argc-1] of command `cmd` into *a: flags of the table, and
 * positional arguments (checked against the command's count).
 * @return 0 parsed; 1 --help was asked and printed on stdout; -1 bad usage
 * (message on stderr; the command exits 2).  Free with cli_free. */
int cli_parse(cli_cmd_id cmd, int argc, char **argv, cli_args *a);
void cli_free(cli_args *a);

/* The command's usage text, generated from the table. */
void cli_usage(cli_cmd_id cmd, FILE *f);

/* Read a seed as the table does: decimal or 0x hex, 0 .. 2^64-1, nothing
 * else (no sign, no octal).  @return 0, or -1 if s is not one. */
int cli_parse_seed(const char *s, unsigned long long *out);

/* Read a decimal integer (optional '-', no octal or hex) that fits a long
 * long.  @return 0, or -1 if s is not one. */
int cli_parse_decimal(const char *s, long long *out);

#endif

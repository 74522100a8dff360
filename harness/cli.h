/*
 * cli.h - the subcommands of the `mmafuzz` command-line tool and the one
 * flags table they are parsed from.  Each command returns the process exit
 * status: 0 success, 1 a mismatch or failure was found, 2 bad usage or bad
 * input.
 *
 * Every command and every flag of every command is one line of
 * cli_flags.def (in the manner of libFuzzer's FuzzerFlags.def): a command's
 * synopsis and help, a flag's name, type, range, default and help text.
 * The command list and dispatch (main.c), the parser (cli_CMD_parse), the
 * typed options struct of each command (cli_opts_CMD), the `--help` texts
 * (cli_usage, cli_commands_usage) and the validation of values (type and
 * range) all come from that table, so a flag cannot be parsed without being
 * documented, or documented without being parsed, and code reads it typed:
 * o.seed, not a lookup restated by hand.  Forms accepted for a flag NAME: -NAME=V, -NAME V, --NAME=V,
 * --NAME V (and -NAME / --NAME for flags without a value).
 */
#ifndef MMAFUZZ_CLI_H
#define MMAFUZZ_CLI_H

#include <stdio.h>

/* The commands, one function each: int cmd_CMD(int argc, char **argv). */
#define CLI_COMMAND(cmd, ...) int cmd_##cmd(int argc, char **argv);
#define CLI_FLAG(cmd, ...)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG

/* The value types of a flag. */
typedef enum cli_type {
    CLI_BOOL,  /* no value: given or not */
    CLI_STR,   /* a string; the last one given wins */
    CLI_LIST,  /* a string, repeatable: every value kept in order (at most `max`) */
    CLI_INT,   /* a decimal integer in [min, max] */
    CLI_SEED,  /* a seed: decimal or explicit 0x hex, 0 .. 2^64-1 */
    CLI_ARCH   /* an architecture name of the model's table (mf_arch_by_name) */
} cli_type;

/* The commands of the table: CLI_CMD_<command>. */
typedef enum cli_cmd_id {
#define CLI_COMMAND(cmd, ...) CLI_CMD_##cmd,
#define CLI_FLAG(cmd, ...)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
    CLI_CMD_COUNT
} cli_cmd_id;

/* Every flag of every command: CLI_F_<command>_<id>. */
typedef enum cli_flag_id {
#define CLI_COMMAND(cmd, ...)
#define CLI_FLAG(cmd, id, ...) CLI_F_##cmd##_##id,
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

/* One command of the table. */
typedef struct cli_command {
    const char *name, *pos;  /* "run"; the positional synopsis */
    int min_pos, max_pos;    /* positional arguments: at least, at most (-1: any) */
    const char *summary;     /* one line, for `mmafuzz --help` */
    const char *about, *epilog;
} cli_command;

extern const cli_command cli_commands[CLI_CMD_COUNT];

/* The values of a CLI_LIST flag, in the order given. */
typedef struct cli_list {
    const char **v;
    int n;
} cli_list;

/* The C type of each flag type's value in the options structs. */
#define CLI_CTYPE_CLI_BOOL int                  /* times given */
#define CLI_CTYPE_CLI_STR const char *          /* the last value given, else the default, else NULL */
#define CLI_CTYPE_CLI_ARCH const char *         /* as CLI_STR, a name mf_arch_by_name knows */
#define CLI_CTYPE_CLI_INT long long             /* the value, else the default, else 0 */
#define CLI_CTYPE_CLI_SEED unsigned long long   /* the value, else the default, else 0 */
#define CLI_CTYPE_CLI_LIST cli_list             /* every value given */

/* Each command's options, generated from its lines of the table:
 *     struct cli_opts_run { const char **pos; int npos;
 *                           struct cli_given_run given; const char *device; long long runs; ... };
 * read as o.runs, and o.given.runs (times the flag was given).  A command's
 * struct is made of the CLI_FLAG lines between its CLI_COMMAND and the next
 * (each struct is opened by its CLI_COMMAND and closed by the next one; the
 * placeholder structs cli_*_none_ take the part before the first). */
struct cli_given_none_ {
    char unused_;
#define CLI_COMMAND(cmd, ...) }; struct cli_given_##cmd { char unused_;
#define CLI_FLAG(cmd, id, ...) int id;
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

struct cli_opts_none_ {
    char unused_;
#define CLI_COMMAND(cmd, ...) }; struct cli_opts_##cmd { const char **pos; int npos; struct cli_given_##cmd given;
#define CLI_FLAG(cmd, id, names, type, ...) CLI_CTYPE_##type id;
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG
};

/* cli_opts_CMD; cli_CMD_parse(argc, argv, &o): parse argv[1..argc-1] of the
 * command: flags of the table, and positional arguments (o.pos, o.npos),
 * checked against the command's count.
 * @return 0 parsed; 1 --help was asked and printed on stdout; -1 bad usage
 * (message on stderr; the command exits 2).  After 0, free with
 * cli_CMD_free(&o); after a non-zero return nothing is held (freeing is
 * harmless).  The strings point into argv. */
int cli_parse_opts(cli_cmd_id cmd, int argc, char **argv, void *opts);
void cli_free_opts(cli_cmd_id cmd, void *opts);
#define CLI_COMMAND(cmd, ...)                                                            \
    typedef struct cli_opts_##cmd cli_opts_##cmd;                                        \
    static inline int cli_##cmd##_parse(int argc, char **argv, cli_opts_##cmd *o)        \
    {                                                                                    \
        return cli_parse_opts(CLI_CMD_##cmd, argc, argv, o);                             \
    }                                                                                    \
    static inline void cli_##cmd##_free(cli_opts_##cmd *o) { cli_free_opts(CLI_CMD_##cmd, o); }
#define CLI_FLAG(cmd, ...)
#include "cli_flags.def"
#undef CLI_COMMAND
#undef CLI_FLAG

/* Generic access, for code that walks the table (tests): the size of
 * command cmd's options struct, and the times flag f was given in a parsed
 * options struct of its command. */
size_t cli_opts_size(cli_cmd_id cmd);
int cli_opts_given(const void *opts, cli_flag_id f);

/* The command's usage text, generated from the table. */
void cli_usage(cli_cmd_id cmd, FILE *f);

/* `mmafuzz --help`'s list of commands: one line each, from the table. */
void cli_commands_usage(FILE *f);

/* The flag's first name as the usage text writes it ("-seed", "--instr"),
 * in buf. */
const char *cli_flag_display(cli_flag_id id, char *buf, size_t len);

/* Read a seed as the table does: decimal or 0x hex, 0 .. 2^64-1, nothing
 * else (no sign, no octal).  @return 0, or -1 if s is not one. */
int cli_parse_seed(const char *s, unsigned long long *out);

/* Read a decimal integer (optional '-', no octal or hex) that fits a long
 * long.  @return 0, or -1 if s is not one. */
int cli_parse_decimal(const char *s, long long *out);

#endif

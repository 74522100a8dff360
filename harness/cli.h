/*
 * cli.h - the subcommands of the `mmafuzz` command-line tool.  Each returns
 * the process exit status: 0 success, 1 a mismatch or failure was found,
 * 2 bad usage or bad input.
 */
#ifndef MMAFUZZ_CLI_H
#define MMAFUZZ_CLI_H

int cmd_list(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_triage(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_fit(int argc, char **argv);

/* Parse a libFuzzer-style numeric option "-name=N" or "-name N" / "--name N".
 * @return 1 if argv[*i] is that option (value stored, *i advanced), 0 if
 * not, -1 on a bad value (message printed). */
int cli_opt_long(int argc, char **argv, int *i, const char *name, long long *value);

/* Same for a string-valued option. */
int cli_opt_str(int argc, char **argv, int *i, const char *name, const char **value);

#endif

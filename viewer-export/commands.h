/*
 * The cudatrace subcommands, one file each.
 */
#ifndef CT_COMMANDS_H
#define CT_COMMANDS_H

#include <stddef.h>

int ct_cmd_run(int argc, char **argv);
int ct_cmd_report(int argc, char **argv);
int ct_cmd_diff(int argc, char **argv);
int ct_cmd_recover(int argc, char **argv);
int ct_cmd_doctor(int argc, char **argv);
int ct_cmd_open(int argc, char **argv);
int ct_cmd_export(int argc, char **argv);
int ct_cmd_ctl(int argc, char **argv);

/* Sets LD_PRELOAD and LD_AUDIT so that what is started next is traced. */
int ct_run_environment(void);

/* The path of `name` installed beside the cudatrace binary; -1 (with one
 * line on stderr) when it is not there. */
int ct_companion_path(const char *name, char *out, size_t size);

/* A whole number from min to max in `text`; -1 when it is not one. */
long ct_parse_count(const char *text, long min, long max);

/* Prints "cudatrace: <message>" and the usage hint; returns exit status 2. */
int ct_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* After getopt_long returned '?' or ':' (`result`; its optstring starts
 * with ':' and opterr is 0): says which option of the command argv[0] was
 * unknown or lacked its value, then the usage line(s), the start of `help`
 * up to its first blank line; returns exit status 2. */
int ct_option_error(int result, char **argv, const char *help);

/* For a command whose one option is --help: reads the options wherever
 * they stand (up to `--`) and moves the operands to argv[1] on, leaving
 * their count in *argc; -1 to go on, else the exit status (the help was
 * printed, or an option was wrong). */
int ct_help_only_options(int *argc, char ***argv, const char *help);

#endif

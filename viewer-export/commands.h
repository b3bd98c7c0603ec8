/*
 * The cudatrace subcommands, one file each.
 */
#ifndef CT_COMMANDS_H
#define CT_COMMANDS_H

int ct_cmd_run(int argc, char **argv);
int ct_cmd_report(int argc, char **argv);
int ct_cmd_recover(int argc, char **argv);

/* Prints "cudatrace: <message>" and the usage hint; returns exit status 2. */
int ct_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/*
 * cudatrace: the command users type. One file per subcommand; everything
 * but `run` works from trace files alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const char usage[] =
    "usage: cudatrace run [-o TRACE] [-q] [--ring-records N] -- PROGRAM [ARGS...]\n"
    "       cudatrace report [--json] TRACE...\n"
    "       cudatrace recover DAMAGED_TRACE OUTPUT\n"
    "       cudatrace doctor [--json]\n"
    "       cudatrace help\n";

int ct_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("cudatrace: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see cudatrace help)\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return ct_usage_error("no command given");
    const char *command = argv[1];
    if (strcmp(command, "run") == 0)
        return ct_cmd_run(argc - 1, argv + 1);
    if (strcmp(command, "report") == 0)
        return ct_cmd_report(argc - 1, argv + 1);
    if (strcmp(command, "recover") == 0)
        return ct_cmd_recover(argc - 1, argv + 1);
    if (strcmp(command, "doctor") == 0)
        return ct_cmd_doctor(argc - 1, argv + 1);
    if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    return ct_usage_error("unknown command %s", command);
}

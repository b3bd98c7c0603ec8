/*
 * cudatrace: the command users type. One file per subcommand; everything
 * but `run` works from trace files alone.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer-export/commands.h"

static const char help[] =
    "usage: cudatrace COMMAND [OPTIONS] [ARGS...]\n"
    "\n"
    "Traces every CUDA runtime call of a program into a Perfetto trace\n"
    "(cudatrace-PID.pftrace.zst), and reads such traces.\n"
    "\n"
    "commands:\n"
    "  run [-o TRACE] [-q] [--ring-records N] [--] PROGRAM [ARGS...]\n"
    "                      run PROGRAM, and what it starts, under the tracer\n"
    "  report [--json] TRACE|DIR...\n"
    "                      per process: calls, time, memory, libraries, findings\n"
    "  diff [--json] [--fail-on-regression PCT] BEFORE AFTER\n"
    "                      what changed between two runs, beyond noise\n"
    "  open [--port N] [--timeout SECONDS] [--ui URL] [--no-browser] TRACE\n"
    "                      show TRACE in the Perfetto UI\n"
    "  export TRACE --format FORMAT [-o OUTPUT]\n"
    "                      TRACE as perfetto, perfetto-gz, chrome-json or html\n"
    "  recover DAMAGED_TRACE OUTPUT\n"
    "                      copy what is sound of a trace whose writer died\n"
    "  doctor [--json]     load the CUDA stack here and explain what loaded\n"
    "  ctl PID status|start|stop|snapshot\n"
    "                      ask a live traced process's collector; open or close\n"
    "                      a capture window\n"
    "  help [COMMAND]      this text, or COMMAND's own (cudatrace COMMAND --help)\n"
    "\n"
    "Options go before or after a command's operands, up to `--`; run's end at\n"
    "PROGRAM, whose arguments are its own.\n"
    "\n"
    "examples:\n"
    "  cudatrace run -- python train.py\n"
    "  cudatrace report cudatrace-1234.pftrace.zst\n"
    "  cudatrace diff yesterday.pftrace.zst today.pftrace.zst\n"
    "  cudatrace open cudatrace-1234.pftrace.zst\n"
    "  cudatrace help run\n";

long ct_parse_count(const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < min || value > max)
        return -1;
    return value;
}

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

int ct_option_error(int result, char **argv, const char *help)
{
    /* getopt_long leaves the option it stopped on at argv[optind - 1] when it
     * was a long one or ended its cluster, and its letter in optopt when it
     * was a short one. */
    const char *last = argv[optind - 1];
    int is_long = strncmp(last, "--", 2) == 0 && last[2];
    char letter[3] = {'-', (char)optopt, 0};
    const char *name = is_long || optopt <= 0 || optopt > 127 ? last : letter;
    int name_len = is_long ? (int)strcspn(name, "=") : (int)strlen(name);
    if (result == ':')
        fprintf(stderr, "cudatrace: %s: %.*s needs a value\n", argv[0], name_len, name);
    else
        fprintf(stderr, "cudatrace: %s: unknown option %.*s\n", argv[0], name_len, name);
    const char *usage_end = strstr(help, "\n\n");
    int usage_len = usage_end ? (int)(usage_end - help) : (int)strlen(help);
    fprintf(stderr, "%.*s\n", usage_len, help);
    return 2;
}

int ct_help_only_options(int *argc, char ***argv, const char *help)
{
    static const struct option options[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    opterr = 0;
    int c = getopt_long(*argc, *argv, ":", options, NULL);
    if (c != -1)
        return c == 'h' ? fputs(help, stdout) == EOF : ct_option_error(c, *argv, help);
    *argc -= optind - 1;
    *argv += optind - 1;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return ct_usage_error("no command given");
    /* `cudatrace help COMMAND` is `cudatrace COMMAND --help`. */
    char *as_help[] = {argv[0], argv[argc - 1], "--help", NULL};
    if (argc == 3 && strcmp(argv[1], "help") == 0)
        argv = as_help;
    const char *command = argv[1];
    if (strcmp(command, "run") == 0)
        return ct_cmd_run(argc - 1, argv + 1);
    if (strcmp(command, "report") == 0)
        return ct_cmd_report(argc - 1, argv + 1);
    if (strcmp(command, "diff") == 0)
        return ct_cmd_diff(argc - 1, argv + 1);
    if (strcmp(command, "recover") == 0)
        return ct_cmd_recover(argc - 1, argv + 1);
    if (strcmp(command, "doctor") == 0)
        return ct_cmd_doctor(argc - 1, argv + 1);
    if (strcmp(command, "open") == 0)
        return ct_cmd_open(argc - 1, argv + 1);
    if (strcmp(command, "export") == 0)
        return ct_cmd_export(argc - 1, argv + 1);
    if (strcmp(command, "ctl") == 0)
        return ct_cmd_ctl(argc - 1, argv + 1);
    if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0)
        return fputs(help, stdout) == EOF;
    return ct_usage_error("unknown command %s", command);
}

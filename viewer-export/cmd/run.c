/*
 * `cudatrace run [options] -- PROGRAM [ARGS...]`: runs PROGRAM with the
 * preload and the rtld-audit module that sit beside this binary (LD_PRELOAD,
 * LD_AUDIT), its options mapped onto the
 * CUDATRACE_* variables the preload reads. It execs rather than waits, so
 * PROGRAM keeps this process's pid, signals and exit status exactly; that
 * pid, in CUDATRACE_RUN_WATCH, makes the preload in PROGRAM say at its exit
 * when nothing in the run touched CUDA (preload/core/run_watch.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "viewer-export/commands.h"

/* Puts our companion `library` first in the ':'-separated list `variable`. */
static int prepend_library(const char *variable, const char *library)
{
    char path[PATH_MAX], value[3 * PATH_MAX];
    if (ct_companion_path(library, path, sizeof path))
        return -1;
    const char *existing = getenv(variable);
    if (existing && *existing)
        snprintf(value, sizeof value, "%s:%s", path, existing);
    else
        snprintf(value, sizeof value, "%s", path);
    return setenv(variable, value, 1);
}

/* Makes the preload the tool `variable` names (NVTX's, or the driver's
 * injection library), unless the user chose another (nsys sets both). */
static int tool(const char *variable)
{
    char path[PATH_MAX];
    const char *chosen = getenv(variable);
    if (chosen && *chosen)
        return 0;
    return ct_companion_path("libcudatrace.so", path, sizeof path) || setenv(variable, path, 1);
}

int ct_run_environment(void)
{
    /* The preload traces the calls and the NVTX ranges; the audit module
     * tells how each CUDA library was asked for and found, or why not; as
     * the driver's injection library the preload starts CUPTI at cuInit,
     * which covers programs that only use the driver API. */
    return prepend_library("LD_PRELOAD", "libcudatrace.so") ||
           prepend_library("LD_AUDIT", "libcudatrace-audit.so") || tool("NVTX_INJECTION64_PATH") ||
           tool("CUDA_INJECTION64_PATH");
}

static const char help[] =
    "usage: cudatrace run [-o TRACE] [-q] [--ring-records N] [--delay S] [--duration S]\n"
    "                     [--] PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM with the tracer (LD_PRELOAD), the loader's audit module\n"
    "(LD_AUDIT) and the tracer as NVTX's tool and the driver's injection library\n"
    "(NVTX_INJECTION64_PATH, CUDA_INJECTION64_PATH, each unless set);\n"
    "every process it starts that touches CUDA writes a trace. When none did\n"
    "by the time PROGRAM exits, PROGRAM's tracer says so in one line (with a\n"
    "CPU-only PyTorch or a CUDA_VISIBLE_DEVICES that hides every GPU, if seen)\n"
    "and there is no trace. PROGRAM keeps this process's pid, signals and exit\n"
    "status.\n"
    "\n"
    "options:\n"
    "  -o, --output TRACE    trace path (CUDATRACE_OUTPUT; %p becomes the pid, %r\n"
    "                        the rank, %h the host; default cudatrace-%p.pftrace.zst)\n"
    "  -q, --quiet           no summary line, nor the no-trace line, on stderr at exit\n"
    "                        (CUDATRACE_QUIET=1)\n"
    "  --ring-records N      records per thread ring (CUDATRACE_RING_RECORDS;\n"
    "                        default 32768)\n"
    "  --delay S             record detail only from S seconds after the start\n"
    "  --duration S          and for S seconds (both: CUDATRACE_CAPTURE=time:S:S);\n"
    "                        the report's counts and device memory stay the\n"
    "                        whole run's\n"
    "  --help                this text\n"
    "\n"
    "Options end at PROGRAM or at `--`: whatever follows PROGRAM is its own\n"
    "(cudatrace run prog --help passes --help to prog); the `--` is needed only\n"
    "when PROGRAM's name starts with '-'.\n"
    "\n"
    "examples:\n"
    "  cudatrace run -- python train.py --epochs 1\n"
    "  cudatrace run -o run-%h-%r-%p.pftrace.zst -q -- torchrun --nproc-per-node 2 train.py\n";

enum { OPT_RING_RECORDS = 256, OPT_DELAY, OPT_DURATION, OPT_HELP };

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"ring-records", required_argument, NULL, OPT_RING_RECORDS},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Seconds as CUDATRACE_CAPTURE's time window takes them; 0 if not. */
static int is_seconds(const char *text)
{
    char *end;
    double seconds = strtod(text, &end);
    return text[0] >= '0' && text[0] <= '9' && !*end && seconds >= 0;
}

/* Names this process, which PROGRAM is about to become, as the run's top;
 * the nonce keeps two runs' addresses apart across pid namespaces. */
static int set_run_watch(void)
{
    char value[64];
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(value, sizeof value, "%d:%llx", (int)getpid(),
             (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
    return setenv("CUDATRACE_RUN_WATCH", value, 1);
}

/* --delay and --duration, as the one setting the preload reads. */
static int set_time_window(const char *delay, const char *duration)
{
    char value[128];
    if (!delay && !duration)
        return 0;
    if ((delay && !is_seconds(delay)) || (duration && !is_seconds(duration)))
        return ct_usage_error("run: --delay and --duration take seconds (e.g. 2.5)");
    snprintf(value, sizeof value, "time:%s%s%s", delay ? delay : "0", duration ? ":" : "",
             duration ? duration : "");
    return setenv("CUDATRACE_CAPTURE", value, 1);
}

int ct_cmd_run(int argc, char **argv)
{
    const char *delay = NULL, *duration = NULL;
    opterr = 0;
    /* '+': options end at PROGRAM, so that its own options stay its own. */
    for (int c; (c = getopt_long(argc, argv, "+:o:q", long_options, NULL)) != -1;) {
        if (c == 'o')
            setenv("CUDATRACE_OUTPUT", optarg, 1);
        else if (c == 'q')
            setenv("CUDATRACE_QUIET", "1", 1);
        else if (c == OPT_RING_RECORDS)
            setenv("CUDATRACE_RING_RECORDS", optarg, 1);
        else if (c == OPT_DELAY)
            delay = optarg;
        else if (c == OPT_DURATION)
            duration = optarg;
        else if (c == OPT_HELP)
            return fputs(help, stdout) == EOF;
        else
            return ct_option_error(c, argv, help);
    }
    int i = optind;
    if (set_time_window(delay, duration))
        return 2;
    if (i >= argc)
        return ct_usage_error("run: no program given (cudatrace run -- PROGRAM ARGS...)");
    if (ct_run_environment() || set_run_watch())
        return 1;
    execvp(argv[i], &argv[i]);
    fprintf(stderr, "cudatrace: run: %s: %s\n", argv[i], strerror(errno));
    return 127;
}

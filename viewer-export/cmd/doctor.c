/*
 * `cudatrace doctor [--json]`: the usual checklist for a broken CUDA setup
 * (nvidia-smi, the driver's /proc entry, device nodes, which libcudart and
 * libcudnn load, ldd) done in one go and explained. A child process,
 * cudatrace-probe, loads the CUDA stack the way a framework does (dlopen by
 * soname, driver first) under the tracer, so the inventory and the findings
 * are exactly what a traced program would get; the kernel side is read from /proc and /dev. The
 * exit status is 1 when an error-severity finding exists.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "viewer-export/commands.h"
#include "viewer-export/output/job_output.h"

#define PROBE_GROUPS 4 /* what cudatrace-probe loads: see doctor_probe.c */

static const char *const device_nodes[] = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"};
#define DEVICE_NODES (sizeof device_nodes / sizeof device_nodes[0])
struct probe_result {
    char name[64], path[PATH_MAX], error[512];
};

/* Runs the child under the tracer; fills `results` from its output. */
static int run_probe(const char *trace, struct probe_result *results, size_t *count)
{
    char probe[PATH_MAX];
    if (ct_companion_path("cudatrace-probe", probe, sizeof probe))
        return -1;
    int out[2];
    if (pipe(out))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        if (ct_run_environment())
            _exit(127);
        setenv("CUDATRACE_OUTPUT", trace, 1);
        setenv("CUDATRACE_QUIET", "1", 1);
        execl(probe, probe, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    FILE *lines = fdopen(out[0], "r");
    char line[PATH_MAX + 640];
    *count = 0;
    while (lines && fgets(line, sizeof line, lines) && *count < PROBE_GROUPS) {
        line[strcspn(line, "\n")] = '\0';
        struct probe_result *r = &results[(*count)++];
        char *path = strchr(line, '\t'), *error = path ? strchr(path + 1, '\t') : NULL;
        if (path)
            *path++ = '\0';
        if (error)
            *error++ = '\0';
        snprintf(r->name, sizeof r->name, "%.63s", line);
        snprintf(r->path, sizeof r->path, "%.4095s", path ? path : "");
        snprintf(r->error, sizeof r->error, "%.511s", error ? error : "");
    }
    if (lines)
        fclose(lines);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || *count < PROBE_GROUPS) {
        fprintf(stderr, "cudatrace: doctor: the probe process failed (status %d)\n", status);
        return -1;
    }
    return 0;
}

static void read_kernel_driver(char *out, size_t size)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "re");
    out[0] = '\0';
    if (f && fgets(out, (int)size, f))
        out[strcspn(out, "\n")] = '\0';
    if (f)
        fclose(f);
}

/* The one-line reading of the driver side, for people. */
static const char *driver_verdict(const char *kernel, const int nodes[],
                                  const struct probe_result *libcuda)
{
    int has_libcuda = libcuda && *libcuda->path;
    char real[PATH_MAX];
    if (has_libcuda && realpath(libcuda->path, real) && strstr(real, "/stubs/"))
        return "libcuda.so.1 is the CUDA toolkit's link-time stub, not a driver "
               "(see stub-driver below)";
    if (!*kernel && !has_libcuda)
        return "no NVIDIA driver: neither the kernel module nor libcuda.so.1 is present";
    if (*kernel && !has_libcuda)
        return "the kernel driver is loaded but libcuda.so.1 is not on the library path "
               "(a container without the driver's libraries mounted?)";
    if (!*kernel)
        return "libcuda.so.1 loads but no NVIDIA kernel module is loaded (/proc/driver/nvidia "
               "is missing): load it (modprobe nvidia) or, in a container, run with the GPU";
    if (!nodes[0] || !nodes[1])
        return "the driver is installed but its device nodes are missing (/dev/nvidiactl, "
               "/dev/nvidia0): create them (nvidia-modprobe) or pass them to the container";
    if (!nodes[2])
        return "/dev/nvidia-uvm is missing (nvidia_uvm not loaded): CUDA cannot start";
    return "the driver's kernel module, device nodes and library are all present";
}

static void print_doctor_json(struct ct_json *j, const char *kernel, const int nodes[],
                              const struct probe_result *results, size_t count, const char *verdict)
{
    ct_json_begin_object(j, "doctor");
    if (*kernel)
        ct_json_string(j, "kernel_driver", kernel);
    else
        ct_json_null(j, "kernel_driver");
    ct_json_begin_object(j, "device_nodes");
    for (size_t i = 0; i < DEVICE_NODES; i++)
        ct_json_uint(j, device_nodes[i], (uint64_t)nodes[i]);
    ct_json_end_object(j);
    ct_json_begin_array(j, "loads");
    for (size_t i = 0; i < count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "name", results[i].name);
        if (*results[i].path)
            ct_json_string(j, "path", results[i].path);
        else
            ct_json_null(j, "path");
        if (*results[i].error)
            ct_json_string(j, "error", results[i].error);
        else
            ct_json_null(j, "error");
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_string(j, "driver", verdict);
    ct_json_end_object(j);
}

static void print_doctor_text(const char *kernel, const int nodes[],
                              const struct probe_result *results, size_t count, const char *verdict)
{
    printf("cudatrace doctor\n  kernel driver  %s\n", *kernel ? kernel : "not loaded");
    printf("  device nodes  ");
    for (size_t i = 0; i < DEVICE_NODES; i++)
        printf(" %s %s", device_nodes[i], nodes[i] ? "present" : "missing");
    printf("\n");
    for (size_t i = 0; i < count; i++)
        printf("  %-14s %s\n", results[i].name,
               *results[i].path ? results[i].path : results[i].error);
    printf("  driver         %s\n\n", verdict);
}

static const char help[] =
    "usage: cudatrace doctor [--json]\n"
    "\n"
    "Explains this machine's CUDA setup without a workload: reads the kernel\n"
    "driver's version and the /dev/nvidia* nodes, loads libcuda, libcudart,\n"
    "libcublas and libcudnn the way a framework would (in a child process, under\n"
    "the tracer), and prints what loaded from where, a one-line verdict on the\n"
    "driver, and the report's findings. Exit status 1 when a finding is an error.\n"
    "\n"
    "options:\n"
    "  --json    the report JSON plus a \"doctor\" object\n"
    "  --help    this text\n"
    "\n"
    "examples:\n"
    "  cudatrace doctor\n"
    "  LD_LIBRARY_PATH=$CONDA_PREFIX/lib cudatrace doctor --json\n";

int ct_cmd_doctor(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int json = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":", options, NULL)) != -1;) {
        if (c == 'h')
            return fputs(help, stdout) == EOF;
        if (c != 'j')
            return ct_option_error(c, argv, help);
        json = 1;
    }
    if (optind < argc)
        return ct_usage_error("doctor: takes no operand, only --json");
    char dir[] = "/tmp/cudatrace-doctor-XXXXXX", trace[sizeof dir + 32];
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cudatrace: doctor: cannot make a temporary directory: %s\n",
                strerror(errno));
        return 1;
    }
    snprintf(trace, sizeof trace, "%s/probe.pftrace.zst", dir);
    struct probe_result results[PROBE_GROUPS];
    size_t count = 0;
    int nodes[DEVICE_NODES];
    char kernel[512], error[512];
    struct stat st;
    for (size_t i = 0; i < DEVICE_NODES; i++)
        nodes[i] = stat(device_nodes[i], &st) == 0;
    read_kernel_driver(kernel, sizeof kernel);
    int probed = run_probe(trace, results, &count);
    const char *verdict = driver_verdict(kernel, nodes, count ? &results[0] : NULL);

    struct ct_report report = {0};
    /* No trace means no runtime loaded (the child never called CUDA). */
    if (probed == 0 && access(trace, F_OK) == 0 &&
        ct_report_add_trace(&report, trace, error, sizeof error))
        fprintf(stderr, "cudatrace: doctor: %s\n", error);
    struct ct_job job = {0};
    ct_job_of_report(&job, &report, trace);
    if (json) {
        struct ct_json j = {.out = stdout};
        ct_json_begin_object(&j, NULL);
        ct_job_json_fields(&j, &job);
        print_doctor_json(&j, kernel, nodes, results, count, verdict);
        ct_json_end_object(&j);
    } else {
        print_doctor_text(kernel, nodes, results, count, verdict);
        ct_job_print_text(stdout, &job, 0);
    }
    int errors = probed != 0;
    for (size_t i = 0; i < job.findings.count; i++)
        errors |= job.findings.items[i].severity == CT_SEVERITY_ERROR;
    ct_job_free(&job);
    ct_report_free(&report);
    unlink(trace);
    rmdir(dir);
    return errors ? 1 : 0;
}

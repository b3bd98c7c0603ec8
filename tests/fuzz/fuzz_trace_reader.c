/*
 * The libFuzzer entry point for what `cudatrace report` reads: each input is
 * written to a per-process temporary file and read by the whole report
 * model (ct_report_add_trace), so format sniffing, zstd and gzip
 * decompression, packet framing, protobuf-c unpacking, interning and slice
 * pairing all see it; what it read is summarised, the summary read back
 * into a job and the job's text and JSON written, exactly as `cudatrace
 * report` would. The same input is also read as a summary (`report
 * --merge` takes those from other machines). It owns nothing but that
 * temporary file and the checks that every string the report hands back is
 * still readable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "viewer-export/job/summary.h"
#include "viewer-export/model/report.h"
#include "viewer-export/output/job_output.h"

/* The reader only takes a path. The file is unlinked as soon as it is
 * created and reopened through /proc/self/fd, so a crash or a killed run
 * leaves nothing behind in /dev/shm or $TMPDIR, and each input costs a
 * truncate and a write instead of a create and an unlink. */
static int input_fd = -1;
static char input_path[64];

static void die(const char *what)
{
    fprintf(stderr, "fuzz_trace_reader: %s: %s\n", what, strerror(errno));
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* tmpfs first: the reader opens the file once per input, and a disk-backed
     * directory would turn every run into filesystem traffic. */
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char name[4096];
    if (snprintf(name, sizeof name, "%s/ct_fuzz_trace.XXXXXX", dir) >= (int)sizeof name) {
        errno = ENAMETOOLONG;
        die("temporary file name");
    }
    input_fd = mkstemp(name);
    if (input_fd < 0)
        die(name);
    if (unlink(name) < 0)
        die("unlink");
    snprintf(input_path, sizeof input_path, "/proc/self/fd/%d", input_fd);
    return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
    if (ftruncate(input_fd, 0) < 0)
        die("ftruncate");
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(input_fd, data + done, size - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("pwrite");
        done += (size_t)n;
    }
}

/* The report keeps pointers into the string table; reading every one of
 * them lets ASan catch a pointer that outlived what it points to. */
static size_t touch(const char *text)
{
    return text ? strlen(text) : 0;
}

static size_t touch_report(const struct ct_report *report)
{
    size_t sum = 0;
    for (size_t i = 0; i < report->process_count; i++) {
        const struct ct_process_report *p = &report->processes[i];
        sum += touch(p->name);
        for (size_t j = 0; j < p->cmdline_len; j++)
            sum += touch(p->cmdline[j]);
        for (int j = 0; j < p->cuda.device_names; j++)
            sum += touch(p->cuda.devices[j]);
    }
    return sum;
}

static FILE *sink_file(void)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "we")))
        die("/dev/null");
    return devnull;
}

/* A finished job through both outputs. */
static void write_job(const struct ct_job *job)
{
    ct_job_print_text(sink_file(), job, 0);
    ct_job_print_text(sink_file(), job, 1);
    struct ct_json j = {.out = sink_file()};
    ct_json_begin_object(&j, NULL);
    ct_job_json_fields(&j, job);
    ct_json_end_object(&j);
}

/* The input as a summary file: refused with a reason, or reported on. */
static void read_as_summary(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), error[512] = "";
    if (!text)
        die("malloc");
    memcpy(text, data, size);
    text[size] = '\0';
    struct ct_job job = {0};
    if (ct_job_add_summary(&job, text, size, error, sizeof error) == 0) {
        ct_job_finish(&job);
        write_job(&job);
    } else if (!error[0]) {
        fprintf(stderr, "fuzz_trace_reader: a summary refused without a reason\n");
        abort();
    }
    ct_job_free(&job);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (input_fd < 0)
        LLVMFuzzerInitialize(NULL, NULL);
    write_input(data, size);
    struct ct_report report = {0};
    char error[256];
    error[0] = '\0';
    int r = ct_report_add_trace(&report, input_path, error, sizeof error);
    /* A failure must still say why: `cudatrace report` prints it verbatim. */
    if (r < 0 && error[0] == '\0') {
        fprintf(stderr, "fuzz_trace_reader: failed without a reason\n");
        abort();
    }
    /* Volatile so the walk over the report is not optimised away. */
    volatile size_t sink = touch_report(&report);
    (void)sink;
    if (r == 0) {
        struct ct_job job = {0};
        if (ct_job_of_report(&job, &report, input_path) != 0) {
            fprintf(stderr, "fuzz_trace_reader: a trace's own summary did not read back\n");
            abort();
        }
        write_job(&job);
        ct_job_free(&job);
    }
    ct_report_free(&report);
    read_as_summary(data, size);
    return 0;
}

/*
 * `cudatrace export TRACE --format FORMAT [-o OUTPUT]`: writes a trace in a
 * format other tools read (formats.h). This file owns the command:
 * its options and help, the output's default name (TRACE with the format's
 * extension in place of .pftrace.zst; `-o -` is standard output, which then
 * holds the export's bytes alone), and how the outcome is told. A
 * damaged input is handled as `report` and `recover` handle it: a trace cut
 * short (its writer died mid-write) is exported up to its last whole packet,
 * a note on stderr says what was cut, and the status is 0, since what was
 * written is a sound file; a malformed trace, or one of another trace
 * format, is refused with status 1 and leaves no output behind. The input
 * is opened before the output is created, so a missing file or one that is
 * no trace creates nothing.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "viewer-export/commands.h"
#include "viewer-export/export/formats.h"
#include "viewer-export/read/trace_input.h"

struct format {
    const char *name, *extension, *about;
    int gzip;
    int (*run)(struct ct_export_job *job);
};

static const struct format formats[] = {
    {"perfetto", ".pftrace", "protobuf, uncompressed: Perfetto before v58, other readers", 0,
     ct_export_perfetto},
    {"perfetto-gz", ".pftrace.gz", "protobuf, gzip-compressed", 1, ct_export_perfetto},
    {"chrome-json", ".json", "Trace Event Format: chrome://tracing, Perfetto, HTA", 0,
     ct_export_chrome_json},
    {"html", ".html", "one self-contained page: report, findings, plots; no network", 0,
     ct_export_html},
};

#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

struct options {
    const char *trace, *output, *format_name;
    const struct format *format;
    int help;
};

static const char usage[] = "usage: cudatrace export TRACE --format FORMAT [-o OUTPUT]\n\n";

static void print_help(void)
{
    fputs(usage, stdout);
    fputs("Writes TRACE (zstd, gzip or plain Perfetto protobuf) in another format. The\n"
          "trace streams through: memory stays small whatever its size.\n"
          "\n"
          "options:\n"
          "  --format FORMAT  one of\n",
          stdout);
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        printf("    %-12s %s (%s)\n", formats[i].name, formats[i].about, formats[i].extension);
    fputs("  -o, --output OUTPUT\n"
          "                   the file to write, which must not exist, or - for standard\n"
          "                   output (./- for a file called that); by default TRACE\n"
          "                   with the format's extension in place of .pftrace.zst\n"
          "  --help           this text\n"
          "\n"
          "Options go before or after TRACE; after `--`, an argument is TRACE even\n"
          "when it starts with '-'.\n"
          "\n"
          "A trace cut short (its writer died) is exported up to its last whole packet,\n"
          "with a note on stderr saying what was cut, and status 0, as `report` reads\n"
          "it; in chrome-json the calls it left open run to the trace's last timestamp,\n"
          "with args.unclosed = 1. A failed export leaves no file behind; on standard\n"
          "output, what it wrote before failing stays there (status 1 says so).\n"
          "Progress shows when stderr is a terminal.\n"
          "\n"
          "examples:\n"
          "  cudatrace export cudatrace-1234.pftrace.zst --format perfetto\n"
          "      writes cudatrace-1234.pftrace, for an older Perfetto UI\n"
          "  cudatrace export cudatrace-1234.pftrace.zst --format chrome-json -o rank0.json\n"
          "      for chrome://tracing or Holistic Trace Analysis\n"
          "  cudatrace export cudatrace-1234.pftrace.zst --format chrome-json -o - | jq ...\n"
          "      to standard output, for a pipe\n",
          stdout);
}

static const struct format *find_format(const char *name)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

static const char *format_names(void)
{
    static char names[256];
    names[0] = '\0';
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 formats[i].name);
    return names;
}

static const struct option long_options[] = {
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* 0 when `o` is complete (or asks for help), else the usage error's status.
 * getopt_long takes the options wherever they stand, up to a `--`. */
static int parse_options(int argc, char **argv, struct options *o)
{
    int status = 0;
    opterr = 0;
    for (int c; !status && (c = getopt_long(argc, argv, ":o:h", long_options, NULL)) != -1;) {
        if (c == 'f')
            o->format_name = optarg;
        else if (c == 'o')
            o->output = optarg;
        else if (c == 'h')
            o->help = 1;
        else
            status = ct_option_error(c, argv, usage);
    }
    if (!status && optind + 1 < argc)
        return ct_usage_error("export: one TRACE at a time (%s and %s)", argv[optind],
                              argv[optind + 1]);
    if (optind < argc)
        o->trace = argv[optind];
    if (status || o->help)
        return status;
    if (!o->trace)
        return ct_usage_error("export: no trace file given");
    if (!o->format_name)
        return ct_usage_error("export: no --format given (one of %s)", format_names());
    o->format = find_format(o->format_name);
    if (!o->format)
        return ct_usage_error("export: unknown format %s (one of %s)", o->format_name,
                              format_names());
    return 0;
}

/* TRACE less .pftrace.zst (or .pftrace.gz, .pftrace), plus the extension. */
static int default_output(const char *trace, const struct format *f, char *out, size_t size)
{
    static const char *const suffixes[] = {".pftrace.zst", ".pftrace.gz", ".pftrace"};
    size_t len = strlen(trace);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t n = strlen(suffixes[i]);
        if (len > n && strcmp(trace + len - n, suffixes[i]) == 0) {
            len -= n;
            break;
        }
    }
    return snprintf(out, size, "%.*s%s", (int)len, trace, f->extension) < (int)size ? 0 : -1;
}

/* Whether TRACE opens as a trace; says why not on stderr. */
static int input_opens(const char *trace)
{
    char error[256];
    struct ct_trace_input *in = ct_trace_input_open(trace, error, sizeof error);
    if (!in)
        fprintf(stderr, "cudatrace: %s: %s\n", trace, error);
    ct_trace_input_close(in);
    return in != NULL;
}

/* One line on what a damaged trace lost, when it did. */
static void note_damage(const char *trace, const struct ct_decode_result *r)
{
    if (!r->truncated && !r->unclosed)
        return;
    fprintf(stderr, "cudatrace: %s:", trace);
    if (r->truncated)
        fprintf(stderr, " cut short mid-write; exported the %llu whole packets before the cut",
                (unsigned long long)r->packets);
    if (r->unclosed)
        fprintf(stderr,
                "%s %llu call(s) never ended: they run to the trace's last timestamp, "
                "marked unclosed",
                r->truncated ? ";" : "", (unsigned long long)r->unclosed);
    fputc('\n', stderr);
}

/* Runs the format into `output`; the exit status. */
static int export_to(const struct options *o, const char *output)
{
    struct ct_export_job job = {.trace = o->trace};
    job.out = ct_export_output_create(output, o->format->gzip, job.error, sizeof job.error);
    if (!job.out) {
        fprintf(stderr, "cudatrace: %s: %s\n", output, job.error);
        return 1;
    }
    ct_progress_start(&job.progress, o->trace);
    int failed = o->format->run(&job);
    ct_progress_end(&job.progress);
    if (failed) {
        ct_export_output_discard(job.out);
        fprintf(stderr, "cudatrace: %s: %s\n", o->trace, job.error);
        return 1;
    }
    if (ct_export_output_finish(job.out, job.error, sizeof job.error)) {
        fprintf(stderr, "cudatrace: %s: %s\n", output, job.error);
        return 1;
    }
    note_damage(o->trace, &job.result);
    if (!ct_export_output_is_stdout(output))
        printf("wrote %s\n", output);
    return 0;
}

int ct_cmd_export(int argc, char **argv)
{
    struct options o = {0};
    int status = parse_options(argc, argv, &o);
    if (status)
        return status;
    if (o.help) {
        print_help();
        return 0;
    }
    char name[PATH_MAX];
    const char *output = o.output ? o.output : name;
    if (!o.output && default_output(o.trace, o.format, name, sizeof name))
        return ct_usage_error("export: %s: too long a name to derive the output's", o.trace);
    return input_opens(o.trace) ? export_to(&o, output) : 1;
}

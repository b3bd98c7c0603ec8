/*
 * Turns a command's operands into a job (inputs.h): a directory stands for
 * every trace in it but the snapshots the collector took of them (which
 * would count its processes twice), in the order of their names; traces
 * are read together, in parallel (parallel_read.c); a summary file is
 * read whole and added as it is.
 */
#include "viewer-export/job/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/array.h"

struct paths {
    char **items;
    size_t count;
};

static void add_file(struct paths *paths, const char *path)
{
    paths->items = ct_array_grow(paths->items, paths->count, sizeof *paths->items);
    paths->items[paths->count] = strdup(path);
    if (!paths->items[paths->count++])
        abort();
}

static void free_paths(struct paths *paths)
{
    for (size_t i = 0; i < paths->count; i++)
        free(paths->items[i]);
    free(paths->items);
}

/* NAME.snapshot-N.pftrace...: a copy the collector took of the trace NAME
 * beside it, which a directory's job would count twice. */
static int is_snapshot_name(const char *name)
{
    const char *at = strstr(name, ".snapshot-");
    if (!at)
        return 0;
    at += strlen(".snapshot-");
    size_t digits = strspn(at, "0123456789");
    return digits && strncmp(at + digits, ".pftrace", strlen(".pftrace")) == 0;
}

static int is_trace_name(const struct dirent *entry)
{
    static const char *const endings[] = {".pftrace", ".pftrace.zst", ".pftrace.gz"};
    if (is_snapshot_name(entry->d_name))
        return 0;
    size_t len = strlen(entry->d_name);
    for (size_t i = 0; i < sizeof endings / sizeof endings[0]; i++) {
        size_t n = strlen(endings[i]);
        if (len > n && strcmp(entry->d_name + len - n, endings[i]) == 0)
            return 1;
    }
    return 0;
}

/* A file, or a directory of traces (one per rank or process of a job), in
 * the order of their names. */
static int add_path(struct paths *paths, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        add_file(paths, path);
        return 0;
    }
    struct dirent **entries;
    int count = scandir(path, &entries, is_trace_name, alphasort);
    if (count <= 0) {
        fprintf(stderr, "cudatrace: %s: %s\n", path,
                count < 0 ? strerror(errno)
                          : "holds no trace (*.pftrace, *.pftrace.zst, *.pftrace.gz)");
        return -1;
    }
    for (int i = 0; i < count; i++) {
        char file[8192];
        snprintf(file, sizeof file, "%s/%s", path, entries[i]->d_name);
        add_file(paths, file);
        free(entries[i]);
    }
    free(entries);
    return 0;
}

/* Reads a summary file whole into the job. */
static int add_summary_file(struct ct_job *job, const char *path, char *error, size_t size)
{
    FILE *f = fopen(path, "re");
    char *text = NULL, reason[512];
    size_t len = 0;
    FILE *buffer = f ? open_memstream(&text, &len) : NULL;
    char chunk[65536];
    for (size_t n; buffer && (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
        fwrite(chunk, 1, n, buffer);
    int failed = !f || ferror(f);
    if (!f)
        snprintf(reason, sizeof reason, "%s", strerror(errno));
    if (f)
        fclose(f);
    if (buffer)
        fclose(buffer);
    if (failed && f)
        snprintf(reason, sizeof reason, "cannot be read");
    if (!failed && ct_job_add_summary(job, text, len, reason, sizeof reason) == 0)
        return 0;
    if (failed)
        free(text);
    snprintf(error, size, "%s: %s", path, reason);
    return -1;
}

/* Whether `path` is a file whose first byte opens a JSON object: what
 * cudatrace's summaries start with, and no trace does (zstd, gzip and a
 * Perfetto trace's first packet start otherwise). */
static int is_summary_file(const char *path)
{
    struct stat st;
    FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "re") : NULL;
    int first = f ? fgetc(f) : EOF;
    if (f)
        fclose(f);
    return first == '{';
}

int ct_job_read_inputs(struct ct_job *job, char *const *operands, size_t count,
                       enum ct_job_inputs kind)
{
    char error[1024] = ""; /* add_path says why itself */
    struct paths paths = {0};
    int status = 0;
    for (size_t i = 0; i < count && !status; i++) {
        int summary = kind == CT_INPUTS_SUMMARIES ||
                      (kind == CT_INPUTS_EITHER && is_summary_file(operands[i]));
        status = summary ? add_summary_file(job, operands[i], error, sizeof error)
                         : add_path(&paths, operands[i]);
    }
    if (!status && paths.count)
        status = ct_job_read_traces(job, paths.items, paths.count, error, sizeof error);
    if (status && *error)
        fprintf(stderr, "cudatrace: %s\n", error);
    free_paths(&paths);
    return status;
}

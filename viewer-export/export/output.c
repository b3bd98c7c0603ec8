/*
 * Owns the exported file from its creation to its close. It is created with
 * O_EXCL|O_NOFOLLOW, as the collector creates traces, so an export never
 * replaces a file nor writes through a symlink planted where it goes, and it
 * is private (0600) like the trace it comes from. "-" is standard output
 * instead, through a descriptor of its own, so closing the output leaves the
 * process's stdout as it was. Plain outputs go through stdio, gzip ones
 * through zlib's gz stream; a write error is kept until the close, which
 * then reports it and removes the incomplete file, as does a failed export;
 * what reached standard output cannot be taken back, and stays.
 */
#include "viewer-export/export/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct ct_export_output {
    char *path;
    FILE *file;
    gzFile gz;
    int failed_errno; /* the first write error, 0 if none */
};

static struct ct_export_output *attach(struct ct_export_output *out, int fd, int gzip)
{
    if (gzip)
        out->gz = gzdopen(fd, "wb");
    else
        out->file = fdopen(fd, "wb");
    if (out->gz || out->file)
        return out;
    close(fd);
    return NULL;
}

int ct_export_output_is_stdout(const char *path)
{
    return strcmp(path, "-") == 0;
}

static int open_output(const char *path)
{
    if (ct_export_output_is_stdout(path))
        return fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

static void remove_output(const char *path)
{
    if (!ct_export_output_is_stdout(path))
        unlink(path);
}

struct ct_export_output *ct_export_output_create(const char *path, int gzip, char *error,
                                                 size_t error_size)
{
    int fd = open_output(path);
    if (fd < 0) {
        if (errno == EEXIST)
            snprintf(error, error_size, "already exists; not overwriting it (give -o NEW_FILE)");
        else
            snprintf(error, error_size, "cannot create: %s", strerror(errno));
        return NULL;
    }
    struct ct_export_output *out = calloc(1, sizeof *out);
    if (out)
        out->path = strdup(path);
    if (!out || !out->path || !attach(out, fd, gzip)) {
        snprintf(error, error_size, "cannot set up the output: out of memory");
        remove_output(path);
        if (out)
            free(out->path);
        free(out);
        return NULL;
    }
    return out;
}

int ct_export_output_write(struct ct_export_output *out, const void *data, size_t size)
{
    errno = 0; /* so the reason given is this write's */
    int ok = out->gz ? gzfwrite(data, 1, size, out->gz) == size
                     : fwrite(data, 1, size, out->file) == size;
    if (!ok && !out->failed_errno)
        out->failed_errno = errno ? errno : EIO;
    return ok ? 0 : -1;
}

FILE *ct_export_output_stream(struct ct_export_output *out)
{
    return out->file;
}

/* Closes the stream; 0, or the errno of the first failure. */
static int close_stream(struct ct_export_output *out)
{
    int failed = out->failed_errno;
    if (out->gz) {
        if (gzclose(out->gz) != Z_OK && !failed)
            failed = errno ? errno : EIO;
    } else {
        if (ferror(out->file) && !failed)
            failed = EIO;
        if (fclose(out->file) && !failed)
            failed = errno;
    }
    return failed;
}

static void release(struct ct_export_output *out, int remove)
{
    if (remove)
        remove_output(out->path);
    free(out->path);
    free(out);
}

int ct_export_output_finish(struct ct_export_output *out, char *error, size_t error_size)
{
    int failed = close_stream(out);
    if (failed)
        snprintf(error, error_size, "write failed: %s", strerror(failed));
    release(out, failed != 0);
    return failed ? -1 : 0;
}

void ct_export_output_discard(struct ct_export_output *out)
{
    close_stream(out);
    release(out, 1);
}

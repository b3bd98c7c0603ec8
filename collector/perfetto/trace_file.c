/*
 * Writes the trace file as a sequence of complete zstd frames, each with a
 * checksum, so a collector killed mid-write leaves a file whose complete
 * frames are all readable. A frame is compressed in one go from the
 * writer's batch, which zstd reads in place (ZSTD_c_stableInBuffer): no
 * copy into the compressor's own buffer, and its fast block compressor
 * rather than the one streaming input needs; memory is the batch and the
 * compressor's window, however long the run. The
 * file is created O_EXCL|O_NOFOLLOW with mode 0600: a name planted in a
 * shared directory is never followed, and an existing trace never replaced
 * (the next free name is taken instead: trace-1.pftrace.zst, trace-2...,
 * the number before the extension, so the file still reads as a trace). A path that
 * names something other than a file or a link (/dev/full, a FIFO, a folder)
 * is refused: the rule is for traces, not for making files in /dev.
 * A bounded trace drops its middle by splicing: the head, a new gap frame
 * and the kept tail are copied into a new file beside it (created the same
 * way), which is renamed over the trace, so that whoever opens the path at
 * any moment reads a whole trace; a path that no longer names our file is
 * left alone. A snapshot copies the file as it is (complete frames, so a
 * valid trace, bounded or not) into trace.snapshot-N.pftrace.zst beside it
 * and ends the copy with one more frame of its own; the copy is written
 * under a temporary name and linked to its own once whole.
 */
#include "collector/perfetto/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_stableInBuffer */
#include <zstd.h>

#include "common/write_all.h"
#include "cudatrace/shm_layout.h"

/* PATH with "-attempt" before its trace extension (or at its end). */
static void numbered_name(char *path, size_t size, const char *base, int attempt)
{
    const char *slash = strrchr(base, '/');
    const char *ext = strstr(slash ? slash : base, ".pftrace");
    size_t stem = ext ? (size_t)(ext - base) : strlen(base);
    snprintf(path, size, "%.*s-%d%s", (int)stem, base, attempt, base + stem);
}

/* The new file a splice writes, beside the trace. */
static void spliced_path(const struct ct_trace_file *f, char *tmp, size_t size)
{
    snprintf(tmp, size, "%s.%d.tmp", f->path, (int)getpid());
}

static int create_unique(struct ct_trace_file *f, char *path, size_t size)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return (int)CT_ERROR_NOT_A_FILE;
    char base[4096];
    snprintf(base, sizeof base, "%s", path);
    for (int attempt = 0; attempt < 1000; attempt++) {
        if (attempt > 0)
            numbered_name(path, size, base, attempt);
        f->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (f->fd >= 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

int ct_trace_file_open(struct ct_trace_file *f, char *path, size_t path_size)
{
    *f = (struct ct_trace_file){.fd = -1, .next_snapshot = 1};
    f->cctx = ZSTD_createCCtx();
    if (!f->cctx)
        return ENOMEM;
    ZSTD_CCtx_setParameter(f->cctx, ZSTD_c_compressionLevel, CT_TRACE_ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(f->cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(f->cctx, ZSTD_c_stableInBuffer, 1);
    int err = create_unique(f, path, path_size);
    snprintf(f->path, sizeof f->path, "%s", path);
    if (err)
        ct_trace_file_close(f);
    return err;
}

static void write_all(struct ct_trace_file *f, const unsigned char *data, size_t size)
{
    if (f->write_error)
        return;
    size_t n = ct_write_all(f->fd, data, size);
    f->size += n;
    if (n < size)
        f->write_error = errno;
}

/* One frame of `data` into `*into` (grown to fit); its size, 0 on error. */
static size_t compress_into(struct ct_trace_file *f, struct ct_trace_frame *into, const void *data,
                            size_t size)
{
    size_t bound = ZSTD_compressBound(size);
    if (bound > into->capacity) {
        unsigned char *grown = realloc(into->data, bound);
        if (!grown)
            return 0;
        into->data = grown;
        into->capacity = bound;
    }
    size_t n = ZSTD_compress2(f->cctx, into->data, into->capacity, data, size);
    return ZSTD_isError(n) ? 0 : n;
}

size_t ct_trace_file_compress(struct ct_trace_file *f, const void *data, size_t size)
{
    f->frame.size = 0;
    if (f->fd < 0 || f->write_error || size == 0)
        return 0;
    f->frame.size = compress_into(f, &f->frame, data, size);
    if (!f->frame.size)
        f->write_error = EIO;
    return f->frame.size;
}

void ct_trace_file_append(struct ct_trace_file *f)
{
    write_all(f, f->frame.data, f->frame.size);
    f->frame.size = 0;
}

/* Copies `size` bytes at `offset` of the trace to the end of `to`. */
static int copy_range(const struct ct_trace_file *f, int to, uint64_t offset, uint64_t size)
{
    unsigned char buffer[1 << 16];
    off_t from = (off_t)offset;
    while (size > 0) {
        ssize_t n = copy_file_range(f->fd, &from, to, NULL, size, 0);
        if (n <= 0) { /* not on this file system: by hand */
            n = pread(f->fd, buffer, size < sizeof buffer ? size : sizeof buffer, from);
            if (n <= 0 || ct_write_all(to, buffer, (size_t)n) != (size_t)n)
                return -1;
            from += n;
        }
        size -= (uint64_t)n;
    }
    return 0;
}

/* Whether the path still names the file we write. */
static int path_is_ours(const struct ct_trace_file *f)
{
    struct stat ours, named;
    return fstat(f->fd, &ours) == 0 && lstat(f->path, &named) == 0 && ours.st_dev == named.st_dev &&
           ours.st_ino == named.st_ino;
}

/* Writes the spliced file `to`, made at `tmp`, and renames it over the trace. */
static int write_spliced(const struct ct_trace_file *f, int to, const char *tmp, uint64_t keep,
                         uint64_t tail_from, size_t gap_size)
{
    return copy_range(f, to, 0, keep) || ct_write_all(to, f->gap.data, gap_size) != gap_size ||
                   copy_range(f, to, tail_from, f->size - tail_from) || !path_is_ours(f) ||
                   rename(tmp, f->path)
               ? -1
               : 0;
}

int ct_trace_file_splice(struct ct_trace_file *f, uint64_t keep, uint64_t tail_from,
                         const void *packets, size_t size, uint64_t *gap_size)
{
    size_t n = compress_into(f, &f->gap, packets, size);
    if (f->fd < 0 || f->write_error || !n || tail_from > f->size || keep > tail_from)
        return -1;
    char tmp[sizeof f->path + 32];
    spliced_path(f, tmp, sizeof tmp);
    int to = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (to < 0)
        return -1;
    if (write_spliced(f, to, tmp, keep, tail_from, n)) {
        unlink(tmp);
        close(to);
        return -1;
    }
    close(f->fd);
    f->fd = to;
    f->size = keep + n + (f->size - tail_from);
    *gap_size = n;
    return 0;
}

/* PATH with ".snapshot-N" before its trace extension (or at its end). */
static void snapshot_name(const struct ct_trace_file *f, char *path, size_t size, int number)
{
    const char *slash = strrchr(f->path, '/');
    const char *ext = strstr(slash ? slash : f->path, ".pftrace");
    size_t stem = ext ? (size_t)(ext - f->path) : strlen(f->path);
    snprintf(path, size, "%.*s.snapshot-%d%s", (int)stem, f->path, number, f->path + stem);
}

/* The whole trace, then the closing frame of `closing_size` bytes, into `to`. */
static int write_copy(const struct ct_trace_file *f, int to, size_t closing_size)
{
    return copy_range(f, to, 0, f->size) ||
                   ct_write_all(to, f->closing.data, closing_size) != closing_size
               ? -1
               : 0;
}

/* Gives the finished copy its name, the first free snapshot number from
 * the next one on: link() never replaces a file, so nothing is overwritten. */
static int name_copy(struct ct_trace_file *f, const char *tmp, char *path, size_t path_size)
{
    for (int tries = 0; tries < 1000; tries++, f->next_snapshot++) {
        snapshot_name(f, path, path_size, f->next_snapshot);
        if (link(tmp, path) == 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

int ct_trace_file_copy(struct ct_trace_file *f, const void *packets, size_t size, char *path,
                       size_t path_size)
{
    size_t n = compress_into(f, &f->closing, packets, size);
    if (f->fd < 0 || f->write_error || !n)
        return EIO;
    char tmp[sizeof f->path + 48];
    snprintf(tmp, sizeof tmp, "%s.snapshot.%d.tmp", f->path, (int)getpid());
    int to = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (to < 0)
        return errno;
    int err = write_copy(f, to, n) ? (errno ? errno : EIO) : 0;
    close(to);
    if (!err)
        err = name_copy(f, tmp, path, path_size);
    unlink(tmp);
    f->next_snapshot += !err;
    return err;
}

void ct_trace_file_close(struct ct_trace_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    ZSTD_freeCCtx(f->cctx);
    f->cctx = NULL;
    struct ct_trace_frame *frames[] = {&f->frame, &f->gap, &f->closing};
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
        free(frames[i]->data);
        *frames[i] = (struct ct_trace_frame){NULL, 0, 0};
    }
}

uint64_t ct_trace_file_bytes(const struct ct_trace_file *f)
{
    return f->size;
}

int ct_trace_file_error(const struct ct_trace_file *f)
{
    return f->write_error;
}

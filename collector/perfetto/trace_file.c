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

static int fd = -1;
static ZSTD_CCtx *cctx;
static unsigned char *frame;
static size_t frame_capacity, frame_size;
static uint64_t file_size;
static int write_error;
static char file_path[4096];

/* PATH with "-attempt" before its trace extension (or at its end). */
static void numbered_name(char *path, size_t size, const char *base, int attempt)
{
    const char *slash = strrchr(base, '/');
    const char *ext = strstr(slash ? slash : base, ".pftrace");
    size_t stem = ext ? (size_t)(ext - base) : strlen(base);
    snprintf(path, size, "%.*s-%d%s", (int)stem, base, attempt, base + stem);
}

/* The new file a splice writes, beside the trace. */
static const char *file_path_tmp(void)
{
    static char tmp[sizeof file_path + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", file_path, (int)getpid());
    return tmp;
}

static int create_unique(char *path, size_t size)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        return (int)CT_ERROR_NOT_A_FILE;
    char base[4096];
    snprintf(base, sizeof base, "%s", path);
    for (int attempt = 0; attempt < 1000; attempt++) {
        if (attempt > 0)
            numbered_name(path, size, base, attempt);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

int ct_trace_file_open(char *path, size_t path_size)
{
    cctx = ZSTD_createCCtx();
    if (!cctx)
        return ENOMEM;
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, CT_TRACE_ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_stableInBuffer, 1);
    int err = create_unique(path, path_size);
    snprintf(file_path, sizeof file_path, "%s", path);
    return err;
}

static void write_all(const unsigned char *data, size_t size)
{
    if (write_error)
        return;
    size_t n = ct_write_all(fd, data, size);
    file_size += n;
    if (n < size)
        write_error = errno;
}

/* One frame of `data` into `*buffer` (grown to fit); its size, 0 on error. */
static size_t compress_into(unsigned char **buffer, size_t *capacity, const void *data, size_t size)
{
    size_t bound = ZSTD_compressBound(size);
    if (bound > *capacity) {
        unsigned char *grown = realloc(*buffer, bound);
        if (!grown)
            return 0;
        *buffer = grown;
        *capacity = bound;
    }
    size_t n = ZSTD_compress2(cctx, *buffer, *capacity, data, size);
    return ZSTD_isError(n) ? 0 : n;
}

size_t ct_trace_file_compress(const void *data, size_t size)
{
    frame_size = 0;
    if (fd < 0 || write_error || size == 0)
        return 0;
    frame_size = compress_into(&frame, &frame_capacity, data, size);
    if (!frame_size)
        write_error = EIO;
    return frame_size;
}

void ct_trace_file_append(void)
{
    write_all(frame, frame_size);
    frame_size = 0;
}

/* Copies `size` bytes at `offset` of the trace to the end of `to`. */
static int copy_range(int to, uint64_t offset, uint64_t size)
{
    unsigned char buffer[1 << 16];
    off_t from = (off_t)offset;
    while (size > 0) {
        ssize_t n = copy_file_range(fd, &from, to, NULL, size, 0);
        if (n <= 0) { /* not on this file system: by hand */
            n = pread(fd, buffer, size < sizeof buffer ? size : sizeof buffer, from);
            if (n <= 0 || ct_write_all(to, buffer, (size_t)n) != (size_t)n)
                return -1;
            from += n;
        }
        size -= (uint64_t)n;
    }
    return 0;
}

/* Whether the path still names the file we write. */
static int path_is_ours(void)
{
    struct stat ours, named;
    return fstat(fd, &ours) == 0 && lstat(file_path, &named) == 0 && ours.st_dev == named.st_dev &&
           ours.st_ino == named.st_ino;
}

static int write_spliced(int to, uint64_t keep, uint64_t tail_from, const void *gap,
                         size_t gap_size)
{
    return copy_range(to, 0, keep) || ct_write_all(to, gap, gap_size) != gap_size ||
                   copy_range(to, tail_from, file_size - tail_from) || !path_is_ours() ||
                   rename(file_path_tmp(), file_path)
               ? -1
               : 0;
}

int ct_trace_file_splice(uint64_t keep, uint64_t tail_from, const void *packets, size_t size,
                         uint64_t *gap_size)
{
    static unsigned char *gap;
    static size_t gap_capacity;
    size_t n = compress_into(&gap, &gap_capacity, packets, size);
    if (fd < 0 || write_error || !n || tail_from > file_size || keep > tail_from)
        return -1;
    int to = open(file_path_tmp(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (to < 0)
        return -1;
    if (write_spliced(to, keep, tail_from, gap, n)) {
        unlink(file_path_tmp());
        close(to);
        return -1;
    }
    close(fd);
    fd = to;
    file_size = keep + n + (file_size - tail_from);
    *gap_size = n;
    return 0;
}

/* PATH with ".snapshot-N" before its trace extension (or at its end). */
static void snapshot_name(char *path, size_t size, int number)
{
    const char *slash = strrchr(file_path, '/');
    const char *ext = strstr(slash ? slash : file_path, ".pftrace");
    size_t stem = ext ? (size_t)(ext - file_path) : strlen(file_path);
    snprintf(path, size, "%.*s.snapshot-%d%s", (int)stem, file_path, number, file_path + stem);
}

/* The whole trace, then `closing` (a frame), into `to`. */
static int write_copy(int to, const unsigned char *closing, size_t closing_size)
{
    return copy_range(to, 0, file_size) || ct_write_all(to, closing, closing_size) != closing_size
               ? -1
               : 0;
}

/* Gives the finished copy its name, the first free snapshot number from
 * `*number` on: link() never replaces a file, so nothing is overwritten. */
static int name_copy(const char *tmp, char *path, size_t path_size, int *number)
{
    for (int tries = 0; tries < 1000; tries++, ++*number) {
        snapshot_name(path, path_size, *number);
        if (link(tmp, path) == 0)
            return 0;
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}

int ct_trace_file_copy(const void *packets, size_t size, char *path, size_t path_size)
{
    static unsigned char *closing;
    static size_t closing_capacity;
    static int number = 1;
    size_t n = compress_into(&closing, &closing_capacity, packets, size);
    if (fd < 0 || write_error || !n)
        return EIO;
    char tmp[sizeof file_path + 48];
    snprintf(tmp, sizeof tmp, "%s.snapshot.%d.tmp", file_path, (int)getpid());
    int to = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (to < 0)
        return errno;
    int err = write_copy(to, closing, n) ? (errno ? errno : EIO) : 0;
    close(to);
    if (!err)
        err = name_copy(tmp, path, path_size, &number);
    unlink(tmp);
    number += !err;
    return err;
}

void ct_trace_file_close(void)
{
    if (fd < 0)
        return;
    close(fd);
    fd = -1;
    ZSTD_freeCCtx(cctx);
    cctx = NULL;
}

uint64_t ct_trace_file_bytes(void)
{
    return file_size;
}

int ct_trace_file_error(void)
{
    return write_error;
}

/*
 * Streams packets through one zstd compression context into the trace file.
 * Each flush ends a complete frame with a checksum, so a collector killed
 * mid-write leaves a file whose complete frames are all readable, and the
 * compressor's memory is bounded by its window however long the run. The
 * file is created O_EXCL|O_NOFOLLOW with mode 0600: a name planted in a
 * shared directory is never followed, and an existing trace never replaced.
 */
#include "trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "write_all.h"

#define OUT_BUFFER_SIZE (1 << 17)

static int fd = -1;
static ZSTD_CCtx *cctx;
static unsigned char out_buffer[OUT_BUFFER_SIZE];
static size_t pending;
static uint64_t bytes_written;
static int write_error;

static int create_unique(char *path, size_t size)
{
    char base[4096];
    snprintf(base, sizeof base, "%s", path);
    for (int attempt = 0; attempt < 1000; attempt++) {
        if (attempt > 0)
            snprintf(path, size, "%s-%d", base, attempt);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    return create_unique(path, path_size);
}

static void write_all(const unsigned char *data, size_t size)
{
    if (write_error)
        return;
    size_t n = ct_write_all(fd, data, size);
    bytes_written += n;
    if (n < size)
        write_error = errno;
}

static void compress(const void *data, size_t size, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {data, size, 0};
    size_t remaining;
    do {
        ZSTD_outBuffer out = {out_buffer, sizeof out_buffer, 0};
        remaining = ZSTD_compressStream2(cctx, &out, &in, mode);
        if (ZSTD_isError(remaining)) {
            write_error = EIO;
            return;
        }
        write_all(out_buffer, out.pos);
    } while (mode == ZSTD_e_end ? remaining != 0 : in.pos < in.size);
}

void ct_trace_file_append(const void *data, size_t size)
{
    if (fd < 0 || write_error)
        return;
    compress(data, size, ZSTD_e_continue);
    pending += size;
}

void ct_trace_file_end_frame(void)
{
    if (fd < 0 || write_error || pending == 0)
        return;
    compress(NULL, 0, ZSTD_e_end);
    pending = 0;
}

void ct_trace_file_close(void)
{
    if (fd < 0)
        return;
    ct_trace_file_end_frame();
    close(fd);
    fd = -1;
    ZSTD_freeCCtx(cctx);
    cctx = NULL;
}

size_t ct_trace_file_pending(void)
{
    return pending;
}

uint64_t ct_trace_file_bytes(void)
{
    return bytes_written;
}

int ct_trace_file_error(void)
{
    return write_error;
}

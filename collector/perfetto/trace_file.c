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
 */
#include "collector/perfetto/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_stableInBuffer */
#include <zstd.h>

#include "common/write_all.h"
#include "cudatrace/shm_layout.h"

#define OUT_BUFFER_SIZE (1 << 17)

static int fd = -1;
static ZSTD_CCtx *cctx;
static unsigned char out_buffer[OUT_BUFFER_SIZE];
static uint64_t bytes_written;
static int write_error;

/* PATH with "-attempt" before its trace extension (or at its end). */
static void numbered_name(char *path, size_t size, const char *base, int attempt)
{
    const char *slash = strrchr(base, '/');
    const char *ext = strstr(slash ? slash : base, ".pftrace");
    size_t stem = ext ? (size_t)(ext - base) : strlen(base);
    snprintf(path, size, "%.*s-%d%s", (int)stem, base, attempt, base + stem);
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
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_stableInBuffer, 1);
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

void ct_trace_file_write_frame(const void *data, size_t size)
{
    if (fd < 0 || write_error || size == 0)
        return;
    ZSTD_inBuffer in = {data, size, 0};
    size_t remaining;
    do {
        ZSTD_outBuffer out = {out_buffer, sizeof out_buffer, 0};
        remaining = ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(remaining)) {
            write_error = EIO;
            return;
        }
        write_all(out_buffer, out.pos);
    } while (remaining != 0);
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
    return bytes_written;
}

int ct_trace_file_error(void)
{
    return write_error;
}

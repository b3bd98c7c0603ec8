/*
 * `cudatrace recover DAMAGED OUT`: writes a clean copy of a trace whose
 * writer died mid-write. For zstd (what the collector writes) that is every
 * complete frame, each checked against its checksum, up to the first one
 * that is cut or corrupt; for a plain trace, every complete packet. Perfetto
 * rejects a whole file whose last zstd frame is cut, so this is what makes
 * such a trace open again. OUT is created new and never replaces a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "viewer-export/commands.h"
#include "viewer-export/read/trace_input.h"
#include "common/varint.h"
#include "common/write_all.h"

#define MAX_FRAME (256u << 20)

struct buffer {
    unsigned char *data;
    size_t len, cap;
};

static int read_more(FILE *in, struct buffer *b)
{
    if (b->len == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 20;
        if (cap > MAX_FRAME * 2)
            return 0;
        unsigned char *grown = realloc(b->data, cap);
        if (!grown)
            return 0;
        b->data = grown;
        b->cap = cap;
    }
    size_t n = fread(b->data + b->len, 1, b->cap - b->len, in);
    b->len += n;
    return n > 0;
}

/* Whether the frame decompresses whole and its checksum matches. */
static int frame_is_sound(ZSTD_DCtx *dctx, const unsigned char *frame, size_t size)
{
    static unsigned char sink[1 << 17];
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {frame, size, 0};
    size_t r;
    do {
        ZSTD_outBuffer out = {sink, sizeof sink, 0};
        r = ZSTD_decompressStream(dctx, &out, &in);
        if (ZSTD_isError(r))
            return 0;
    } while (r != 0 && in.pos < in.size);
    return r == 0 && in.pos == in.size;
}

/* Copies sound frames; returns the bytes of input kept, or -1 on a write error. */
static long long copy_frames(FILE *in, int out, unsigned long long *frames)
{
    struct buffer b = {0};
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    long long kept = 0;
    size_t start = 0;
    while (dctx) {
        size_t size = ZSTD_findFrameCompressedSize(b.data + start, b.len - start);
        if (b.len == start || ZSTD_isError(size)) {
            if (start > 0) { /* keep the buffer to the frame being read */
                memmove(b.data, b.data + start, b.len - start);
                b.len -= start;
                start = 0;
            }
            if (!read_more(in, &b))
                break; /* the end, or a frame too large to be ours */
            continue;
        }
        if (!frame_is_sound(dctx, b.data + start, size))
            break;
        if (ct_write_all(out, b.data + start, size) != size) {
            kept = -1;
            break;
        }
        kept += (long long)size;
        (*frames)++;
        start += size;
    }
    ZSTD_freeDCtx(dctx);
    free(b.data);
    return kept;
}

static long long copy_packets(const char *path, int out, unsigned long long *packets)
{
    char error[256];
    struct ct_trace_input *in = ct_trace_input_open(path, error, sizeof error);
    if (!in)
        return -1;
    const uint8_t *packet;
    size_t size;
    long long kept = 0;
    while (ct_trace_input_next(in, &packet, &size, error, sizeof error) > 0) {
        uint8_t header[11];
        size_t n = ct_put_packet_header(header, size);
        if (ct_write_all(out, header, n) != n || ct_write_all(out, packet, size) != size) {
            kept = -1;
            break;
        }
        kept += (long long)(n + size);
        (*packets)++;
    }
    ct_trace_input_close(in);
    return kept;
}

static const char help[] =
    "usage: cudatrace recover DAMAGED_TRACE OUTPUT\n"
    "\n"
    "Writes a clean copy of a trace whose writer died mid-write (Perfetto refuses\n"
    "a file whose last zstd frame is cut): every complete zstd frame that passes\n"
    "its checksum, up to the first cut or corrupt one; for a plain trace, every\n"
    "complete packet. OUTPUT must not exist; it is never replaced.\n"
    "\n"
    "options:\n"
    "  --help    this text\n"
    "\n"
    "examples:\n"
    "  cudatrace recover cudatrace-1234.pftrace.zst clean.pftrace.zst\n"
    "  cudatrace recover cut.pftrace ok.pftrace && cudatrace open ok.pftrace\n";

int ct_cmd_recover(int argc, char **argv)
{
    int status = ct_help_only_options(&argc, &argv, help);
    if (status >= 0)
        return status;
    if (argc != 3)
        return ct_usage_error("recover: expected DAMAGED_TRACE OUTPUT");
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, "cudatrace: %s: cannot open: %s\n", argv[1], strerror(errno));
        return 1;
    }
    unsigned char magic[4] = {0};
    size_t got = fread(magic, 1, sizeof magic, in);
    rewind(in);
    enum ct_trace_format format = ct_trace_format_of(magic, got);
    int zstd = format == CT_TRACE_ZSTD;
    if (!zstd && format != CT_TRACE_PLAIN) {
        fprintf(stderr, "cudatrace: %s: recover reads zstd or plain Perfetto traces\n", argv[1]);
        fclose(in);
        return 1;
    }
    int out = open(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        fprintf(stderr, "cudatrace: %s: cannot create: %s\n", argv[2], strerror(errno));
        fclose(in);
        return 1;
    }
    unsigned long long units = 0;
    long long kept = zstd ? copy_frames(in, out, &units) : copy_packets(argv[1], out, &units);
    fseek(in, 0, SEEK_END);
    long long total = ftell(in);
    fclose(in);
    if (close(out) || kept < 0) {
        fprintf(stderr, "cudatrace: %s: write failed\n", argv[2]);
        return 1;
    }
    if (units == 0) {
        unlink(argv[2]);
        fprintf(stderr, "cudatrace: %s: no complete %s to recover\n", argv[1],
                zstd ? "zstd frame" : "packet");
        return 1;
    }
    printf("recovered %llu %s, %lld of %lld bytes; %lld bytes after them were dropped\n", units,
           zstd ? "frames" : "packets", kept, total, total - kept);
    return 0;
}

/*
 * Streams a trace file as TracePacket byte strings: the framing of Trace's
 * repeated field 1 over plain, gzip (any number of members) or zstd (any
 * number of frames) input, decompressed a block at a time so memory stays
 * bounded by the largest packet, not the file: at most MAX_PACKET (64 MiB;
 * the collector writes 64 KiB at most), a longer one refused as malformed
 * (what decoding one may cost is trace_decode.c's bound). A file that stops
 * inside a compressed frame yields every packet before the cut and then
 * reports the tail as truncated instead of failing the whole file.
 */
#include "viewer-export/read/trace_input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define READ_CHUNK (1 << 16)
#define MAX_PACKET (64u << 20)

struct ct_trace_input {
    FILE *file;
    enum ct_trace_format format;
    ZSTD_DStream *zstd;
    z_stream gzip;
    int gzip_open;
    unsigned char raw[READ_CHUNK]; /* compressed bytes read, not yet consumed */
    size_t raw_pos, raw_len;
    int raw_eof;
    uint64_t raw_total;
    int in_frame; /* a zstd frame or gzip member has begun and not ended */
    uint8_t *buf; /* decompressed bytes */
    size_t buf_pos, buf_len, buf_cap;
    int truncated;
};

static int fill_raw(struct ct_trace_input *in)
{
    if (in->raw_pos < in->raw_len || in->raw_eof)
        return in->raw_pos < in->raw_len;
    in->raw_len = fread(in->raw, 1, sizeof in->raw, in->file);
    in->raw_pos = 0;
    in->raw_total += in->raw_len;
    if (in->raw_len == 0)
        in->raw_eof = 1;
    return in->raw_len > 0;
}

static int reserve(struct ct_trace_input *in, size_t extra)
{
    if (in->buf_pos > 0) {
        memmove(in->buf, in->buf + in->buf_pos, in->buf_len - in->buf_pos);
        in->buf_len -= in->buf_pos;
        in->buf_pos = 0;
    }
    if (in->buf_len + extra <= in->buf_cap)
        return 0;
    size_t cap = in->buf_cap ? in->buf_cap : READ_CHUNK;
    while (cap < in->buf_len + extra)
        cap *= 2;
    uint8_t *grown = realloc(in->buf, cap);
    if (!grown)
        return -1;
    in->buf = grown;
    in->buf_cap = cap;
    return 0;
}

/* Appends at least one more decompressed byte; 0 at a clean end, -1 error. */
static int decompress_more(struct ct_trace_input *in, char *error, size_t error_size)
{
    for (;;) {
        if (!fill_raw(in)) {
            in->truncated = in->in_frame;
            return 0;
        }
        if (reserve(in, READ_CHUNK) < 0) {
            snprintf(error, error_size, "out of memory");
            return -1;
        }
        size_t before = in->buf_len;
        if (in->format == CT_TRACE_PLAIN) {
            size_t n = in->raw_len - in->raw_pos;
            memcpy(in->buf + in->buf_len, in->raw + in->raw_pos, n);
            in->buf_len += n;
            in->raw_pos += n;
        } else if (in->format == CT_TRACE_ZSTD) {
            ZSTD_inBuffer src = {in->raw, in->raw_len, in->raw_pos};
            ZSTD_outBuffer dst = {in->buf + in->buf_len, in->buf_cap - in->buf_len, 0};
            size_t r = ZSTD_decompressStream(in->zstd, &dst, &src);
            if (ZSTD_isError(r)) {
                snprintf(error, error_size, "corrupt zstd data: %s", ZSTD_getErrorName(r));
                return -1;
            }
            in->in_frame = r != 0;
            in->raw_pos = src.pos;
            in->buf_len += dst.pos;
        } else {
            in->gzip.next_in = in->raw + in->raw_pos;
            in->gzip.avail_in = (uInt)(in->raw_len - in->raw_pos);
            in->gzip.next_out = in->buf + in->buf_len;
            in->gzip.avail_out = (uInt)(in->buf_cap - in->buf_len);
            int r = inflate(&in->gzip, Z_NO_FLUSH);
            if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) {
                snprintf(error, error_size, "corrupt gzip data: %s",
                         in->gzip.msg ? in->gzip.msg : "inflate failed");
                return -1;
            }
            in->raw_pos = in->raw_len - in->gzip.avail_in;
            in->buf_len = (size_t)(in->gzip.next_out - in->buf);
            in->in_frame = r != Z_STREAM_END;
            if (r == Z_STREAM_END)
                inflateReset(&in->gzip); /* another member may follow */
        }
        if (in->buf_len > before)
            return 1;
    }
}

enum ct_trace_format ct_trace_format_of(const unsigned char *head, size_t n)
{
    if (n >= 4 && head[0] == 0x28 && head[1] == 0xB5 && head[2] == 0x2F && head[3] == 0xFD)
        return CT_TRACE_ZSTD;
    if (n >= 2 && head[0] == 0x1F && head[1] == 0x8B)
        return CT_TRACE_GZIP;
    return n >= 1 && head[0] == 0x0A ? CT_TRACE_PLAIN : CT_TRACE_UNKNOWN;
}

struct ct_trace_input *ct_trace_input_open(const char *path, char *error, size_t error_size)
{
    struct ct_trace_input *in = calloc(1, sizeof *in);
    if (!in) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    in->file = fopen(path, "rb");
    if (!in->file) {
        snprintf(error, error_size, "cannot open: %s", strerror(errno));
        free(in);
        return NULL;
    }
    fill_raw(in);
    if (in->raw_len == 0) {
        if (ferror(in->file))
            snprintf(error, error_size, "cannot read: %s", strerror(errno));
        else
            snprintf(error, error_size, "the file is empty");
        ct_trace_input_close(in);
        return NULL;
    }
    in->format = ct_trace_format_of(in->raw, in->raw_len);
    if (in->format == CT_TRACE_UNKNOWN) {
        snprintf(error, error_size, "not a Perfetto trace (plain, gzip or zstd)");
        ct_trace_input_close(in);
        return NULL;
    }
    if (in->format == CT_TRACE_ZSTD)
        in->zstd = ZSTD_createDStream();
    if (in->format == CT_TRACE_GZIP)
        in->gzip_open = inflateInit2(&in->gzip, 16 + MAX_WBITS) == Z_OK;
    if ((in->format == CT_TRACE_ZSTD && !in->zstd) ||
        (in->format == CT_TRACE_GZIP && !in->gzip_open)) {
        snprintf(error, error_size, "cannot set up decompression");
        ct_trace_input_close(in);
        return NULL;
    }
    return in;
}

/* Makes `need` decompressed bytes available: 1 yes, 0 clean end, -1 error. */
static int have(struct ct_trace_input *in, size_t need, char *error, size_t error_size)
{
    while (in->buf_len - in->buf_pos < need) {
        int r = decompress_more(in, error, error_size);
        if (r <= 0)
            return r;
    }
    return 1;
}

int ct_trace_input_next(struct ct_trace_input *in, const uint8_t **packet, size_t *size,
                        char *error, size_t error_size)
{
    int r = have(in, 1, error, error_size);
    if (r <= 0)
        return r;
    if (in->buf[in->buf_pos] != 0x0A) {
        snprintf(error, error_size, "not a Perfetto trace: unexpected field tag 0x%02x",
                 in->buf[in->buf_pos]);
        return -1;
    }
    uint64_t len = 0;
    size_t header = 1;
    for (int shift = 0;; shift += 7, header++) {
        if (shift > 63) {
            snprintf(error, error_size, "malformed packet length");
            return -1;
        }
        if ((r = have(in, header + 1, error, error_size)) <= 0)
            goto cut;
        uint8_t byte = in->buf[in->buf_pos + header];
        len |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80))
            break;
    }
    header++;
    if (len > MAX_PACKET) {
        snprintf(error, error_size, "packet of %llu bytes is beyond any trace cudatrace writes",
                 (unsigned long long)len);
        return -1;
    }
    if ((r = have(in, header + len, error, error_size)) <= 0)
        goto cut;
    *packet = in->buf + in->buf_pos + header;
    *size = (size_t)len;
    in->buf_pos += header + len;
    return 1;
cut:
    if (r < 0)
        return -1;
    in->truncated = 1; /* the file ends inside a packet */
    return 0;
}

int ct_trace_input_truncated(const struct ct_trace_input *in)
{
    return in->truncated;
}

uint64_t ct_trace_input_bytes_read(const struct ct_trace_input *in)
{
    return in->raw_total;
}

void ct_trace_input_close(struct ct_trace_input *in)
{
    if (!in)
        return;
    if (in->file)
        fclose(in->file);
    ZSTD_freeDStream(in->zstd);
    if (in->gzip_open)
        inflateEnd(&in->gzip);
    free(in->buf);
    free(in);
}

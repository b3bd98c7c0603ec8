/*
 * Reads a trace file back for a unit check: every frame decompressed into
 * one buffer, then unpacked as one Trace, so that a packet cut short or
 * garbled anywhere fails the whole read.
 */
#include "tests/unit/trace_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

/* The file's frames, decompressed, and their size in *size; NULL on error. */
static uint8_t *decompressed(FILE *f, size_t *size)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    size_t capacity = 1 << 20, used = 0, got;
    uint8_t *out = malloc(capacity), in[1 << 16];
    int ok = d && out;
    while (ok && (got = fread(in, 1, sizeof in, f)) > 0) {
        ZSTD_inBuffer input = {in, got, 0};
        while (ok && input.pos < input.size) {
            if (capacity - used < ZSTD_DStreamOutSize()) {
                uint8_t *grown = realloc(out, capacity *= 2);
                ok = grown != NULL;
                out = grown ? grown : out;
            }
            ZSTD_outBuffer output = {out + used, capacity - used, 0};
            ok = ok && !ZSTD_isError(ZSTD_decompressStream(d, &output, &input));
            used += output.pos;
        }
    }
    ZSTD_freeDStream(d);
    if (!ok) {
        free(out);
        return NULL;
    }
    *size = used;
    return out;
}

CtPb__Trace *ct_trace_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t size = 0;
    uint8_t *packets = decompressed(f, &size);
    fclose(f);
    CtPb__Trace *trace = packets ? ct_pb__trace__unpack(NULL, size, packets) : NULL;
    free(packets);
    return trace;
}

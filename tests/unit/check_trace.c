/*
 * The trace a unit check writes: made in a folder of its own, and read back
 * with every frame decompressed into one buffer, then unpacked as one
 * Trace, so that a packet cut short or garbled anywhere fails the whole
 * read.
 */
#include "tests/unit/check_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "tests/unit/check.h"

int ct_check_trace_open(struct ct_check_trace *t, uint64_t max_bytes)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/ct-check-trace-XXXXXX");
    if (!mkdtemp(t->dir))
        return -1;
    snprintf(t->path, sizeof t->path, "%s/trace.pftrace.zst", t->dir);
    if (ct_trace_file_open(&t->file, t->path, sizeof t->path))
        return -1;
    t->writer = ct_writer_create(&t->file, max_bytes);
    return 0;
}

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

CtPb__Trace *ct_check_trace_read(struct ct_check_trace *t)
{
    ct_writer_flush(t->writer);
    ct_trace_file_close(&t->file);
    FILE *f = fopen(t->path, "rb");
    size_t size = 0;
    uint8_t *packets = f ? decompressed(f, &size) : NULL;
    if (f)
        fclose(f);
    CtPb__Trace *trace = packets ? ct_pb__trace__unpack(NULL, size, packets) : NULL;
    free(packets);
    ct_check(trace != NULL, "the trace reads whole");
    return trace;
}

void ct_check_trace_remove(struct ct_check_trace *t)
{
    unlink(t->path);
    rmdir(t->dir);
}

/*
 * Collector throughput on one core, without a traced process: fills one ring
 * with a launch-heavy record mix (four kernels, an allocation and a free
 * every 64 calls, a sync every 256), then times the collector draining it:
 * decoding, Perfetto encoding and zstd compression into a real file. Filling
 * is the producer's work and is not timed. Then, in the same run, zstd alone
 * compresses the same bytes (the file, decompressed) at the same level, in
 * frames of the writer's size: the share of the collector's time that is
 * compression, the rest being decoding and encoding. Usage:
 * collector_throughput [records=5000000] [output=/tmp/ct-throughput.pftrace.zst]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "collector/perfetto/clock_map.h"
#include "cudatrace/functions.h"
#include "collector/ring_drain.h"
#include "collector/trace_builder.h"
#include "collector/perfetto/trace_file.h"

#define CAPACITY (1u << 16)
#define FRAME_BYTES (4u << 20) /* the writer's batch */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(struct ct_ring *ring, uint64_t first, uint64_t count, uint64_t *clock)
{
    uint64_t head = atomic_load(&ring->head);
    for (uint64_t i = first; i < first + count; i++, head++) {
        struct ct_record *r = &ring->records[head & (CAPACITY - 1)];
        memset(r, 0, sizeof *r);
        r->type = CT_REC_CALL;
        r->begin = *clock += 200;
        r->end = *clock += 900 + (i * 7919) % 64;
        if (i % 64 == 63) {
            r->func = i % 128 == 127 ? CT_FN_cudaFree : CT_FN_cudaMalloc;
            r->arg[0] = 0x7f0000000000ull + (i / 128) * 4096;
            r->arg[1] = 1 << 20;
        } else if (i % 256 == 255) {
            r->func = CT_FN_cudaDeviceSynchronize;
        } else {
            r->func = CT_FN_cudaLaunchKernel;
            r->arg[0] = 0x400000 + (i % 4) * 64;
            r->arg[2] = ct_pack_dim3(256, 1, 1);
            r->arg[3] = ct_pack_dim3(128, 1, 1);
        }
    }
    atomic_store(&ring->head, head);
}

/* The trace's packets, as the writer handed them to zstd: the file decompressed. */
static char *packets_of(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ZSTD_DStream *d = ZSTD_createDStream();
    size_t capacity = 1 << 26, used = 0;
    char *out = malloc(capacity), in[1 << 16];
    size_t got;
    while (f && d && out && (got = fread(in, 1, sizeof in, f)) > 0) {
        ZSTD_inBuffer input = {in, got, 0};
        while (input.pos < input.size) {
            if (capacity - used < ZSTD_DStreamOutSize())
                out = realloc(out, capacity *= 2);
            ZSTD_outBuffer output = {out + used, capacity - used, 0};
            if (!out || ZSTD_isError(ZSTD_decompressStream(d, &output, &input)))
                goto fail;
            used += output.pos;
        }
    }
    *size = used;
    fclose(f);
    ZSTD_freeDStream(d);
    return out;
fail:
    fclose(f);
    ZSTD_freeDStream(d);
    free(out);
    return NULL;
}

/* Seconds zstd alone takes on `size` bytes, compressed as the collector does. */
static double zstd_alone_s(const char *packets, size_t size)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t bound = ZSTD_compressBound(FRAME_BYTES);
    char *frame = malloc(bound);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, CT_TRACE_ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    double t0 = now_s();
    for (size_t at = 0; frame && at < size; at += FRAME_BYTES)
        ZSTD_compress2(c, frame, bound, packets + at,
                       size - at < FRAME_BYTES ? size - at : FRAME_BYTES);
    double taken = now_s() - t0;
    free(frame);
    ZSTD_freeCCtx(c);
    return taken;
}

int main(int argc, char **argv)
{
    uint64_t records = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    char path[4096];
    snprintf(path, sizeof path, "%s", argc > 2 ? argv[2] : "/tmp/ct-throughput.pftrace.zst");
    unlink(path);
    size_t size = ct_shm_size(2, CAPACITY, 0); /* the loader's ring and one thread's */
    struct ct_shm_header *shm = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    static struct ct_trace_file file;
    if (!shm || ct_trace_file_open(&file, path, sizeof path)) {
        fprintf(stderr, "collector_throughput: cannot set up\n");
        return 1;
    }
    memset(shm, 0, size);
    shm->ring_count = 2;
    shm->ring_capacity = CAPACITY;
    shm->clock = CT_CLOCK_BOOTTIME;
    shm->pid = (int32_t)getpid();
    ct_shm_init_rings(shm);
    struct ct_ring *ring = ct_shm_ring(shm, 1);
    atomic_store(&ring->state, CT_RING_ACTIVE); /* claimed, as a thread claims it */
    ct_shm_note_claimed(shm, 1);
    ring->tid = shm->pid;
    ct_clock_map_init(CT_CLOCK_BOOTTIME, 0, 0);
    ct_builder_start(shm, &file);
    uint64_t clock = 1000000000ull, done = 0, oldest_call;
    double busy = 0;
    while (done < records) {
        uint64_t batch = records - done < CAPACITY ? records - done : CAPACITY;
        fill(ring, done, batch, &clock);
        double t0 = now_s();
        ct_drain_rings(shm, &oldest_call);
        busy += now_s() - t0;
        done += batch;
    }
    double t0 = now_s();
    ct_builder_finish(clock, 0, 1);
    ct_builder_flush();
    ct_trace_file_close(&file);
    busy += now_s() - t0;
    printf("collector_throughput: %llu records in %.3f s: %.2f M records/s, %.2f bytes/record\n",
           (unsigned long long)records, busy, (double)records / busy / 1e6,
           (double)ct_trace_file_bytes(&file) / (double)records);
    size_t unpacked = 0;
    char *packets = packets_of(path, &unpacked);
    if (packets) {
        double alone = zstd_alone_s(packets, unpacked);
        printf("collector_zstd: zstd alone on the same %.1f MB at level %d: %.3f s, %.0f%% "
               "of the collector's time; decoding and encoding %.0f%%\n",
               (double)unpacked / 1e6, CT_TRACE_ZSTD_LEVEL, alone, 100 * alone / busy,
               100 * (1 - alone / busy));
        free(packets);
    }
    unlink(path);
    return 0;
}

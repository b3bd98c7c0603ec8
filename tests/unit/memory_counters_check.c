/*
 * Checks the live-memory counters (collector/tracks/memory_counters.c)
 * through their own context, made as the builder makes it, over a writer
 * and trace file of their own. Two threads' calls come out of time order,
 * as the drain hands them over: one thread frees an address that the other
 * then gets back, and the allocation arrives first; the counters must still
 * follow the calls' own order (a free counts when it begins, an allocation
 * when it returns). A call that comes after its time was settled counts at
 * once and as late; a failed call counts nothing, a free of an address never
 * seen leaves the count as it was; pinned host memory has a counter of its
 * own.
 */
#include "collector/tracks/memory_counters.h"
#include "cudatrace/functions.h"
#include "tests/unit/check.h"
#include "tests/unit/check_trace.h"

#define P 0x7f0000001000ull
#define Q 0x7f0000800000ull
#define MOST 16

struct value {
    uint64_t ts;
    int64_t value;
};

struct counter {
    uint64_t track;
    int count;
    struct value at[MOST];
};

static void call(struct ct_memory_counters *m, enum ct_function fn, uint64_t ptr, uint64_t bytes,
                 uint64_t begin, uint64_t end, int32_t result)
{
    struct ct_record r = {.type = CT_REC_CALL, .func = (uint16_t)fn, .result = result};
    r.arg[0] = ptr;
    r.arg[1] = bytes;
    ct_memory_counters_note(m, (uint8_t)ct_function_family(fn), &r, begin, end,
                            (struct ct_call_site){0, 0}, 0);
}

static void run(struct ct_memory_counters *m)
{
    call(m, CT_FN_cudaMalloc, P, 100, 10, 20, 0);
    call(m, CT_FN_cudaMalloc, P, 100, 25, 35, 0); /* thread 2, drained first */
    call(m, CT_FN_cudaFree, P, 0, 30, 40, 0);     /* thread 1: P free from 30 */
    call(m, CT_FN_cudaMalloc, Q, 999, 26, 27, 2); /* failed: no memory */
    call(m, CT_FN_cudaFree, Q, 0, 28, 29, 0);     /* allocated before tracing */
    call(m, CT_FN_cudaMallocHost, Q, 64, 31, 32, 0);
    ct_memory_counters_settle(m, 50);
    ct_check_u64(ct_memory_counters_live_device(m), 100, "live device bytes at 50");
    call(m, CT_FN_cudaMalloc, Q, 50, 45, 48, 0); /* later than its time: counts at 50 */
    ct_memory_counters_settle(m, UINT64_MAX);
    ct_check_u64(ct_memory_counters_late(m), 1, "calls counted late");
    ct_check_u64(ct_memory_counters_peaks(m).allocated, 150, "the peak of allocated bytes");
}

static void read_back(struct ct_check_trace *t, struct counter *counters, int count)
{
    CtPb__Trace *trace = ct_check_trace_read(t);
    if (!trace)
        return;
    for (size_t i = 0; i < trace->n_packet; i++) {
        const CtPb__TracePacket *p = trace->packet[i];
        if (!p->track_event || p->track_event->type != CT_PB__TRACK_EVENT__TYPE__TYPE_COUNTER)
            continue;
        for (int c = 0; c < count; c++)
            if (p->track_event->track_uuid == counters[c].track && counters[c].count < MOST)
                counters[c].at[counters[c].count++] =
                    (struct value){p->timestamp, p->track_event->counter_value};
    }
    ct_pb__trace__free_unpacked(trace, NULL);
}

static void check_values(const struct counter *c, const char *name, const struct value *want,
                         int count)
{
    ct_check_u64((uint64_t)c->count, (uint64_t)count, "%s values", name);
    for (int i = 0; i < count && i < c->count; i++)
        ct_check(c->at[i].ts == want[i].ts && c->at[i].value == want[i].value,
                 "%s value %d: %lld at %llu, where %lld at %llu was due", name, i,
                 (long long)c->at[i].value, (unsigned long long)c->at[i].ts,
                 (long long)want[i].value, (unsigned long long)want[i].ts);
}

int main(void)
{
    static struct ct_check_trace t;
    static struct ct_process process = {.pid = 100, .uuid = 100ull << 32};
    static struct ct_memory_counters m;
    static struct ct_gap_memory gap;
    if (ct_check_trace_open(&t, 0))
        return 1;
    ct_sequence_init(&process.seq, t.writer, process.uuid);
    ct_gap_memory_start(&gap);
    ct_memory_counters_start(&m, &process, &gap);
    run(&m);
    struct counter counters[] = {{.track = ct_process_track_of(&process, CT_TRACK_DEVICE_BYTES)},
                                 {.track = ct_process_track_of(&process, CT_TRACK_PINNED_BYTES)}};
    read_back(&t, counters, 2);
    const struct value device[] = {{20, 100}, {28, 100}, {30, 0}, {35, 100}, {50, 150}};
    check_values(&counters[0], "device bytes", device, 5);
    const struct value pinned[] = {{32, 64}};
    check_values(&counters[1], "pinned bytes", pinned, 1);
    ct_sequence_release(&process.seq);
    ct_check_trace_remove(&t);
    return ct_check_finish();
}

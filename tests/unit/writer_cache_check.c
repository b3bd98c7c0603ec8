/*
 * Checks the writer's cache of packed bodies against the gap marker, which
 * a bounded trace writes from inside a flush: the flush may come while a
 * cached body is being copied into the batch, so the gap's own events must
 * leave the cache alone (perfetto/writer.c, write_event). The writer is made
 * as the collector makes one, over a small bounded trace file, and its
 * chunks are ended where the builder would end them, so that the middle is
 * dropped again and again; each time, the gap writer writes many distinct
 * events, enough to pass through every cache slot. The program's events
 * repeat a few hundred shapes, so that most come from the cache. The file
 * must then read whole, and every event of the program's in it must be the
 * one written at its time, in order, the last one among them.
 */
#include "common/string_table.h"
#include "tests/unit/check.h"
#include "tests/unit/check_trace.h"

#define EVENTS 400000
#define SHAPES 500 /* distinct arguments among the program's events */
#define BOUND (256 * 1024)
#define GAP_EVENTS 8192 /* twice the cache's slots */
#define FIRST_TS 5000   /* the program's events; the gap's come before */
#define TS_STEP 1000

static uint32_t event_name, arg_name;
static size_t gaps_written;

/* Distinct events, each cacheable had it been written to the batch. */
static void write_gap(struct ct_sequence *seq, const struct ct_gap *g, void *ctx)
{
    (void)g, (void)ctx;
    gaps_written++;
    for (uint64_t i = 0; i < GAP_EVENTS; i++) {
        struct ct_arg arg = {arg_name, CT_ARG_UINT, i + 1000};
        ct_write_instant(seq, 0, 1000 + i, event_name, &arg, 1);
    }
}

/* Event i's argument, and its time: a jitter below TS_STEP keeps the
 * frames from compressing to nothing, so that the bound is soon reached. */
static uint64_t shape_of(uint64_t i)
{
    return (i * 2654435761u >> 7) % SHAPES;
}

static uint64_t ts_of(uint64_t i)
{
    return FIRST_TS + i * TS_STEP + (i * 40503u >> 3) % (TS_STEP / 2);
}

static void write_events(struct ct_writer *w, struct ct_sequence *seq)
{
    for (uint64_t i = 0; i < EVENTS; i++) {
        struct ct_arg arg = {arg_name, CT_ARG_UINT, shape_of(i)};
        ct_write_instant(seq, 0, ts_of(i), event_name, &arg, 1);
        if (ct_writer_chunk_due(w))
            ct_writer_new_chunk(w, 0);
    }
}

/* The program's events in the trace: each the one written at its time,
 * after the one before it; how many, and the last one's number. */
static void check_events(const CtPb__Trace *trace)
{
    uint64_t kept = 0, wrong = 0, last = 0;
    for (size_t p = 0; p < trace->n_packet; p++) {
        const CtPb__TracePacket *packet = trace->packet[p];
        if (!packet->track_event || packet->timestamp < FIRST_TS)
            continue;
        uint64_t i = (packet->timestamp - FIRST_TS) / TS_STEP;
        const CtPb__TrackEvent *e = packet->track_event;
        wrong += packet->timestamp != ts_of(i) || (kept && i <= last) ||
                 e->n_debug_annotations != 1 || e->debug_annotations[0]->uint_value != shape_of(i);
        kept++;
        last = i;
    }
    ct_check(kept > 0 && kept < EVENTS, "%llu of the events kept: the middle dropped",
             (unsigned long long)kept);
    ct_check_u64(wrong, 0, "events not the one written at their time, or out of order");
    ct_check_u64(last, EVENTS - 1, "the last event in the trace");
}

int main(void)
{
    static struct ct_check_trace t;
    if (ct_check_trace_open(&t, BOUND))
        return 1;
    event_name = ct_strings_intern_cstr("cached event");
    arg_name = ct_strings_intern_cstr("step");
    ct_writer_on_gap(t.writer, 7, write_gap, NULL);
    struct ct_sequence seq = {0};
    ct_sequence_init(&seq, t.writer, 9);
    write_events(t.writer, &seq);
    CtPb__Trace *trace = ct_check_trace_read(&t);
    ct_check(gaps_written > 10, "the gap marker written %zu times, from inside flushes",
             gaps_written);
    if (trace) {
        check_events(trace);
        ct_pb__trace__free_unpacked(trace, NULL);
    }
    ct_sequence_release(&seq);
    ct_check_trace_remove(&t);
    return ct_check_finish();
}

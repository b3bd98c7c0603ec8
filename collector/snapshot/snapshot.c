/*
 * A snapshot: the trace as the collector has written it so far, copied
 * beside it, and ended with a frame of its own that says why it was taken
 * (a cudatrace.snapshot instant) and what each running thread is doing at
 * that moment: its totals so far and the call it is inside, as a slice
 * marked in_flight that lasts until then, as the end of a trace writes
 * them. The frame is written on sequences of its own (perfetto/writer.h's
 * aside sequences), so the copy reads alone and the trace goes on with its
 * own sequences untouched; a bounded trace is a valid trace at every
 * moment, so its copy is one too. First the trace is brought up to the
 * moment (catch_up.c): the GPU work CUPTI holds, so the copy has what
 * completed, and the counters that wait for the events before a time to
 * have all come (live memory, the launch rate), so an allocation made just
 * before it is in it. The trace itself gets the same
 * instant, with the copy's path, so its report can say a snapshot was taken.
 */
#include "collector/snapshot/snapshot.h"

#include "cudatrace/functions.h"
#include "cudatrace/trace_names.h"
#include "collector/catch_up.h"
#include "collector/perfetto/clock_map.h"
#include "collector/perfetto/process_tracks.h"
#include "collector/perfetto/trace_file.h"
#include "collector/perfetto/writer.h"
#include "collector/ring_drain.h"

/* What the builder started it with: a snapshot is asked for by the
 * triggers, from the collector's loop, and by `cudatrace ctl`, neither of
 * which holds the builder's parts. */
static struct {
    struct ct_shm_header *rings;
    struct ct_writer *writer;
    struct ct_trace_file *file;
} started;

void ct_snapshot_start(struct ct_shm_header *shm, struct ct_writer *w, struct ct_trace_file *file)
{
    started.rings = shm;
    started.writer = w;
    started.file = file;
}

static const char *trigger_name(enum ct_snapshot_trigger trigger)
{
    static const char *const names[] = {
        [CT_SNAPSHOT_ASKED] = ct_value_trigger_asked,
        [CT_SNAPSHOT_ERROR] = ct_value_trigger_error,
        [CT_SNAPSHOT_OOM] = ct_value_trigger_oom,
        [CT_SNAPSHOT_HANG] = ct_value_trigger_hang,
    };
    return names[trigger];
}

/* The instant's annotations, with the copy's path when it is known. */
static int marker_args(const struct ct_snapshot_reason *why, const char *path, struct ct_arg *args)
{
    int n = 0;
    args[n++] = CT_TEXT_ARG(ct_key_trigger, trigger_name(why->trigger));
    if (why->trigger != CT_SNAPSHOT_ASKED && why->func < CT_FN_COUNT)
        args[n++] = CT_TEXT_ARG(ct_key_function, ct_function_name(why->func));
    if (why->trigger == CT_SNAPSHOT_ERROR || why->trigger == CT_SNAPSHOT_OOM)
        args[n++] = CT_INT_ARG(ct_key_result, why->result);
    if (why->trigger == CT_SNAPSHOT_HANG) {
        args[n++] = CT_UINT_ARG(ct_key_tid, why->tid);
        args[n++] = CT_UINT_ARG(ct_key_since_ns, why->since_ns);
        args[n++] = CT_UINT_ARG(ct_key_hang_ns, why->hang_ns);
    }
    if (path)
        args[n++] = CT_TEXT_ARG(ct_key_path, path);
    return n;
}

struct closing {
    const struct ct_snapshot_reason *why;
    uint64_t now_ns;
};

/* The copy's last frame. */
static void write_closing(void *ctx)
{
    const struct closing *c = ctx;
    struct ct_arg args[8];
    struct ct_sequence seq;
    ct_sequence_aside(&seq, started.writer, 0);
    ct_write_instant(&seq, ct_process_track(CT_TRACK_PROCESS), c->now_ns,
                     ct_strings_intern_cstr(ct_event_snapshot), args,
                     marker_args(c->why, NULL, args));
    ct_sequence_aside_done(&seq);
    ct_drain_write_live(started.rings, c->now_ns);
}

int ct_snapshot_write(const struct ct_snapshot_reason *why, char *path, size_t path_size)
{
    /* A hang's own work never completes: CUPTI holds back the buffer its
     * record is in, and whatever completed beside it, but for a forced flush. */
    ct_catch_up(started.rings, why->trigger == CT_SNAPSHOT_HANG);
    struct closing c = {why, ct_clock_map_now_ns()};
    ct_drain_describe_live(started.rings); /* their tracks in the trace, so in the copy */
    ct_writer_flush(started.writer);
    const uint8_t *packets;
    size_t size = ct_writer_aside(started.writer, write_closing, &c, &packets);
    int err = ct_trace_file_copy(started.file, packets, size, path, path_size);
    if (err)
        return err;
    struct ct_arg args[8];
    ct_process_instant(CT_TRACK_PROCESS, c.now_ns, ct_event_snapshot, args,
                       marker_args(why, path, args));
    return 0;
}

/*
 * Capture windows as the trace shows them: a "capture setting" instant at
 * the start (what CUDATRACE_CAPTURE asked for, so a run whose window never
 * opened still says so) and one "capture window" slice per window on a
 * process-level track, written once the window closes, with what opened it.
 * The flag itself is the header's capture_open: the preload flips it for the
 * profiler API and NVTX ranges and tells us by a record; the time window and
 * `cudatrace ctl` are flipped here. The track is described again with each
 * slice, because a bounded trace may drop the chunk that described it first.
 */
#include "collector/tracks/capture_windows.h"

#include "collector/perfetto/clock_map.h"
#include "collector/perfetto/process_tracks.h"
#include "cudatrace/trace_names.h"

static struct ct_shm_header *header;
static int window_open, closed_any;
static uint64_t opened_ns;
static const char *opened_by;
/* The time window: when it opens and closes (0: never), and how far it got. */
static uint64_t time_open_ns, time_close_ns;
static int time_opened, time_done;

static void describe(void)
{
    ct_write_named_track(&ct_process.seq, ct_process_track(CT_TRACK_CAPTURE), ct_process.uuid,
                         ct_track_capture_windows);
}

void ct_capture_windows_start(struct ct_shm_header *shm)
{
    header = shm;
    uint64_t start = ct_clock_map_ns(shm->start_ticks);
    if (shm->capture_kind == CT_CAPTURE_ALL) {
        /* Everything is recorded from the start: a window, should ctl close it. */
        window_open = 1;
        opened_ns = start;
        opened_by = "the start";
        return;
    }
    shm->capture_setting[sizeof shm->capture_setting - 1] = 0;
    if (shm->capture_kind == CT_CAPTURE_TIME) {
        time_open_ns = start + shm->capture_delay_ns;
        time_close_ns = shm->capture_duration_ns ? time_open_ns + shm->capture_duration_ns : 0;
    }
    describe();
    struct ct_arg args[] = {CT_TEXT_ARG(ct_key_capture, shm->capture_setting)};
    ct_write_instant(&ct_process.seq, ct_process_track(CT_TRACK_CAPTURE), start,
                     ct_strings_intern_cstr(ct_event_capture_setting), args, 1);
}

/* Marks the window opening or closing at `ns`; a change to what it is
 * already (the program's stop after ctl's stop, say) marks nothing. */
static void mark(int open, uint64_t ns, const char *by)
{
    if (open == window_open)
        return;
    window_open = open;
    if (open) {
        opened_ns = ns;
        opened_by = by;
        return;
    }
    closed_any = 1;
    describe();
    struct ct_arg args[] = {CT_TEXT_ARG(ct_key_opened_by, opened_by)};
    ct_write_slice(&ct_process.seq, ct_process_track(CT_TRACK_CAPTURE), opened_ns,
                   ns > opened_ns ? ns : opened_ns, ct_strings_intern_cstr(ct_event_capture_window),
                   args, 1);
}

void ct_capture_windows_record(const struct ct_record *record)
{
    const char *by = record->result == CT_CAPTURE_PROFILER ? "cudaProfilerStart" : "NVTX range";
    mark(record->func != 0, ct_clock_map_ns(record->begin), by);
}

void ct_capture_windows_set(int open, uint64_t now_ns, const char *by)
{
    atomic_store(&header->capture_open, (uint32_t)open);
    mark(open, now_ns, by);
}

void ct_capture_windows_tick(uint64_t now_ns)
{
    if (!time_open_ns || time_done)
        return;
    if (!time_opened && now_ns >= time_open_ns) {
        time_opened = 1;
        if (!time_close_ns || now_ns < time_close_ns)
            ct_capture_windows_set(1, now_ns, "time");
    }
    if (time_opened && (!time_close_ns || now_ns >= time_close_ns)) {
        if (time_close_ns)
            ct_capture_windows_set(0, now_ns, "time");
        time_done = 1; /* from here on only ctl opens and closes it */
    }
}

int ct_capture_windows_open(void)
{
    return header && atomic_load(&header->capture_open);
}

void ct_capture_windows_finish(uint64_t end_ns)
{
    /* Unset capture that ctl never closed is no window: the whole run. */
    if (header && (header->capture_kind != CT_CAPTURE_ALL || closed_any))
        mark(0, end_ns, opened_by);
}

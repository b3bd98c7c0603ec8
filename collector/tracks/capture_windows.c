/*
 * Capture windows as the trace shows them: a "capture setting" instant at
 * the start (what CUDATRACE_CAPTURE asked for, so a run whose window never
 * opened still says so) and one "capture window" slice per window on a
 * process-level track, written once the window closes, with what opened it.
 * The flag itself is the header's capture_open: the preload flips it for the
 * profiler API and NVTX ranges and tells us by a record; the time window and
 * `cudatrace ctl` are flipped here. The track is described again with each
 * slice, because a bounded trace may drop the chunk that described it first.
 * What the windows were and are is the builder's struct ct_capture_windows,
 * which ctl's commands are handed too.
 */
#include "collector/tracks/capture_windows.h"

#include "cudatrace/trace_names.h"

static void describe(const struct ct_capture_windows *w)
{
    ct_write_named_track(&w->process->seq, ct_process_track_of(w->process, CT_TRACK_CAPTURE),
                         w->process->uuid, ct_track_capture_windows);
}

void ct_capture_windows_start(struct ct_capture_windows *w, struct ct_shm_header *shm,
                              struct ct_process *process, uint64_t start_ns)
{
    *w = (struct ct_capture_windows){.header = shm, .process = process};
    if (shm->capture_kind == CT_CAPTURE_ALL) {
        /* Everything is recorded from the start: a window, should ctl close it. */
        w->window_open = 1;
        w->opened_ns = start_ns;
        w->opened_by = "the start";
        return;
    }
    shm->capture_setting[sizeof shm->capture_setting - 1] = 0;
    if (shm->capture_kind == CT_CAPTURE_TIME) {
        w->time_open_ns = start_ns + shm->capture_delay_ns;
        w->time_close_ns =
            shm->capture_duration_ns ? w->time_open_ns + shm->capture_duration_ns : 0;
    }
    describe(w);
    struct ct_arg args[] = {CT_TEXT_ARG(ct_key_capture, shm->capture_setting)};
    ct_write_instant(&process->seq, ct_process_track_of(process, CT_TRACK_CAPTURE), start_ns,
                     ct_strings_intern_cstr(ct_event_capture_setting), args, 1);
}

/* Marks the window opening or closing at `ns`; a change to what it is
 * already (the program's stop after ctl's stop, say) marks nothing. */
static void mark(struct ct_capture_windows *w, int open, uint64_t ns, const char *by)
{
    if (open == w->window_open)
        return;
    w->window_open = open;
    if (open) {
        w->opened_ns = ns;
        w->opened_by = by;
        return;
    }
    w->closed_any = 1;
    describe(w);
    struct ct_arg args[] = {CT_TEXT_ARG(ct_key_opened_by, w->opened_by)};
    ct_write_slice(&w->process->seq, ct_process_track_of(w->process, CT_TRACK_CAPTURE),
                   w->opened_ns, ns > w->opened_ns ? ns : w->opened_ns,
                   ct_strings_intern_cstr(ct_event_capture_window), args, 1);
}

void ct_capture_windows_record(struct ct_capture_windows *w, const struct ct_record *record,
                               uint64_t ns)
{
    const char *by = record->result == CT_CAPTURE_PROFILER ? "cudaProfilerStart" : "NVTX range";
    mark(w, record->func != 0, ns, by);
}

void ct_capture_windows_set(struct ct_capture_windows *w, int open, uint64_t now_ns, const char *by)
{
    atomic_store(&w->header->capture_open, (uint32_t)open);
    mark(w, open, now_ns, by);
}

void ct_capture_windows_tick(struct ct_capture_windows *w, uint64_t now_ns)
{
    if (!w->time_open_ns || w->time_done)
        return;
    if (!w->time_opened && now_ns >= w->time_open_ns) {
        w->time_opened = 1;
        if (!w->time_close_ns || now_ns < w->time_close_ns)
            ct_capture_windows_set(w, 1, now_ns, "time");
    }
    if (w->time_opened && (!w->time_close_ns || now_ns >= w->time_close_ns)) {
        if (w->time_close_ns)
            ct_capture_windows_set(w, 0, now_ns, "time");
        w->time_done = 1; /* from here on only ctl opens and closes it */
    }
}

int ct_capture_windows_open(const struct ct_capture_windows *w)
{
    return w->header && atomic_load(&w->header->capture_open);
}

void ct_capture_windows_finish(struct ct_capture_windows *w, uint64_t end_ns)
{
    /* Unset capture that ctl never closed is no window: the whole run. */
    if (w->header && (w->header->capture_kind != CT_CAPTURE_ALL || w->closed_any))
        mark(w, 0, end_ns, w->opened_by);
}

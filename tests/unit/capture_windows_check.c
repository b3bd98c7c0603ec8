/*
 * Checks the capture windows (collector/tracks/capture_windows.c) through
 * their own context, made here as the builder makes it, with nothing of the
 * collector stood in for: a writer over a trace file of its own, a process
 * with its sequence on it, and a shared header as the preload fills it. One
 * process has CUDATRACE_CAPTURE=time:1:2, and after its time window ctl, the
 * profiler API and an NVTX range open and close it; one has capture unset
 * and ctl closes it; one has capture unset and nothing closes it. The trace
 * must hold each one's setting and windows, at their times and with what
 * opened them, and the header's flag must follow the time window and ctl.
 */
#include <stdio.h>
#include <string.h>

#include "collector/tracks/capture_windows.h"
#include "cudatrace/trace_names.h"
#include "tests/unit/check.h"
#include "tests/unit/check_trace.h"

#define S 1000000000ull /* a second; the processes start at 10 */
#define START (10 * S)
#define MOST 8

struct window {
    uint64_t begin, end;
    const char *by;
};

/* What the trace holds on one process's capture track. */
struct seen {
    uint64_t track;
    int settings;
    const char *setting;
    int windows;
    struct window window[MOST];
};

static void process_on(struct ct_process *p, struct ct_writer *w, int32_t pid)
{
    p->pid = pid;
    p->uuid = (uint64_t)(uint32_t)pid << 32;
    ct_sequence_init(&p->seq, w, p->uuid);
}

static struct ct_record capture_record(int open, enum ct_capture_kind by)
{
    return (struct ct_record){.type = CT_REC_CAPTURE, .func = (uint16_t)open, .result = by};
}

/* CUDATRACE_CAPTURE=time:1:2, then ctl, the profiler API and an NVTX range. */
static void timed(struct ct_process *p, struct ct_shm_header *shm)
{
    struct ct_capture_windows w;
    shm->capture_kind = CT_CAPTURE_TIME;
    shm->capture_delay_ns = 1 * S;
    shm->capture_duration_ns = 2 * S;
    snprintf(shm->capture_setting, sizeof shm->capture_setting, "time:1:2");
    ct_capture_windows_start(&w, shm, p, START);
    ct_capture_windows_tick(&w, START + S / 2);
    ct_check(!ct_capture_windows_open(&w), "closed before the delay");
    ct_capture_windows_tick(&w, START + 5 * S / 4);
    ct_check(ct_capture_windows_open(&w), "open once the delay passed");
    ct_capture_windows_tick(&w, START + 7 * S / 2);
    ct_check(!ct_capture_windows_open(&w), "closed once the duration passed");
    ct_capture_windows_set(&w, 1, START + 4 * S, "cudatrace ctl");
    ct_check(ct_capture_windows_open(&w), "open after ctl start");
    struct ct_record profiler_stop = capture_record(0, CT_CAPTURE_PROFILER),
                     profiler_start = capture_record(1, CT_CAPTURE_PROFILER),
                     nvtx_start = capture_record(1, CT_CAPTURE_NVTX);
    ct_capture_windows_record(&w, &profiler_stop, START + 5 * S);
    ct_capture_windows_record(&w, &profiler_start, START + 6 * S);
    ct_capture_windows_record(&w, &profiler_start, START + 25 * S / 4); /* open already */
    ct_capture_windows_record(&w, &profiler_stop, START + 13 * S / 2);
    ct_capture_windows_record(&w, &nvtx_start, START + 27 * S / 4);
    ct_capture_windows_finish(&w, START + 7 * S);
}

/* Capture unset, everything recorded: ctl closes the window, or nothing does. */
static void unset(struct ct_process *p, struct ct_shm_header *shm, int ctl_stops)
{
    struct ct_capture_windows w;
    shm->capture_kind = CT_CAPTURE_ALL;
    atomic_store(&shm->capture_open, 1);
    ct_capture_windows_start(&w, shm, p, START);
    if (ctl_stops) {
        ct_capture_windows_set(&w, 0, START + 2 * S, "cudatrace ctl");
        ct_check_u64(atomic_load(&shm->capture_open), 0, "the header's flag after ctl stop");
    }
    ct_capture_windows_finish(&w, START + 3 * S);
}

static const char *string_arg(const CtPb__TrackEvent *e, const char *key)
{
    for (size_t i = 0; i < e->n_debug_annotations; i++)
        if (e->debug_annotations[i]->name_iid == ct_strings_intern_cstr(key))
            return ct_strings_get((uint32_t)e->debug_annotations[i]->string_value_iid);
    return NULL;
}

static void take(struct seen *s, const CtPb__TracePacket *packet)
{
    const CtPb__TrackEvent *e = packet->track_event;
    if (e->name_iid == ct_strings_intern_cstr(ct_event_capture_setting)) {
        s->settings++;
        s->setting = string_arg(e, ct_key_capture);
    } else if (e->type == CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN && s->windows < MOST) {
        s->window[s->windows] =
            (struct window){packet->timestamp, 0, string_arg(e, ct_key_opened_by)};
    } else if (e->type == CT_PB__TRACK_EVENT__TYPE__TYPE_SLICE_END && s->windows < MOST) {
        s->window[s->windows++].end = packet->timestamp;
    }
}

static void read_back(struct ct_check_trace *t, struct seen *seen, int count)
{
    CtPb__Trace *trace = ct_check_trace_read(t);
    if (!trace)
        return;
    for (size_t i = 0; i < trace->n_packet; i++)
        for (int s = 0; s < count; s++)
            if (trace->packet[i]->track_event &&
                trace->packet[i]->track_event->track_uuid == seen[s].track)
                take(&seen[s], trace->packet[i]);
    ct_pb__trace__free_unpacked(trace, NULL);
}

static void check_windows(const struct seen *s, const struct window *want, int count)
{
    ct_check_u64((uint64_t)s->windows, (uint64_t)count, "windows of process %llx",
                 (unsigned long long)s->track);
    for (int i = 0; i < count && i < s->windows; i++) {
        ct_check_u64(s->window[i].begin, want[i].begin, "window %d's begin", i);
        ct_check_u64(s->window[i].end, want[i].end, "window %d's end", i);
        ct_check(s->window[i].by && strcmp(s->window[i].by, want[i].by) == 0,
                 "window %d opened by %s, where %s opened it", i,
                 s->window[i].by ? s->window[i].by : "nothing", want[i].by);
    }
}

int main(void)
{
    static struct ct_check_trace t;
    static struct ct_shm_header shm[3];
    static struct ct_process process[3];
    if (ct_check_trace_open(&t, 0))
        return 1;
    struct seen seen[3] = {{0}};
    for (int i = 0; i < 3; i++) {
        process_on(&process[i], t.writer, 100 + i);
        seen[i].track = ct_process_track_of(&process[i], CT_TRACK_CAPTURE);
    }
    timed(&process[0], &shm[0]);
    unset(&process[1], &shm[1], 1);
    unset(&process[2], &shm[2], 0);
    read_back(&t, seen, 3);

    ct_check(seen[0].settings == 1 && seen[0].setting && strcmp(seen[0].setting, "time:1:2") == 0,
             "the time window's setting, once");
    const struct window timed_windows[] = {
        {START + 5 * S / 4, START + 7 * S / 2, "time"},
        {START + 4 * S, START + 5 * S, "cudatrace ctl"},
        {START + 6 * S, START + 13 * S / 2, "cudaProfilerStart"},
        {START + 27 * S / 4, START + 7 * S, "NVTX range"},
    };
    check_windows(&seen[0], timed_windows, 4);
    ct_check_u64((uint64_t)seen[1].settings, 0, "no setting when capture is unset");
    const struct window stopped[] = {{START, START + 2 * S, "the start"}};
    check_windows(&seen[1], stopped, 1);
    check_windows(&seen[2], NULL, 0);
    for (int i = 0; i < 3; i++)
        ct_sequence_release(&process[i].seq);
    ct_check_trace_remove(&t);
    return ct_check_finish();
}

/*
 * Writes the host sampler's events on a sequence of their own. A thread or
 * worker seen for the first time gets its tracks (under the process track,
 * uuids from TRACK_BASE and the order it was seen in) and a host.thread or
 * host.worker instant that names them, which is how the report finds them.
 * A counter value at a sample's time is the share of the interval that
 * ended there (CPU: time on a CPU; runnable: time waiting on a run queue,
 * for a worker its main thread's, which is where a data loader's worker
 * runs its transforms), in percent. A state span runs from the sample that saw the state to the
 * one that saw another (or saw it enter or leave a CUDA call, which the
 * span says with in_cuda); stat's R is "running" unless the thread spent more
 * of the interval waiting for a CPU than on one. A Python stack is a
 * callstack sample of the thread (a worker's: its main thread's), which
 * python_samples.c writes; the report reads those too.
 */
#include "collector/host_sampling/host_tracks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/host_sampling/python_samples.h"
#include "collector/host_sampling/python_stacks.h"
#include "collector/host_sampling/sampler.h"
#include "collector/perfetto/process_tracks.h"
#include "common/array.h"
#include "common/u64_map.h"
#include "cudatrace/trace_names.h"

#define TRACK_BASE 0x30000000ull

enum { STATE_TRACK, CPU_TRACK, RUNNABLE_TRACK, WORKER_CPU_TRACK, WORKER_RUNNABLE_TRACK };

struct ct_host_view {
    uint64_t base;     /* its tracks' uuids are base | STATE_TRACK and so on */
    const char *state; /* the span open, NULL for none */
    int in_cuda;       /* its samples saw the thread inside a CUDA call */
    char wchan[CT_HOST_WCHAN_MAX];
    uint64_t since, last_ts;
};

void ct_host_state_start(struct ct_host_tracks *h, struct ct_shm_header *shm, struct ct_writer *w)
{
    *h = (struct ct_host_tracks){.sample_hz = shm->sample_hz};
    ct_sequence_init(&h->seq, w, 0);
    ct_host_sampler_start(shm, h->sample_hz);
}

static uint64_t key_of(int worker, int32_t id)
{
    return ((uint64_t)worker << 32 | (uint32_t)id) + 1;
}

/* One of a thread's or worker's tracks: its name's format, its place in
 * the uuid, the key the first-seen instant names it by; a counter or not. */
struct track_kind {
    const char *format;
    uint64_t which;
    const char *key;
    int counter;
};

static const struct track_kind thread_tracks[] = {
    {ct_track_host_thread_state, STATE_TRACK, ct_key_state_track, 0},
    {ct_track_host_thread_cpu, CPU_TRACK, ct_key_cpu_track, 1},
    {ct_track_host_thread_runnable, RUNNABLE_TRACK, ct_key_runnable_track, 1},
};
static const struct track_kind worker_tracks[] = {
    {ct_track_host_worker_cpu, WORKER_CPU_TRACK, ct_key_cpu_track, 1},
    {ct_track_host_worker_runnable, WORKER_RUNNABLE_TRACK, ct_key_runnable_track, 1},
};

/* Writes the tracks of a thread or worker seen first, and the instant
 * (`event`, with its id under `id_key`) that names them. */
static void seen(struct ct_host_tracks *h, struct ct_host_view *v, const struct ct_host_event *e,
                 const struct track_kind *kinds, int count, const char *event, const char *id_key)
{
    uint64_t base = v->base;
    struct ct_arg args[2 + sizeof thread_tracks / sizeof thread_tracks[0]] = {
        CT_UINT_ARG(id_key, e->id),
        CT_TEXT_ARG(ct_key_name, e->name),
    };
    for (int i = 0; i < count; i++) {
        char name[128];
        snprintf(name, sizeof name, kinds[i].format, (unsigned)e->id, e->name);
        if (kinds[i].counter)
            ct_write_counter_track(&h->seq, base | kinds[i].which, ct_process.uuid, name,
                                   CT_UNIT_COUNT);
        else
            ct_write_named_track(&h->seq, base | kinds[i].which, ct_process.uuid, name);
        args[2 + i] = CT_UINT_ARG(kinds[i].key, base | kinds[i].which);
    }
    ct_process_instant(CT_TRACK_PROCESS, e->ts_ns, event, args, 2 + count);
}

/* The view of the thread or worker `e` is about, made (with its tracks)
 * when it is seen first; NULL for one gone that was never seen. */
static struct ct_host_view *view_of(struct ct_host_tracks *h, const struct ct_host_event *e,
                                    int worker)
{
    uint64_t *place = ct_u64_map_find(&h->view_index, key_of(worker, e->id));
    if (place)
        return &h->views[*place - 1];
    if (e->kind == CT_HOST_THREAD_GONE || e->kind == CT_HOST_WORKER_GONE)
        return NULL;
    h->views = ct_array_grow(h->views, h->view_count, sizeof *h->views);
    struct ct_host_view *v = &h->views[h->view_count++];
    *v = (struct ct_host_view){.base = ct_process.uuid | TRACK_BASE | (uint64_t)h->view_count << 3};
    ct_u64_map_put(&h->view_index, key_of(worker, e->id), h->view_count);
    if (worker)
        seen(h, v, e, worker_tracks, 2, ct_event_host_worker, ct_key_pid);
    else
        seen(h, v, e, thread_tracks, 3, ct_event_host_thread, ct_key_tid);
    return v;
}

static int64_t percent(uint64_t part, uint64_t whole)
{
    return (int64_t)((part * 200 + whole) / (2 * whole)); /* rounded */
}

/* The interval's shares on a CPU and on a run queue, on their counters. */
static void write_shares(struct ct_host_tracks *h, uint64_t cpu_track, uint64_t runnable_track,
                         const struct ct_host_event *e)
{
    ct_write_counter(&h->seq, cpu_track, e->ts_ns, percent(e->cpu_ns, e->interval_ns));
    ct_write_counter(&h->seq, runnable_track, e->ts_ns, percent(e->wait_ns, e->interval_ns));
}

static const char *state_name(const struct ct_host_event *e)
{
    switch (e->state) {
    case 'R':
        return e->interval_ns && e->wait_ns > e->cpu_ns ? ct_event_host_runnable
                                                        : ct_event_host_running;
    case 'S':
        return ct_event_host_sleeping;
    case 'D':
        return ct_event_host_uninterruptible;
    default:
        return ct_event_host_other_state;
    }
}

static void close_span(struct ct_host_tracks *h, struct ct_host_view *v, uint64_t ts)
{
    if (!v->state)
        return;
    struct ct_arg args[2];
    int nargs = 0;
    if (*v->wchan)
        args[nargs++] = CT_TEXT_ARG(ct_key_wchan, v->wchan);
    if (v->in_cuda)
        args[nargs++] = CT_UINT_ARG(ct_key_in_cuda, 1);
    ct_write_slice(&h->seq, v->base | STATE_TRACK, v->since, ts, ct_strings_intern_cstr(v->state),
                   args, nargs);
    v->state = NULL;
}

static void thread_sample(struct ct_host_tracks *h, struct ct_host_view *v,
                          const struct ct_host_event *e)
{
    if (e->interval_ns)
        write_shares(h, v->base | CPU_TRACK, v->base | RUNNABLE_TRACK, e);
    const char *state = state_name(e);
    if (state != v->state || e->in_cuda != v->in_cuda || strcmp(e->wchan, v->wchan) != 0) {
        close_span(h, v, e->ts_ns);
        v->state = state;
        v->in_cuda = e->in_cuda;
        v->since = e->ts_ns;
        memcpy(v->wchan, e->wchan, sizeof v->wchan);
    }
    v->last_ts = e->ts_ns;
}

static void write_event(struct ct_host_tracks *h, const struct ct_host_event *e)
{
    int worker = e->kind == CT_HOST_WORKER || e->kind == CT_HOST_WORKER_GONE;
    struct ct_host_view *v = view_of(h, e, worker);
    if (!v)
        return;
    if (e->kind == CT_HOST_THREAD || e->kind == CT_HOST_WORKER)
        ct_python_sample_write(&h->python, &h->seq, worker ? e->id : ct_process.pid, e->id,
                               e->ts_ns, &e->py);
    if (e->kind == CT_HOST_THREAD)
        thread_sample(h, v, e);
    else if (e->kind == CT_HOST_WORKER && e->interval_ns)
        write_shares(h, v->base | WORKER_CPU_TRACK, v->base | WORKER_RUNNABLE_TRACK, e);
    if (e->kind == CT_HOST_WORKER)
        v->last_ts = e->ts_ns;
    if (e->kind == CT_HOST_THREAD_GONE)
        close_span(h, v, v->last_ts);
}

void ct_host_state_write(struct ct_host_tracks *h)
{
    struct ct_host_event e;
    while (ct_host_sampler_next(&e))
        write_event(h, &e);
}

static const char *state_value(enum ct_host_state state)
{
    static const char *const values[] = {
        [CT_HOST_OFF] = ct_value_host_off,
        [CT_HOST_SAMPLING] = ct_value_host_sampling,
        [CT_HOST_UNAVAILABLE] = ct_value_host_unavailable,
    };
    return values[state];
}

/* How the Python stacks fared, as the host instant says it. */
static const char *python_verdict(const struct ct_py_stacks_status *py, char *out, size_t size)
{
    if (*py->reason)
        snprintf(out, size, "not read: %s", py->reason);
    else
        snprintf(out, size, "%s", py->stacks ? "read" : "none");
    return out;
}

void ct_host_state_finish(struct ct_host_tracks *h, uint64_t end_ns)
{
    struct ct_host_status status;
    struct ct_py_stacks_status py;
    char verdict[256];
    ct_host_sampler_stop(&status);
    ct_host_state_write(h);
    ct_py_stacks_status(&py);
    for (size_t i = 0; i < h->view_count; i++)
        close_span(h, &h->views[i], h->views[i].last_ts);
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_state, state_value(status.state)),
        CT_TEXT_ARG(ct_key_reason, status.reason),
        CT_UINT_ARG(ct_key_sample_hz, h->sample_hz),
        CT_UINT_ARG(ct_key_rounds, status.rounds),
        CT_UINT_ARG(ct_key_thread_samples, status.thread_samples),
        CT_UINT_ARG(ct_key_worker_samples, status.worker_samples),
        CT_UINT_ARG(ct_key_dropped, status.dropped_events),
        CT_UINT_ARG(ct_key_untracked, status.untracked),
        CT_UINT_ARG(ct_key_sampler_cpu_ns, status.cpu_ns),
        CT_TEXT_ARG(ct_key_python_stacks, python_verdict(&py, verdict, sizeof verdict)),
        CT_UINT_ARG(ct_key_python_stack_count, py.stacks),
        CT_UINT_ARG(ct_key_python_raced, py.raced),
        CT_UINT_ARG(ct_key_python_read_ns, py.read_ns),
    };
    ct_process_instant(CT_TRACK_PROCESS, end_ns, ct_event_host, args, sizeof args / sizeof args[0]);
    ct_python_samples_free(&h->python);
    ct_py_stacks_free();
    free(h->views);
    ct_u64_map_free(&h->view_index);
}

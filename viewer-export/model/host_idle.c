/*
 * Owns the launching thread's idle time: the time it was not feeding the
 * GPU. With GPU timings that is when no GPU work ran (gpu.c's intervals);
 * without them (no CUPTI activity) the GPU's side is unknown, and the
 * thread's time outside its CUDA calls stands in: how long, from its call
 * slices (the CUDA part of the run less their time); what it was doing
 * then, from the sampler's state spans and samples, each of which says
 * whether the thread was inside a traced call when read (the preload's
 * in-call mark, set and cleared at the call slices' own bounds). Each
 * state span weighs in by its idle part, which gives the thread's states
 * and the workers' busy share (at their timelines' resolution); a Python
 * sample counts when the moment it was read was idle (outside CUDA calls:
 * and within the CUDA part of the run, as the time is).
 */
#include "viewer-export/model/host_idle.h"

#include <stdlib.h>
#include <string.h>

/* Whether the GPU was idle at `ts`: no GPU work noted spans it. */
static int gpu_idle_at(const void *ctx, uint64_t ts)
{
    const struct ct_gpu_work *g = ctx;
    for (size_t i = 0; i < g->interval_count; i++)
        if (g->intervals[i].start <= ts && ts < g->intervals[i].end)
            return 0;
    return 1;
}

/* The thread's span at `ts`: the last to begin at or before it (the last
 * sample ends the last span, and is of it); NULL before the first. The
 * spans are in the order the sampler closed them, which is their time's. */
static const struct ct_host_span *span_at(const struct ct_host_thread *t, uint64_t ts)
{
    size_t lo = 0, hi = t->span_count; /* spans [0, lo) begin at or before ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->spans[mid].ts <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &t->spans[lo - 1] : NULL;
}

/* A thread over the CUDA part of the run, [from, to). */
struct thread_part {
    const struct ct_host_thread *thread;
    uint64_t from, to;
};

static int outside_cuda_at(const void *ctx, uint64_t ts)
{
    const struct thread_part *part = ctx;
    const struct ct_host_span *s = span_at(part->thread, ts);
    return ts >= part->from && ts < part->to && s && s->measure != CT_HOST_IN_CUDA;
}

/* Each span's idle part within [from, to), in `idle`. */
static void weigh_spans(const struct ct_process_report *p, const struct ct_host_idle *out,
                        uint64_t from, uint64_t to, double *idle)
{
    const struct ct_host_thread *t = out->thread;
    struct ct_gpu_interval *clipped = calloc(t->span_count + 1, sizeof *clipped);
    uint64_t *busy = calloc(t->span_count + 1, sizeof *busy);
    if (!clipped || !busy)
        abort();
    for (size_t i = 0; i < t->span_count; i++) {
        clipped[i].start = t->spans[i].ts > from ? t->spans[i].ts : from;
        clipped[i].end = t->spans[i].end < to ? t->spans[i].end : to;
        if (clipped[i].end < clipped[i].start)
            clipped[i].end = clipped[i].start;
    }
    if (out->basis == CT_HOST_IDLE_GPU)
        ct_gpu_busy_within(&p->usage.gpu, clipped, t->span_count, busy);
    for (size_t i = 0; i < t->span_count; i++) {
        uint64_t ns = clipped[i].end - clipped[i].start;
        idle[i] = out->basis == CT_HOST_IDLE_GPU           ? (double)(ns - busy[i])
                  : t->spans[i].measure != CT_HOST_IN_CUDA ? (double)ns
                                                           : 0;
    }
    free(clipped);
    free(busy);
}

/* The thread's states and the workers' busy share over the idle parts. */
static void add_states(const struct ct_process_report *p, struct ct_host_idle *out, uint64_t from,
                       uint64_t to)
{
    const struct ct_host_thread *t = out->thread;
    double *idle = calloc(t->span_count + 1, sizeof *idle);
    if (!idle)
        abort();
    weigh_spans(p, out, from, to, idle);
    double by_measure[CT_HOST_MEASURES + 1] = {0}, workers_weight = 0;
    for (size_t i = 0; i < t->span_count; i++) {
        if (idle[i] <= 0)
            continue;
        out->sampled_ns += idle[i];
        by_measure[t->spans[i].measure] += idle[i];
        int count;
        double busy = ct_host_workers_busy(&p->host, t->spans[i].ts, t->spans[i].end, &count);
        if (count) {
            out->workers_busy += busy * idle[i];
            workers_weight += idle[i];
            out->workers = count > out->workers ? count : out->workers;
        }
    }
    free(idle);
    if (out->sampled_ns > 0) {
        out->in_cuda = by_measure[CT_HOST_IN_CUDA] / out->sampled_ns;
        out->on_cpu = by_measure[CT_HOST_OUTSIDE_RUNNING] / out->sampled_ns;
        out->asleep = by_measure[CT_HOST_OUTSIDE_WAITING] / out->sampled_ns;
    }
    out->workers_busy = workers_weight > 0 ? out->workers_busy / workers_weight : 0;
}

int ct_host_idle(const struct ct_process_report *p, struct ct_host_idle *out)
{
    memset(out, 0, sizeof *out);
    out->thread = ct_host_launching_thread(&p->host);
    if (!out->thread)
        return 0;
    uint64_t from, to;
    ct_process_cuda_span(p, &from, &to);
    struct ct_gpu_summary gpu;
    if (ct_process_gpu_summary(p, &gpu)) {
        out->basis = CT_HOST_IDLE_GPU;
        out->ns = gpu.span_ns - gpu.busy_ns;
        ct_host_sites_when(&out->thread->python, gpu_idle_at, &p->usage.gpu, &out->python);
    } else {
        out->basis = CT_HOST_IDLE_OUTSIDE_CUDA;
        uint64_t part = to > from ? to - from : 0;
        out->ns = part > out->thread->call_ns ? part - out->thread->call_ns : 0;
        struct thread_part within = {out->thread, from, to};
        ct_host_sites_when(&out->thread->python, outside_cuda_at, &within, &out->python);
    }
    add_states(p, out, from, to);
    return 1;
}

const char *ct_host_idle_basis_name(enum ct_host_idle_basis basis)
{
    return basis == CT_HOST_IDLE_GPU ? "gpu_idle" : "outside_cuda";
}

void ct_host_idle_free(struct ct_host_idle *idle)
{
    free(idle->python.sites);
    memset(idle, 0, sizeof *idle);
}

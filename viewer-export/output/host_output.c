/*
 * The report's host section, as JSON and as text: how sampling fared, each
 * sampled thread's shares over the CUDA part of the run (on a CPU, waiting
 * for one, waiting; and inside CUDA calls, outside them on a CPU, outside
 * them asleep, with what it slept in), and each worker's CPU share; for
 * each, the Python sites its stack samples were at, by share of them; what
 * the launching thread did while it was not feeding the GPU (host_idle.h);
 * and once, when the stacks could not be read, why. The text lists the busiest
 * threads only (HOST_TEXT_THREADS).
 */
#include <stdlib.h>
#include <string.h>

#include "viewer-export/model/host_idle.h"
#include "viewer-export/output/human_units.h"
#include "viewer-export/output/report_output.h"

#define HOST_TEXT_THREADS 8
#define JSON_SITES 5 /* Python sites per thread or worker */
#define TEXT_SITES 3

static void json_sites(struct ct_json *j, const struct ct_host_python *py)
{
    struct ct_host_site sites[CT_HOST_SITES];
    int count = ct_host_sites_sorted(py, sites);
    ct_json_uint(j, "python_samples", py->samples);
    ct_json_begin_array(j, "python_sites");
    for (int i = 0; i < count && i < JSON_SITES; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "file", sites[i].file);
        ct_json_int(j, "line", sites[i].line);
        ct_json_string(j, "function", sites[i].function);
        ct_json_uint(j, "samples", sites[i].samples);
        ct_json_double(j, "share", (double)sites[i].samples / (double)py->samples);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
}

/* "; Python at FILE:LINE in FUNCTION 80%, ..." for the top sites. */
static void text_sites(FILE *out, const struct ct_host_python *py)
{
    struct ct_host_site sites[CT_HOST_SITES];
    int count = ct_host_sites_sorted(py, sites);
    for (int i = 0; i < count && i < TEXT_SITES; i++)
        fprintf(out, "%s%s:%lld in %s %.0f%%", i ? ", " : "; Python at ", sites[i].file,
                (long long)sites[i].line, sites[i].function,
                100.0 * (double)sites[i].samples / (double)py->samples);
}

static void json_thread(struct ct_json *j, const struct ct_host_row *row)
{
    const struct ct_host_shares *s = &row->shares;
    ct_json_begin_object(j, NULL);
    ct_json_int(j, "tid", row->thread->tid);
    ct_json_string(j, "name", row->thread->name);
    ct_json_uint(j, "cuda_calls", row->thread->calls);
    ct_json_uint(j, "sampled_ns", (uint64_t)s->sampled_ns);
    ct_json_double(j, "running", s->running);
    ct_json_double(j, "runnable", s->runnable);
    ct_json_double(j, "waiting", s->waiting);
    ct_json_double(j, "in_cuda", s->in_cuda);
    ct_json_double(j, "outside_cuda_running", s->outside_running);
    ct_json_double(j, "outside_cuda_waiting", s->outside_waiting);
    ct_json_double(j, "outside_cuda_waiting_for_input", s->outside_waiting_for_input);
    struct ct_host_wchan wchans[CT_HOST_WCHANS];
    int count = ct_host_wchans_sorted(row->thread, wchans);
    ct_json_begin_array(j, "waiting_in");
    for (int i = 0; i < count; i++) {
        ct_json_begin_object(j, NULL);
        ct_json_string(j, "wchan", wchans[i].name);
        ct_json_uint(j, "ns", wchans[i].ns);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    json_sites(j, &row->thread->python);
    ct_json_end_object(j);
}

/* The launching thread's Python samples while the GPU was idle, as before
 * the idle basis: only with GPU timings and samples to say. */
static void json_gpu_idle_python(struct ct_json *j, const struct ct_host_idle *idle)
{
    if (idle->basis != CT_HOST_IDLE_GPU || !idle->thread->python.stamp_count)
        return;
    ct_json_begin_object(j, "gpu_idle_python");
    json_sites(j, &idle->python);
    ct_json_end_object(j);
}

static void json_idle(struct ct_json *j, const struct ct_host_idle *idle)
{
    ct_json_begin_object(j, "launcher_idle");
    ct_json_string(j, "basis", ct_host_idle_basis_name(idle->basis));
    ct_json_int(j, "tid", idle->thread->tid);
    ct_json_uint(j, "ns", idle->ns);
    ct_json_uint(j, "sampled_ns", (uint64_t)idle->sampled_ns);
    ct_json_double(j, "in_cuda", idle->in_cuda);
    ct_json_double(j, "on_cpu", idle->on_cpu);
    ct_json_double(j, "asleep", idle->asleep);
    if (idle->workers)
        ct_json_double(j, "workers_busy", idle->workers_busy);
    else
        ct_json_null(j, "workers_busy");
    json_sites(j, &idle->python);
    ct_json_end_object(j);
}

void ct_host_json(struct ct_json *j, const struct ct_process_report *p)
{
    const struct ct_host *h = &p->host;
    if (!h->state)
        return;
    uint64_t from, to;
    ct_process_cuda_span(p, &from, &to);
    ct_json_begin_object(j, "host");
    ct_json_string(j, "state", h->state);
    ct_json_string(j, "reason", h->reason);
    ct_json_uint(j, "sample_hz", h->sample_hz);
    ct_json_uint(j, "thread_samples", h->thread_samples);
    ct_json_uint(j, "sampler_cpu_ns", h->sampler_cpu_ns);
    ct_json_text_or_null(j, "python_stacks", h->python_stacks);
    const struct ct_host_thread *launcher = ct_host_launching_thread(h);
    ct_json_int_or_null(j, "launching_tid", launcher ? launcher->tid : -1);
    struct ct_host_row *rows;
    size_t count = ct_host_rows(h, from, to, &rows);
    ct_json_begin_array(j, "threads");
    for (size_t i = 0; i < count; i++)
        json_thread(j, &rows[i]);
    ct_json_end_array(j);
    free(rows);
    struct ct_host_idle idle;
    if (ct_host_idle(p, &idle)) {
        json_gpu_idle_python(j, &idle);
        json_idle(j, &idle);
        ct_host_idle_free(&idle);
    }
    ct_json_begin_array(j, "workers");
    for (size_t i = 0; i < h->worker_count; i++) {
        double cpu, runnable;
        ct_host_worker_shares(&h->workers[i], from, to, &cpu, &runnable);
        if (cpu < 0)
            continue;
        ct_json_begin_object(j, NULL);
        ct_json_int(j, "pid", h->workers[i].pid);
        ct_json_string(j, "name", h->workers[i].name);
        ct_json_double(j, "cpu", cpu);
        ct_json_double(j, "runnable", runnable);
        json_sites(j, &h->workers[i].python);
        ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_end_object(j);
}

static void text_thread(FILE *out, const struct ct_host_row *row)
{
    const struct ct_host_shares *s = &row->shares;
    fprintf(out,
            "                 thread %lld %s: on a CPU %.0f%%, runnable %.0f%%, waiting %.0f%%; "
            "in CUDA calls %.0f%%, outside them on a CPU %.0f%%, asleep %.0f%%",
            (long long)row->thread->tid, row->thread->name, 100 * s->running, 100 * s->runnable,
            100 * s->waiting, 100 * s->in_cuda, 100 * s->outside_running, 100 * s->outside_waiting);
    struct ct_host_wchan wchans[CT_HOST_WCHANS];
    if (ct_host_wchans_sorted(row->thread, wchans))
        fprintf(out, " (mostly in %s)", wchans[0].name);
    text_sites(out, &row->thread->python);
    fprintf(out, "\n");
}

/* "thread TID during GPU-idle time (1.2 s): ..." or, without GPU
 * timings, "during time outside CUDA calls". */
static void text_idle(FILE *out, const struct ct_host_idle *idle)
{
    char ns[32];
    fprintf(out,
            "                 thread %lld during %s (%s): in CUDA calls %.0f%%, outside them on "
            "a CPU %.0f%%, asleep %.0f%%",
            (long long)idle->thread->tid,
            idle->basis == CT_HOST_IDLE_GPU ? "GPU-idle time" : "time outside CUDA calls",
            ct_human_time(idle->ns, ns, sizeof ns), 100 * idle->in_cuda, 100 * idle->on_cpu,
            100 * idle->asleep);
    if (idle->workers)
        fprintf(out, "; workers busy %.0f%%", 100 * idle->workers_busy);
    text_sites(out, &idle->python);
    fprintf(out, "\n");
}

void ct_host_text(FILE *out, const struct ct_process_report *p)
{
    const struct ct_host *h = &p->host;
    if (!h->state)
        return;
    if (!*h->reason && strcmp(h->state, "off") == 0)
        return;
    if (*h->reason) {
        fprintf(out, "  host           sampling %s: %s\n", h->state, h->reason);
        return;
    }
    uint64_t from, to;
    ct_process_cuda_span(p, &from, &to);
    fprintf(out, "  host           sampled at %llu Hz over the CUDA part of the run\n",
            (unsigned long long)h->sample_hz);
    if (h->python_stacks && strncmp(h->python_stacks, "not read", 8) == 0)
        fprintf(out, "                 Python stacks: %s\n", h->python_stacks);
    struct ct_host_row *rows;
    size_t count = ct_host_rows(h, from, to, &rows);
    for (size_t i = 0; i < count && i < HOST_TEXT_THREADS; i++)
        text_thread(out, &rows[i]);
    if (count > HOST_TEXT_THREADS)
        fprintf(out, "                 and %zu more threads\n", count - HOST_TEXT_THREADS);
    free(rows);
    struct ct_host_idle idle;
    if (ct_host_idle(p, &idle)) {
        text_idle(out, &idle);
        ct_host_idle_free(&idle);
    }
    for (size_t i = 0; i < h->worker_count; i++) {
        double cpu, runnable;
        ct_host_worker_shares(&h->workers[i], from, to, &cpu, &runnable);
        if (cpu < 0)
            continue;
        fprintf(out, "                 worker %lld %s: on a CPU %.0f%%, runnable %.0f%%",
                (long long)h->workers[i].pid, h->workers[i].name, 100 * cpu, 100 * runnable);
        text_sites(out, &h->workers[i].python);
        fprintf(out, "\n");
    }
}

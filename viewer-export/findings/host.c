/*
 * The host findings, from the host sampler's view of the thread that
 * launches the GPU work (the one that made the most CUDA calls), over the
 * CUDA part of the run. input-bound: it spends a large share of its
 * sampled time asleep outside CUDA calls where a blocking read of a queue
 * or pipe sleeps, while the process has worker processes: it waits for its
 * input, and the workers' own business says why (busy on a CPU or waiting
 * for one: the pipeline is CPU-bound; idle: they wait on I/O). host-bound:
 * it spends most of its sampled time on a CPU outside CUDA calls while GPU
 * timings show the GPU idle (gpu_idle_share): the GPU waits on the host's
 * own work between calls; but where most of the thread's Python stacks
 * are in PyTorch's DataLoader, that work is loading its input in the
 * thread, and the finding is input-bound (in_thread) with that advice.
 * Without GPU timings a thread busy between its calls may as well be
 * keeping a busy GPU fed, so host-bound needs them, as gpu-idle does. Both
 * need the host sampler; a trace without it gets neither. Where Python
 * stacks were read, each names the top site (of the workers for
 * input-bound, of the launching thread for host-bound and in-thread
 * loading) and the loop's own line: where it waits for its input, or where
 * it asks the DataLoader for a batch.
 */
#include "viewer-export/findings/findings.h"

#include <stdio.h>
#include <string.h>

#include "viewer-export/findings/thresholds.h"

static const char *workers_verdict(double busy)
{
    if (busy >= ct_thresholds.workers_busy_share)
        return "busy: the pipeline is CPU-bound (more workers, cheaper transforms, or decode on "
               "the GPU)";
    if (busy <= ct_thresholds.workers_idle_share)
        return "idle: they wait themselves, on I/O (read ahead, faster storage, or more workers "
               "to overlap the reads)";
    return "partly busy: they neither keep up nor saturate the CPUs (look at what they wait on)";
}

/* "; its Python is mostly at FILE:LINE in FUNCTION (N% of its samples)",
 * or "" when it has no Python samples. */
static const char *site_phrase(char *out, size_t size, const char *whose,
                               const struct ct_host_site *site, double share)
{
    *out = '\0';
    if (site)
        snprintf(out, size, "; %s Python is mostly at %s:%lld in %s (%.0f%% of the samples)", whose,
                 site->file, (long long)site->line, site->function, 100 * share);
    return out;
}

/* A tally's top site and its share; NULL when it has none. */
static const struct ct_host_site *top_site(const struct ct_host_python *py,
                                           struct ct_host_site *out, double *share)
{
    struct ct_host_site sites[CT_HOST_SITES];
    if (!py || !ct_host_sites_sorted(py, sites))
        return NULL;
    *out = sites[0];
    *share = (double)out->samples / (double)py->samples;
    return out;
}

/* Ends the message with "; WHAT at FILE:LINE in FUNCTION", the loop's own
 * line (the top of `lines`), where one is known. */
static void say_loop_line(struct ct_finding *f, const char *what,
                          const struct ct_host_python *lines)
{
    struct ct_host_site site;
    double share;
    if (!top_site(lines, &site, &share))
        return;
    size_t used = strlen(f->message);
    snprintf(f->message + used, sizeof f->message - used, "; %s at %s:%lld in %s", what, site.file,
             (long long)site.line, site.function);
    ct_finding_add_number(f, "loop_line", (double)site.line);
}

static void input_bound(const struct ct_process_report *p, const struct ct_host_thread *t,
                        const struct ct_host_shares *s, uint64_t from, uint64_t to,
                        struct ct_findings *out)
{
    int workers;
    double busy = ct_host_workers_busy(&p->host, from, to, &workers);
    if (s->outside_waiting_for_input < ct_thresholds.input_wait_share || !workers)
        return;
    struct ct_host_wchan wchans[CT_HOST_WCHANS];
    int waits = ct_host_wchans_sorted(t, wchans);
    struct ct_host_site site;
    double share = 0;
    char phrase[512];
    int sited = ct_host_workers_top_site(&p->host, &site, &share);
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_INPUT_BOUND, p->pid,
        "thread %lld, which launches the GPU work, waits outside CUDA calls %.0f%% of the time "
        "(in %s), for its input; its %d worker process%s %s %.0f%% of the time, %s%s",
        (long long)t->tid, 100 * s->outside_waiting_for_input,
        waits ? wchans[0].name : "the kernel", workers, workers == 1 ? " is" : "es are",
        "on a CPU or waiting for one", 100 * busy, workers_verdict(busy),
        site_phrase(phrase, sizeof phrase, "their", sited ? &site : NULL, share));
    say_loop_line(f, "the loop waits for its input", t->python.program_lines);
    f->cost_ns = (uint64_t)(s->outside_waiting_for_input * (double)(to - from));
    ct_finding_add_number(f, "tid", (double)t->tid);
    ct_finding_add_number(f, "waiting_outside_cuda_share", s->outside_waiting_for_input);
    ct_finding_add_number(f, "in_cuda_share", s->in_cuda);
    ct_finding_add_number(f, "workers", workers);
    ct_finding_add_number(f, "workers_busy_share", busy);
    if (sited) {
        ct_finding_add_number(f, "workers_top_site_line", (double)site.line);
        ct_finding_add_number(f, "workers_top_site_share", share);
    }
}

/* The GPU's idle share from GPU timings; -1 without them. */
static double gpu_idle(const struct ct_process_report *p)
{
    struct ct_gpu_summary g;
    if (!ct_process_gpu_summary(p, &g) || !g.span_ns)
        return -1;
    return 1 - (double)g.busy_ns / (double)g.span_ns;
}

/* What host-bound and loading in the thread say of a thread busy outside
 * its CUDA calls while the GPU idles, over `span` ns. */
static void busy_evidence(struct ct_finding *f, const struct ct_host_thread *t,
                          const struct ct_host_shares *s, double idle, int workers,
                          const struct ct_host_site *site, double share, uint64_t span)
{
    f->cost_ns = (uint64_t)(s->outside_running * (double)span);
    ct_finding_add_number(f, "tid", (double)t->tid);
    ct_finding_add_number(f, "running_outside_cuda_share", s->outside_running);
    ct_finding_add_number(f, "in_cuda_share", s->in_cuda);
    ct_finding_add_number(f, "gpu_idle_share", idle);
    ct_finding_add_number(f, "workers", workers);
    if (site) {
        ct_finding_add_number(f, "top_site_line", (double)site->line);
        ct_finding_add_number(f, "top_site_share", share);
    }
}

/* The host-bound thread's own time is input loading: most of its stacks
 * are in PyTorch's DataLoader, which runs the dataset's code in the
 * thread that asks for a batch when it has no workers. */
static void input_in_thread(const struct ct_process_report *p, const struct ct_host_thread *t,
                            const struct ct_host_shares *s, double idle, int workers, uint64_t from,
                            uint64_t to, struct ct_findings *out)
{
    struct ct_host_site site_store;
    double share = 0;
    char phrase[512], beside[64] = "no worker processes";
    double loading = (double)t->python.loader_samples / (double)t->python.samples;
    if (workers)
        snprintf(beside, sizeof beside, "%d worker process%s beside it", workers,
                 workers == 1 ? "" : "es");
    const struct ct_host_site *site = top_site(&t->python, &site_store, &share);
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_INPUT_BOUND, p->pid,
        "thread %lld, which launches the GPU work, loads its input itself: %.0f%% of its Python "
        "stacks are in PyTorch's DataLoader (torch/utils/data), with %s; it is on a CPU outside "
        "CUDA calls %.0f%% of the time while the GPU is idle %.0f%%: load in DataLoader workers "
        "(num_workers) so that the next batch is ready when the loop asks%s",
        (long long)t->tid, 100 * loading, beside, 100 * s->outside_running, 100 * idle,
        site_phrase(phrase, sizeof phrase, "its", site, share));
    busy_evidence(f, t, s, idle, workers, site, share, to - from);
    ct_finding_add_number(f, "in_thread", 1);
    ct_finding_add_number(f, "loader_share", loading);
    say_loop_line(f, "the loop asks for each batch", t->python.loader_callers);
}

static void host_bound(const struct ct_process_report *p, const struct ct_host_thread *t,
                       const struct ct_host_shares *s, uint64_t from, uint64_t to,
                       struct ct_findings *out)
{
    double idle = gpu_idle(p);
    if (s->outside_running < ct_thresholds.host_busy_share || idle < ct_thresholds.gpu_idle_share)
        return;
    int workers;
    ct_host_workers_busy(&p->host, from, to, &workers);
    if (t->python.samples && 2 * t->python.loader_samples >= t->python.samples) {
        input_in_thread(p, t, s, idle, workers, from, to, out);
        return;
    }
    struct ct_host_site site_store;
    double share = 0;
    char phrase[512];
    const struct ct_host_site *site = top_site(&t->python, &site_store, &share);
    struct ct_finding *f = ct_finding_add(
        out, CT_FINDING_HOST_BOUND, p->pid,
        "thread %lld, which launches the GPU work, is on a CPU outside CUDA calls %.0f%% of the "
        "time (in CUDA calls %.0f%%) while the GPU is idle %.0f%%: the GPU waits on the host's "
        "own work between calls (Python between launches, or %s); batch small operations or "
        "capture the step in a CUDA graph%s",
        (long long)t->tid, 100 * s->outside_running, 100 * s->in_cuda, 100 * idle,
        workers ? "input work done in this thread"
                : "loading and transforming the input in this "
                  "thread with no worker processes: load in "
                  "DataLoader workers (num_workers)",
        site_phrase(phrase, sizeof phrase, "its", site, share));
    busy_evidence(f, t, s, idle, workers, site, share, to - from);
}

void ct_findings_host(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_host_thread *t = ct_host_launching_thread(&p->host);
    uint64_t from, to;
    ct_process_cuda_span(p, &from, &to);
    struct ct_host_shares s;
    if (!t || to <= from)
        return;
    ct_host_thread_shares(t, from, to, &s);
    if (s.sampled_ns <= 0)
        return;
    input_bound(p, t, &s, from, to, out);
    host_bound(p, t, &s, from, to, out);
}

/*
 * What the host was doing, from the collector's host sampler (host.c): per
 * thread of the process its CPU and run-queue time, its sampled states
 * inside and outside CUDA calls with what it slept in, and the CUDA calls
 * it made; per worker process its CPU time; per thread and worker where its
 * Python stack samples (the trace's callstack samples) were; and how
 * sampling fared. A thread's state spans and call time are kept too, for
 * what it did while not feeding the GPU (host_idle.h). Each
 * measure is a bounded timeline, so the summary can take it over the CUDA
 * part of the run.
 */
#ifndef CT_HOST_MODEL_H
#define CT_HOST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"
#include "viewer-export/model/timeline.h"
#include "viewer-export/read/trace_decode.h"

#define CT_HOST_WCHANS 8 /* what a thread slept in, the first ones kept */
#define CT_HOST_SITES 64 /* Python sites a thread or worker was sampled at, the first ones kept */

struct ct_host_wchan {
    const char *name;
    uint64_t ns;
};

/* Where a thread's or worker's Python stack samples were: the innermost
 * frame's file, line and function, and how many samples were there. */
struct ct_host_site {
    const char *file, *function;
    int64_t line;
    uint64_t samples;
};

struct ct_host_python {
    struct ct_host_site *sites; /* at most CT_HOST_SITES */
    int count;
    uint64_t samples; /* all of them, at a site kept or not */
    /* Each sample at a site kept: when, and which (for a window's top). */
    struct ct_host_stamp {
        uint64_t ts;
        int site;
    } * stamps;
    size_t stamp_count;
    /* The latest stack's innermost frame and when it was read (0: none). */
    uint64_t last_ts;
    const char *last_file, *last_function;
    int64_t last_line;
    /* The same samples by their innermost frame of the program's own code
     * (outside Python's and installed packages' files: the line its author
     * wrote, where a waiting thread's innermost frame is in threading.py);
     * and those inside PyTorch's DataLoader, how many and by the line that
     * asked it for a batch (the frame just outside its outermost one).
     * Tallies made on the first such sample; the program's lines are
     * stamped as the innermost frames are (where the extra time of a slow
     * step went), the DataLoader's callers are sites only. */
    struct ct_host_python *program_lines, *loader_callers;
    uint64_t loader_samples;
};

/* A thread's timelines: CPU and run-queue time and the time the counters
 * cover; from the state spans, the time they cover, inside CUDA calls, and
 * outside them on a CPU (running or runnable) or sleeping. */
enum ct_host_measure {
    CT_HOST_CPU,
    CT_HOST_RUNNABLE,
    CT_HOST_COUNTED,
    CT_HOST_SPANNED,
    CT_HOST_IN_CUDA,
    CT_HOST_OUTSIDE_RUNNING,
    CT_HOST_OUTSIDE_WAITING,
    CT_HOST_MEASURES
};

/* A state span as the sampler wrote it: what it was (a measure of the
 * spans', CT_HOST_MEASURES for another state). */
struct ct_host_span {
    uint64_t ts, end;
    enum ct_host_measure measure;
};

struct ct_host_thread {
    int64_t tid;
    const char *name;
    uint64_t calls;             /* CUDA call slices it made */
    uint64_t call_ns;           /* the time they took */
    struct ct_host_span *spans; /* every state span, as they came */
    size_t span_count;
    uint64_t last_counter_ts[2];
    struct ct_timeline measure[CT_HOST_MEASURES];
    struct ct_host_wchan wchans[CT_HOST_WCHANS]; /* outside CUDA calls */
    int wchan_count;
    struct ct_host_python python;
};

struct ct_host_worker {
    int64_t pid;
    const char *name;
    uint64_t last_ts[2];
    struct ct_timeline cpu, runnable, counted;
    struct ct_host_python python;
};

struct ct_host {
    const char *state, *reason; /* the cudatrace.host instant; NULL without one */
    const char *python_stacks;  /* "read", "none" or "not read: why"; NULL without */
    uint64_t sample_hz, thread_samples, sampler_cpu_ns;
    struct ct_u64_map tracks; /* track uuid -> thread or worker place << 2 | which, + 1 */
    struct ct_u64_map by_tid; /* tid + 1 -> place + 1 */
    struct ct_u64_map by_pid; /* a worker's pid + 1 -> place + 1 */
    struct ct_host_thread *threads;
    size_t thread_count;
    struct ct_host_worker *workers;
    size_t worker_count;
};

/* The host sampler's instants, counters and state spans; each returns 0
 * when the event is not one of its. */
int ct_host_instant(struct ct_host *h, const struct ct_event *e);
int ct_host_counter(struct ct_host *h, const struct ct_event *e);
int ct_host_slice(struct ct_host *h, const struct ct_event *e);
/* A callstack sample: of one of the process's own threads (its tid), or
 * else of a worker (its pid, the worker's main thread). */
void ct_host_sample(struct ct_host *h, const struct ct_sample *s, int own_thread);
/* A CUDA call slice of thread `tid`, `ns` long. */
void ct_host_note_call(struct ct_host *h, int64_t tid, uint64_t ns);
/* Thread `tid`'s Python stack as last read, when that was at `since_ns` or
 * later; NULL else (no Python, sampling off, or not read since). */
const struct ct_host_python *ct_host_python_since(const struct ct_host *h, int64_t tid,
                                                  uint64_t since_ns);

/* A thread's shares of its sampled time within [from, to). */
struct ct_host_shares {
    double sampled_ns;
    double running, runnable, waiting;                /* of the counters' time */
    double in_cuda, outside_running, outside_waiting; /* of the state spans' time */
    /* Of outside_waiting, the part asleep where a blocking read of a queue,
     * pipe or socket sleeps (ct_host_wchan_is_input), in proportion. */
    double outside_waiting_for_input;
};
/* Whether a thread that sleeps in kernel function `wchan` waits for data
 * another thread or process sends it: a futex (a queue's lock or
 * condition), a pipe or socket read, a poll. Not a sleep, a wait for a
 * child, a disk read. */
int ct_host_wchan_is_input(const char *wchan);
void ct_host_thread_shares(const struct ct_host_thread *t, uint64_t from, uint64_t to,
                           struct ct_host_shares *out);
/* A thread sampled within [from, to), with its shares. */
struct ct_host_row {
    const struct ct_host_thread *thread;
    struct ct_host_shares shares;
};
/* The threads sampled within [from, to), most on a CPU first (ties by
 * tid), in *out (malloc'd); their number. */
size_t ct_host_rows(const struct ct_host *h, uint64_t from, uint64_t to, struct ct_host_row **out);
/* What a thread slept in outside CUDA calls, longest first, in `out`
 * (room for CT_HOST_WCHANS); their number. */
int ct_host_wchans_sorted(const struct ct_host_thread *t, struct ct_host_wchan *out);
/* A worker's shares of its sampled time within [from, to) on a CPU and
 * waiting for one (its main thread's); cpu -1 when it was not sampled. */
void ct_host_worker_shares(const struct ct_host_worker *w, uint64_t from, uint64_t to, double *cpu,
                           double *runnable);
/* The workers' mean share of their sampled time on a CPU or waiting for
 * one, over [from, to); their number in *count (0: none sampled). */
double ct_host_workers_busy(const struct ct_host *h, uint64_t from, uint64_t to, int *count);
/* The Python sites, most samples first (ties by file and line), in `out`
 * (room for CT_HOST_SITES); their number. */
int ct_host_sites_sorted(const struct ct_host_python *py, struct ct_host_site *out);
/* The top site of the process's workers together in *out, its share of
 * all their Python samples in *share; 0 when none was sampled in Python. */
int ct_host_workers_top_site(const struct ct_host *h, struct ct_host_site *out, double *share);
/* The site most of `py`'s samples within [from, to) were at, and how many
 * of them were there (out->samples) of how many in all (`*within`); 0
 * when none was. */
int ct_host_top_site_within(const struct ct_host_python *py, uint64_t from, uint64_t to,
                            struct ct_host_site *out, uint64_t *within);
/* `py`'s samples at times `keep` says yes to, as sites of their own (the
 * caller frees out->sites). */
void ct_host_sites_when(const struct ct_host_python *py, int (*keep)(const void *ctx, uint64_t ts),
                        const void *ctx, struct ct_host_python *out);
/* The thread that made the most CUDA calls; NULL when none did. */
const struct ct_host_thread *ct_host_launching_thread(const struct ct_host *h);
void ct_host_free(struct ct_host *h);

#endif

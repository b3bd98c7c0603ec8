/*
 * What `cudatrace report` knows about each traced process, built from the
 * decoded trace alone (report.c): who the process was and how its run went,
 * and one part per concern, each with its own struct and the file that
 * fills it: the calls (calls.c), the CUDA libraries (libraries.c), CUPTI
 * (cupti.c), the usage figures the findings read (usage.c, gpu.c) and the
 * GPU's own state from NVML (gpu_health.c), what the host's threads and
 * workers were doing (host.c), the GPU work never completed
 * (unfinished.c) and the CUDA graphs (graphs.c).
 */
#ifndef CT_REPORT_MODEL_H
#define CT_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cudatrace/functions.h"
#include "viewer-export/model/calls.h"
#include "viewer-export/model/capture.h"
#include "viewer-export/model/cupti.h"
#include "viewer-export/model/gpu_health.h"
#include "viewer-export/model/graphs.h"
#include "viewer-export/model/host.h"
#include "viewer-export/model/libraries.h"
#include "viewer-export/model/step_calls.h"
#include "viewer-export/model/steps.h"
#include "viewer-export/model/unfinished.h"
#include "viewer-export/model/usage.h"

/* A call a thread was still inside when the process ended, and the line
 * that called it where the caller is the program's own native code. */
struct ct_inflight_call {
    int fn;
    int64_t tid;
    uint64_t since_ns;
    const char *site; /* NULL: unknown */
};

/* A cudatrace.snapshot instant (collector/snapshot/): why and when a
 * snapshot was taken; path is "" in the snapshot's own closing frame. */
struct ct_snapshot_mark {
    const char *trigger, *function, *path;
    int64_t result, tid;
    uint64_t at_ns, since_ns, hang_ns; /* since and hang: for a hang only */
};

#define CT_GAP_CUT_PARTS 4 /* more than the parts the gap carries */

/* The middle a bounded trace dropped (CUDATRACE_MAX_MB); chunks 0: none.
 * `cut`: the parts of what it carries that had no room in it, each with
 * the packets and bytes left out ("cudatrace.gap_cut"). */
struct ct_trace_gap {
    uint64_t from_ns, to_ns, bytes, chunks;
    struct ct_gap_cut {
        const char *part;
        uint64_t packets, bytes;
    } cut[CT_GAP_CUT_PARTS];
    size_t cut_count;
};

/* How the run went, as the collector said: when it started and ended, how
 * it ended, the clock, the records lost, the collector's own cost, the
 * calls its threads were still inside, the gap of a bounded trace and the
 * capture windows. */
struct ct_process_run {
    uint64_t start_ns; /* process start, from the closing instant      */
    uint64_t first_ns; /* first event: the start when the end is missing */
    uint64_t end_ns;   /* the closing instant, else the last event      */
    int ended;         /* the closing instant was written */
    int exited_normally;
    const char *clock; /* "tsc" or "boottime": what the host timestamps were read from */
    uint64_t dropped;
    uint64_t calls_recorded, collector_cpu_ns, collector_max_rss_kb;
    uint64_t memory_events_late; /* applied after their time was settled */
    struct ct_inflight_call *inflight;
    size_t inflight_count;
    struct ct_trace_gap gap;
    /* This trace is a snapshot (trigger set): the one it is; and the
     * snapshots the trace says were copied from it, with their paths. */
    struct ct_snapshot_mark snapshot;
    struct ct_snapshot_mark *snapshots;
    size_t snapshot_count;
    struct ct_capture_view capture; /* model/capture.h */
};

/* The CUDA the process ran on: the versions and devices it reported. */
struct ct_cuda_stack {
    int64_t runtime_version, driver_version, device_count;
    const char *devices[16];
    const char *device_capability[16]; /* "9.0", or "" */
    int device_names;
};

/* Who the process was in its job, as the collector wrote it: "" and -1
 * where no launcher said (and in traces older than cudatrace.identity);
 * environment: the recorded variables as "NAME=value" lines. */
struct ct_process_identity {
    const char *host, *job, *launcher, *visible_devices, *environment;
    int64_t rank, local_rank, world_size;
};

struct ct_process_report {
    int32_t pid;
    struct ct_process_identity identity;
    uint64_t uuid;
    const char *name;
    const char **cmdline;
    size_t cmdline_len;
    struct ct_process_run run;
    struct ct_cuda_stack cuda;
    struct ct_call_figures calls;     /* model/calls.h */
    struct ct_library_view libraries; /* model/libraries.h */
    struct ct_cupti_report cupti;
    struct ct_usage usage;                /* what the usage findings read */
    struct ct_gpu_health gpu_health;      /* NVML's samples (model/gpu_health.h) */
    struct ct_host host;                  /* the host sampler's (model/host.h) */
    struct ct_unfinished_work unfinished; /* GPU work launched, never completed */
    struct ct_graph_view graphs;          /* CUDA graphs (model/graphs.h) */
    struct ct_step_calls step_calls;      /* steps the program does not mark */
    struct ct_steps steps;                /* its steps (model/steps.h); count 0: none */
};

struct ct_report {
    struct ct_process_report *processes;
    size_t process_count;
    uint64_t packets;
    int truncated;
    int annotated; /* the trace already has the findings or the steps track */
    uint64_t unclosed;
};

/* Adds the processes of one trace file; -1 with a reason on bad input. */
int ct_report_add_trace(struct ct_report *report, const char *path, char *error, size_t error_size);
/* The process's wall time: from its start (else its first event) to its
 * end (else its last event). */
uint64_t ct_process_wall_ns(const struct ct_process_report *p);
/* The CUDA part of a process's run, from its first CUDA call to its end
 * (what the usage findings take shares of, so that a slow `import torch`
 * does not dilute them); 0 when it made no call. */
uint64_t ct_cuda_part_ns(const struct ct_process_report *p);
/* That part as [*from, *to): from the first call (else the first event)
 * to the end. */
void ct_process_cuda_span(const struct ct_process_report *p, uint64_t *from, uint64_t *to);
/* The GPU's side over that part, from the trace's GPU tracks: 0 when it has
 * none. */
int ct_process_gpu_summary(const struct ct_process_report *p, struct ct_gpu_summary *out);
/* Device `device`'s NVML summary over the CUDA part of the run (while
 * busy, gpu_health.h); 0 when the trace has no samples of it. */
int ct_process_gpu_health(const struct ct_process_report *p, int device,
                          struct ct_health_summary *out);
/* The most memory NVML saw in use on `device` (every process's and the
 * driver's) over the CUDA part of the run, and how much of it the tracer's
 * own peak leaves unexplained (the CUDA context, the driver's own, other
 * processes, memory no traced call made); 0 when NVML said nothing of it. */
int ct_process_memory_vs_nvml(const struct ct_process_report *p, int device, uint64_t *used_peak,
                              uint64_t *unseen);
void ct_report_free(struct ct_report *report);

#endif

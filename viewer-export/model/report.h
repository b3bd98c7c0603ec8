/*
 * What `cudatrace report` knows about each traced process, built from the
 * decoded trace alone.
 */
#ifndef CT_REPORT_MODEL_H
#define CT_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cudatrace/functions.h"
#include "viewer-export/model/usage.h"

struct ct_api_stats {
    uint64_t calls, errors, total_ns;
};

/* A CUDA-stack library the process had mapped (strings outlive the report). */
struct ct_library_entry {
    const char *path, *realpath, *family, *soname, *version, *build_id;
    uint64_t size;
    /* The loader's view: the audit module's account when the process ran
     * with it, else the preload's; NULL when neither saw the load. */
    const char *requested_as, *requested_by, *found_via;
    const char *seen_by;             /* "audit" or "preload" */
    uint64_t loaded_ns, unloaded_ns; /* 0 when not known / not unloaded */
    const char *runpath_copy;        /* a different copy on the requester's RUNPATH, or "" */
    /* Found elsewhere although the requester's own search path names
     * directories meant for it (none held it): those directories, ':'-
     * separated, or ""; and, from the requester's wheel, the version it
     * pins, the NVIDIA package and the wheel ("" when unknown). */
    const char *expected_dirs, *expected_version, *expected_package, *expected_by;
    uint64_t api_version;   /* what the library's own API reported, or 0 */
    int64_t built_for_cuda; /* cuDNN: the CUDA major its RUNPATH names, or 0 */
};

/* A CUDA-stack library the loader looked for and did not load. */
struct ct_failed_load {
    const char *requested_as, *requested_by, *searched; /* searched: ':'-separated */
    const char *error;
    const char *seen_by; /* "audit" or "preload" */
    uint64_t attempts;   /* identical failures folded into this one */
};

/* A kernel whose launch failed with cudaErrorNoKernelImageForDevice. */
struct ct_missing_image {
    const char *kernel, *library, *archs; /* archs: the GPU code the library carries */
};

/* A call a thread was still inside when the process ended. */
struct ct_inflight_call {
    int fn;
    int64_t tid;
    uint64_t since_ns;
};

/* What became of CUPTI in a process (the "cudatrace.cupti" and
 * "cudatrace.gpu" instants); state is NULL when the trace does not say. */
struct ct_cupti_report {
    const char *state;   /* "active", "unavailable", "no_gpu" or "yielded" */
    const char *library; /* the libcupti used, or NULL */
    const char *reason;  /* why not, or why no longer; NULL while active */
    uint64_t reason_ns;  /* when it said so */
    int64_t version, result;
    int finished; /* the totals were written */
    uint64_t kernels, memcpys, memsets, dropped, unmapped;
    uint64_t clock_samples, clock_reading_error_ns, clock_drift_ns;
};

struct ct_process_report {
    int32_t pid;
    uint64_t uuid;
    const char *name;
    const char **cmdline;
    size_t cmdline_len;
    uint64_t start_ns; /* process start, from the closing instant      */
    uint64_t first_ns; /* first event: the start when the end is missing */
    uint64_t end_ns;   /* the closing instant, else the last event      */
    int ended;         /* the closing instant was written */
    int exited_normally;
    int64_t runtime_version, driver_version, device_count;
    const char *devices[16];
    const char *device_capability[16]; /* "9.0", or "" */
    int device_names;
    struct ct_missing_image *missing_images;
    size_t missing_image_count;
    struct ct_api_stats api[CT_FN_COUNT];
    /* The threads' own totals (exact whatever the rings dropped), when the
     * trace has them; then api[] is made from them, and slices[] keeps how
     * many slices each function has in the trace. */
    struct ct_api_stats totals[CT_FN_COUNT];
    uint64_t slices[CT_FN_COUNT];
    int has_totals, totals_used;
    uint64_t launches, sync_calls, sync_ns;
    uint64_t allocs, frees, failed_allocs;
    double peak_device_bytes, final_device_bytes;
    uint64_t final_device_ts;
    uint64_t dropped;
    uint64_t calls_recorded, collector_cpu_ns, collector_max_rss_kb;
    const char *clock;            /* "tsc" or "boottime": what the host timestamps were read from */
    uint64_t unattributed_slices; /* slices whose name is no traced function */
    struct ct_inflight_call *inflight;
    size_t inflight_count;
    struct ct_library_entry *libraries;
    size_t library_count;
    struct ct_failed_load *failed_loads;
    size_t failed_load_count;
    const char *toolkit_root, *toolkit_version; /* what CUDA_HOME or /usr/local/cuda is */
    struct ct_library_entry *loads;             /* the loader's accounts, before attaching */
    size_t load_count;
    struct ct_library_entry *versions; /* versions from the libraries' own APIs */
    size_t version_count;
    struct ct_library_entry *unloads; /* realpath and loaded_ns (the unload's time) */
    size_t unload_count;
    uint64_t calls_failed_with[1024]; /* calls per cudaError_t below 1024 */
    struct ct_usage usage;            /* what the usage findings read */
    struct ct_cupti_report cupti;
};

struct ct_report {
    struct ct_process_report *processes;
    size_t process_count;
    uint64_t packets;
    int truncated;
    int annotated; /* the trace already has the findings track */
    uint64_t unclosed;
};

/* Adds the processes of one trace file; -1 with a reason on bad input. */
int ct_report_add_trace(struct ct_report *report, const char *path, char *error, size_t error_size);
/* The CUDA part of a process's run, from its first CUDA call to its end
 * (what the usage findings take shares of, so that a slow `import torch`
 * does not dilute them); 0 when it made no call. */
uint64_t ct_cuda_part_ns(const struct ct_process_report *p);
/* The GPU's side over that part, from the trace's GPU tracks: 0 when it has
 * none. */
int ct_process_gpu_summary(const struct ct_process_report *p, struct ct_gpu_summary *out);
void ct_report_free(struct ct_report *report);

#endif

/*
 * CUDATRACE_* settings of the traced process, read once at load. Every value
 * is parsed strictly: a malformed one gets one warning and the default, never
 * a guess, because a tracer that silently misreads its settings writes traces
 * nobody asked for.
 */
#ifndef CT_PRELOAD_CONFIG_H
#define CT_PRELOAD_CONFIG_H

#include <stdint.h>

struct ct_config {
    const char *output;       /* CUDATRACE_OUTPUT, %p becomes the pid        */
    const char *collector;    /* CUDATRACE_COLLECTOR, the collector binary   */
    uint32_t ring_records;    /* CUDATRACE_RING_RECORDS, per thread          */
    uint32_t rings;           /* CUDATRACE_RINGS, threads traced at once     */
    uint32_t exit_timeout_ms; /* CUDATRACE_EXIT_TIMEOUT_MS                   */
    int quiet;                /* CUDATRACE_QUIET=1                           */
    int disabled;             /* CUDATRACE_DISABLE=1                         */
    int force_boottime_clock; /* CUDATRACE_CLOCK=boottime                    */
    int no_call_sites;        /* CUDATRACE_CALL_SITES=0                      */
    uint32_t launch_site_us;  /* CUDATRACE_LAUNCH_SITE_US, 0 for none        */
    uint32_t spill_mb;        /* CUDATRACE_SPILL_MB, the spill pool; 0: none */
    int cupti;                /* CUDATRACE_CUPTI: enum ct_cupti_mode         */
    const char *cupti_path;   /* CUDATRACE_CUPTI_PATH, a file or a folder    */
    uint32_t nvml_ms;         /* CUDATRACE_NVML_MS, the collector's NVML
                                 sampling interval; 0: off                  */
    uint32_t max_mb;          /* CUDATRACE_MAX_MB, the trace file's bound;
                                 0: unbounded                               */
    int nvtx_lookup;          /* CUDATRACE_NVTX, default 1: an unset
                                 NVTX_INJECTION64_PATH reads as ours        */
    uint32_t sample_hz;       /* CUDATRACE_SAMPLE_HZ, the collector's host
                                 sampling rate; 0: off                      */
    uint32_t gpu_records;     /* CUDATRACE_GPU_RECORDS: enum ct_gpu_records  */
    int graph_level;          /* CUDATRACE_GPU_GRAPHS=graphs: a record per
                                 graph launch, none per node                */
    int capture;              /* CUDATRACE_CAPTURE: enum ct_capture_kind     */
    const char *capture_text; /* its value as given, when valid             */
    const char *capture_nvtx; /* nvtx:NAME: the range's message             */
    uint64_t capture_delay_ns, capture_duration_ns; /* time:DELAY[:DURATION] */
    const char *run_watch;                          /* CUDATRACE_RUN_WATCH, set by cudatrace run:
                                                       its pid, a colon and a nonce (run_watch.c) */
};

enum ct_cupti_mode {
    CT_CUPTI_AUTO, /* when a driver is in the process (the default) */
    CT_CUPTI_OFF,  /* 0: never load CUPTI                            */
    CT_CUPTI_ON,   /* 1: try even when no driver is loaded           */
};

extern struct ct_config ct_config;

/* The trace file's default bound: what the Perfetto UI opens in a browser
 * tab (docs/configuration.md, CUDATRACE_MAX_MB, says why); and the largest
 * allowed. */
#define CT_MAX_MB_DEFAULT 32u
#define CT_MAX_MB_MOST (1u << 20)

/* What the rings may take in all, and the fewest records a ring holds. */
#define CT_RING_MEMORY_MAX (1ull << 30)
#define CT_RING_RECORDS_MIN 64u

void ct_config_load(void);
/* Says, once, what ct_config_load found wrong with the settings: called by
 * a process as it starts a session. */
void ct_config_say_warnings(void);
void ct_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/*
 * Training steps a program does not mark (step_calls.c): found from the
 * repetition in a launching thread's CUDA calls, or ended by the calls a
 * user names (CUDATRACE_STEP). What steps.c takes when no NVTX range says
 * step.
 */
#ifndef CT_REPORT_STEP_CALLS_H
#define CT_REPORT_STEP_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"
#include "viewer-export/read/trace_decode.h"

/* One CUDA call as the steps see it: its symbol (function and kernel or
 * line) and its thread. */
struct ct_step_call {
    uint64_t begin, end;
    uint32_t symbol, thread;
};

struct ct_step_symbol {
    int fn;
    const char *name; /* the kernel a launch ran, else the call's site ("" when none) */
    int ends_step;    /* a call of it ends a step on the chosen thread */
};

/* Where the steps are: step 1 from `first_start` to ends[0], step N from
 * ends[N - 2] to ends[N - 1]. */
struct ct_step_bounds {
    int found;
    int64_t tid;
    uint32_t thread;
    uint64_t first_start;
    uint64_t *ends;
    size_t count, capacity;
    char boundary[256]; /* the calls that end a step, in words */
    int cut;            /* more steps than CT_STEP_ENDS: the later ones are not counted */
};

/* A window from a cudaProfilerStart's return to the next cudaProfilerStop. */
struct ct_profiler_window {
    uint64_t start, end;
};

struct ct_step_calls {
    char spec[256]; /* CUDATRACE_STEP as the traced process had it ("": unset) */
    struct ct_u64_map symbol_index;
    struct ct_step_symbol *symbols;
    size_t symbol_count;
    struct ct_u64_map thread_index;
    int64_t *tids;
    size_t thread_count;
    /* The first CT_STEP_WINDOW calls, from which the boundary is chosen. */
    struct ct_step_call *window;
    size_t window_count, window_capacity;
    int decided;
    struct ct_step_bounds bounds;
    /* cudaProfilerStart/Stop windows (up to CT_STEP_ENDS): steps when a
     * loop opens one a step. */
    struct ct_profiler_window *windows;
    size_t window_total;
    uint64_t window_open; /* the last start's return; 0: none open */
};

/* 24 bytes a call: the report stays within a few MiB whatever the trace;
 * enough for steps of several thousand calls each. */
#define CT_STEP_WINDOW (1u << 16)
/* Steps kept; later ones are not counted (`cut`). */
#define CT_STEP_ENDS (1u << 20)

/* Names the steps for every process read from now on, over what their
 * traced environment said: `spec` is nvtx:NAME (the NVTX ranges of that
 * name, steps.c's), kernel:NAME, call:FUNCTION or site:TEXT (each such call
 * ends a step); -1 for anything else. */
int ct_step_calls_name(const char *spec);
/* Takes CUDATRACE_STEP from the traced process's recorded environment
 * (NAME=VALUE lines). */
void ct_step_calls_environment(struct ct_step_calls *c, const char *environment);
/* What names the process's steps: ct_step_calls_name's, else its
 * environment's; NULL when they are to be found. */
const char *ct_step_calls_spec(const struct ct_step_calls *c);
/* Notes a call slice of function `fn` made by thread `tid`. */
void ct_step_calls_note(struct ct_step_calls *c, int64_t tid, int fn, const struct ct_event *e);
/* Once every slice is in: chooses the boundary, if the window did not
 * already, and puts the step ends in time order. */
void ct_step_calls_settle(struct ct_step_calls *c);
void ct_step_calls_free(struct ct_step_calls *c);

#endif

/*
 * A process's CUDA graphs as its trace tells of them (graphs.c): each
 * graph with the line that captured or built it, its nodes by kind, its
 * instantiations, launches and the GPU time each launch took, and the
 * kernels its replays ran, each named by the line that captured it; what
 * the report's `graphs` section and the re-capture finding read.
 */
#ifndef CT_REPORT_GRAPHS_H
#define CT_REPORT_GRAPHS_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"
#include "viewer-export/read/trace_decode.h"

enum ct_graph_node_kind {
    CT_NODE_KERNEL,
    CT_NODE_MEMCPY,
    CT_NODE_MEMSET,
    CT_NODE_ALLOC,
    CT_NODE_FREE,
    CT_NODE_OTHER,
    CT_NODE_KINDS
};

/* What one node ran over all the replays: its kernel (or copy, set), the
 * line that made it, how often and for how long. Summed by kernel and line
 * (ct_graphs_top_kernels), `nodes` says how many nodes that was. */
struct ct_graph_node_cost {
    uint64_t node, nodes;
    uint32_t graph;
    const char *name, *site;
    uint64_t runs, ns;
};

struct ct_graph_entry {
    uint32_t id;
    const char *site; /* where its capture began, else its first node's line; NULL: unknown */
    int captured;     /* made by stream capture (else by the graph API) */
    uint64_t nodes[CT_NODE_KINDS];
    uint64_t instantiations, launches, replayed_work, replayed_ns;
    uint64_t building_ns; /* capturing (begin to end) and instantiating it */
    /* GPU time of each launch, first work's start to last work's end:
     * filled by ct_graphs_settle. */
    uint64_t launch_median_ns, launch_max_ns, launches_timed;
};

#define CT_FAILED_CAPTURES 4
/* cudaErrorStreamCaptureUnsupported .. cudaErrorStreamCaptureWrongThread */
#define CT_CAPTURE_ERROR_FIRST 900
#define CT_CAPTURE_ERROR_LAST 908

struct ct_graph_view {
    struct ct_graph_entry *graphs;
    size_t count;
    struct ct_u64_map index; /* graph id -> index + 1 */
    struct ct_graph_node_cost *nodes;
    size_t node_count;
    struct ct_u64_map node_index; /* node id -> index + 1 */
    /* A launch's replayed work, by its correlation id: graph, first start,
     * last end; bounded (ct_graphs_slice). */
    struct ct_graph_launch {
        uint64_t correlation, first, last;
        uint32_t graph;
    } * launches;
    size_t launch_count;
    struct ct_u64_map launch_index;
    /* Captures open on a thread's stream, since when, into which graph. */
    struct ct_open_capture {
        int64_t tid;
        uint64_t stream, began;
        uint32_t graph;
        const char *site;
        struct ct_capture_culprit {
            int fn; /* -1: none */
            int64_t error;
            const char *site;
        } culprit; /* the first call of its thread a capture error refused */
    } * open;
    size_t open_count;
    /* Captures that ended in an error, the first CT_FAILED_CAPTURES kept. */
    struct ct_failed_capture {
        const char *site; /* where it began */
        int64_t error;    /* what its end returned */
        struct ct_capture_culprit culprit;
    } failed[CT_FAILED_CAPTURES];
    uint64_t failed_count;
    uint64_t replayed_ns, work_ns; /* GPU time of replayed work, of all work */
    uint64_t captured_calls, unknown_node_work;
};

/* A call's slice (function `fn`) on thread `tid`. */
void ct_graphs_call(struct ct_graph_view *v, int64_t tid, int fn, const struct ct_event *e);
/* A GPU slice (a kernel, copy or set). */
void ct_graphs_gpu(struct ct_graph_view *v, const struct ct_event *e);
/* Once every slice is read: each graph's launch times (no GPU slice may
 * come after). */
void ct_graphs_settle(struct ct_graph_view *v);
/* What replays ran, summed by kernel (copy, set) and line, most GPU time
 * first, into out[0..most); returns how many: those of `graph`, or of any
 * graph when NULL; of the kernel `name` (an interned name), or of any. */
size_t ct_graphs_top_kernels(const struct ct_graph_view *v, const struct ct_graph_entry *graph,
                             const char *name, struct ct_graph_node_cost *out, size_t most);
void ct_graphs_free(struct ct_graph_view *v);

/* The capture lines the report gives a kernel of its kernel table. */
#define CT_GRAPH_KERNEL_SITES 3

#endif

/*
 * CUDA graphs from the trace's annotations (collector/tracks/cuda_graphs.c
 * writes them): a call slice with `graph_work` captured or added made a
 * node of `graph_id`; a capture's begin, an instantiation, a launch and an
 * upload carry the `graph_id` they acted on; GPU work with `graph_work`
 * replayed ran as node `graph_node_id` of `graph_id` and carries the
 * `capture_site` of the call that made that node. A launch's GPU time is
 * from its first replayed work's start to its last one's end, the work
 * being grouped by its correlation id (the launch call's); launches are
 * kept up to LAUNCHES_MAX, past which the times are of the first ones.
 */
#include "viewer-export/model/graphs.h"

#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "cudatrace/functions.h"
#include "cudatrace/trace_names.h"

#define LAUNCHES_MAX (1u << 20)

static uint64_t arg(const struct ct_event *e, const char *name)
{
    return (uint64_t)ct_event_int(e, name, 0);
}

static const char *text_or_null(const char *s)
{
    return *s ? s : NULL;
}

static struct ct_graph_entry *graph(struct ct_graph_view *v, uint32_t id)
{
    uint64_t *at = ct_u64_map_find(&v->index, id);
    if (at)
        return &v->graphs[*at - 1];
    v->graphs = ct_array_grow(v->graphs, v->count, sizeof *v->graphs);
    v->graphs[v->count] = (struct ct_graph_entry){.id = id};
    ct_u64_map_put(&v->index, id, ++v->count);
    return &v->graphs[v->count - 1];
}

/* The kind of node a call made: by its family, or by which of the graph
 * API's calls added it. */
static enum ct_graph_node_kind node_kind(int fn)
{
    switch (ct_function_family((unsigned)fn)) {
    case CT_FAMILY_LAUNCH:
        return CT_NODE_KERNEL;
    case CT_FAMILY_COPY:
        return CT_NODE_MEMCPY;
    case CT_FAMILY_SET:
        return CT_NODE_MEMSET;
    case CT_FAMILY_ALLOC_DEVICE:
        return CT_NODE_ALLOC;
    case CT_FAMILY_FREE_DEVICE:
        return CT_NODE_FREE;
    default:
        break;
    }
    switch (fn) {
    case CT_FN_cudaGraphAddKernelNode:
        return CT_NODE_KERNEL;
    case CT_FN_cudaGraphAddMemcpyNode:
    case CT_FN_cudaGraphAddMemcpyNode1D:
        return CT_NODE_MEMCPY;
    case CT_FN_cudaGraphAddMemsetNode:
        return CT_NODE_MEMSET;
    case CT_FN_cudaGraphAddMemAllocNode:
        return CT_NODE_ALLOC;
    case CT_FN_cudaGraphAddMemFreeNode:
        return CT_NODE_FREE;
    default:
        return CT_NODE_OTHER;
    }
}

static int begins_capture(int fn)
{
    return fn == CT_FN_cudaStreamBeginCapture || fn == CT_FN_cudaStreamBeginCapture_ptsz ||
           fn == CT_FN_cudaStreamBeginCaptureToGraph ||
           fn == CT_FN_cudaStreamBeginCaptureToGraph_ptsz || fn == CT_FN_cuStreamBeginCapture_v2;
}

static int ends_capture(int fn)
{
    return fn == CT_FN_cudaStreamEndCapture || fn == CT_FN_cudaStreamEndCapture_ptsz ||
           fn == CT_FN_cuStreamEndCapture;
}

static int instantiates(int fn)
{
    return fn == CT_FN_cudaGraphInstantiate || fn == CT_FN_cudaGraphInstantiateWithFlags ||
           fn == CT_FN_cudaGraphInstantiateWithParams ||
           fn == CT_FN_cudaGraphInstantiateWithParams_ptsz ||
           fn == CT_FN_cuGraphInstantiateWithFlags;
}

static int launches(int fn)
{
    return ct_function_family((unsigned)fn) == CT_FAMILY_GRAPH;
}

/* A capture's begin opens it on its thread's stream, its end closes it:
 * the time between is the capture's, and the begin's line is where it was
 * captured. CUPTI may say which graph at either end. An end with no begin
 * that succeeded on its stream closes nothing. */
static void capture_span(struct ct_graph_view *v, int64_t tid, int fn, const struct ct_event *e,
                         uint32_t id)
{
    uint64_t stream = arg(e, ct_key_stream);
    size_t i = 0;
    while (i < v->open_count && (v->open[i].tid != tid || v->open[i].stream != stream))
        i++;
    if (begins_capture(fn)) {
        if (arg(e, ct_key_result) != 0)
            return; /* a begin refused opened no capture */
        if (i == v->open_count)
            v->open = ct_array_grow(v->open, v->open_count++, sizeof *v->open);
        v->open[i] = (struct ct_open_capture){
            tid, stream, e->ts, id, text_or_null(ct_event_text(e, ct_key_site)), {-1, 0, NULL}};
        return;
    }
    if (i == v->open_count)
        return;
    struct ct_open_capture open = v->open[i];
    v->open[i] = v->open[--v->open_count];
    if (!open.graph)
        open.graph = id;
    int64_t result = (int64_t)arg(e, ct_key_result);
    if (result != 0 && v->failed_count++ < CT_FAILED_CAPTURES)
        v->failed[v->failed_count - 1] =
            (struct ct_failed_capture){open.site, result, open.culprit};
    if (!open.graph || result != 0)
        return;
    struct ct_graph_entry *g = graph(v, open.graph);
    g->captured = 1;
    if (open.site)
        g->site = open.site;
    g->building_ns += e->end > open.began ? e->end - open.began : 0;
}

/* A capture open on thread `tid` that CUPTI named no graph for at its begin
 * (one into a graph made beforehand, cudaStreamBeginCaptureToGraph) is
 * into the graph its captured calls made nodes in. */
static void capture_into(struct ct_graph_view *v, int64_t tid, uint32_t id)
{
    for (size_t i = 0; i < v->open_count; i++)
        if (v->open[i].tid == tid && !v->open[i].graph)
            v->open[i].graph = id;
}

/* Whether `error` is one stream capture gives a call it refuses or a
 * capture it ends (cudaErrorStreamCaptureUnsupported to ...WrongThread). */
static int capture_error(int64_t error)
{
    return error >= CT_CAPTURE_ERROR_FIRST && error <= CT_CAPTURE_ERROR_LAST;
}

/* A call a capture refused, on a thread that has one open: the first such
 * is what its capture's failure is put down to. */
static void note_culprit(struct ct_graph_view *v, int64_t tid, int fn, const struct ct_event *e)
{
    for (size_t i = 0; i < v->open_count; i++) {
        struct ct_open_capture *open = &v->open[i];
        if (open->tid == tid && open->culprit.fn < 0)
            open->culprit = (struct ct_capture_culprit){
                fn, (int64_t)arg(e, ct_key_result), text_or_null(ct_event_text(e, ct_key_site))};
    }
}

void ct_graphs_call(struct ct_graph_view *v, int64_t tid, int fn, const struct ct_event *e)
{
    if (!ends_capture(fn) && capture_error((int64_t)arg(e, ct_key_result)))
        note_culprit(v, tid, fn, e);
    uint32_t id = (uint32_t)arg(e, ct_key_graph_id);
    if (begins_capture(fn) || ends_capture(fn)) {
        capture_span(v, tid, fn, e, id); /* a capture that ended invalidated is no graph */
        return;
    }
    if (!id || arg(e, ct_key_result) != 0)
        return;
    struct ct_graph_entry *g = graph(v, id);
    const char *work = ct_event_text(e, ct_key_graph_work);
    int captured = strcmp(work, ct_value_graph_work_captured) == 0;
    if (captured)
        capture_into(v, tid, id);
    if (captured || strcmp(work, ct_value_graph_work_added) == 0) {
        g->nodes[node_kind(fn)]++;
        if (!g->site)
            g->site = text_or_null(ct_event_text(e, ct_key_site));
        v->captured_calls += ct_function_family((unsigned)fn) != CT_FAMILY_GRAPH_BUILD;
    } else if (instantiates(fn)) {
        g->instantiations++;
        g->building_ns += e->end > e->ts ? e->end - e->ts : 0;
    } else if (launches(fn)) {
        g->launches++;
    }
}

static struct ct_graph_node_cost *node_cost(struct ct_graph_view *v, uint64_t node, uint32_t id,
                                            const struct ct_event *e)
{
    uint64_t *at = ct_u64_map_find(&v->node_index, node);
    if (at)
        return &v->nodes[*at - 1];
    v->nodes = ct_array_grow(v->nodes, v->node_count, sizeof *v->nodes);
    v->nodes[v->node_count] = (struct ct_graph_node_cost){
        node, 1, id, e->name, text_or_null(ct_event_text(e, ct_key_capture_site)), 0, 0};
    ct_u64_map_put(&v->node_index, node, ++v->node_count);
    return &v->nodes[v->node_count - 1];
}

static void launch_work(struct ct_graph_view *v, uint64_t correlation, uint32_t id,
                        const struct ct_event *e)
{
    uint64_t *at = ct_u64_map_find(&v->launch_index, correlation);
    if (!at) {
        if (v->launch_count >= LAUNCHES_MAX)
            return;
        v->launches = ct_array_grow(v->launches, v->launch_count, sizeof *v->launches);
        v->launches[v->launch_count] = (struct ct_graph_launch){correlation, e->ts, e->end, id};
        ct_u64_map_put(&v->launch_index, correlation, ++v->launch_count);
        return;
    }
    struct ct_graph_launch *l = &v->launches[*at - 1];
    if (e->ts < l->first)
        l->first = e->ts;
    if (e->end > l->last)
        l->last = e->end;
}

/* Whether a GPU slice is work (a kernel, copy, set or whole graph), not a
 * synchronisation, a memory operation or CUPTI's overhead. */
static int is_work(const struct ct_event *e)
{
    const char *kind = ct_event_text(e, ct_key_gpu_kind);
    return strcmp(kind, ct_value_gpu_kind_kernel) == 0 ||
           strcmp(kind, ct_value_gpu_kind_memcpy) == 0 ||
           strcmp(kind, ct_value_gpu_kind_memset) == 0 ||
           strcmp(kind, ct_value_gpu_kind_graph) == 0;
}

void ct_graphs_gpu(struct ct_graph_view *v, const struct ct_event *e)
{
    if (!is_work(e))
        return;
    uint64_t ns = e->end > e->ts ? e->end - e->ts : 0;
    v->work_ns += ns;
    if (strcmp(ct_event_text(e, ct_key_graph_work), ct_value_graph_work_replayed) != 0)
        return;
    v->replayed_ns += ns;
    uint32_t id = (uint32_t)arg(e, ct_key_graph_id);
    uint64_t node = arg(e, ct_key_graph_node_id);
    struct ct_graph_entry *g = graph(v, id);
    g->replayed_work++;
    g->replayed_ns += ns;
    if (node) {
        struct ct_graph_node_cost *c = node_cost(v, node, id, e);
        c->runs++;
        c->ns += ns;
    } else if (strcmp(ct_event_text(e, ct_key_gpu_kind), ct_value_gpu_kind_graph) != 0) {
        v->unknown_node_work++; /* a node made before tracing, or past the collector's bound */
    }
    uint64_t correlation = arg(e, ct_key_correlation);
    if (correlation)
        launch_work(v, correlation, id, e);
}

/* Launches by graph, and within one by GPU time. */
static int by_graph_then_time(const void *a, const void *b)
{
    const struct ct_graph_launch *x = a, *y = b;
    uint64_t tx = x->last - x->first, ty = y->last - y->first;
    if (x->graph != y->graph)
        return (x->graph > y->graph) - (x->graph < y->graph);
    return (tx > ty) - (tx < ty);
}

void ct_graphs_settle(struct ct_graph_view *v)
{
    if (!v->launch_count)
        return;
    qsort(v->launches, v->launch_count, sizeof *v->launches, by_graph_then_time);
    ct_u64_map_free(&v->launch_index); /* the order it indexed is gone */
    for (size_t from = 0, to; from < v->launch_count; from = to) {
        for (to = from; to < v->launch_count && v->launches[to].graph == v->launches[from].graph;)
            to++;
        struct ct_graph_entry *g = graph(v, v->launches[from].graph);
        const struct ct_graph_launch *median = &v->launches[from + (to - from) / 2];
        const struct ct_graph_launch *worst = &v->launches[to - 1];
        g->launches_timed = to - from;
        g->launch_median_ns = median->last - median->first;
        g->launch_max_ns = worst->last - worst->first;
    }
}

static int by_gpu_time(const void *a, const void *b)
{
    const struct ct_graph_node_cost *x = a, *y = b;
    return (x->ns < y->ns) - (x->ns > y->ns);
}

size_t ct_graphs_top_kernels(const struct ct_graph_view *v, const struct ct_graph_entry *graph,
                             const char *name, struct ct_graph_node_cost *out, size_t most)
{
    struct ct_graph_node_cost *sum = NULL;
    size_t n = 0;
    for (size_t i = 0; i < v->node_count; i++) {
        const struct ct_graph_node_cost *c = &v->nodes[i];
        if ((graph && c->graph != graph->id) || (name && c->name != name))
            continue;
        size_t k = 0;
        while (k < n && (sum[k].name != c->name || sum[k].site != c->site))
            k++;
        if (k == n) {
            sum = ct_array_grow(sum, n, sizeof *sum);
            sum[n++] = (struct ct_graph_node_cost){c->node, 0, c->graph, c->name, c->site, 0, 0};
        }
        sum[k].nodes++;
        sum[k].runs += c->runs;
        sum[k].ns += c->ns;
    }
    if (n)
        qsort(sum, n, sizeof *sum, by_gpu_time);
    size_t kept = n < most ? n : most;
    if (kept)
        memcpy(out, sum, kept * sizeof *out);
    free(sum);
    return kept;
}

void ct_graphs_free(struct ct_graph_view *v)
{
    free(v->graphs);
    free(v->nodes);
    free(v->launches);
    ct_u64_map_free(&v->index);
    ct_u64_map_free(&v->node_index);
    ct_u64_map_free(&v->launch_index);
    free(v->open);
    memset(v, 0, sizeof *v);
}

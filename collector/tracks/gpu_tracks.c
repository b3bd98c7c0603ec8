/*
 * The GPU's side of the trace, from CUPTI's activity records: one track per
 * device and stream ("GPU 0 stream 7") with a slice per kernel, copy and
 * memset as the GPU ran it, annotated with what the report and a reader
 * need (gpu_kind, grid and block, registers, shared memory, bytes and
 * achieved bandwidth), and ending the flow its host call began (the flow id
 * is CUPTI's correlation id under the process id). CUPTI's synchronisation
 * records go on a track per context and stream, its memory operations on a
 * track per device, its own overhead on one track, none of which the
 * report counts as GPU work. Kernel names are demangled. What became of
 * CUPTI (active, or why not, and the records it dropped) is an instant on
 * the process track, and so are the counts of records that gave no time
 * (incomplete, or without timestamps) each time they grow, so a snapshot
 * has them too; the end instant gives the totals, the clock mapping's
 * measured error and how long after its end the GPU's work reached the
 * collector (the median, to the millisecond above, and the largest). With
 * CUDATRACE_GPU_RECORDS=typed, kernels, copies and memsets are Perfetto's
 * GpuRenderStageEvents instead (perfetto/render_stages.c), one hardware
 * queue per device and stream, with the same annotations, and the host call
 * names its work by gpu_correlation rather than a flow. GPU work whose
 * record carries the id CUPTI gave a call made inside the call that caused
 * it is that call's (ct_gpu_correlation_alias). Work a graph launch ran
 * comes after a record of the graph node and graph it ran as; it is
 * annotated with the node it was made as, that node's graph and the site
 * of the call that captured or added it (cuda_graphs.c), and its flow is
 * the graph launch's.
 */
#include "collector/tracks/gpu_tracks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "collector/tracks/call_slices.h"
#include "collector/tracks/cuda_graphs.h"
#include "collector/tracks/gap_gpu.h"
#include "collector/tracks/gpu_clock.h"
#include "collector/perfetto/clock_map.h"
#include "collector/perfetto/process_tracks.h"
#include "collector/perfetto/render_stages.h"
#include "common/string_table.h"
#include "common/u64_map.h"

/* libstdc++'s demangler, the one a C++ toolchain's own tools use. */
char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

enum track_class { WORK = 1, SYNCS = 2, MEMORY = 3, OVERHEAD = 4 };

#define DELAY_STEP_NS 1000000ull
#define DELAYS 10000

struct ring_text {
    uint64_t key;
    uint32_t text;
};

/* The graph node and graph the next work record of a ring ran as. */
struct ring_graph {
    uint64_t node;
    uint32_t graph;
};

static struct {
    struct ct_sequence seq, stages;
    struct ct_gap_gpu *gap; /* the work a bounded trace's gap carries */
    uint32_t typed;         /* CT_GPU_RECORDS_TYPED */
    uint32_t graph_level;   /* a record per graph launch, none per node */
    struct ct_u64_map tracks, names, mangled;
    struct ct_u64_map queues; /* typed records: device << 32 | stream -> queue name */
    struct ring_text *texts;
    struct ring_graph *graphs;
    uint32_t track_count;
    uint64_t records[CT_GPU_GRAPH + 1], unmapped, cupti_dropped;
    uint32_t unnamed;
    uint64_t unlinked; /* typed records of work no host call names, so far */
    /* How long after it ended each kernel, copy and memset reached the
     * collector, in DELAY_STEP_NS steps (the last: that long or more). */
    uint32_t delays[DELAYS];
    uint64_t delays_counted, delay_max;
} gpu;

static struct {
    uint32_t gpu_kind, kernel, memcpy, memset, sync, grid, block, registers, static_smem,
        dynamic_smem, correlation, bytes, bandwidth, copy_kind, src_kind, dst_kind, value, type,
        address, mangled, device, stream, copies, graph_work, graph_id, graph_node_id, capture_site,
        replayed, graph;
} an;
static uint32_t memset_name;

void ct_gpu_tracks_start(struct ct_writer *w, struct ct_gap_gpu *gap, uint32_t rings,
                         uint32_t records, uint32_t graph_level)
{
    gpu.gap = gap;
    gpu.graph_level = graph_level;
    ct_sequence_init(&gpu.seq, w, 0);
    gpu.typed = records == CT_GPU_RECORDS_TYPED;
    if (gpu.typed)
        ct_sequence_init(&gpu.stages, w, 0);
    gpu.texts = calloc(rings, sizeof *gpu.texts);
    gpu.graphs = calloc(rings, sizeof *gpu.graphs);
    if (!gpu.texts || !gpu.graphs)
        abort();
#define KEY(field) an.field = ct_strings_intern_cstr(ct_key_##field)
#define KIND(field) an.field = ct_strings_intern_cstr(ct_value_gpu_kind_##field)
    KEY(gpu_kind), KIND(kernel), KIND(memcpy), KIND(memset), KIND(sync), KIND(graph);
    KEY(grid), KEY(block);
    KEY(registers), KEY(static_smem), KEY(dynamic_smem), KEY(correlation), KEY(bytes);
    KEY(copy_kind), KEY(src_kind), KEY(dst_kind), KEY(value), KEY(type), KEY(address);
    KEY(mangled), KEY(device), KEY(stream), KEY(copies), KEY(graph_work), KEY(graph_id);
    KEY(graph_node_id), KEY(capture_site);
    an.replayed = ct_strings_intern_cstr(ct_value_graph_work_replayed);
#undef KIND
#undef KEY
    an.bandwidth = ct_strings_intern_cstr(ct_key_bandwidth);
    gpu.unnamed = ct_strings_intern_cstr(ct_event_unnamed_kernel);
    memset_name = ct_strings_intern_cstr(ct_event_memset);
}

/* The flow id (with typed records, the event id) of CUPTI's `correlation`
 * id, under the process id; 0 for none. */
static uint64_t flow_id(uint32_t correlation)
{
    return correlation ? (uint64_t)(uint32_t)ct_process.pid << 32 | correlation : 0;
}

/* The flow from a graph launch to the work of one of its nodes (`node`:
 * the node it was made as): the launch's correlation id in the low half,
 * as every flow id has, the top bit set, and the node and process mixed
 * into the rest, so that each node's work ends a flow of its own. */
static uint64_t node_flow_id(uint32_t correlation, uint64_t node)
{
    uint64_t mix = (node ^ (uint64_t)(uint32_t)ct_process.pid << 40) * 0x9E3779B97F4A7C15ull;
    return 1ull << 63 | (mix >> 33) << 32 | correlation;
}

struct ct_flow ct_gpu_call_flow(uint32_t correlation, const uint64_t *nodes, uint32_t count,
                                uint64_t *ids)
{
    uint64_t id = flow_id(correlation);
    if (gpu.typed) /* Perfetto ties every stage event of the submission to the call */
        return (struct ct_flow){0, 0, id, NULL, 0};
    if (!correlation || !count || gpu.graph_level)
        return (struct ct_flow){id, 0, 0, NULL, 0};
    for (uint32_t i = 0; i < count; i++)
        ids[i] = node_flow_id(correlation, nodes[i]);
    return (struct ct_flow){0, 0, 0, ids, count};
}

void ct_gpu_kernel_name(uint64_t key, uint32_t name)
{
    int status = -1;
    char *plain = __cxa_demangle(ct_strings_get(name), NULL, NULL, &status);
    ct_u64_map_put(&gpu.names, key, status == 0 && plain ? ct_strings_intern_cstr(plain) : name);
    if (status == 0 && plain)
        ct_u64_map_put(&gpu.mangled, key, name);
    free(plain);
}

/* The track of `cls` for (a, b), made on first use and named by `format`
 * (which may leave a and b out). */
static uint64_t track(enum track_class cls, uint32_t a, uint32_t b, const char *format)
{
    uint64_t key = (uint64_t)cls << 60 | (uint64_t)(a & 0xfffffff) << 32 | b;
    uint64_t *uuid = ct_u64_map_find(&gpu.tracks, key);
    if (uuid)
        return *uuid;
    uint64_t made = ct_process.uuid | 0x40000000ull | ++gpu.track_count;
    char name[96];
    snprintf(name, sizeof name, format, a, b);
    ct_write_named_track(&gpu.seq, made, ct_process.uuid, name);
    ct_u64_map_put(&gpu.tracks, key, made);
    return made;
}

static uint32_t text(const char *s)
{
    return ct_strings_intern_cstr(s);
}

static const char *copy_kind_name(unsigned kind)
{
    static const char *const names[] = {
        ct_value_gpu_copy_unknown, ct_value_gpu_copy_htod, ct_value_gpu_copy_dtoh,
        ct_value_gpu_copy_htoa,    ct_value_gpu_copy_atoh, ct_value_gpu_copy_atoa,
        ct_value_gpu_copy_atod,    ct_value_gpu_copy_dtoa, ct_value_gpu_copy_dtod,
        ct_value_gpu_copy_htoh,    ct_value_gpu_copy_ptop};
    return kind < sizeof names / sizeof names[0] ? names[kind] : ct_value_gpu_copy_unknown;
}

static const char *memory_kind_name(unsigned kind)
{
    static const char *const names[] = {
        ct_value_gpu_copy_unknown,     ct_value_memory_pageable,      ct_value_memory_pinned,
        ct_value_memory_device,        ct_value_memory_array,         ct_value_memory_managed,
        ct_value_memory_device_static, ct_value_memory_managed_static};
    return kind < sizeof names / sizeof names[0] ? names[kind] : ct_value_gpu_copy_unknown;
}

static uint32_t stream_of(const struct ct_record *r)
{
    return ct_unpack_halves(r->arg[0]).high;
}

/* Where CUPTI gave the calls inside a call ids of their own, GPU work may
 * carry one of those: each maps to the call's own id. CUPTI hands ids out in
 * order, so a table indexed by the id's low bits keeps the latest ALIASES,
 * far more than are ever in flight between a call and its records, in
 * memory that does not grow with the run. */
#define ALIASES (1u << 18)
static struct alias {
    uint32_t id, call;
} * aliases;

void ct_gpu_correlation_alias(uint32_t id, uint32_t call)
{
    if (!id)
        return;
    if (!aliases && !(aliases = calloc(ALIASES, sizeof *aliases)))
        abort();
    aliases[id % ALIASES] = (struct alias){id, call};
}

static uint32_t correlation_of(const struct ct_record *r)
{
    uint32_t id = ct_unpack_halves(r->arg[0]).low;
    const struct alias *a = aliases ? &aliases[id % ALIASES] : NULL;
    return a && a->id == id ? a->call : id;
}

/* The hardware queue of (device, stream), named as its GPU track would be. */
static uint32_t queue_name(uint32_t device, uint32_t stream)
{
    uint64_t key = (uint64_t)device << 32 | stream;
    uint64_t *known = ct_u64_map_find(&gpu.queues, key + 1);
    if (known)
        return (uint32_t)*known;
    char name[96];
    snprintf(name, sizeof name, ct_track_gpu_stream, device, stream);
    ct_u64_map_put(&gpu.queues, key + 1, text(name));
    return text(name);
}

/* Annotates work a graph launch ran with the node it was made as, that
 * node's graph and the line that captured or added it; 0 in *flow_node
 * unless that node is known, whose launch then started a flow to it. */
static int graph_args(struct ring_graph *ran, struct ct_arg *args, uint64_t *flow_node)
{
    *flow_node = 0;
    if (!ran->node && !ran->graph)
        return 0;
    struct ct_graph_origin origin = ct_cuda_graphs_origin(ran->node, ran->graph);
    *ran = (struct ring_graph){0, 0};
    if (origin.known)
        *flow_node = origin.node;
    int n = 0;
    args[n++] = (struct ct_arg){an.graph_work, CT_ARG_STRING, an.replayed};
    args[n++] = (struct ct_arg){an.graph_id, CT_ARG_UINT, origin.graph};
    args[n++] = (struct ct_arg){an.graph_node_id, CT_ARG_UINT, origin.node};
    if (origin.site.site)
        args[n++] = (struct ct_arg){an.capture_site, CT_ARG_STRING, origin.site.site};
    return n;
}

/* A piece of work as `work` names and annotates it, with its device and
 * stream as annotations too (what Kineto-style readers look for), and what
 * graph it ran from: on its device and stream's track, or as a typed
 * record on its hardware queue. */
static void write_work(uint32_t index, const struct ct_record *r, uint64_t begin, uint64_t end,
                       struct ct_render_stage *work)
{
    ct_gap_gpu_work(gpu.gap, begin, end, ct_writer_chunk(gpu.seq.writer));
    uint32_t device = (uint32_t)r->result, stream = stream_of(r);
    struct ct_arg all[14];
    memcpy(all, work->args, (size_t)work->nargs * sizeof *work->args);
    all[work->nargs++] = (struct ct_arg){an.device, CT_ARG_UINT, device};
    all[work->nargs++] = (struct ct_arg){an.stream, CT_ARG_UINT, stream};
    uint64_t node;
    work->nargs += graph_args(&gpu.graphs[index], all + work->nargs, &node);
    work->args = all;
    uint64_t id = flow_id(correlation_of(r));
    if (!gpu.typed) {
        if (node && id)
            id = node_flow_id(correlation_of(r), node);
        uint64_t t = track(WORK, device, stream, ct_track_gpu_stream);
        struct ct_flow flow = {.in = id};
        ct_write_flow_slice(&gpu.seq, t, begin, end, work->name, all, work->nargs, &flow);
        return;
    }
    work->event_id = id ? id : CT_GPU_EVENT_UNLINKED | ++gpu.unlinked;
    work->begin_ns = begin;
    work->end_ns = end;
    work->pid = ct_process.pid;
    work->device = device;
    work->queue = queue_name(device, stream);
    ct_render_stage_write(&gpu.stages, work);
}

static void kernel(uint32_t index, const struct ct_record *r, uint64_t begin, uint64_t end)
{
    uint64_t *name = ct_u64_map_find(&gpu.names, r->arg[1]);
    uint64_t *mangled = ct_u64_map_find(&gpu.mangled, r->arg[1]);
    struct ct_kernel_resources res = ct_unpack_kernel_resources(r->arg[4]);
    struct ct_arg args[] = {
        {an.gpu_kind, CT_ARG_STRING, an.kernel},
        {an.grid, CT_ARG_STRING, ct_dim3_string(r->arg[2])},
        {an.block, CT_ARG_STRING, ct_dim3_string(r->arg[3])},
        {an.registers, CT_ARG_UINT, res.registers},
        {an.static_smem, CT_ARG_UINT, res.static_smem},
        {an.dynamic_smem, CT_ARG_UINT, res.dynamic_smem},
        {an.correlation, CT_ARG_UINT, correlation_of(r)},
        {an.mangled, CT_ARG_STRING, mangled ? *mangled : 0},
    };
    struct ct_render_stage work = {
        .name = name ? (uint32_t)*name : gpu.unnamed,
        .stage = an.kernel,
        .kernel = mangled ? (uint32_t)*mangled
                  : name  ? (uint32_t)*name
                          : gpu.unnamed,
        .grid = r->arg[2],
        .block = r->arg[3],
        .args = args,
        .nargs = mangled ? 8 : 7,
    };
    work.demangled = work.name;
    write_work(index, r, begin, end, &work);
}

static uint64_t mb_per_s(uint64_t bytes, uint64_t begin, uint64_t end)
{
    return end > begin ? bytes * 1000 / (end - begin) : 0;
}

static void copy(uint32_t index, const struct ct_record *r, uint64_t begin, uint64_t end)
{
    struct ct_copy_kinds kinds = ct_unpack_copy_kinds(r->arg[2]);
    unsigned kind = kinds.copy;
    char name[32];
    snprintf(name, sizeof name, ct_event_memcpy, copy_kind_name(kind));
    struct ct_arg args[] = {
        {an.gpu_kind, CT_ARG_STRING, an.memcpy},
        {an.copy_kind, CT_ARG_STRING, text(copy_kind_name(kind))},
        {an.bytes, CT_ARG_UINT, r->arg[1]},
        {an.bandwidth, CT_ARG_UINT, mb_per_s(r->arg[1], begin, end)},
        {an.src_kind, CT_ARG_STRING, text(memory_kind_name(kinds.src))},
        {an.dst_kind, CT_ARG_STRING, text(memory_kind_name(kinds.dst))},
        {an.correlation, CT_ARG_UINT, correlation_of(r)},
        {an.copies, CT_ARG_UINT, r->arg[3]},
    };
    /* One record may stand for several copies of a batch (CUPTI's copyCount). */
    gpu.records[CT_GPU_MEMCPY] += r->arg[3] > 1 ? r->arg[3] - 1 : 0;
    struct ct_render_stage work = {
        .name = text(name), .stage = an.memcpy, .args = args, .nargs = r->arg[3] > 1 ? 8 : 7};
    write_work(index, r, begin, end, &work);
}

static void set(uint32_t index, const struct ct_record *r, uint64_t begin, uint64_t end)
{
    struct ct_arg args[] = {
        {an.gpu_kind, CT_ARG_STRING, an.memset},
        {an.bytes, CT_ARG_UINT, r->arg[1]},
        {an.bandwidth, CT_ARG_UINT, mb_per_s(r->arg[1], begin, end)},
        {an.value, CT_ARG_UINT, r->arg[2]},
        {an.correlation, CT_ARG_UINT, correlation_of(r)},
    };
    struct ct_render_stage work = {
        .name = memset_name, .stage = an.memset, .args = args, .nargs = 5};
    write_work(index, r, begin, end, &work);
}

/* A graph launch as one piece of work (graph-level tracing): named by its
 * graph, as its nodes would be, with no node. */
static void whole_graph(uint32_t index, const struct ct_record *r, uint64_t begin, uint64_t end)
{
    gpu.graphs[index] = (struct ring_graph){0, (uint32_t)r->arg[2]};
    char name[32];
    snprintf(name, sizeof name, ct_event_graph,
             (unsigned)ct_cuda_graphs_origin(0, (uint32_t)r->arg[2]).graph);
    struct ct_arg args[] = {
        {an.gpu_kind, CT_ARG_STRING, an.graph},
        {an.correlation, CT_ARG_UINT, correlation_of(r)},
    };
    struct ct_render_stage work = {.name = text(name), .stage = an.graph, .args = args, .nargs = 2};
    write_work(index, r, begin, end, &work);
}

static void sync(const struct ct_record *r, uint64_t begin, uint64_t end)
{
    static const char *const types[] = {ct_event_sync_unknown, ct_event_sync_event,
                                        ct_event_sync_stream_wait, ct_event_sync_stream,
                                        ct_event_sync_context};
    const char *type = r->arg[2] < 5 ? types[r->arg[2]] : types[0];
    /* A context-wide synchronisation has no stream: CUPTI says UINT32_MAX. */
    uint64_t t =
        track(SYNCS, (uint32_t)r->result, stream_of(r),
              stream_of(r) == UINT32_MAX ? ct_track_gpu_context_syncs : ct_track_gpu_stream_syncs);
    struct ct_arg args[] = {{an.gpu_kind, CT_ARG_STRING, an.sync},
                            {an.correlation, CT_ARG_UINT, correlation_of(r)}};
    ct_write_slice(&gpu.seq, t, begin, end, text(type), args, 2);
}

static void memory(const struct ct_record *r, uint64_t at)
{
    uint64_t t = track(MEMORY, (uint32_t)r->result, 0, ct_track_gpu_memory);
    struct ct_arg args[] = {{an.bytes, CT_ARG_UINT, r->arg[1]},
                            {an.address, CT_ARG_POINTER, r->arg[3]},
                            {an.correlation, CT_ARG_UINT, correlation_of(r)}};
    ct_write_instant(&gpu.seq, t, at,
                     text(r->arg[2] == 2 ? ct_event_memory_release : ct_event_memory_allocation),
                     args, 3);
}

static void overhead(const struct ct_record *r, uint64_t begin, uint64_t end)
{
    uint64_t t = track(OVERHEAD, 0, 0, ct_track_cupti_overhead);
    struct ct_arg args[] = {{an.type, CT_ARG_UINT, r->arg[2]}};
    ct_write_slice(&gpu.seq, t, begin, end, text(ct_event_cupti_overhead), args, 1);
}

/* The delay from work's end to its record's arrival: what a snapshot or a
 * live reader misses of the GPU's latest work (docs/performance.md). */
static void note_delay(uint64_t end)
{
    uint64_t now = ct_clock_map_now_ns(), delay = now > end ? now - end : 0;
    uint64_t step = delay / DELAY_STEP_NS;
    gpu.delays[step < DELAYS ? step : DELAYS - 1]++;
    gpu.delays_counted++;
    if (delay > gpu.delay_max)
        gpu.delay_max = delay;
}

/* The delay under which `share` percent of them came, to the step above. */
static uint64_t delay_under(unsigned share)
{
    uint64_t want = (gpu.delays_counted * share + 99) / 100, seen = 0;
    for (uint32_t i = 0; i < DELAYS && want; i++)
        if ((seen += gpu.delays[i]) >= want)
            return (i + 1) * DELAY_STEP_NS;
    return 0;
}

void ct_gpu_record(uint32_t index, const struct ct_record *r)
{
    if (r->func == CT_GPU_GRAPH_IDS) {
        gpu.graphs[index] = (struct ring_graph){r->arg[1], (uint32_t)r->arg[2]};
        return;
    }
    if (!ct_gpu_clock_known() || r->func > CT_GPU_GRAPH) {
        gpu.unmapped++;
        return;
    }
    uint64_t begin = ct_gpu_clock_ns(r->begin), end = ct_gpu_clock_ns(r->end);
    if (end < begin)
        end = begin;
    gpu.records[r->func]++;
    if (r->func <= CT_GPU_MEMSET)
        note_delay(end);
    switch (r->func) {
    case CT_GPU_KERNEL:
        kernel(index, r, begin, end);
        break;
    case CT_GPU_MEMCPY:
        copy(index, r, begin, end);
        break;
    case CT_GPU_MEMSET:
        set(index, r, begin, end);
        break;
    case CT_GPU_SYNC:
        sync(r, begin, end);
        break;
    case CT_GPU_MEMORY:
        memory(r, begin);
        break;
    case CT_GPU_GRAPH:
        whole_graph(index, r, begin, end);
        break;
    default:
        overhead(r, begin, end);
        break;
    }
}

void ct_gpu_cupti_text(uint32_t index, uint64_t key, uint32_t id)
{
    gpu.texts[index] = (struct ring_text){key, id};
}

void ct_gpu_cupti_state(uint32_t index, const struct ct_record *r, uint64_t ts)
{
    if (r->func == CT_CUPTI_DROPPED) {
        gpu.cupti_dropped = r->arg[1];
        return;
    }
    if (r->func == CT_CUPTI_UNREAD) {
        struct ct_arg args[] = {CT_UINT_ARG(ct_key_incomplete, r->arg[1]),
                                CT_UINT_ARG(ct_key_untimed, r->arg[2])};
        ct_process_instant(CT_TRACK_PROCESS, ts, ct_event_gpu_unread, args, 2);
        return;
    }
    static const char *const states[] = {[CT_CUPTI_ACTIVE] = ct_value_cupti_active,
                                         [CT_CUPTI_UNAVAILABLE] = ct_value_cupti_unavailable,
                                         [CT_CUPTI_NO_GPU] = ct_value_cupti_no_gpu,
                                         [CT_CUPTI_YIELDED] = ct_value_cupti_yielded};
    if (r->func >= sizeof states / sizeof states[0] || !states[r->func])
        return;
    const struct ring_text *t = &gpu.texts[index];
    uint32_t why = t->key == r->begin ? t->text : text("");
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_state, states[r->func]),
        {ct_strings_intern_cstr(r->func == CT_CUPTI_ACTIVE ? ct_key_library : ct_key_reason),
         CT_ARG_STRING, why},
        CT_UINT_ARG(ct_key_cupti_version, r->arg[0]),
        CT_INT_ARG(ct_key_cupti_result, r->result),
    };
    ct_process_instant(CT_TRACK_PROCESS, ts, ct_event_cupti, args, 4);
}

void ct_gpu_tracks_finish(uint64_t end_ns)
{
    if (!ct_gpu_clock_known() && !gpu.unmapped)
        return;
    struct ct_gpu_clock_quality q = ct_gpu_clock_quality();
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_kernels, gpu.records[CT_GPU_KERNEL]),
        CT_UINT_ARG(ct_key_memcpys, gpu.records[CT_GPU_MEMCPY]),
        CT_UINT_ARG(ct_key_memsets, gpu.records[CT_GPU_MEMSET]),
        CT_UINT_ARG(ct_key_syncs, gpu.records[CT_GPU_SYNC]),
        CT_UINT_ARG(ct_key_memory_operations, gpu.records[CT_GPU_MEMORY]),
        CT_UINT_ARG(ct_key_cupti_dropped, gpu.cupti_dropped),
        CT_UINT_ARG(ct_key_unmapped, gpu.unmapped),
        CT_UINT_ARG(ct_key_clock_samples, q.samples),
        CT_UINT_ARG(ct_key_clock_reading_error_ns, q.widest_half_bracket_ns),
        CT_UINT_ARG(ct_key_clock_drift_ns, q.largest_step_ns),
        CT_UINT_ARG(ct_key_delivery_median_ns, delay_under(50)),
        CT_UINT_ARG(ct_key_delivery_max_ns, gpu.delay_max),
    };
    ct_process_instant(CT_TRACK_PROCESS, end_ns, ct_event_gpu_totals, args,
                       sizeof args / sizeof args[0]);
}

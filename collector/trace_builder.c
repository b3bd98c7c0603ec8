/*
 * Routes each drained record to the part of the trace it belongs to. Each
 * thread that called CUDA gets a sequence and a thread track, and its calls
 * become slices there (call_slices.c); the same record feeds the memory
 * counters and the launch rate when its family says so, and the usage
 * tallies that outlive a bounded trace's dropped middle (usage_tally.c);
 * strings, once whole, go to whoever asked for them (kernel names, devices,
 * library versions, call sites, which wait for their call; NVTX names,
 * which wait for their range); NVTX ranges go to nvtx_ranges.c;
 * library events from the loader's ring go to loader_events.c; CUPTI's
 * records of the GPU's work, its clock readings and its state go to
 * gpu_tracks.c and gpu_clock.c, and a call CUPTI correlated carries the
 * flow to that work. The GPU's own state, which the collector samples
 * through NVML on a thread of its own, is written by gpu_state/; what the
 * host's threads and workers were doing, sampled from /proc on another, by
 * host_sampling/.
 * Process-wide tracks and instants live in process_tracks.c and
 * library_track.c, capture windows in capture_windows.c; each drain cycle
 * also serves `cudatrace ctl` (control/). At the end it writes the closing
 * instant with the session's totals; a failed call may ask for a snapshot
 * (snapshot/triggers.c). A bounded trace begins its chunks here, between
 * records, where no slice is half written; an NVTX range open across the
 * boundary is ended there and said again in the new chunk.
 */
#include "collector/trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cudatrace/trace_names.h"
#include "collector/control/listener.h"
#include "collector/control/totals.h"
#include "collector/tracks/call_sites.h"
#include "collector/tracks/capture_windows.h"
#include "collector/tracks/call_slices.h"
#include "collector/gpu_state/state_tracks.h"
#include "collector/host_sampling/host_tracks.h"
#include "collector/perfetto/clock_map.h"
#include "cudatrace/functions.h"
#include "collector/tracks/cuda_graphs.h"
#include "common/array.h"
#include "collector/tracks/gpu_clock.h"
#include "collector/tracks/gpu_tracks.h"
#include "collector/tracks/kernel_table.h"
#include "collector/tracks/launch_rate.h"
#include "collector/tracks/library_track.h"
#include "collector/libraries/loader_events.h"
#include "collector/tracks/memory_counters.h"
#include "collector/tracks/pool_reserve.h"
#include "collector/tracks/nvtx_ranges.h"
#include "collector/tracks/trace_gap.h"
#include "collector/tracks/usage_tally.h"
#include "collector/perfetto/process_tracks.h"
#include "collector/snapshot/snapshot.h"
#include "collector/snapshot/triggers.h"
#include "collector/string_records.h"

#define CUDA_ERROR_NO_KERNEL_IMAGE 209 /* cudaErrorNoKernelImageForDevice */
#define SETTLE_SLACK_NS 1000000000ull

struct thread_view {
    struct ct_sequence seq;
    int32_t tid;
    int live;
    /* CUPTI's correlation id for the call that begins at correlated_begin. */
    uint64_t correlated_begin;
    uint32_t correlation;
};

/* The collector's one builder: the parts of the trace it holds, each in a
 * struct of its own that is handed down to what writes or reads it (and no
 * further: only this file sees the whole), then what it keeps of the
 * threads. The trace file is main.c's, opened before the builder starts,
 * and handed to those that write or read it. */
static struct {
    struct ct_writer *writer;
    struct ct_control control;
    struct ct_capture_windows windows;
    struct ct_memory_counters memory;
    struct ct_gap_memory gap_memory;
    struct ct_gap_gpu gap_gpu;
    struct ct_usage_tally usage;
    struct ct_nvtx_ranges nvtx;
    struct ct_launch_rate launches;
    struct ct_pool_reserve reserve;
    struct ct_trace_gap gap;
    struct ct_call_sites sites;
    struct ct_host_tracks host;
    struct thread_view *threads;
    uint32_t thread_count;
    /* The flow ids a graph launch starts, one per node it runs. */
    uint64_t *flow_ids;
    size_t flow_room;
    uint64_t calls, last_dropped;
    /* The clock of the latest record that has one: where the drain's merge
     * across threads has got to, and so where a chunk begun now begins. */
    uint64_t clock_reached;
} b;

void ct_builder_start(struct ct_shm_header *shm, struct ct_trace_file *file)
{
    b.writer = ct_writer_create(file, (uint64_t)shm->max_trace_mb << 20);
    ct_call_slices_start();
    b.threads = calloc(shm->ring_count, sizeof *b.threads);
    if (!b.threads)
        abort();
    b.thread_count = shm->ring_count;
    ct_usage_tally_start(&b.usage);
    ct_launch_rate_start(&b.launches, &ct_process);
    ct_pool_reserve_start(&b.reserve, &ct_process);
    ct_nvtx_start(&b.nvtx, shm->ring_count, &b.usage);
    ct_string_records_start(shm->ring_count);
    ct_call_sites_start(&b.sites, shm->pid, shm->ring_count);
    ct_cuda_graphs_start(shm->ring_count);
    ct_process_tracks_start(shm, b.writer);
    ct_library_track_start();
    ct_gap_gpu_start(&b.gap_gpu);
    ct_gpu_tracks_start(b.writer, &b.gap_gpu, shm->ring_count, shm->gpu_records,
                        shm->gpu_graph_level);
    ct_gpu_state_start(shm, b.writer);
    ct_gap_memory_start(&b.gap_memory);
    ct_memory_counters_start(&b.memory, &ct_process, &b.gap_memory);
    ct_trace_gap_start(&b.gap, b.writer, &b.memory, &b.gap_memory, &b.gap_gpu, &b.usage);
    ct_host_state_start(&b.host, shm, b.writer);
    ct_capture_windows_start(&b.windows, shm, &ct_process, ct_clock_map_ns(shm->start_ticks));
    ct_control_listen(&b.control, &(struct ct_control_parts){shm, file, &b.windows, &b.memory});
    ct_snapshot_start(shm, b.writer, file);
}

/* Ends the chunk being written once it is full. Each thread's open NVTX
 * ranges end at its latest event and begin again there, in the new chunk:
 * later events of a thread are never earlier. */
static void chunk_point(void)
{
    if (!ct_writer_chunk_due(b.writer))
        return;
    for (uint32_t i = 0; i < b.thread_count; i++)
        if (b.threads[i].live)
            ct_nvtx_suspend(&b.nvtx, i, &b.threads[i].seq, b.threads[i].seq.last_ts);
    ct_writer_new_chunk(b.writer, b.clock_reached ? ct_clock_map_ns(b.clock_reached) : 0);
    for (uint32_t i = 0; i < b.thread_count; i++)
        if (b.threads[i].live)
            ct_nvtx_resume(&b.nvtx, i, &b.threads[i].seq, b.threads[i].seq.last_ts);
}

void ct_builder_thread(uint32_t index, int32_t tid, const char *name)
{
    struct thread_view *t = &b.threads[index];
    ct_sequence_init(&t->seq, b.writer, ct_process_thread_track(tid));
    t->tid = tid;
    t->live = 1;
    ct_write_thread_track(&t->seq, ct_process_thread_track(tid), ct_process.pid, tid, name);
}

void ct_builder_thread_end(uint32_t index)
{
    struct thread_view *t = &b.threads[index];
    if (t->live) {
        ct_nvtx_close(&b.nvtx, index, &t->seq, ct_clock_map_now_ns());
        ct_sequence_release(&t->seq);
    }
    t->live = 0;
    ct_string_records_reset(index);
    ct_call_sites_reset(&b.sites, index);
    ct_cuda_graphs_reset(index);
}

static void string_done(uint32_t index, const struct ct_string_done *s)
{
    if (ct_loader_events_string(s->kind, s->key, s->id))
        return;
    switch (s->kind) {
    case CT_STR_CALL_SITE:
        ct_call_sites_arrived(&b.sites, index, s->key, s->id);
        break;
    case CT_STR_NVTX_NAME:
        ct_nvtx_name(&b.nvtx, index, s->key, s->id);
        break;
    case CT_STR_KERNEL_NAME:
        ct_kernel_table_name_is(s->key, s->id);
        break;
    case CT_STR_DEVICE_NAME:
        ct_process_device(s->key, s->id);
        break;
    case CT_STR_DEVICE_UUID:
        ct_gpu_state_cuda_device(s->key, ct_strings_get(s->id));
        break;
    case CT_STR_LIBRARY_VERSION:
        ct_library_track_version(s->key, s->id);
        break;
    case CT_STR_KERNEL_LIBRARY:
        ct_kernel_table_library_is(s->key, s->id);
        break;
    case CT_STR_GPU_KERNEL_NAME:
        ct_gpu_kernel_name(s->key, s->id);
        break;
    case CT_STR_CUPTI_TEXT:
        ct_gpu_cupti_text(index, s->key, s->id);
        break;
    default:
        break;
    }
}

/* A call's annotations of what it did to a graph: captured its work
 * (`captured`), added a node through the graph API (`added`), or some other
 * building (`building`: a capture's begin or end, an instantiation, an
 * upload, a destruction); the node it made; and the graph it made, captured
 * into, instantiated, launched or uploaded. */
static struct ct_call_extra graph_call_args(int family, struct ct_graph_call made)
{
    struct ct_call_extra extra = {.count = 0};
    const char *work = !made.node && family == CT_FAMILY_GRAPH_BUILD ? ct_value_graph_work_building
                       : !made.node                                  ? NULL
                       : family == CT_FAMILY_GRAPH_BUILD             ? ct_value_graph_work_added
                                                                     : ct_value_graph_work_captured;
    if (work)
        extra.args[extra.count++] = (struct ct_arg)CT_TEXT_ARG(ct_key_graph_work, work);
    if (made.node)
        extra.args[extra.count++] = (struct ct_arg)CT_UINT_ARG(ct_key_graph_node_id, made.node);
    if (made.graph)
        extra.args[extra.count++] = (struct ct_arg)CT_UINT_ARG(ct_key_graph_id, made.graph);
    return extra;
}

static void call(uint32_t index, const struct ct_record *r)
{
    struct thread_view *t = &b.threads[index];
    int family = ct_call_family(r);
    if (family < 0 || !t->live)
        return;
    uint64_t begin = ct_clock_map_ns(r->begin), end = ct_clock_map_ns(r->end);
    if (end < begin)
        end = begin;
    /* A call that failed submitted no work, and one that made a graph node
     * captured its work for later: no flow waits for any. */
    struct ct_graph_call made = ct_cuda_graphs_call(index, r);
    uint32_t correlation =
        t->correlated_begin == r->begin && r->result == 0 && !made.node ? t->correlation : 0;
    struct ct_call_site site = ct_call_sites_take(&b.sites, index, r->begin);
    uint32_t nodes = 0;
    const uint64_t *ran =
        family == CT_FAMILY_GRAPH ? ct_cuda_graphs_exec_nodes(r->arg[0], &nodes) : NULL;
    b.flow_ids = ct_array_reserve(b.flow_ids, &b.flow_room, nodes, sizeof *b.flow_ids);
    struct ct_flow flow = ct_gpu_call_flow(correlation, ran, nodes, b.flow_ids);
    struct ct_call_extra extra = graph_call_args(family, made);
    ct_call_slice(&t->seq, r, begin, end, site, correlation ? &flow : NULL, &extra);
    uint32_t chunk = ct_writer_chunk(b.writer);
    ct_usage_tally_call(&b.usage, r, t->tid, site.site, end - begin, chunk);
    if (!made.node) /* a captured allocation is the graph's, made when it runs */
        ct_memory_counters_note(&b.memory, (uint8_t)family, r, begin, end, site, chunk);
    ct_pool_reserve_note(&b.reserve, r, end);
    ct_snapshot_note_result(r->func, r->result);
    if (family == CT_FAMILY_LAUNCH && !made.node) {
        ct_launch_rate_count(&b.launches, begin);
        if (r->result == CUDA_ERROR_NO_KERNEL_IMAGE)
            ct_kernel_table_no_image(r->arg[0], end);
    }
    b.calls++;
}

void ct_builder_thread_calls(uint32_t index, const struct ct_call_stats *stats)
{
    struct thread_view *t = &b.threads[index];
    if (!t->live)
        return;
    ct_call_totals(&t->seq, stats, ct_clock_map_now_ns());
    ct_trace_gap_thread_totals(&b.gap, stats, ct_writer_chunk(b.writer));
    ct_control_totals_ended(stats);
}

/* The call a thread is inside, until `end_ns`, named by its caller's line. */
static void inflight_slice(struct ct_sequence *seq, struct ct_call_now call, uint64_t end_ns)
{
    if (!call.begin_ticks || call.func >= CT_FN_COUNT)
        return;
    uint64_t begin = ct_clock_map_ns(call.begin_ticks);
    ct_call_inflight_slice(seq, call.func, begin, end_ns > begin ? end_ns : begin,
                           ct_call_sites_of_caller(&b.sites, call.caller));
}

void ct_builder_inflight(struct ct_call_now call, uint64_t end_ns)
{
    struct thread_view *t = &b.threads[call.index];
    if (t->live)
        inflight_slice(&t->seq, call, end_ns);
}

void ct_builder_thread_now(uint32_t index, const char *name, const struct ct_call_stats *stats,
                           struct ct_call_now call, uint64_t now_ns)
{
    struct thread_view *t = &b.threads[index];
    if (!t->live)
        return;
    struct ct_sequence seq;
    uint64_t track = ct_process_thread_track(t->tid);
    ct_sequence_aside(&seq, b.writer, track);
    ct_write_thread_track(&seq, track, ct_process.pid, t->tid, name);
    ct_call_totals(&seq, stats, now_ns);
    inflight_slice(&seq, call, now_ns);
    ct_sequence_aside_done(&seq);
}

void ct_builder_record(uint32_t index, const struct ct_record *record)
{
    struct ct_string_done done;
    if (ct_record_on_program_clock(record->type))
        b.clock_reached = record->begin;
    chunk_point();
    switch (record->type) {
    case CT_REC_CALL:
    case CT_REC_CUPTI_CALL:
        call(index, record);
        break;
    case CT_REC_CORRELATION:
        b.threads[index].correlated_begin = record->begin;
        b.threads[index].correlation = (uint32_t)record->arg[0];
        for (int i = 1; i < 4; i++)
            ct_gpu_correlation_alias((uint32_t)record->arg[i], (uint32_t)record->arg[0]);
        break;
    case CT_REC_GPU:
        ct_gpu_record(index, record);
        break;
    case CT_REC_GPU_CLOCK:
        ct_gpu_clock_sample(record);
        break;
    case CT_REC_CUPTI_STATE:
        ct_gpu_cupti_state(index, record, ct_clock_map_ns(record->begin));
        break;
    case CT_REC_STRING:
        if (ct_string_records_add(index, record, &done))
            string_done(index, &done);
        break;
    case CT_REC_PROCESS_INFO:
        ct_process_versions(record);
        ct_gpu_state_cuda_devices((int64_t)record->arg[2]);
        break;
    case CT_REC_LIBRARY:
        ct_loader_events_record(record);
        break;
    case CT_REC_CAPTURE:
        ct_capture_windows_record(&b.windows, record, ct_clock_map_ns(record->begin));
        break;
    case CT_REC_GRAPH:
        if (record->func == CT_GRAPH_MEMORY)
            ct_pool_reserve_graphs_read(&b.reserve, (uint32_t)record->arg[0], record->arg[1],
                                        ct_clock_map_ns(record->begin));
        else
            ct_cuda_graphs_record(index, record, &b.sites);
        break;
    case CT_REC_NVTX:
        if (b.threads[index].live)
            ct_nvtx_record(&b.nvtx, index, &b.threads[index].seq, record,
                           ct_clock_map_ns(record->begin));
        break;
    default:
        break;
    }
}

int ct_builder_scan_libraries(int process_ended)
{
    return ct_library_track_scan(process_ended);
}

/* Up to when no more events can come, as far as the collector can tell:
 * a record reaches it within a drain cycle or two of its call's end, and a
 * call some thread is inside will have the begin it noted. The slack covers
 * a thread's first call, made before it had a ring to note it in. */
static uint64_t settled_ns(uint64_t drained_from_ns, uint64_t oldest_call_ticks, uint64_t slack_ns)
{
    uint64_t settled = drained_from_ns > slack_ns ? drained_from_ns - slack_ns : 0;
    uint64_t oldest = oldest_call_ticks ? ct_clock_map_ns(oldest_call_ticks) : UINT64_MAX;
    return oldest < settled ? oldest : settled;
}

/* The counters that wait until the events before a time have all come. */
static void settle(uint64_t settled)
{
    if (settled)
        ct_launch_rate_write(&b.launches, settled);
    ct_memory_counters_settle(&b.memory, settled);
}

void ct_builder_tick(uint64_t dropped, uint64_t drained_from_ns, uint64_t oldest_call_ticks)
{
    chunk_point();
    uint64_t now = ct_clock_map_now_ns();
    ct_capture_windows_tick(&b.windows, now);
    ct_control_serve(&b.control, now);
    settle(settled_ns(drained_from_ns, oldest_call_ticks, SETTLE_SLACK_NS));
    ct_gpu_state_write();
    ct_host_state_write(&b.host);
    if (dropped != b.last_dropped) {
        ct_process_counter(&ct_process, CT_TRACK_DROPPED, now, (int64_t)dropped);
        b.last_dropped = dropped;
    }
}

void ct_builder_settle_now(uint64_t drained_from_ns, uint64_t oldest_call_ticks)
{
    settle(settled_ns(drained_from_ns, oldest_call_ticks, 0));
}

/* The collector's own peak resident memory, in KiB: its address space's
 * high-water mark. Not getrusage's ru_maxrss: Linux carries that across
 * exec, and posix_spawn's child shares the program's address space until it
 * execs, so it would report the program's peak at the collector's start. */
static uint64_t peak_rss_kb(const struct rusage *usage)
{
    FILE *status = fopen("/proc/self/status", "re");
    char line[256];
    unsigned long long kb = 0;
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "VmHWM:", 6) == 0 && sscanf(line + 6, "%llu", &kb) == 1)
            break;
    if (status)
        fclose(status);
    return kb ? kb : (uint64_t)usage->ru_maxrss;
}

void ct_builder_finish(uint64_t end_ns, uint64_t dropped, int exited_normally)
{
    for (uint32_t i = 0; i < b.thread_count; i++)
        if (b.threads[i].live)
            ct_nvtx_close(&b.nvtx, i, &b.threads[i].seq, end_ns);
    ct_control_close(&b.control);
    ct_capture_windows_finish(&b.windows, end_ns);
    ct_launch_rate_finish(&b.launches);
    ct_memory_counters_settle(&b.memory, UINT64_MAX);
    ct_writer_refresh_gap(b.writer); /* with the peaks all applied */
    ct_library_track_finish(end_ns);
    ct_gpu_tracks_finish(end_ns);
    ct_gpu_state_finish(end_ns);
    ct_host_state_finish(&b.host, end_ns);
    if (dropped != b.last_dropped)
        ct_process_counter(&ct_process, CT_TRACK_DROPPED, end_ns, (int64_t)dropped);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    uint64_t cpu_ns =
        ((uint64_t)usage.ru_utime.tv_sec + (uint64_t)usage.ru_stime.tv_sec) * 1000000000ull +
        ((uint64_t)usage.ru_utime.tv_usec + (uint64_t)usage.ru_stime.tv_usec) * 1000u;
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_calls, b.calls),
        CT_UINT_ARG(ct_key_collector_cpu_ns, cpu_ns),
        CT_UINT_ARG(ct_key_collector_max_rss_kb, peak_rss_kb(&usage)),
        CT_UINT_ARG(ct_key_dropped, dropped),
        CT_UINT_ARG(ct_key_memory_events_late, ct_memory_counters_late(&b.memory)),
        CT_UINT_ARG(ct_key_process_start_ns, ct_process.start_ns),
        CT_TEXT_ARG(ct_key_exit, exited_normally ? ct_value_exit_normal : ct_value_exit_lost),
    };
    ct_process_instant(CT_TRACK_PROCESS, end_ns, ct_event_end, args, sizeof args / sizeof args[0]);
}

uint64_t ct_builder_calls(void)
{
    return b.calls;
}

void ct_builder_flush(void)
{
    ct_writer_flush(b.writer);
}

/*
 * Gathers the usage figures from call slices. Which calls block the host,
 * which copies are pageable or small and which allocations' times count is
 * common/call_cost.c's to say,
 * the rules by which the collector tallies a bounded trace's dropped middle
 * too: the tallies of that middle, which the trace's gap carries, are added
 * here (ct_usage_gap_instant). Live device memory is recomputed from
 * the allocation and free slices (which the rings never drop), so that each
 * live block keeps its site, once they are all read and put in time order;
 * the physical memory the driver's virtual-memory API made counts with it,
 * a block per handle (common/vmm_ledger.c says when one goes). The blocks a
 * bounded trace's dropped middle left live, and the levels it went through,
 * come with its gap (ct_usage_gap_memory).
 */
#include "viewer-export/model/usage.h"

#include <stdlib.h>
#include <string.h>

#include "cuda_error_names.h"
#include "cudatrace/trace_names.h"
#include "common/array.h"
#include "common/step_names.h"
#include "common/call_cost.h"
#include "common/time_order.h"
#include "cudatrace/functions.h"
#include "viewer-export/findings/thresholds.h"

static uint64_t arg_uint(const struct ct_event *e, const char *name)
{
    return (uint64_t)ct_event_int(e, name, 0);
}

/* The entry of `site` in `t`, made empty if it had none. */
static struct ct_site_cost *site_entry(struct ct_site_costs *t, const char *site)
{
    uint64_t *index = ct_u64_map_find(&t->index, (uint64_t)(uintptr_t)site);
    if (!index) {
        t->items = ct_array_grow(t->items, t->count, sizeof *t->items);
        t->items[t->count++].site = site;
        ct_u64_map_put(&t->index, (uint64_t)(uintptr_t)site, t->count);
        index = ct_u64_map_find(&t->index, (uint64_t)(uintptr_t)site);
    }
    return &t->items[*index - 1];
}

void ct_site_costs_add_calls(struct ct_site_costs *t, const char *site, uint64_t calls, uint64_t ns,
                             uint64_t bytes)
{
    if (!site)
        return;
    t->calls_with_site += calls;
    struct ct_site_cost *c = site_entry(t, site);
    c->calls += calls;
    c->ns += ns;
    c->bytes += bytes;
}

void ct_site_costs_add(struct ct_site_costs *t, const char *site, uint64_t ns, uint64_t bytes)
{
    ct_site_costs_add_calls(t, site, 1, ns, bytes);
}

double ct_site_cost_of(const struct ct_site_cost *c, enum ct_site_measure by)
{
    return by == CT_SITE_BY_TIME    ? (double)c->ns
           : by == CT_SITE_BY_BYTES ? (double)c->bytes
                                    : (double)c->calls;
}

static int by_cost(const void *a, const void *b, void *measure)
{
    const struct ct_site_cost *x = a, *y = b;
    double cx = ct_site_cost_of(x, *(const enum ct_site_measure *)measure);
    double cy = ct_site_cost_of(y, *(const enum ct_site_measure *)measure);
    if (cx != cy)
        return cx < cy ? 1 : -1;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return (x->calls < y->calls) - (x->calls > y->calls);
}

struct ct_site_cost *ct_site_costs_sorted(const struct ct_site_costs *t, enum ct_site_measure by)
{
    struct ct_site_cost *copy = malloc((t->count + 1) * sizeof *copy);
    if (!copy)
        abort();
    if (t->count) {
        memcpy(copy, t->items, t->count * sizeof *copy);
        qsort_r(copy, t->count, sizeof *copy, by_cost, &by);
    }
    return copy;
}

void ct_site_costs_free(struct ct_site_costs *t)
{
    ct_u64_map_free(&t->index);
    free(t->items);
    memset(t, 0, sizeof *t);
}

/* A handle's block among the pointers' in `live`: the top bit, which no
 * device address has, tells them apart. */
static uint64_t handle_block(uint64_t handle)
{
    return handle | 1ull << 63;
}

static int is_handle_block(uint64_t ptr)
{
    return (ptr >> 63) != 0;
}

/* The live memory at a failed allocation: its largest blocks, how much of
 * it is physical memory of the virtual-memory API, who held it. */
static void remember_live(struct ct_usage *u)
{
    memset(u->oom_largest, 0, sizeof u->oom_largest);
    u->oom_holders = u->holders;
    for (size_t i = 0; i < u->block_count; i++) {
        const struct ct_live_block *b = &u->blocks[i];
        if (is_handle_block(b->ptr))
            u->oom_live_vmm += b->bytes;
        if (b->blocks != 1)
            continue; /* a gap's sum of blocks (ct_usage_gap_memory) is none of them */
        for (int k = 0; k < CT_USAGE_LARGEST; k++) {
            if (b->bytes > u->oom_largest[k].bytes) {
                memmove(&u->oom_largest[k + 1], &u->oom_largest[k],
                        (CT_USAGE_LARGEST - 1 - k) * sizeof u->oom_largest[0]);
                u->oom_largest[k] = *b;
                break;
            }
        }
    }
}

/* `calls` allocations or frees from `site` that took `total_ns`: one call,
 * or those of a gap's duration bucket. */
static void note_alloc_time(struct ct_usage *u, uint64_t calls, uint64_t total_ns, const char *site)
{
    if (u->alloc_time_count >= CT_USAGE_MAX_TIMED || !calls)
        return;
    u->alloc_times = ct_array_grow(u->alloc_times, u->alloc_time_count, sizeof *u->alloc_times);
    u->alloc_times[u->alloc_time_count++] =
        (struct ct_slow_call){total_ns / calls, calls, total_ns, site};
}

/* An allocation or free of device memory, or a virtual-memory call, kept
 * until the events are put back in time order (ct_usage_settle). */
struct memory_event {
    uint64_t ptr, bytes, ts, end, handle;
    uint64_t made, blocks; /* a block's time and count: a gap's may be a sum made earlier */
    const char *site, *library;
    int32_t result;
    uint8_t what, vmm_op;
    uint8_t from_gap; /* its level is the gap's (LEVEL), not one a call left */
};

/* LEVEL: live bytes the dropped middle of a bounded trace went through;
 * GRAPHS: what the CUDA graphs' allocator held from then on. */
enum { ALLOCATED, ALLOCATION_FAILED, FREED, VMM_CALL, LEVEL, GRAPHS };

static void allocation_failed(struct ct_usage *u, const struct memory_event *m)
{
    if (u->oom || m->result != ct_cudaErrorMemoryAllocation)
        return;
    u->oom = 1;
    u->oom_bytes = m->bytes;
    u->oom_ts = m->ts;
    u->oom_live = u->live_bytes;
    u->oom_site = m->site;
    remember_live(u);
}

/* Live bytes changed at `ts` from `before`: a low point by time, and by
 * calls made, where a span is a few calls, most of them with a change, so
 * the level a call found counts as well as the one it left. Both begin at
 * the first change, as the level before any allocation says nothing. */
static void note_level(struct ct_usage *u, uint64_t ts, uint64_t before)
{
    ct_timeline_note(&u->low_points, ts, (double)u->live_bytes);
    uint64_t calls = (uint64_t)ct_timeline_values_before(&u->calls_by_time, ts);
    if (u->low_points_by_call.span_ns)
        ct_timeline_note(&u->low_points_by_call, calls, (double)before);
    ct_timeline_note(&u->low_points_by_call, calls, (double)u->live_bytes);
}

static void allocated(struct ct_usage *u, const struct memory_event *m)
{
    if (!m->ptr || ct_u64_map_find(&u->live, m->ptr))
        return;
    u->blocks = ct_array_grow(u->blocks, u->block_count, sizeof *u->blocks);
    u->blocks[u->block_count++] =
        (struct ct_live_block){m->ptr, m->bytes, m->made, m->blocks, m->site, m->library};
    ct_u64_map_put(&u->live, m->ptr, u->block_count);
    u->live_bytes += m->bytes;
    ct_holders_add(&u->holders, m->library, m->bytes);
    if (!m->from_gap)
        note_level(u, m->end, u->live_bytes - m->bytes);
}

static void freed(struct ct_usage *u, const struct memory_event *m);

struct vmm_context {
    struct ct_usage *u;
    uint64_t ts;
};

static void handle_freed(uint64_t handle, uint64_t bytes, void *ctx)
{
    (void)bytes;
    const struct vmm_context *c = ctx;
    freed(c->u, &(struct memory_event){.ptr = handle_block(handle), .ts = c->ts});
}

/* Physical memory the virtual-memory API made is a block of its handle,
 * kept from cuMemCreate until the ledger says it went. */
static void vmm_call(struct ct_usage *u, const struct memory_event *m)
{
    struct vmm_context c = {u, m->ts};
    ct_vmm_apply(&u->vmm, m->vmm_op, m->ptr, m->bytes, m->handle, handle_freed, &c);
    if (m->vmm_op == CT_VMM_CREATE) {
        struct memory_event block = *m;
        block.ptr = handle_block(m->handle);
        allocated(u, &block);
    }
}

static void freed(struct ct_usage *u, const struct memory_event *m)
{
    uint64_t *index = m->ptr ? ct_u64_map_find(&u->live, m->ptr) : NULL;
    if (!index)
        return;
    size_t i = *index - 1, last = u->block_count - 1;
    uint64_t before = u->live_bytes;
    u->live_bytes -= u->blocks[i].bytes;
    ct_holders_remove(&u->holders, u->blocks[i].library, u->blocks[i].bytes);
    uint64_t gone;
    ct_u64_map_remove(&u->live, m->ptr, &gone);
    if (i != last) {
        u->blocks[i] = u->blocks[last];
        ct_u64_map_put(&u->live, u->blocks[i].ptr, i + 1);
    }
    u->block_count--;
    note_level(u, m->ts, before);
}

static void queue_at(struct ct_usage *u, uint64_t at, const struct memory_event *m)
{
    if (!u->memory_order.payload_size)
        ct_time_order_init(&u->memory_order, sizeof(struct memory_event));
    ct_time_order_push(&u->memory_order, at, m);
}

/* Threads' slices come one sequence after another, so an address one thread
 * freed and another got back can come allocation first: a free is placed
 * when it began and an allocation when it returned, the one order that
 * holds whatever the threads did (as the collector's counters do). */
static void queue_memory(struct ct_usage *u, uint8_t what, int fn, const struct ct_event *e,
                         const char *site)
{
    uint8_t vmm_op = (uint8_t)ct_vmm_op_of((enum ct_function)fn);
    int makes_memory = what == ALLOCATED || (what == VMM_CALL && vmm_op == CT_VMM_CREATE);
    struct memory_event m = {arg_uint(e, ct_key_ptr),
                             arg_uint(e, ct_key_bytes),
                             e->ts,
                             e->end,
                             arg_uint(e, ct_key_handle),
                             e->end,
                             1,
                             site,
                             makes_memory ? ct_allocating_library(ct_event_text(e, ct_key_stack))
                                          : NULL,
                             (int32_t)arg_uint(e, ct_key_result),
                             what,
                             vmm_op,
                             0};
    int at_begin = ct_function_gives_memory_back((enum ct_function)fn);
    queue_at(u, at_begin ? e->ts : e->end, &m);
}

static void level(struct ct_usage *u, const struct memory_event *m)
{
    ct_timeline_note(&u->low_points, m->ts, (double)m->bytes);
}

static void queue_level(struct ct_usage *u, uint64_t ts, uint64_t bytes)
{
    queue_at(u, ts, &(struct memory_event){.ts = ts, .bytes = bytes, .what = LEVEL});
}

/* A "cudatrace.live_memory" instant of a bounded trace's gap: a block made
 * in its dropped middle and live after it, or a sum of such blocks of one
 * site (which no later free names), live from the gap's end until the last
 * of them went, if it says when; or the lowest and highest live bytes of the
 * middle, at their times. */
void ct_usage_gap_memory(struct ct_usage *u, const struct ct_event *e)
{
    static uint64_t sums; /* a sum's key: neither a device address nor a handle */
    u->gap_memory++;
    /* Written at the gap's end: the dropped middle's calls ran until then, so
     * the level its blocks leave holds at least that long, kept tail of
     * calls or not (ct_usage_settle notes it at the last call). */
    if (e->ts > u->last_call_end_ns)
        u->last_call_end_ns = e->ts;
    int is_handle = ct_event_arg(e, ct_key_handle) != NULL;
    if (!is_handle && !ct_event_arg(e, ct_key_ptr)) { /* the levels, if it changed */
        if (ct_event_arg(e, ct_key_low_live_bytes)) {
            queue_level(u, arg_uint(e, ct_key_low_live_ns), arg_uint(e, ct_key_low_live_bytes));
            queue_level(u, arg_uint(e, ct_key_high_live_ns), arg_uint(e, ct_key_high_live_bytes));
        }
        return;
    }
    const char *site = ct_event_text(e, ct_key_site);
    uint64_t blocks = arg_uint(e, ct_key_blocks), address = arg_uint(e, ct_key_ptr);
    if (is_handle)
        address = arg_uint(e, ct_key_handle);
    if (!address)
        address = ++sums | 1ull << 62;
    struct memory_event m = {.ptr = address,
                             .bytes = arg_uint(e, ct_key_bytes),
                             .ts = e->ts,
                             .end = e->ts,
                             .handle = address,
                             .made = arg_uint(e, ct_key_made_ns),
                             .blocks = blocks ? blocks : 1,
                             .site = *site ? site : NULL,
                             .library = ct_allocating_library(ct_event_text(e, ct_key_stack)),
                             .what = is_handle ? VMM_CALL : ALLOCATED,
                             .vmm_op = is_handle ? CT_VMM_CREATE : CT_VMM_NONE,
                             .from_gap = 1};
    queue_at(u, e->ts, &m);
    if (ct_event_arg(e, ct_key_freed_ns)) { /* a sum whose last block went there */
        uint64_t freed_ns = arg_uint(e, ct_key_freed_ns);
        uint64_t block = is_handle ? handle_block(address) : address;
        queue_at(u, freed_ns, &(struct memory_event){.ptr = block, .ts = freed_ns, .what = FREED});
    }
}

/* The graphs' allocator's memory is one block, made again at each reading
 * of its reserve, at an address no allocation has: memory-growth and oom
 * count it with the allocations, from when it was made. */
#define GRAPHS_BLOCK UINT64_MAX
static const char graphs_site[] = "the CUDA graphs' allocator (memory-allocation nodes)";

static void graphs_held(struct ct_usage *u, const struct memory_event *m)
{
    freed(u, &(struct memory_event){.ptr = GRAPHS_BLOCK, .ts = m->ts});
    if (m->bytes)
        allocated(u, m);
}

void ct_usage_graph_memory(struct ct_usage *u, uint64_t ts, uint64_t bytes)
{
    queue_at(u, ts,
             &(struct memory_event){.ptr = GRAPHS_BLOCK,
                                    .bytes = bytes,
                                    .ts = ts,
                                    .end = ts,
                                    .made = ts,
                                    .blocks = 1,
                                    .site = graphs_site,
                                    .what = GRAPHS});
}

void ct_usage_settle(struct ct_usage *u)
{
    struct memory_event m;
    uint64_t at;
    if (!u->memory_order.count)
        return;
    u->low_points_by_call.first_span_ns = 1; /* a call a span, as long as they fit */
    static void (*const apply[])(struct ct_usage *, const struct memory_event *) = {
        [ALLOCATED] = allocated, [ALLOCATION_FAILED] = allocation_failed,
        [FREED] = freed,         [VMM_CALL] = vmm_call,
        [LEVEL] = level,         [GRAPHS] = graphs_held,
    };
    while (ct_time_order_pop(&u->memory_order, UINT64_MAX, &at, &m))
        apply[m.what](u, &m);
    /* The level holds until the last call: work done on memory made up
     * front is what tells a pool from a leak. */
    note_level(u, u->last_call_end_ns, u->live_bytes);
}

static struct ct_thread_wait *thread_wait(struct ct_usage *u, int64_t tid)
{
    uint64_t *index = ct_u64_map_find(&u->thread_index, (uint64_t)tid + 1);
    if (!index) {
        u->threads = ct_array_grow(u->threads, u->thread_count, sizeof *u->threads);
        u->threads[u->thread_count++] = (struct ct_thread_wait){tid, 0, 0};
        ct_u64_map_put(&u->thread_index, (uint64_t)tid + 1, u->thread_count);
        index = ct_u64_map_find(&u->thread_index, (uint64_t)tid + 1);
    }
    return &u->threads[*index - 1];
}

/* A call that held the host up: counted for the process and for the
 * thread that made it (threads wait in parallel, so a share of the run is
 * only meaningful per thread). */
static void blocking(struct ct_usage *u, int64_t tid, const struct ct_event *e, const char *site,
                     uint64_t bytes)
{
    uint64_t ns = e->end > e->ts ? e->end - e->ts : 0;
    ct_timeline_add_interval(&u->host_blocked, e->ts, e->end);
    u->sync_calls++;
    u->sync_ns += ns;
    ct_site_costs_add(&u->sync_sites, site, ns, bytes);
    struct ct_thread_wait *t = thread_wait(u, tid);
    t->sync_calls++;
    t->sync_ns += ns;
}

/* The shape call_cost.c classifies a slice by. */
static struct ct_call_shape shape_of(int fn, const struct ct_event *e)
{
    struct ct_call_shape shape = {(enum ct_function)fn, CT_COPY_OTHER, 0, 0};
    if (ct_function_family((unsigned)fn) != CT_FAMILY_COPY)
        return shape;
    const char *kind = ct_event_text(e, ct_key_kind);
    shape.direction = strcmp(kind, ct_value_copy_host_to_device) == 0   ? CT_COPY_TO_DEVICE
                      : strcmp(kind, ct_value_copy_device_to_host) == 0 ? CT_COPY_TO_HOST
                                                                        : CT_COPY_OTHER;
    shape.bytes = arg_uint(e, ct_key_bytes);
    shape.host =
        ct_copy_host_address(shape.direction, arg_uint(e, ct_key_ptr), arg_uint(e, ct_key_src));
    return shape;
}

/* What the call cost the host, by the shared rules. */
static void cost(struct ct_usage *u, int64_t tid, int fn, const struct ct_event *e, uint64_t ns,
                 const char *site)
{
    struct ct_call_shape shape = shape_of(fn, e);
    unsigned flags = ct_call_cost(&u->pinned, &shape, (uint64_t)ct_thresholds.small_copy_bytes);
    if (flags & CT_COST_LAUNCH)
        ct_site_costs_add(&u->launch_sites, site, ns, 0);
    if (flags & CT_COST_SMALL) {
        u->small_copies++;
        u->small_copy_bytes += shape.bytes;
        ct_site_costs_add(&u->small_copy_sites, site, ns, shape.bytes);
    }
    if (flags & CT_COST_PAGEABLE) {
        u->pageable_copies++;
        u->pageable_bytes += shape.bytes;
        u->pageable_ns += ns;
        ct_site_costs_add(&u->pageable_sites, site, ns, shape.bytes);
    }
    if (flags & CT_COST_BLOCKS)
        blocking(u, tid, e, site, shape.bytes);
    if (flags & CT_COST_ALLOC_TIME)
        note_alloc_time(u, 1, ns, site);
}

/* A failed cuMemCreate is an allocation that failed, for the oom finding. */
static void vmm_slice(struct ct_usage *u, int fn, const struct ct_event *e, const char *site,
                      int failed)
{
    enum ct_vmm_op op = ct_vmm_op_of((enum ct_function)fn);
    if (op == CT_VMM_CREATE && failed)
        queue_memory(u, ALLOCATION_FAILED, fn, e, site);
    else if (op != CT_VMM_NONE && !failed)
        queue_memory(u, VMM_CALL, fn, e, site);
}

/* A launch or copy (of `bytes`) over [ts, end), by time, in STEP_PART_SPANS spans: a
 * step's launches and copies are counted over its span (model/steps.c),
 * so these are finer than the other timelines, at 64 bytes a span. */
#define STEP_PART_SPANS 4096

static void note_step_part(struct ct_timeline *t, uint64_t ts, uint64_t end, double bytes)
{
    if (!t->span_ns)
        t->capacity = STEP_PART_SPANS;
    ct_timeline_note(t, ts, bytes);
    if (end > ts)
        ct_timeline_add_interval(t, ts, end);
}

void ct_usage_slice(struct ct_usage *u, int64_t tid, int fn, const struct ct_event *e)
{
    uint64_t ns = e->end > e->ts ? e->end - e->ts : 0;
    const char *site = ct_event_text(e, ct_key_site);
    if (!*site)
        site = NULL; /* a call without one */
    int failed = arg_uint(e, ct_key_result) != 0;
    if (!u->first_call_ns || e->ts < u->first_call_ns)
        u->first_call_ns = e->ts;
    if (e->end > u->last_call_end_ns)
        u->last_call_end_ns = e->end;
    ct_timeline_note(&u->calls_by_time, e->ts, 0);
    ct_timeline_add_interval(&u->host_in_cuda, e->ts, e->end);
    cost(u, tid, fn, e, ns, site);
    if (strcmp(ct_event_text(e, ct_key_graph_work), ct_value_graph_work_captured) == 0)
        return; /* its allocation or free is the graph's, made when it runs */
    enum ct_family family = ct_function_family((unsigned)fn);
    if (family == CT_FAMILY_LAUNCH || family == CT_FAMILY_GRAPH)
        note_step_part(&u->launches_by_time, e->ts, e->ts, 0);
    if (family == CT_FAMILY_COPY)
        note_step_part(&u->copies_by_time, e->ts, e->end, (double)arg_uint(e, ct_key_bytes));
    switch (family) {
    case CT_FAMILY_ALLOC_DEVICE:
        queue_memory(u, failed ? ALLOCATION_FAILED : ALLOCATED, fn, e, site);
        break;
    case CT_FAMILY_VMM:
        vmm_slice(u, fn, e, site, failed);
        break;
    case CT_FAMILY_FREE_DEVICE:
        if (!failed)
            queue_memory(u, FREED, fn, e, site);
        break;
    case CT_FAMILY_ALLOC_HOST:
    case CT_FAMILY_HOST_REGISTER:
    case CT_FAMILY_FREE_HOST:
        if (!failed)
            ct_pinned_note(&u->pinned, (enum ct_function)fn, arg_uint(e, ct_key_ptr),
                           arg_uint(e, ct_key_bytes));
        break;
    case CT_FAMILY_HANDLE:
        ct_pool_reserve_slice(&u->pools, fn, e);
        break;
    default:
        break;
    }
}

/* The dropped middle's tallies are those of the slices it held: the
 * totals and the sites' entries get them as if they had been read. */
void ct_usage_gap_instant(struct ct_usage *u, const struct ct_event *e)
{
    uint64_t calls = arg_uint(e, ct_key_calls), ns = arg_uint(e, ct_key_total_ns);
    uint64_t bytes = arg_uint(e, ct_key_bytes);
    u->gap_tallies++;
    if (ct_event_arg(e, ct_key_tid)) {
        struct ct_thread_wait *t = thread_wait(u, ct_event_int(e, ct_key_tid, 0));
        t->sync_calls += calls;
        t->sync_ns += ns;
        return;
    }
    const char *site = ct_event_text(e, ct_key_site);
    struct ct_site_costs *sites;
    switch (arg_uint(e, ct_key_cost)) {
    case CT_COST_BLOCKS:
        u->sync_calls += calls;
        u->sync_ns += ns;
        sites = &u->sync_sites;
        break;
    case CT_COST_PAGEABLE:
        u->pageable_copies += calls;
        u->pageable_bytes += bytes;
        u->pageable_ns += ns;
        sites = &u->pageable_sites;
        break;
    case CT_COST_SMALL:
        u->small_copies += calls;
        u->small_copy_bytes += bytes;
        sites = &u->small_copy_sites;
        break;
    case CT_COST_LAUNCH:
        sites = &u->launch_sites;
        break;
    case CT_COST_ALLOC_TIME: /* one duration bucket's calls of a site */
        note_alloc_time(u, calls, ns, *site ? site : NULL);
        return;
    case CT_COST_STEP_RANGE: /* one duration bucket's ranges of a step-like name */
        if (!calls)
            return;
        ct_site_costs_add_calls(&u->nvtx_ranges, site, calls, ns, 0);
        u->gap_steps = ct_array_grow(u->gap_steps, u->gap_step_count, sizeof *u->gap_steps);
        u->gap_steps[u->gap_step_count++] = (struct ct_slow_call){ns / calls, calls, ns, site};
        return;
    default:
        return;
    }
    ct_site_costs_add_calls(sites, *site ? site : NULL, calls, ns, bytes);
}

/* A bounded trace ends each open range where a chunk ends and begins it
 * again, `continued`, in the next (collector/tracks/nvtx_ranges.c): that
 * part is the same range, whose span is extended; 0 when the part before
 * it is not among the latest spans (it was in a dropped middle). */
static int continue_span(struct ct_usage *u, int64_t tid, const struct ct_event *e)
{
    for (size_t i = u->nvtx_span_count, looked = 0; i-- > 0 && looked < 64; looked++) {
        struct ct_nvtx_span *s = &u->nvtx_spans[i];
        if (s->tid == tid && s->name == e->name && s->span.end == e->ts) {
            s->span.end = e->end > e->ts ? e->end : e->ts;
            return 1;
        }
    }
    return 0;
}

int ct_usage_nvtx_slice(struct ct_usage *u, int64_t tid, const struct ct_event *e)
{
    if (strcmp(ct_event_text(e, ct_key_source), ct_value_source_nvtx) != 0)
        return 0;
    uint64_t ns = e->end > e->ts ? e->end - e->ts : 0;
    if (ct_event_arg(e, ct_key_continued)) {
        ct_site_costs_add_calls(&u->nvtx_ranges, e->name, 0, ns, 0);
        continue_span(u, tid, e);
        return 1;
    }
    ct_site_costs_add(&u->nvtx_ranges, e->name, ns, 0);
    if (u->nvtx_span_count < CT_NVTX_SPANS) {
        u->nvtx_spans = ct_array_reserve(u->nvtx_spans, &u->nvtx_span_capacity,
                                         u->nvtx_span_count + 1, sizeof *u->nvtx_spans);
        u->nvtx_spans[u->nvtx_span_count++] =
            (struct ct_nvtx_span){{e->ts, e->end > e->ts ? e->end : e->ts}, e->name, tid};
    }
    return 1;
}

int ct_usage_nvtx_mark(struct ct_usage *u, int64_t tid, const struct ct_event *e)
{
    if (strcmp(ct_event_text(e, ct_key_source), ct_value_source_nvtx) != 0)
        return 0;
    if (ct_step_marker_length(e->name) && u->step_mark_count < CT_NVTX_SPANS) {
        ct_site_costs_add(&u->step_mark_names, e->name, 0, 0);
        u->step_marks = ct_array_grow(u->step_marks, u->step_mark_count, sizeof *u->step_marks);
        u->step_marks[u->step_mark_count++] = (struct ct_nvtx_span){{e->ts, e->ts}, e->name, tid};
    }
    return 1;
}

uint64_t *ct_usage_nvtx_gpu_busy(const struct ct_usage *u)
{
    if (!ct_gpu_seen(&u->gpu) || !u->nvtx_span_count)
        return NULL;
    struct ct_gpu_interval *spans = malloc(u->nvtx_span_count * sizeof *spans);
    uint64_t *busy = malloc(u->nvtx_span_count * sizeof *busy);
    if (!spans || !busy)
        abort();
    for (size_t i = 0; i < u->nvtx_span_count; i++)
        spans[i] = u->nvtx_spans[i].span;
    ct_gpu_busy_within(&u->gpu, spans, u->nvtx_span_count, busy);
    free(spans);
    return busy;
}

uint64_t ct_usage_nvtx_gpu_busy_of(const struct ct_usage *u, const uint64_t *busy, const char *name)
{
    uint64_t total = 0;
    for (size_t i = 0; i < u->nvtx_span_count; i++)
        if (u->nvtx_spans[i].name == name)
            total += busy[i];
    return total;
}

void ct_usage_free(struct ct_usage *u)
{
    struct ct_site_costs *tables[] = {&u->launch_sites,     &u->sync_sites,  &u->pageable_sites,
                                      &u->small_copy_sites, &u->nvtx_ranges, &u->step_mark_names};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        ct_site_costs_free(tables[i]);
    ct_pinned_free(&u->pinned);
    ct_u64_map_free(&u->thread_index);
    ct_gpu_free(&u->gpu);
    free(u->nvtx_spans);
    free(u->threads);
    ct_u64_map_free(&u->live);
    ct_vmm_ledger_free(&u->vmm);
    ct_pool_reserve_free(&u->pools);
    ct_time_order_free(&u->memory_order);
    free(u->blocks);
    free(u->alloc_times);
    free(u->gap_steps);
    free(u->step_marks);
    ct_timeline_free(&u->low_points);
    ct_timeline_free(&u->low_points_by_call);
    ct_timeline_free(&u->launches_by_time);
    ct_timeline_free(&u->copies_by_time);
    ct_timeline_free(&u->calls_by_time);
    ct_timeline_free(&u->host_in_cuda);
    ct_timeline_free(&u->host_blocked);
    memset(u, 0, sizeof *u);
}

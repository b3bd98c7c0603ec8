/*
 * Live device bytes follow successful allocations and frees of device and
 * managed memory; pinned host bytes likewise. A free of a pointer allocated
 * before tracing started is ignored rather than guessed at, so the counters
 * never go below what the trace saw allocated. The rings are drained one
 * after another, so an address one thread freed and another got back can
 * arrive allocation first; the events are put back in time order
 * (common/time_order.c) and applied only once no earlier one can still
 * come: a free counts when it begins and an allocation when it returns,
 * the one order that holds whatever the threads did (the free released the
 * address before the allocation got it, inside both calls). What comes later
 * than that (a thread's first call, made before it had a ring, that lasted
 * longer than the slack) is applied at once and counted as late. Physical
 * memory made through the driver's virtual-memory API (cuMemCreate and
 * cuMemMap, as PyTorch's expandable segments grow) is a counter of its own,
 * followed by handle (common/vmm_ledger.c) in the same time order: a
 * release or an unmap counts when it begins, a create or a map when it
 * returns.
 */
#include "collector/tracks/memory_counters.h"

#include "cudatrace/functions.h"

/* Events waiting at most: a bound on the collector's memory. */
#define PENDING_MAX (1u << 18)

struct memory_event {
    uint64_t ptr, bytes, handle;
    struct ct_call_site site;
    uint32_t chunk; /* of the call's slice: a bounded trace's gap asks (gap_memory.c) */
    uint8_t family, vmm_op;
};

void ct_memory_counters_start(struct ct_memory_counters *m, struct ct_process *process,
                              struct ct_gap_memory *gap)
{
    *m = (struct ct_memory_counters){.process = process, .gap = gap};
    m->device.track = CT_TRACK_DEVICE_BYTES;
    m->pinned.track = CT_TRACK_PINNED_BYTES;
    ct_time_order_init(&m->pending, sizeof(struct memory_event));
}

static void raise_peak(uint64_t *peak, uint64_t bytes)
{
    if (bytes > *peak)
        *peak = bytes;
}

static void note_peaks(struct ct_memory_counters *m)
{
    raise_peak(&m->peaks.allocated, m->device.bytes);
    raise_peak(&m->peaks.vmm, m->vmm.bytes);
    raise_peak(&m->peaks.device, m->device.bytes + m->vmm.bytes);
}

struct vmm_call {
    struct ct_gap_memory *gap;
    uint64_t ts;
    uint32_t chunk;
};

static void handle_gone(uint64_t handle, uint64_t bytes, void *ctx)
{
    (void)bytes;
    const struct vmm_call *call = ctx;
    ct_gap_memory_gone(call->gap, handle, 1, call->ts, call->chunk);
}

static void apply_vmm(struct ct_memory_counters *m, const struct memory_event *e, uint64_t ts)
{
    uint64_t before = m->vmm.bytes;
    struct vmm_call call = {m->gap, ts, e->chunk};
    ct_vmm_apply(&m->vmm, e->vmm_op, e->ptr, e->bytes, e->handle, handle_gone, &call);
    if (e->vmm_op == CT_VMM_CREATE)
        ct_gap_memory_made(m->gap, e->handle, 1, e->bytes, ts, e->site, e->chunk);
    if (m->vmm.bytes != before) {
        ct_process_counter(m->process, CT_TRACK_VMM_BYTES, ts, (int64_t)m->vmm.bytes);
        ct_gap_memory_level(m->gap, m->device.bytes + m->vmm.bytes, ts, e->chunk);
    }
    note_peaks(m);
}

static void apply(struct ct_memory_counters *m, const struct memory_event *e, uint64_t ts)
{
    if (e->family == CT_FAMILY_VMM) {
        apply_vmm(m, e, ts);
        return;
    }
    struct ct_memory_live *live =
        e->family == CT_FAMILY_ALLOC_DEVICE || e->family == CT_FAMILY_FREE_DEVICE ? &m->device
                                                                                  : &m->pinned;
    if (e->family == CT_FAMILY_ALLOC_DEVICE || e->family == CT_FAMILY_ALLOC_HOST) {
        ct_u64_map_put(&live->allocs, e->ptr, e->bytes);
        live->bytes += e->bytes;
    } else {
        uint64_t bytes = 0;
        ct_u64_map_remove(&live->allocs, e->ptr, &bytes);
        live->bytes -= bytes;
    }
    ct_process_counter(m->process, live->track, ts, (int64_t)live->bytes);
    if (live == &m->device) {
        if (e->family == CT_FAMILY_ALLOC_DEVICE)
            ct_gap_memory_made(m->gap, e->ptr, 0, e->bytes, ts, e->site, e->chunk);
        else
            ct_gap_memory_gone(m->gap, e->ptr, 0, ts, e->chunk);
        ct_gap_memory_level(m->gap, m->device.bytes + m->vmm.bytes, ts, e->chunk);
    }
    note_peaks(m);
}

/* Applies the earliest event if it is not after `up_to`; 0 when there is none. */
static int apply_next(struct ct_memory_counters *m, uint64_t up_to)
{
    struct memory_event e;
    uint64_t at;
    if (!ct_time_order_pop(&m->pending, up_to, &at, &e))
        return 0;
    apply(m, &e, at);
    if (at > m->applied_up_to)
        m->applied_up_to = at;
    return 1;
}

static int is_memory(uint8_t family, enum ct_vmm_op op)
{
    return family == CT_FAMILY_ALLOC_DEVICE || family == CT_FAMILY_FREE_DEVICE ||
           family == CT_FAMILY_ALLOC_HOST || family == CT_FAMILY_FREE_HOST || op != CT_VMM_NONE;
}

void ct_memory_counters_note(struct ct_memory_counters *m, uint8_t family,
                             const struct ct_record *r, uint64_t begin_ns, uint64_t end_ns,
                             struct ct_call_site site, uint32_t chunk)
{
    enum ct_vmm_op op = family == CT_FAMILY_VMM ? ct_vmm_op_of(r->func) : CT_VMM_NONE;
    if (r->result != 0 || !is_memory(family, op))
        return;
    struct memory_event e = {r->arg[0], r->arg[1], r->arg[2], site, chunk, family, (uint8_t)op};
    uint64_t at = ct_function_gives_memory_back(r->func) ? begin_ns : end_ns;
    if (at < m->applied_up_to) {
        m->late++;
        apply(m, &e, m->applied_up_to); /* the track's values stay in time order */
        return;
    }
    ct_time_order_push(&m->pending, at, &e);
    while (m->pending.count > PENDING_MAX && apply_next(m, UINT64_MAX)) /* the earliest goes now */
        ;
}

void ct_memory_counters_settle(struct ct_memory_counters *m, uint64_t up_to_ns)
{
    while (apply_next(m, up_to_ns))
        ;
    if (up_to_ns > m->applied_up_to)
        m->applied_up_to = up_to_ns;
}

uint64_t ct_memory_counters_late(const struct ct_memory_counters *m)
{
    return m->late;
}

struct ct_memory_peaks ct_memory_counters_peaks(const struct ct_memory_counters *m)
{
    return m->peaks;
}

uint64_t ct_memory_counters_live_device(const struct ct_memory_counters *m)
{
    return m->device.bytes;
}

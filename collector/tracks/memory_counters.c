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

#include "collector/perfetto/process_tracks.h"
#include "collector/tracks/gap_memory.h"
#include "common/time_order.h"
#include "common/u64_map.h"
#include "common/vmm_ledger.h"
#include "cudatrace/functions.h"

/* Events waiting at most: a bound on the collector's memory. */
#define PENDING_MAX (1u << 18)

struct live_memory {
    struct ct_u64_map allocs; /* pointer -> bytes */
    uint64_t bytes;
    enum ct_process_track track;
};

struct memory_event {
    uint64_t ptr, bytes, handle;
    struct ct_call_site site;
    uint32_t chunk; /* of the call's slice: a bounded trace's gap asks (gap_memory.c) */
    uint8_t family, vmm_op;
};

static struct live_memory device = {.track = CT_TRACK_DEVICE_BYTES};
static struct live_memory pinned = {.track = CT_TRACK_PINNED_BYTES};
static struct ct_vmm_ledger vmm;
static struct ct_time_order pending;
static int pending_ready;
static uint64_t applied_up_to, late;
static struct ct_memory_peaks peaks;

static void raise_peak(uint64_t *peak, uint64_t bytes)
{
    if (bytes > *peak)
        *peak = bytes;
}

static void note_peaks(void)
{
    raise_peak(&peaks.allocated, device.bytes);
    raise_peak(&peaks.vmm, vmm.bytes);
    raise_peak(&peaks.device, device.bytes + vmm.bytes);
}

struct vmm_call {
    uint64_t ts;
    uint32_t chunk;
};

static void handle_gone(uint64_t handle, uint64_t bytes, void *ctx)
{
    (void)bytes;
    const struct vmm_call *call = ctx;
    ct_gap_memory_gone(handle, 1, call->ts, call->chunk);
}

static void apply_vmm(const struct memory_event *e, uint64_t ts)
{
    uint64_t before = vmm.bytes;
    struct vmm_call call = {ts, e->chunk};
    ct_vmm_apply(&vmm, e->vmm_op, e->ptr, e->bytes, e->handle, handle_gone, &call);
    if (e->vmm_op == CT_VMM_CREATE)
        ct_gap_memory_made(e->handle, 1, e->bytes, ts, e->site, e->chunk);
    if (vmm.bytes != before) {
        ct_process_counter(CT_TRACK_VMM_BYTES, ts, (int64_t)vmm.bytes);
        ct_gap_memory_level(device.bytes + vmm.bytes, ts, e->chunk);
    }
    note_peaks();
}

static void apply(const struct memory_event *e, uint64_t ts)
{
    if (e->family == CT_FAMILY_VMM) {
        apply_vmm(e, ts);
        return;
    }
    struct live_memory *m =
        e->family == CT_FAMILY_ALLOC_DEVICE || e->family == CT_FAMILY_FREE_DEVICE ? &device
                                                                                  : &pinned;
    if (e->family == CT_FAMILY_ALLOC_DEVICE || e->family == CT_FAMILY_ALLOC_HOST) {
        ct_u64_map_put(&m->allocs, e->ptr, e->bytes);
        m->bytes += e->bytes;
    } else {
        uint64_t bytes = 0;
        ct_u64_map_remove(&m->allocs, e->ptr, &bytes);
        m->bytes -= bytes;
    }
    ct_process_counter(m->track, ts, (int64_t)m->bytes);
    if (m == &device) {
        if (e->family == CT_FAMILY_ALLOC_DEVICE)
            ct_gap_memory_made(e->ptr, 0, e->bytes, ts, e->site, e->chunk);
        else
            ct_gap_memory_gone(e->ptr, 0, ts, e->chunk);
        ct_gap_memory_level(device.bytes + vmm.bytes, ts, e->chunk);
    }
    note_peaks();
}

/* Applies the earliest event if it is not after `up_to`; 0 when there is none. */
static int apply_next(uint64_t up_to)
{
    struct memory_event e;
    uint64_t at;
    if (!ct_time_order_pop(&pending, up_to, &at, &e))
        return 0;
    apply(&e, at);
    if (at > applied_up_to)
        applied_up_to = at;
    return 1;
}

static int is_memory(uint8_t family, enum ct_vmm_op op)
{
    return family == CT_FAMILY_ALLOC_DEVICE || family == CT_FAMILY_FREE_DEVICE ||
           family == CT_FAMILY_ALLOC_HOST || family == CT_FAMILY_FREE_HOST || op != CT_VMM_NONE;
}

void ct_memory_counters_note(uint8_t family, const struct ct_record *r, uint64_t begin_ns,
                             uint64_t end_ns, struct ct_call_site site, uint32_t chunk)
{
    enum ct_vmm_op op = family == CT_FAMILY_VMM ? ct_vmm_op_of(r->func) : CT_VMM_NONE;
    if (r->result != 0 || !is_memory(family, op))
        return;
    if (!pending_ready) {
        ct_time_order_init(&pending, sizeof(struct memory_event));
        pending_ready = 1;
    }
    struct memory_event e = {r->arg[0], r->arg[1], r->arg[2], site, chunk, family, (uint8_t)op};
    uint64_t at = ct_function_gives_memory_back(r->func) ? begin_ns : end_ns;
    if (at < applied_up_to) {
        late++;
        apply(&e, applied_up_to); /* the track's values stay in time order */
        return;
    }
    ct_time_order_push(&pending, at, &e);
    while (pending.count > PENDING_MAX && apply_next(UINT64_MAX)) /* the earliest goes now */
        ;
}

void ct_memory_counters_settle(uint64_t up_to_ns)
{
    while (pending_ready && apply_next(up_to_ns))
        ;
    if (up_to_ns > applied_up_to)
        applied_up_to = up_to_ns;
}

uint64_t ct_memory_counters_late(void)
{
    return late;
}

struct ct_memory_peaks ct_memory_counters_peaks(void)
{
    return peaks;
}

uint64_t ct_memory_counters_live_device(void)
{
    return device.bytes;
}

/*
 * Live device bytes follow successful allocations and frees of device and
 * managed memory; pinned host bytes likewise. A free of a pointer allocated
 * before tracing started is ignored rather than guessed at, so the counters
 * never go below what the trace saw allocated. Each change writes a value.
 */
#include "collector/tracks/memory_counters.h"

#include "cudatrace/functions.h"
#include "collector/perfetto/process_tracks.h"
#include "common/u64_map.h"

struct live_memory {
    struct ct_u64_map allocs; /* pointer -> bytes */
    uint64_t bytes;
    enum ct_process_track track;
};

static struct live_memory device = {.track = CT_TRACK_DEVICE_BYTES};
static struct live_memory pinned = {.track = CT_TRACK_PINNED_BYTES};

static void allocated(struct live_memory *m, uint64_t ptr, uint64_t bytes, uint64_t ts)
{
    ct_u64_map_put(&m->allocs, ptr, bytes);
    m->bytes += bytes;
    ct_process_counter(m->track, ts, (int64_t)m->bytes);
}

static void freed(struct live_memory *m, uint64_t ptr, uint64_t ts)
{
    uint64_t bytes = 0;
    ct_u64_map_remove(&m->allocs, ptr, &bytes);
    m->bytes -= bytes;
    ct_process_counter(m->track, ts, (int64_t)m->bytes);
}

void ct_memory_counters_note(uint8_t family, const struct ct_record *r, uint64_t ts)
{
    if (r->result != 0)
        return;
    switch (family) {
    case CT_FAMILY_ALLOC_DEVICE:
        allocated(&device, r->arg[0], r->arg[1], ts);
        break;
    case CT_FAMILY_FREE_DEVICE:
        freed(&device, r->arg[0], ts);
        break;
    case CT_FAMILY_ALLOC_HOST:
        allocated(&pinned, r->arg[0], r->arg[1], ts);
        break;
    case CT_FAMILY_FREE_HOST:
        freed(&pinned, r->arg[0], ts);
        break;
    default:
        break;
    }
}

/*
 * Live device and pinned host bytes, followed from the allocation and free
 * records, put back in time order, and written as counter values
 * (memory_counters.c, struct ct_memory_counters, which the builder holds).
 */
#ifndef CT_COLLECTOR_MEMORY_COUNTERS_H
#define CT_COLLECTOR_MEMORY_COUNTERS_H

#include <stdint.h>

#include "collector/perfetto/process_tracks.h"
#include "collector/tracks/call_sites.h"
#include "collector/tracks/gap_memory.h"
#include "common/time_order.h"
#include "common/u64_map.h"
#include "common/vmm_ledger.h"
#include "cudatrace/record.h"

/* The highest live device bytes so far: from the allocation calls, from
 * the virtual-memory API, and of their sum, as the counters had them. A
 * bounded trace's gap carries them, so that a peak in the dropped middle
 * is still the report's. */
struct ct_memory_peaks {
    uint64_t allocated, vmm, device;
};

struct ct_memory_live {
    struct ct_u64_map allocs; /* pointer -> bytes */
    uint64_t bytes;
    enum ct_process_track track;
};

struct ct_memory_counters {
    struct ct_process *process; /* on whose counter tracks */
    struct ct_gap_memory *gap;  /* told of the blocks and levels, for a bounded trace's gap */
    struct ct_memory_live device, pinned;
    struct ct_vmm_ledger vmm;
    struct ct_time_order pending;
    uint64_t applied_up_to, late;
    struct ct_memory_peaks peaks;
};

/* The counters of `process`, none allocated yet, which tell `gap` what
 * they apply. */
void ct_memory_counters_start(struct ct_memory_counters *m, struct ct_process *process,
                              struct ct_gap_memory *gap);
/* Takes one call of `family` (enum ct_family) that ran from `begin_ns` to
 * `end_ns` from `site`, whose slice is in `chunk`; it counts once
 * ct_memory_counters_settle has passed its time. */
void ct_memory_counters_note(struct ct_memory_counters *m, uint8_t family,
                             const struct ct_record *r, uint64_t begin_ns, uint64_t end_ns,
                             struct ct_call_site site, uint32_t chunk);
/* Applies, in time order, every event up to `up_to_ns`: the caller knows no
 * earlier one can still come (UINT64_MAX at the end of the trace). */
void ct_memory_counters_settle(struct ct_memory_counters *m, uint64_t up_to_ns);
/* Events that came after their time had been settled, applied as they came. */
uint64_t ct_memory_counters_late(const struct ct_memory_counters *m);
/* Live device bytes as applied so far (for `cudatrace ctl PID status`). */
uint64_t ct_memory_counters_live_device(const struct ct_memory_counters *m);
struct ct_memory_peaks ct_memory_counters_peaks(const struct ct_memory_counters *m);

#endif

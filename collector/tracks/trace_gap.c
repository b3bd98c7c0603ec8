/*
 * What a bounded trace says where it dropped its middle: a slice on a
 * "cudatrace trace gap" track from the start of the first dropped chunk to
 * that of the first kept one, with the bytes and chunks dropped and the
 * memory peaks so far (a peak in the middle is still the report's), and
 * the totals of the threads whose end, and so whose totals instants, fell
 * in a dropped chunk, summed: the report's per-function totals stay those
 * of the whole run; and what the usage findings read of the dropped chunks
 * (usage_tally.c), so that theirs do too. Totals are kept per chunk until
 * that chunk is kept or gone; the head's are never dropped.
 */
#include "collector/tracks/trace_gap.h"

#include <stdlib.h>
#include <string.h>

#include "collector/perfetto/process_tracks.h"
#include "collector/tracks/call_slices.h"
#include "collector/tracks/gap_memory.h"
#include "collector/tracks/memory_counters.h"
#include "collector/tracks/usage_tally.h"
#include "cudatrace/trace_names.h"

#define SLOTS 64 /* more than the chunks a file holds at once */

struct chunk_totals {
    uint32_t chunk; /* 0: the slot is free */
    struct ct_call_stats stats[CT_FN_COUNT];
};

static struct chunk_totals *slots;
static struct ct_call_stats dropped[CT_FN_COUNT];

void ct_trace_gap_thread_totals(const struct ct_call_stats *stats)
{
    uint32_t chunk = ct_writer_chunk();
    if (chunk == 0)
        return;
    if (!slots && !(slots = calloc(SLOTS, sizeof *slots)))
        abort();
    struct chunk_totals *slot = &slots[chunk % SLOTS];
    if (slot->chunk != chunk) {
        memset(slot, 0, sizeof *slot);
        slot->chunk = chunk;
    }
    ct_call_stats_add(slot->stats, stats);
}

/* Moves the totals of the chunks before `first_kept` into `dropped`. */
static void fold_dropped(uint32_t first_kept)
{
    for (int i = 0; slots && i < SLOTS; i++)
        if (slots[i].chunk && slots[i].chunk < first_kept) {
            ct_call_stats_add(dropped, slots[i].stats);
            slots[i].chunk = 0;
        }
}

static void write_gap(struct ct_sequence *seq, const struct ct_gap *gap)
{
    fold_dropped(gap->first_kept);
    struct ct_memory_peaks peaks = ct_memory_counters_peaks();
    ct_write_named_track(seq, ct_process_track(CT_TRACK_GAP), ct_process.uuid, ct_track_trace_gap);
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_dropped_bytes, gap->bytes),
        CT_UINT_ARG(ct_key_dropped_chunks, gap->chunks),
        CT_UINT_ARG(ct_key_peak_device_bytes, peaks.device),
        CT_UINT_ARG(ct_key_peak_allocated_bytes, peaks.allocated),
        CT_UINT_ARG(ct_key_peak_vmm_bytes, peaks.vmm),
    };
    ct_write_slice(seq, 0, gap->from_ns, gap->to_ns, ct_strings_intern_cstr(ct_event_trace_gap),
                   args, sizeof args / sizeof args[0]);
    ct_call_totals(seq, dropped, gap->to_ns);
    ct_usage_tally_write_dropped(seq, gap->first_kept, gap->to_ns);
    ct_gap_memory_write(seq, gap->first_kept, gap->to_ns);
}

void ct_trace_gap_start(void)
{
    ct_writer_on_gap(ct_process_track(CT_TRACK_GAP), write_gap);
}

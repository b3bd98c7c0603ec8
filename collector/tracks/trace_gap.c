/*
 * What a bounded trace says where it dropped its middle: a slice on a
 * "cudatrace trace gap" track from the start of the first dropped chunk to
 * that of the first kept one, with the bytes and chunks dropped and the
 * memory peaks so far (a peak in the middle is still the report's), and
 * the totals of the threads whose end, and so whose totals instants, fell
 * in a dropped chunk, summed: the report's per-function totals stay those
 * of the whole run; and what the usage findings read of the dropped chunks
 * (usage_tally.c), so that theirs do too, and the GPU's busy blocks
 * (gap_gpu.c), so that gpu-idle's are. Totals are kept per chunk until
 * that chunk is kept or gone (chunk_keeper.c); the head's are never
 * dropped. The gap's packets have a buffer of their own (perfetto/
 * writer.c); should a part of them not fit, a "cudatrace.gap_cut" instant
 * says which and how much, in the room the buffer keeps back for it.
 */
#include "collector/tracks/trace_gap.h"

#include "collector/perfetto/process_tracks.h"
#include "collector/tracks/call_slices.h"
#include "collector/tracks/chunk_keeper.h"
#include "collector/tracks/gap_gpu.h"
#include "collector/tracks/gap_memory.h"
#include "collector/tracks/memory_counters.h"
#include "collector/tracks/usage_tally.h"
#include "cudatrace/trace_names.h"

struct chunk_totals {
    struct ct_call_stats stats[CT_FN_COUNT];
};

void ct_trace_gap_thread_totals(struct ct_trace_gap *g, const struct ct_call_stats *stats,
                                uint32_t chunk)
{
    if (chunk == 0)
        return;
    struct chunk_totals *totals = ct_chunk_keeper_of(&g->chunks, chunk);
    ct_call_stats_add(totals->stats, stats);
}

static void add_to_dropped(void *figures, void *into)
{
    ct_call_stats_add(into, ((struct chunk_totals *)figures)->stats);
}

#define PARTS 4 /* what the gap carries: totals, GPU work, usage tallies, live memory */

/* One "cudatrace.gap_cut" instant for each part of which some packets had
 * no room, from the cut counts before and after each (cut[part] and
 * cut[part + 1]): the report then says what the gap did not carry. */
static void write_cuts(struct ct_sequence *seq, const struct ct_writer_cut *cut, uint64_t ts)
{
    static const char *const part_names[PARTS] = {ct_value_gap_part_totals, ct_value_gap_part_gpu,
                                                  ct_value_gap_part_usage,
                                                  ct_value_gap_part_live_memory};
    ct_writer_aside_release_room(seq->writer);
    for (int part = 0; part < PARTS; part++) {
        if (cut[part + 1].packets == cut[part].packets)
            continue;
        struct ct_arg args[] = {
            {ct_strings_intern_cstr(ct_key_part), CT_ARG_STRING,
             ct_strings_intern_cstr(part_names[part])},
            CT_UINT_ARG(ct_key_packets, cut[part + 1].packets - cut[part].packets),
            CT_UINT_ARG(ct_key_bytes, cut[part + 1].bytes - cut[part].bytes),
        };
        ct_write_instant(seq, 0, ts, ct_strings_intern_cstr(ct_event_gap_cut), args,
                         sizeof args / sizeof args[0]);
    }
}

static void write_gap(struct ct_sequence *seq, const struct ct_gap *gap, void *ctx)
{
    struct ct_trace_gap *g = ctx;
    ct_chunk_keeper_fold(&g->chunks, gap->first_kept, add_to_dropped, g->dropped);
    struct ct_memory_peaks peaks = ct_memory_counters_peaks(g->memory);
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
    struct ct_writer_cut cut[PARTS + 1];
    cut[0] = ct_writer_aside_cut(seq->writer);
    ct_call_totals(seq, g->dropped, gap->to_ns);
    cut[1] = ct_writer_aside_cut(seq->writer);
    ct_gap_gpu_write(g->gpu, seq, gap->first_kept, gap->to_ns);
    cut[2] = ct_writer_aside_cut(seq->writer);
    ct_usage_tally_write_dropped(g->usage, seq, gap->first_kept, gap->to_ns);
    cut[3] = ct_writer_aside_cut(seq->writer);
    ct_gap_memory_write(g->live_memory, seq, gap->first_kept, gap->to_ns);
    cut[4] = ct_writer_aside_cut(seq->writer);
    write_cuts(seq, cut, gap->to_ns);
}

void ct_trace_gap_start(struct ct_trace_gap *g, struct ct_writer *w,
                        const struct ct_memory_counters *memory, struct ct_gap_memory *live_memory,
                        struct ct_gap_gpu *gpu, struct ct_usage_tally *usage)
{
    *g = (struct ct_trace_gap){.memory = memory,
                               .live_memory = live_memory,
                               .gpu = gpu,
                               .usage = usage,
                               .chunks = CT_CHUNK_KEEPER(struct chunk_totals, NULL)};
    ct_writer_on_gap(w, ct_process_track(CT_TRACK_GAP), write_gap, g);
}

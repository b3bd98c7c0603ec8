/*
 * An NVTX push begins a slice on the thread's track and its pop ends it;
 * CUDA calls made in between nest inside, since a thread's records arrive
 * in the order it made them. A mark is an instant. Each ring remembers the
 * name sent for its latest push or mark and how deep its ranges are open,
 * so that a thread or process ending inside a range still leaves every
 * slice closed, and the names and begins of the ranges open, so that a
 * bounded trace's next chunk can begin them again (marked `continued`) and
 * a range whose name says step is tallied whole as it ends, for a dropped
 * middle's steps (usage_tally.c).
 */
#include "collector/tracks/nvtx_ranges.h"

#include <stdlib.h>

#include "common/step_names.h"
#include "common/string_table.h"
#include "cudatrace/trace_names.h"

#define NAMES_KEPT 32 /* deeper ranges begin again unnamed */

struct ct_nvtx_ring {
    uint64_t name_key;
    uint32_t name;
    uint32_t open;
    uint32_t open_names[NAMES_KEPT];
    uint64_t open_begins[NAMES_KEPT];
};

static int is_step(struct ct_nvtx_ranges *n, uint32_t name)
{
    uint64_t *known = ct_u64_map_find(&n->says_step, (uint64_t)name + 1);
    if (known)
        return *known == 2;
    int step = ct_step_marker_length(ct_strings_get(name)) > 0;
    ct_u64_map_put(&n->says_step, (uint64_t)name + 1, 1 + (uint64_t)step);
    return step;
}

/* The range of `ring` ending now on `seq`, if it says step: its time into
 * the tally of the chunk its end is in. */
static void tally_step(struct ct_nvtx_ranges *n, const struct ct_nvtx_ring *ring,
                       const struct ct_sequence *seq, uint64_t ts_ns)
{
    uint32_t depth = ring->open - 1;
    if (depth < NAMES_KEPT && is_step(n, ring->open_names[depth]) &&
        ts_ns >= ring->open_begins[depth])
        ct_usage_tally_step_range(n->usage, ring->open_names[depth],
                                  ts_ns - ring->open_begins[depth], ct_writer_chunk(seq->writer));
}

void ct_nvtx_start(struct ct_nvtx_ranges *n, uint32_t rings, struct ct_usage_tally *usage)
{
    *n = (struct ct_nvtx_ranges){.usage = usage};
    n->rings = calloc(rings, sizeof *n->rings);
    if (!n->rings)
        abort();
    n->category = ct_strings_intern_cstr(ct_value_source_nvtx);
    n->continued = ct_strings_intern_cstr(ct_key_continued);
}

void ct_nvtx_name(struct ct_nvtx_ranges *n, uint32_t index, uint64_t key, uint32_t name)
{
    n->rings[index].name_key = key;
    n->rings[index].name = name;
}

void ct_nvtx_record(struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                    const struct ct_record *r, uint64_t ts_ns)
{
    struct ct_nvtx_ring *ring = &n->rings[index];
    uint32_t name =
        ring->name_key == r->begin ? ring->name : ct_strings_intern_cstr(ct_event_unnamed_range);
    struct ct_arg source = {ct_strings_intern_cstr(ct_key_source), CT_ARG_STRING, n->category};
    switch (r->func) {
    case CT_NVTX_PUSH:
        ct_write_slice_begin(seq, 0, ts_ns, name, &source, 1);
        if (ring->open < NAMES_KEPT) {
            ring->open_names[ring->open] = name;
            ring->open_begins[ring->open] = ts_ns;
        }
        ring->open++;
        break;
    case CT_NVTX_POP:
        if (ring->open) {
            ct_write_slice_end(seq, 0, ts_ns);
            tally_step(n, ring, seq, ts_ns);
            ring->open--;
        }
        break;
    case CT_NVTX_MARK:
        ct_write_instant(seq, 0, ts_ns, name, &source, 1);
        break;
    default:
        break;
    }
}

void ct_nvtx_close(struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                   uint64_t end_ns)
{
    for (; n->rings[index].open; n->rings[index].open--)
        ct_write_slice_end(seq, 0, end_ns);
    n->rings[index].name_key = 0;
}

void ct_nvtx_suspend(const struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                     uint64_t ts_ns)
{
    for (uint32_t i = 0; i < n->rings[index].open; i++)
        ct_write_slice_end(seq, 0, ts_ns);
}

void ct_nvtx_resume(const struct ct_nvtx_ranges *n, uint32_t index, struct ct_sequence *seq,
                    uint64_t ts_ns)
{
    struct ct_arg args[] = {{ct_strings_intern_cstr(ct_key_source), CT_ARG_STRING, n->category},
                            {n->continued, CT_ARG_UINT, 1}};
    const struct ct_nvtx_ring *ring = &n->rings[index];
    for (uint32_t i = 0; i < ring->open; i++) {
        uint32_t name =
            i < NAMES_KEPT ? ring->open_names[i] : ct_strings_intern_cstr(ct_event_unnamed_range);
        ct_write_slice_begin(seq, 0, ts_ns, name, args, 2);
    }
}

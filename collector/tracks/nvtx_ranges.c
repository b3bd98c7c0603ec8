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

#include "collector/tracks/usage_tally.h"
#include "common/step_names.h"
#include "common/string_table.h"
#include "common/u64_map.h"
#include "cudatrace/trace_names.h"

#define NAMES_KEPT 32 /* deeper ranges begin again unnamed */

struct ring_nvtx {
    uint64_t name_key;
    uint32_t name;
    uint32_t open;
    uint32_t open_names[NAMES_KEPT];
    uint64_t open_begins[NAMES_KEPT];
};

static struct ring_nvtx *rings;
static uint32_t nvtx_category, continued_key;
static struct ct_u64_map says_step; /* name id + 1 -> 2 when it says step, 1 when not */

static int is_step(uint32_t name)
{
    uint64_t *known = ct_u64_map_find(&says_step, (uint64_t)name + 1);
    if (known)
        return *known == 2;
    int step = ct_step_marker_length(ct_strings_get(name)) > 0;
    ct_u64_map_put(&says_step, (uint64_t)name + 1, 1 + (uint64_t)step);
    return step;
}

/* The range ending now on `seq`, if it says step: its time into the tally
 * of the chunk its end is in. */
static void tally_step(const struct ring_nvtx *n, const struct ct_sequence *seq, uint64_t ts_ns)
{
    uint32_t depth = n->open - 1;
    if (depth < NAMES_KEPT && is_step(n->open_names[depth]) && ts_ns >= n->open_begins[depth])
        ct_usage_tally_step_range(n->open_names[depth], ts_ns - n->open_begins[depth],
                                  ct_writer_chunk(seq->writer));
}

void ct_nvtx_start(uint32_t count)
{
    rings = calloc(count, sizeof *rings);
    if (!rings)
        abort();
    nvtx_category = ct_strings_intern_cstr(ct_value_source_nvtx);
    continued_key = ct_strings_intern_cstr(ct_key_continued);
}

void ct_nvtx_name(uint32_t index, uint64_t key, uint32_t name)
{
    rings[index].name_key = key;
    rings[index].name = name;
}

void ct_nvtx_record(uint32_t index, struct ct_sequence *seq, const struct ct_record *r,
                    uint64_t ts_ns)
{
    struct ring_nvtx *n = &rings[index];
    uint32_t name =
        n->name_key == r->begin ? n->name : ct_strings_intern_cstr(ct_event_unnamed_range);
    struct ct_arg source = {ct_strings_intern_cstr(ct_key_source), CT_ARG_STRING, nvtx_category};
    switch (r->func) {
    case CT_NVTX_PUSH:
        ct_write_slice_begin(seq, 0, ts_ns, name, &source, 1);
        if (n->open < NAMES_KEPT) {
            n->open_names[n->open] = name;
            n->open_begins[n->open] = ts_ns;
        }
        n->open++;
        break;
    case CT_NVTX_POP:
        if (n->open) {
            ct_write_slice_end(seq, 0, ts_ns);
            tally_step(n, seq, ts_ns);
            n->open--;
        }
        break;
    case CT_NVTX_MARK:
        ct_write_instant(seq, 0, ts_ns, name, &source, 1);
        break;
    default:
        break;
    }
}

void ct_nvtx_close(uint32_t index, struct ct_sequence *seq, uint64_t end_ns)
{
    for (; rings[index].open; rings[index].open--)
        ct_write_slice_end(seq, 0, end_ns);
    rings[index].name_key = 0;
}

void ct_nvtx_suspend(uint32_t index, struct ct_sequence *seq, uint64_t ts_ns)
{
    for (uint32_t i = 0; i < rings[index].open; i++)
        ct_write_slice_end(seq, 0, ts_ns);
}

void ct_nvtx_resume(uint32_t index, struct ct_sequence *seq, uint64_t ts_ns)
{
    struct ct_arg args[] = {{ct_strings_intern_cstr(ct_key_source), CT_ARG_STRING, nvtx_category},
                            {continued_key, CT_ARG_UINT, 1}};
    const struct ring_nvtx *n = &rings[index];
    for (uint32_t i = 0; i < n->open; i++) {
        uint32_t name =
            i < NAMES_KEPT ? n->open_names[i] : ct_strings_intern_cstr(ct_event_unnamed_range);
        ct_write_slice_begin(seq, 0, ts_ns, name, args, 2);
    }
}

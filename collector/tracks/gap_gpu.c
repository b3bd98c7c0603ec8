/*
 * The GPU's work in the chunks a bounded trace may drop, for gpu-idle:
 * the report finds idle time and the longest idle gaps from the GPU
 * slices, and those of a dropped chunk are gone. Each chunk keeps its work
 * as intervals (chunk_keeper.c), merged when they fill, so that they stay
 * bounded and their busy time exact; when chunks are dropped, their
 * intervals and the blocks the gap carried so far are merged into at most
 * MAX_GAPS + 1 blocks, split at the MAX_GAPS longest idle gaps between
 * them, each with its start, end and the busy time within it. The gap
 * marker (trace_gap.c) writes them as "cudatrace.gap_gpu" instants (one
 * with no block when the dropped chunks had no GPU work, to say the gap
 * carries it); the report counts each block busy for its busy time, so
 * the busy share and the longest gaps span the dropped middle. Work that
 * CUPTI delivered into a later chunk than its neighbours may overlap a
 * block: it then counts twice, which can only shorten the idle time.
 */
#include "collector/tracks/gap_gpu.h"

#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/string_table.h"
#include "cudatrace/trace_names.h"

#define MAX_INTERVALS 4096 /* of one chunk, before they are merged */

struct chunk_work {
    struct ct_gap_gpu_block *blocks;
    size_t count, capacity;
};

static void work_release(void *figures)
{
    free(((struct chunk_work *)figures)->blocks);
}

void ct_gap_gpu_start(struct ct_gap_gpu *g)
{
    *g = (struct ct_gap_gpu){.chunks = CT_CHUNK_KEEPER(struct chunk_work, work_release)};
}

static int by_start(const void *a, const void *b)
{
    const struct ct_gap_gpu_block *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Sorts `v` and joins the blocks that overlap or touch; their count. */
static size_t merge(struct ct_gap_gpu_block *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, by_start);
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].start <= v[out].end) {
            if (v[i].end > v[out].end)
                v[out].end = v[i].end;
            v[out].busy += v[i].busy;
        } else {
            v[++out] = v[i];
        }
    }
    for (size_t i = 0; i <= out; i++)
        if (v[i].busy > v[i].end - v[i].start)
            v[i].busy = v[i].end - v[i].start; /* overlapping work counts once */
    return out + 1;
}

static void add_block(struct chunk_work *w, struct ct_gap_gpu_block b)
{
    if (w->count == MAX_INTERVALS)
        w->count = merge(w->blocks, w->count);
    w->blocks = ct_array_reserve(w->blocks, &w->capacity, w->count + 1, sizeof *w->blocks);
    w->blocks[w->count++] = b;
}

void ct_gap_gpu_work(struct ct_gap_gpu *g, uint64_t begin, uint64_t end, uint32_t chunk)
{
    if (!chunk)
        return;
    add_block(ct_chunk_keeper_of(&g->chunks, chunk),
              (struct ct_gap_gpu_block){begin, end, end - begin});
}

static void gather(void *figures, void *into)
{
    const struct chunk_work *w = figures;
    for (size_t i = 0; i < w->count; i++)
        add_block(into, w->blocks[i]);
}

static int by_gap_length(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* {length, index} */
    return (x[0] < y[0]) - (x[0] > y[0]);
}

/* Reduces the merged blocks `v` to at most CT_GAP_GPU_GAPS + 1, joined
 * across all but the CT_GAP_GPU_GAPS longest gaps between them, into
 * `dropped`. */
static void keep_longest_gaps(struct ct_gap_gpu *g, const struct ct_gap_gpu_block *v, size_t n)
{
    uint64_t(*gaps)[2] = malloc((n + 1) * sizeof *gaps);
    unsigned char *split = calloc(n + 1, 1);
    if (!gaps || !split)
        abort();
    for (size_t i = 1; i < n; i++)
        gaps[i - 1][0] = v[i].start - v[i - 1].end, gaps[i - 1][1] = i;
    if (n > 1)
        qsort(gaps, n - 1, sizeof *gaps, by_gap_length);
    for (size_t k = 0; k + 1 < n && k < CT_GAP_GPU_GAPS; k++)
        split[gaps[k][1]] = 1;
    g->dropped_count = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || split[i])
            g->dropped[g->dropped_count++] = (struct ct_gap_gpu_block){v[i].start, v[i].end, 0};
        struct ct_gap_gpu_block *b = &g->dropped[g->dropped_count - 1];
        b->end = v[i].end;
        b->busy += v[i].busy;
    }
    free(gaps);
    free(split);
}

static void fold_dropped(struct ct_gap_gpu *g, uint32_t first_kept)
{
    struct chunk_work all = {0};
    for (size_t i = 0; i < g->dropped_count; i++)
        add_block(&all, g->dropped[i]);
    ct_chunk_keeper_fold(&g->chunks, first_kept, gather, &all);
    all.count = merge(all.blocks, all.count);
    keep_longest_gaps(g, all.blocks, all.count);
    work_release(&all);
}

void ct_gap_gpu_write(struct ct_gap_gpu *g, struct ct_sequence *seq, uint32_t first_kept,
                      uint64_t ts)
{
    fold_dropped(g, first_kept);
    uint32_t name = ct_strings_intern_cstr(ct_event_gap_gpu);
    if (!g->dropped_count)
        ct_write_instant(seq, 0, ts, name, NULL, 0);
    for (size_t i = 0; i < g->dropped_count; i++) {
        struct ct_arg args[] = {
            {ct_strings_intern_cstr(ct_key_start_ns), CT_ARG_UINT, g->dropped[i].start},
            {ct_strings_intern_cstr(ct_key_end_ns), CT_ARG_UINT, g->dropped[i].end},
            {ct_strings_intern_cstr(ct_key_busy_ns), CT_ARG_UINT, g->dropped[i].busy},
        };
        ct_write_instant(seq, 0, ts, name, args, sizeof args / sizeof args[0]);
    }
}

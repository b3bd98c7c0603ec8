/*
 * GPU work from the GPU tracks. Busy time is the union of the slices' time
 * (streams overlap; a moment with any work counts once), so the intervals
 * are kept; when a run has more than CT_GPU_MAX_INTERVALS of them, they are
 * merged in place (sorted, overlapping and touching ones joined), which
 * keeps memory bounded and busy time exact; after that, intervals closer
 * than a microsecond are joined too, which can only shorten gaps below that.
 * A bounded trace's gap adds the dropped middle's work as busy blocks
 * split at its longest idle gaps (collector/tracks/gap_gpu.c): each block
 * is an interval, and its idle time is taken off the busy time, so the
 * busy share and the longest gaps span the middle.
 * Flows tie GPU work to the host call that caused it; the flow ids are
 * CUPTI's correlation ids, dense from 1, so two bitsets tell how much GPU
 * work has its host call, whatever order the slices come in.
 */
#include "viewer-export/model/gpu.h"

#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "common/array.h"

#define CT_GPU_MAX_INTERVALS (1u << 20)

static int by_start(const void *a, const void *b)
{
    const struct ct_gpu_interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* Sorts and joins intervals that overlap or lie within `slack` ns. */
static size_t merge(struct ct_gpu_interval *v, size_t n, uint64_t slack)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, by_start);
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].start <= v[out].end + slack) {
            if (v[i].end > v[out].end)
                v[out].end = v[i].end;
        } else {
            v[++out] = v[i];
        }
    }
    return out + 1;
}

static void add_interval(struct ct_gpu_work *g, uint64_t start, uint64_t end)
{
    if (g->interval_count == CT_GPU_MAX_INTERVALS) {
        g->interval_count = merge(g->intervals, g->interval_count, 0);
        if (g->interval_count > CT_GPU_MAX_INTERVALS / 2)
            g->interval_count = merge(g->intervals, g->interval_count, 1000);
    }
    g->intervals = ct_array_reserve(g->intervals, &g->interval_capacity, g->interval_count + 1,
                                    sizeof *g->intervals);
    g->intervals[g->interval_count++] = (struct ct_gpu_interval){start, end};
}

static void add_kernel(struct ct_gpu_work *g, const char *name, uint64_t ns)
{
    uint64_t key = (uint64_t)(uintptr_t)name;
    uint64_t *index = ct_u64_map_find(&g->kernel_index, key);
    if (!index) {
        g->kernels = ct_array_grow(g->kernels, g->kernel_count, sizeof *g->kernels);
        g->kernels[g->kernel_count++].name = name;
        ct_u64_map_put(&g->kernel_index, key, g->kernel_count);
        index = ct_u64_map_find(&g->kernel_index, key);
    }
    g->kernels[*index - 1].count++;
    g->kernels[*index - 1].ns += ns;
    g->kernel_runs++;
    g->kernel_ns += ns;
}

static void set_flow_bit(struct ct_gpu_flow_bits *b, uint64_t id)
{
    uint32_t bit = (uint32_t)id;
    if (!bit)
        return;
    size_t word = bit / 64;
    if (word >= b->count) {
        size_t count = b->count ? b->count : 64;
        while (count <= word)
            count *= 2;
        b->words = realloc(b->words, count * sizeof *b->words);
        if (!b->words)
            abort();
        memset(b->words + b->count, 0, (count - b->count) * sizeof *b->words);
        b->count = count;
    }
    b->words[word] |= 1ull << (bit % 64);
}

void ct_gpu_host_flow(struct ct_gpu_work *g, uint64_t id)
{
    set_flow_bit(&g->host_flows, id);
}

int ct_gpu_flow_ended(const struct ct_gpu_work *g, uint64_t id)
{
    uint32_t bit = (uint32_t)id;
    return bit && bit / 64 < g->gpu_flows.count && (g->gpu_flows.words[bit / 64] >> (bit % 64) & 1);
}

struct ct_gpu_flows ct_gpu_flows(const struct ct_gpu_work *g)
{
    struct ct_gpu_flows f = {0, 0};
    for (size_t i = 0; i < g->gpu_flows.count; i++) {
        uint64_t gpu = g->gpu_flows.words[i];
        uint64_t host = i < g->host_flows.count ? g->host_flows.words[i] : 0;
        f.gpu_work += (uint64_t)__builtin_popcountll(gpu);
        f.from_host_call += (uint64_t)__builtin_popcountll(gpu & host);
    }
    return f;
}

void ct_gpu_slice(struct ct_gpu_work *g, const struct ct_event *e)
{
    uint64_t ns = e->end > e->ts ? e->end - e->ts : 0;
    const char *kind = ct_event_text(e, ct_key_gpu_kind);
    if (strcmp(kind, ct_value_gpu_kind_kernel) == 0)
        add_kernel(g, e->name, ns);
    else if (strcmp(kind, ct_value_gpu_kind_memcpy) == 0)
        g->copies++;
    else if (strcmp(kind, ct_value_gpu_kind_memset) == 0)
        g->sets++;
    else
        return;
    set_flow_bit(&g->gpu_flows, e->flow_in);
    add_interval(g, e->ts, e->ts + ns);
}

void ct_gpu_gap_block(struct ct_gpu_work *g, const struct ct_event *e)
{
    uint64_t start = (uint64_t)ct_event_int(e, ct_key_start_ns, 0),
             end = (uint64_t)ct_event_int(e, ct_key_end_ns, 0),
             busy = (uint64_t)ct_event_int(e, ct_key_busy_ns, 0);
    g->gap_carried = 1;
    if (end <= start)
        return;
    add_interval(g, start, end);
    g->gap_idle_ns += end - start > busy ? end - start - busy : 0;
}

int ct_gpu_seen(const struct ct_gpu_work *g)
{
    return g->interval_count > 0;
}

static void keep_gap(struct ct_gpu_summary *s, uint64_t start, uint64_t end)
{
    uint64_t ns = end > start ? end - start : 0;
    for (int k = 0; k < CT_GPU_GAPS; k++) {
        if (ns > s->gaps[k].ns) {
            memmove(&s->gaps[k + 1], &s->gaps[k], (CT_GPU_GAPS - 1 - k) * sizeof s->gaps[0]);
            s->gaps[k] = (struct ct_gpu_gap){start, ns};
            return;
        }
    }
}

static int by_gpu_time(const void *a, const void *b)
{
    const struct ct_kernel_cost *x = a, *y = b;
    return (x->ns < y->ns) - (x->ns > y->ns);
}

struct ct_kernel_cost *ct_gpu_kernels_by_time(const struct ct_gpu_work *g)
{
    struct ct_kernel_cost *sorted = malloc((g->kernel_count + 1) * sizeof *sorted);
    if (!sorted)
        abort();
    memcpy(sorted, g->kernels, g->kernel_count * sizeof *sorted);
    qsort(sorted, g->kernel_count, sizeof *sorted, by_gpu_time);
    return sorted;
}

static void top_kernels(const struct ct_gpu_work *g, struct ct_gpu_summary *out)
{
    struct ct_kernel_cost *sorted = ct_gpu_kernels_by_time(g);
    for (size_t i = 0; i < g->kernel_count && i < CT_GPU_TOP_KERNELS; i++)
        out->top[i] = sorted[i];
    free(sorted);
}

/* The intervals, sorted and merged, in a copy the caller frees; *n of them. */
static struct ct_gpu_interval *merged(const struct ct_gpu_work *g, size_t *n)
{
    struct ct_gpu_interval *v = malloc((g->interval_count + 1) * sizeof *v);
    if (!v)
        abort();
    memcpy(v, g->intervals, g->interval_count * sizeof *v);
    *n = merge(v, g->interval_count, 0);
    return v;
}

/* Busy time before `t`: `before[i]` is the busy time of v[0..i). */
static uint64_t busy_before(const struct ct_gpu_interval *v, const uint64_t *before, size_t n,
                            uint64_t t)
{
    size_t lo = 0, hi = n; /* the intervals that start before t: v[0..lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t busy = before[lo];
    if (lo && v[lo - 1].end > t)
        busy -= v[lo - 1].end - t;
    return busy;
}

void ct_gpu_busy_within(const struct ct_gpu_work *g, const struct ct_gpu_interval *spans,
                        size_t count, uint64_t *busy)
{
    size_t n;
    struct ct_gpu_interval *v = merged(g, &n);
    uint64_t *before = malloc((n + 1) * sizeof *before);
    if (!before)
        abort();
    before[0] = 0;
    for (size_t i = 0; i < n; i++)
        before[i + 1] = before[i] + (v[i].end - v[i].start);
    for (size_t k = 0; k < count; k++)
        busy[k] =
            busy_before(v, before, n, spans[k].end) - busy_before(v, before, n, spans[k].start);
    free(before);
    free(v);
}

void ct_gpu_summarise(const struct ct_gpu_work *g, uint64_t from, uint64_t to,
                      struct ct_gpu_summary *out)
{
    memset(out, 0, sizeof *out);
    out->span_ns = to > from ? to - from : 0;
    top_kernels(g, out);
    size_t n;
    struct ct_gpu_interval *v = merged(g, &n);
    uint64_t at = from; /* the end of the work seen so far */
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t start = v[i].start > from ? v[i].start : from;
        uint64_t end = v[i].end < to ? v[i].end : to;
        if (end <= start)
            continue;
        if (seen)
            keep_gap(out, at, start);
        else
            out->before_first_ns = start - from;
        seen = 1;
        out->busy_ns += end - start;
        at = end;
    }
    if (seen)
        out->after_last_ns = to > at ? to - at : 0;
    else
        out->before_first_ns = out->span_ns;
    out->busy_ns = out->busy_ns > g->gap_idle_ns ? out->busy_ns - g->gap_idle_ns : 0;
    free(v);
}

void ct_gpu_free(struct ct_gpu_work *g)
{
    free(g->intervals);
    free(g->kernels);
    free(g->host_flows.words);
    free(g->gpu_flows.words);
    ct_u64_map_free(&g->kernel_index);
    memset(g, 0, sizeof *g);
}

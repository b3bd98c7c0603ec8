/*
 * The usage findings' figures of the chunks a bounded trace may drop: per
 * call site, the calls, time and bytes of the calls that blocked the host,
 * of the pageable and the small copies and of the launches, each thread's
 * blocked time, and the allocations' and frees' times for slow-alloc, by
 * the rules the report applies to the slices it reads (common/call_cost.c).
 * A median cannot be summed, so those times are kept per site in duration
 * buckets, eight an octave (calls and total time each): the report takes
 * each bucket's calls at their mean, so slow-alloc's counts and sites are
 * the whole run's and its median and worst call within a bucket's width.
 * The NVTX ranges that say step are kept by name the same way, so that the
 * report's step count and step times are the whole run's too.
 * Kept per chunk until that chunk is kept or gone (chunk_keeper.c); the
 * head's (chunk 0) are never dropped and never tallied, so an unbounded
 * trace pays only for the pinned memory's ledger. The gap marker
 * (trace_gap.c) writes what the dropped chunks summed to, one
 * "cudatrace.usage" instant per site and cost (and bucket), one per
 * thread, and the report adds them to what it read.
 */
#include "collector/tracks/usage_tally.h"

#include <stdlib.h>
#include <string.h>

#include "collector/tracks/call_slices.h"
#include "common/array.h"
#include "common/string_table.h"
#include "cudatrace/trace_names.h"

#define THREAD_KEY (1ull << 62) /* a thread's blocked time, not a site's */
#define MAX_WRITTEN 64          /* sites of one cost, or threads, in the gap */
#define COST_BITS 63            /* of an entry's group: its cost; above them, a bucket */
#define BUCKET_SHIFT 6
#define SUB_BUCKETS 3 /* log2 of the duration buckets in an octave */
/* Sites of one duration bucket in the gap: allocations spread over 30
 * octaves (240 buckets) still fit the gap's packets. */
#define MAX_BUCKET_SITES 4

struct ct_tally_entry {
    uint64_t key; /* group << 32 | site, or THREAD_KEY | tid; group: cost | bucket << 6 */
    uint64_t calls, ns, bytes;
};

static void tally_add(struct ct_tally *t, uint64_t key, uint64_t calls, uint64_t ns, uint64_t bytes)
{
    /* Launches come in runs from one site: the last entry, without a look-up. */
    if (!t->count || t->entries[t->last].key != key) {
        uint64_t *index = ct_u64_map_find(&t->index, key);
        if (index) {
            t->last = (size_t)*index - 1;
        } else {
            t->entries = ct_array_grow(t->entries, t->count, sizeof *t->entries);
            t->entries[t->count++] = (struct ct_tally_entry){key, 0, 0, 0};
            ct_u64_map_put(&t->index, key, t->count);
            t->last = t->count - 1;
        }
    }
    struct ct_tally_entry *e = &t->entries[t->last];
    e->calls += calls;
    e->ns += ns;
    e->bytes += bytes;
}

static void tally_clear(void *figures)
{
    struct ct_tally *t = figures;
    ct_u64_map_free(&t->index);
    free(t->entries);
    memset(t, 0, sizeof *t);
}

void ct_usage_tally_start(struct ct_usage_tally *u)
{
    *u = (struct ct_usage_tally){.chunks = CT_CHUNK_KEEPER(struct ct_tally, tally_clear)};
}

/* The call's shape from its record's arguments (functions.h's layouts). */
static struct ct_call_shape shape_of(const struct ct_record *r)
{
    struct ct_call_shape shape = {(enum ct_function)r->func, CT_COPY_OTHER, 0, 0};
    if (ct_function_family(r->func) == CT_FAMILY_COPY) {
        shape.direction = ct_copy_direction_of_kind(r->arg[3]);
        shape.bytes = r->arg[1];
        shape.host = ct_copy_host_address(shape.direction, r->arg[0], r->arg[4]);
    }
    return shape;
}

/* The duration bucket of `ns`: eight an octave, so that each spans under
 * 13% of its lower edge; below 8 ns, one a nanosecond. */
static uint64_t bucket_of(uint64_t ns)
{
    if (ns < (1u << SUB_BUCKETS))
        return ns;
    int octave = 63 - __builtin_clzll(ns);
    return (uint64_t)octave << SUB_BUCKETS |
           (ns >> (octave - SUB_BUCKETS) & ((1u << SUB_BUCKETS) - 1));
}

void ct_usage_tally_call(struct ct_usage_tally *u, const struct ct_record *r, int32_t tid,
                         uint32_t site, uint64_t ns, uint32_t chunk)
{
    enum ct_family family = ct_function_family(r->func);
    if (r->result == 0 && (family == CT_FAMILY_ALLOC_HOST || family == CT_FAMILY_FREE_HOST ||
                           family == CT_FAMILY_HOST_REGISTER))
        ct_pinned_note(&u->pinned, (enum ct_function)r->func, r->arg[0], r->arg[1]);
    if (chunk == 0)
        return;
    struct ct_call_shape shape = shape_of(r);
    unsigned flags = ct_call_cost(&u->pinned, &shape, CT_SMALL_COPY_BYTES);
    if (!flags)
        return;
    struct ct_tally *t = ct_chunk_keeper_of(&u->chunks, chunk);
    for (unsigned cost = CT_COST_BLOCKS; cost <= CT_COST_LAUNCH; cost <<= 1)
        if (flags & cost)
            tally_add(t, (uint64_t)cost << 32 | site, 1, ns,
                      cost == CT_COST_LAUNCH ? 0 : shape.bytes);
    if (flags & CT_COST_BLOCKS)
        tally_add(t, THREAD_KEY | (uint32_t)tid, 1, ns, 0);
    if (flags & CT_COST_ALLOC_TIME)
        tally_add(t, (CT_COST_ALLOC_TIME | bucket_of(ns) << BUCKET_SHIFT) << 32 | site, 1, ns, 0);
}

void ct_usage_tally_step_range(struct ct_usage_tally *u, uint32_t name, uint64_t ns, uint32_t chunk)
{
    if (chunk == 0)
        return;
    tally_add(ct_chunk_keeper_of(&u->chunks, chunk),
              (CT_COST_STEP_RANGE | bucket_of(ns) << BUCKET_SHIFT) << 32 | name, 1, ns, 0);
}

static void write_entry(struct ct_sequence *seq, const struct ct_tally_entry *e, uint64_t ts)
{
    static uint32_t name, cost, site, tid, calls, total_ns, bytes;
    if (!name) {
        name = ct_strings_intern_cstr(ct_event_usage_tally);
        cost = ct_strings_intern_cstr(ct_key_cost);
        site = ct_strings_intern_cstr(ct_key_site);
        tid = ct_strings_intern_cstr(ct_key_tid);
        calls = ct_strings_intern_cstr(ct_key_calls);
        total_ns = ct_strings_intern_cstr(ct_key_total_ns);
        bytes = ct_strings_intern_cstr(ct_key_bytes);
    }
    struct ct_arg args[5] = {{calls, CT_ARG_UINT, e->calls},
                             {total_ns, CT_ARG_UINT, e->ns},
                             {bytes, CT_ARG_UINT, e->bytes}};
    int nargs = 3;
    if (e->key & THREAD_KEY) {
        args[nargs++] = (struct ct_arg){tid, CT_ARG_UINT, (uint32_t)e->key};
    } else {
        args[nargs++] = (struct ct_arg){cost, CT_ARG_UINT, e->key >> 32 & COST_BITS};
        if ((uint32_t)e->key)
            args[nargs++] = (struct ct_arg){site, CT_ARG_STRING, (uint32_t)e->key};
    }
    ct_write_instant(seq, 0, ts, name, args, nargs);
}

/* The finding's measure of an entry: time for the blocking calls (and the
 * threads), calls for the others, as findings/usage.c ranks its sites. */
static uint64_t measure(const struct ct_tally_entry *e)
{
    return (e->key & THREAD_KEY) || e->key >> 32 == CT_COST_BLOCKS ? e->ns : e->calls;
}

/* How many entries of the group of `key` are written one by one. */
static size_t written_of(uint64_t key)
{
    uint64_t cost = key >> 32 & COST_BITS;
    return cost == CT_COST_ALLOC_TIME || cost == CT_COST_STEP_RANGE ? MAX_BUCKET_SITES
                                                                    : MAX_WRITTEN;
}

static int by_group_then_measure(const void *a, const void *b)
{
    const struct ct_tally_entry *x = a, *y = b;
    uint64_t gx = x->key >> 32, gy = y->key >> 32, mx = measure(x), my = measure(y);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    return (mx < my) - (mx > my);
}

/* Writes the costliest MAX_WRITTEN sites of each cost, and the rest of it
 * as one entry with no site, so that the totals stay whole and the gap
 * frame small however many sites the middle had; the MAX_WRITTEN threads
 * that waited longest. */
static void write_dropped(const struct ct_tally *dropped, struct ct_sequence *seq, uint64_t ts)
{
    struct ct_tally_entry *sorted = malloc((dropped->count + 1) * sizeof *sorted);
    if (!sorted)
        abort();
    memcpy(sorted, dropped->entries, dropped->count * sizeof *sorted);
    qsort(sorted, dropped->count, sizeof *sorted, by_group_then_measure);
    struct ct_tally_entry rest = {0};
    size_t in_group = 0;
    for (size_t k = 0; k < dropped->count; k++) {
        const struct ct_tally_entry *e = &sorted[k];
        if (k && e->key >> 32 != sorted[k - 1].key >> 32)
            in_group = 0;
        if (in_group++ < written_of(e->key)) {
            write_entry(seq, e, ts);
        } else if (!(e->key & THREAD_KEY)) {
            rest = (struct ct_tally_entry){e->key >> 32 << 32, rest.calls + e->calls,
                                           rest.ns + e->ns, rest.bytes + e->bytes};
        }
        if (rest.calls && (k + 1 == dropped->count || sorted[k + 1].key >> 32 != e->key >> 32)) {
            write_entry(seq, &rest, ts);
            rest = (struct ct_tally_entry){0};
        }
    }
    free(sorted);
}

static void add_to_dropped(void *figures, void *into)
{
    const struct ct_tally *t = figures;
    for (size_t k = 0; k < t->count; k++)
        tally_add(into, t->entries[k].key, t->entries[k].calls, t->entries[k].ns,
                  t->entries[k].bytes);
}

void ct_usage_tally_write_dropped(struct ct_usage_tally *u, struct ct_sequence *seq,
                                  uint32_t first_kept, uint64_t ts)
{
    ct_chunk_keeper_fold(&u->chunks, first_kept, add_to_dropped, &u->dropped);
    write_dropped(&u->dropped, seq, ts);
}

/*
 * The live device memory a bounded trace's dropped middle leaves behind.
 * The report recomputes live memory from the allocation and free slices;
 * a block made in a dropped chunk and still live after it would be unknown
 * to it. So, for each block made in a chunk that may be dropped (any but
 * the head), this keeps its size, time, call site, stack and chunk from the
 * moment memory_counters.c applies it until its memory goes; one that goes
 * in a later chunk than it was made is kept until that chunk is dropped as
 * well, since it was live where the kept detail resumes. The gap marker
 * (trace_gap.c) writes the blocks made in the dropped chunks and live at
 * the first kept one as "cudatrace.live_memory" instants: the MAX_BLOCKS
 * largest one by one (so the oom finding's largest blocks, and a later free
 * of each, are exact), the rest summed per call site, stack and the chunk
 * in which they went (a sum of blocks that went says when the last of them
 * did, as no free in the kept detail names a sum), up to MAX_GROUPS of each
 * kind, and beyond that in one entry live and one gone: the bytes stay
 * whole and the gap frame within the room the bound keeps for it (stacks
 * past STACK_BYTES of them are left out: their library is unknown then).
 * With them, one instant (with neither a pointer nor a handle) carries the
 * lowest and highest live bytes the dropped chunks saw and when, so that
 * memory-growth's low points span the middle.
 */
#include "collector/tracks/gap_memory.h"

#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/string_table.h"
#include "cudatrace/trace_names.h"

/* The gap's packets have 64 KiB (perfetto/writer.c), which the totals and
 * the usage tallies share: about 80 bytes a block, and its strings. */
#define MAX_BLOCKS 128
#define MAX_GROUPS 32
#define STACK_BYTES 8192        /* of stacks written: past that, blocks go without */
#define HANDLE_BIT (1ull << 63) /* a handle's key among the pointers' */

struct ct_gap_block {
    uint64_t key, bytes, made_ns, blocks;
    uint64_t gone_ns; /* when its memory went, if it did */
    uint32_t site, stack, chunk;
    uint32_t gone_chunk; /* 0: still live */
};

void ct_gap_memory_start(struct ct_gap_memory *g)
{
    *g = (struct ct_gap_memory){.levels = CT_CHUNK_KEEPER(struct ct_gap_levels, NULL)};
}

static uint64_t key_of(uint64_t key, int is_handle)
{
    return is_handle ? key | HANDLE_BIT : key;
}

void ct_gap_memory_made(struct ct_gap_memory *g, uint64_t key, int is_handle, uint64_t bytes,
                        uint64_t ts, struct ct_call_site site, uint32_t chunk)
{
    uint64_t k = key_of(key, is_handle);
    if (!chunk || !key || ct_u64_map_find(&g->live, k))
        return;
    g->blocks =
        ct_array_reserve(g->blocks, &g->block_capacity, g->block_count + 1, sizeof *g->blocks);
    g->blocks[g->block_count++] =
        (struct ct_gap_block){k, bytes, ts, 1, 0, site.site, site.stack, chunk, 0};
    ct_u64_map_put(&g->live, k, g->block_count);
}

static void remove_at(struct ct_gap_memory *g, size_t i)
{
    g->blocks[i] = g->blocks[--g->block_count];
    if (i < g->block_count && !g->blocks[i].gone_chunk)
        ct_u64_map_put(&g->live, g->blocks[i].key, i + 1);
}

void ct_gap_memory_gone(struct ct_gap_memory *g, uint64_t key, int is_handle, uint64_t ts,
                        uint32_t chunk)
{
    uint64_t index;
    if (!ct_u64_map_remove(&g->live, key_of(key, is_handle), &index))
        return;
    struct ct_gap_block *b = &g->blocks[index - 1];
    if (chunk <= b->chunk) {
        remove_at(g, index - 1);
        return;
    }
    b->gone_chunk = chunk; /* live at the start of the chunks between */
    b->gone_ns = ts;
}

static void widen(struct ct_gap_levels *s, uint64_t low, uint64_t low_ns, uint64_t high,
                  uint64_t high_ns)
{
    if (!s->seen || low < s->low)
        s->low = low, s->low_ns = low_ns;
    if (!s->seen || high > s->high)
        s->high = high, s->high_ns = high_ns;
    s->seen = 1;
}

void ct_gap_memory_level(struct ct_gap_memory *g, uint64_t bytes, uint64_t ts, uint32_t chunk)
{
    if (!chunk)
        return;
    widen(ct_chunk_keeper_of(&g->levels, chunk), bytes, ts, bytes, ts);
}

static void widen_dropped(void *figures, void *into)
{
    const struct ct_gap_levels *s = figures;
    widen(into, s->low, s->low_ns, s->high, s->high_ns);
}

/* Folds the levels of the chunks before `first_kept` into dropped_levels,
 * and forgets the blocks whose memory went in one of them. */
static void fold_dropped(struct ct_gap_memory *g, uint32_t first_kept)
{
    ct_chunk_keeper_fold(&g->levels, first_kept, widen_dropped, &g->dropped_levels);
    for (size_t i = g->block_count; i-- > 0;)
        if (g->blocks[i].gone_chunk && g->blocks[i].gone_chunk < first_kept)
            remove_at(g, i);
}

static int by_bytes(const void *a, const void *b)
{
    const struct ct_gap_block *x = a, *y = b;
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

struct names {
    uint32_t event, ptr, handle, bytes, made, count, freed, site, stack;
};

/* The stacks written so far, so that their text stays within STACK_BYTES. */
struct stacks_written {
    struct ct_u64_map ids;
    size_t bytes;
};

static int stack_fits(struct stacks_written *w, uint32_t stack)
{
    if (!stack || ct_u64_map_find(&w->ids, stack))
        return stack != 0;
    size_t len = strlen(ct_strings_get(stack));
    if (w->bytes + len > STACK_BYTES)
        return 0;
    w->bytes += len;
    ct_u64_map_put(&w->ids, stack, 1);
    return 1;
}

static void write_block(struct ct_sequence *seq, const struct names *n, struct stacks_written *w,
                        const struct ct_gap_block *b, uint64_t ts)
{
    struct ct_arg args[7] = {{n->bytes, CT_ARG_UINT, b->bytes}, {n->made, CT_ARG_UINT, b->made_ns}};
    int nargs = 2;
    /* A sum of blocks has no address of its own: 0, and how many. */
    uint64_t address = b->blocks == 1 ? b->key & ~HANDLE_BIT : 0;
    args[nargs++] =
        (struct ct_arg){b->key & HANDLE_BIT ? n->handle : n->ptr, CT_ARG_POINTER, address};
    if (b->blocks != 1)
        args[nargs++] = (struct ct_arg){n->count, CT_ARG_UINT, b->blocks};
    if (b->blocks != 1 && b->gone_chunk)
        args[nargs++] = (struct ct_arg){n->freed, CT_ARG_UINT, b->gone_ns};
    if (b->site)
        args[nargs++] = (struct ct_arg){n->site, CT_ARG_STRING, b->site};
    if (stack_fits(w, b->stack))
        args[nargs++] = (struct ct_arg){n->stack, CT_ARG_STRING, b->stack};
    ct_write_instant(seq, 0, ts, n->event, args, nargs);
}

/* Sums the blocks of one kind (pointers or handles) past the largest. */
struct groups {
    struct ct_gap_block items[MAX_GROUPS + 2]; /* the last two: the rest, live and gone */
    size_t count;
};

static int same_group(const struct ct_gap_block *sum, const struct ct_gap_block *b)
{
    return sum->site == b->site && sum->stack == b->stack && sum->gone_chunk == b->gone_chunk;
}

static void group_add(struct groups *g, const struct ct_gap_block *b)
{
    struct ct_gap_block *sum = NULL;
    for (size_t i = 0; !sum && i < g->count; i++)
        if (same_group(&g->items[i], b))
            sum = &g->items[i];
    if (!sum && g->count < MAX_GROUPS) {
        sum = &g->items[g->count++];
        *sum =
            (struct ct_gap_block){.site = b->site, .stack = b->stack, .gone_chunk = b->gone_chunk};
    }
    if (!sum) {
        sum = &g->items[MAX_GROUPS + (b->gone_chunk != 0)];
        sum->gone_chunk = b->gone_chunk;
    }
    sum->key = b->key & HANDLE_BIT;
    sum->bytes += b->bytes;
    sum->blocks++;
    if (b->made_ns > sum->made_ns)
        sum->made_ns = b->made_ns; /* memory-growth asks whether it came late */
    if (b->gone_ns > sum->gone_ns)
        sum->gone_ns = b->gone_ns;
}

/* Written even when the dropped chunks changed nothing (no levels then):
 * it says the gap carries live memory. */
static void write_levels(const struct ct_gap_levels *dropped, struct ct_sequence *seq, uint64_t ts,
                         uint32_t event)
{
    struct ct_arg args[] = {
        {ct_strings_intern_cstr(ct_key_low_live_bytes), CT_ARG_UINT, dropped->low},
        {ct_strings_intern_cstr(ct_key_low_live_ns), CT_ARG_UINT, dropped->low_ns},
        {ct_strings_intern_cstr(ct_key_high_live_bytes), CT_ARG_UINT, dropped->high},
        {ct_strings_intern_cstr(ct_key_high_live_ns), CT_ARG_UINT, dropped->high_ns},
    };
    ct_write_instant(seq, 0, ts, event, args,
                     dropped->seen ? (int)(sizeof args / sizeof args[0]) : 0);
}

void ct_gap_memory_write(struct ct_gap_memory *g, struct ct_sequence *seq, uint32_t first_kept,
                         uint64_t ts)
{
    struct names n = {
        ct_strings_intern_cstr(ct_event_gap_memory), ct_strings_intern_cstr(ct_key_ptr),
        ct_strings_intern_cstr(ct_key_handle),       ct_strings_intern_cstr(ct_key_bytes),
        ct_strings_intern_cstr(ct_key_made_ns),      ct_strings_intern_cstr(ct_key_blocks),
        ct_strings_intern_cstr(ct_key_freed_ns),     ct_strings_intern_cstr(ct_key_site),
        ct_strings_intern_cstr(ct_key_stack)};
    fold_dropped(g, first_kept);
    write_levels(&g->dropped_levels, seq, ts, n.event);
    struct ct_gap_block *left = malloc((g->block_count + 1) * sizeof *left);
    if (!left)
        abort();
    size_t count = 0;
    for (size_t i = 0; i < g->block_count; i++)
        if (g->blocks[i].chunk < first_kept)
            left[count++] = g->blocks[i];
    qsort(left, count, sizeof *left, by_bytes);
    struct groups pointers = {.count = 0}, handles = {.count = 0};
    struct stacks_written written = {0};
    for (size_t i = 0; i < count; i++) {
        if (i < MAX_BLOCKS)
            write_block(seq, &n, &written, &left[i], ts);
        else
            group_add(left[i].key & HANDLE_BIT ? &handles : &pointers, &left[i]);
    }
    for (size_t i = 0; i < MAX_GROUPS + 2; i++) {
        if (pointers.items[i].blocks)
            write_block(seq, &n, &written, &pointers.items[i], ts);
        if (handles.items[i].blocks)
            write_block(seq, &n, &written, &handles.items[i], ts);
    }
    ct_u64_map_free(&written.ids);
    free(left);
}

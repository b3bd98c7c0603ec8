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
 * of each, are exact), the rest summed per call site and stack, up to
 * MAX_GROUPS of each kind, and beyond that in one entry with neither: the
 * bytes stay whole and the gap frame within the room the bound keeps for
 * it. With them, one instant (with neither a pointer nor a handle) carries
 * the lowest and highest live bytes the dropped chunks saw and when, so that
 * memory-growth's low points span the middle.
 */
#include "collector/tracks/gap_memory.h"

#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/string_table.h"
#include "common/u64_map.h"
#include "cudatrace/trace_names.h"

#define SLOTS 64 /* as trace_gap.c: more than the chunks a file holds at once */
#define MAX_BLOCKS 256
#define MAX_GROUPS 64
#define HANDLE_BIT (1ull << 63) /* a handle's key among the pointers' */

struct tail_block {
    uint64_t key, bytes, made_ns, blocks;
    uint32_t site, stack, chunk;
    uint32_t gone_chunk; /* 0: still live */
};

struct level_span {
    uint32_t chunk; /* 0: the slot is free */
    uint64_t low, low_ns, high, high_ns;
};

static struct tail_block *blocks;
static size_t block_count, block_capacity;
static struct ct_u64_map live; /* key -> index + 1 in blocks, while live */
static struct level_span levels[SLOTS], dropped_levels;

static uint64_t key_of(uint64_t key, int is_handle)
{
    return is_handle ? key | HANDLE_BIT : key;
}

void ct_gap_memory_made(uint64_t key, int is_handle, uint64_t bytes, uint64_t ts,
                        struct ct_call_site site, uint32_t chunk)
{
    uint64_t k = key_of(key, is_handle);
    if (!chunk || !key || ct_u64_map_find(&live, k))
        return;
    blocks = ct_array_reserve(blocks, &block_capacity, block_count + 1, sizeof *blocks);
    blocks[block_count++] = (struct tail_block){k, bytes, ts, 1, site.site, site.stack, chunk, 0};
    ct_u64_map_put(&live, k, block_count);
}

static void remove_at(size_t i)
{
    blocks[i] = blocks[--block_count];
    if (i < block_count && !blocks[i].gone_chunk)
        ct_u64_map_put(&live, blocks[i].key, i + 1);
}

void ct_gap_memory_gone(uint64_t key, int is_handle, uint32_t chunk)
{
    uint64_t index;
    if (!ct_u64_map_remove(&live, key_of(key, is_handle), &index))
        return;
    struct tail_block *b = &blocks[index - 1];
    if (chunk > b->chunk)
        b->gone_chunk = chunk; /* live at the start of the chunks between */
    else
        remove_at(index - 1);
}

static void widen(struct level_span *s, uint64_t low, uint64_t low_ns, uint64_t high,
                  uint64_t high_ns)
{
    if (!s->chunk || low < s->low)
        s->low = low, s->low_ns = low_ns;
    if (!s->chunk || high > s->high)
        s->high = high, s->high_ns = high_ns;
}

void ct_gap_memory_level(uint64_t bytes, uint64_t ts, uint32_t chunk)
{
    if (!chunk)
        return;
    struct level_span *s = &levels[chunk % SLOTS];
    if (s->chunk != chunk)
        s->chunk = 0;
    widen(s, bytes, ts, bytes, ts);
    s->chunk = chunk;
}

/* Folds the levels of the chunks before `first_kept` into dropped_levels,
 * and forgets the blocks whose memory went in one of them. */
static void fold_dropped(uint32_t first_kept)
{
    for (int i = 0; i < SLOTS; i++) {
        struct level_span *s = &levels[i];
        if (!s->chunk || s->chunk >= first_kept)
            continue;
        widen(&dropped_levels, s->low, s->low_ns, s->high, s->high_ns);
        dropped_levels.chunk = 1;
        s->chunk = 0;
    }
    for (size_t i = block_count; i-- > 0;)
        if (blocks[i].gone_chunk && blocks[i].gone_chunk < first_kept)
            remove_at(i);
}

static int by_bytes(const void *a, const void *b)
{
    const struct tail_block *x = a, *y = b;
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

static void write_block(struct ct_sequence *seq, const struct tail_block *b, uint64_t ts)
{
    static uint32_t name, ptr, handle, bytes, made, count, site, stack;
    if (!name) {
        name = ct_strings_intern_cstr(ct_event_gap_memory);
        ptr = ct_strings_intern_cstr(ct_key_ptr);
        handle = ct_strings_intern_cstr(ct_key_handle);
        bytes = ct_strings_intern_cstr(ct_key_bytes);
        made = ct_strings_intern_cstr(ct_key_made_ns);
        count = ct_strings_intern_cstr(ct_key_blocks);
        site = ct_strings_intern_cstr(ct_key_site);
        stack = ct_strings_intern_cstr(ct_key_stack);
    }
    struct ct_arg args[6] = {{bytes, CT_ARG_UINT, b->bytes}, {made, CT_ARG_UINT, b->made_ns}};
    int nargs = 2;
    /* A sum of blocks has no address of its own: 0, and how many. */
    uint64_t address = b->blocks == 1 ? b->key & ~HANDLE_BIT : 0;
    args[nargs++] = (struct ct_arg){b->key & HANDLE_BIT ? handle : ptr, CT_ARG_POINTER, address};
    if (b->blocks != 1)
        args[nargs++] = (struct ct_arg){count, CT_ARG_UINT, b->blocks};
    if (b->site)
        args[nargs++] = (struct ct_arg){site, CT_ARG_STRING, b->site};
    if (b->stack)
        args[nargs++] = (struct ct_arg){stack, CT_ARG_STRING, b->stack};
    ct_write_instant(seq, 0, ts, name, args, nargs);
}

/* Sums the blocks of one kind (pointers or handles) past the largest. */
struct groups {
    struct ct_u64_map index;                 /* site << 32 | stack -> index + 1 */
    struct tail_block items[MAX_GROUPS + 1]; /* the last: every site past MAX_GROUPS */
    size_t count;
};

static void group_add(struct groups *g, const struct tail_block *b)
{
    uint64_t key = (uint64_t)b->site << 32 | b->stack;
    uint64_t *index = key ? ct_u64_map_find(&g->index, key) : NULL;
    struct tail_block *sum = index ? &g->items[*index - 1] : NULL;
    if (!sum && key && g->count < MAX_GROUPS) {
        sum = &g->items[g->count++];
        *sum = (struct tail_block){.key = b->key & HANDLE_BIT, .site = b->site, .stack = b->stack};
        ct_u64_map_put(&g->index, key, g->count);
    }
    if (!sum) {
        sum = &g->items[MAX_GROUPS];
        sum->key = b->key & HANDLE_BIT;
    }
    sum->bytes += b->bytes;
    sum->blocks++;
    if (b->made_ns > sum->made_ns)
        sum->made_ns = b->made_ns; /* memory-growth asks whether it came late */
}

static void write_groups(struct ct_sequence *seq, struct groups *g, uint64_t ts)
{
    for (size_t i = 0; i <= MAX_GROUPS; i++)
        if (g->items[i].blocks)
            write_block(seq, &g->items[i], ts);
    ct_u64_map_free(&g->index);
}

/* Written even when the dropped chunks changed nothing (no levels then):
 * it says the gap carries live memory. */
static void write_levels(struct ct_sequence *seq, uint64_t ts)
{
    struct ct_arg args[] = {
        {ct_strings_intern_cstr(ct_key_low_live_bytes), CT_ARG_UINT, dropped_levels.low},
        {ct_strings_intern_cstr(ct_key_low_live_ns), CT_ARG_UINT, dropped_levels.low_ns},
        {ct_strings_intern_cstr(ct_key_high_live_bytes), CT_ARG_UINT, dropped_levels.high},
        {ct_strings_intern_cstr(ct_key_high_live_ns), CT_ARG_UINT, dropped_levels.high_ns},
    };
    ct_write_instant(seq, 0, ts, ct_strings_intern_cstr(ct_event_gap_memory), args,
                     dropped_levels.chunk ? (int)(sizeof args / sizeof args[0]) : 0);
}

void ct_gap_memory_write(struct ct_sequence *seq, uint32_t first_kept, uint64_t ts)
{
    fold_dropped(first_kept);
    write_levels(seq, ts);
    struct tail_block *left = malloc((block_count + 1) * sizeof *left);
    if (!left)
        abort();
    size_t count = 0;
    for (size_t i = 0; i < block_count; i++)
        if (blocks[i].chunk < first_kept)
            left[count++] = blocks[i];
    qsort(left, count, sizeof *left, by_bytes);
    static struct groups pointers, handles;
    memset(&pointers, 0, sizeof pointers);
    memset(&handles, 0, sizeof handles);
    for (size_t i = 0; i < count; i++) {
        if (i < MAX_BLOCKS)
            write_block(seq, &left[i], ts);
        else
            group_add(left[i].key & HANDLE_BIT ? &handles : &pointers, &left[i]);
    }
    write_groups(seq, &pointers, ts);
    write_groups(seq, &handles, ts);
    free(left);
}

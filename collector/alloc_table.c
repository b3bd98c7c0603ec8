/*
 * An open-addressing map from pointer to size with tombstones, rebuilt when
 * tombstones and entries fill half of it. Its size follows the number of
 * live allocations, not the length of the run.
 */
#include "alloc_table.h"

#include <stdlib.h>

#define TOMBSTONE UINT64_MAX

static uint32_t slot_of(uint64_t ptr, uint32_t capacity)
{
    return (uint32_t)((ptr * 0x9E3779B97F4A7C15ull) >> 32) & (capacity - 1);
}

static void place(struct ct_alloc_table *t, uint64_t ptr, uint64_t size)
{
    uint32_t at = slot_of(ptr, t->capacity);
    while (t->ptrs[at] != 0 && t->ptrs[at] != TOMBSTONE && t->ptrs[at] != ptr)
        at = (at + 1) & (t->capacity - 1);
    if (t->ptrs[at] == 0 || t->ptrs[at] == TOMBSTONE) {
        t->used += t->ptrs[at] == 0;
        t->live++;
    }
    t->ptrs[at] = ptr;
    t->sizes[at] = size;
}

static void rebuild(struct ct_alloc_table *t)
{
    uint32_t old_capacity = t->capacity;
    uint64_t *old_ptrs = t->ptrs, *old_sizes = t->sizes;
    uint32_t capacity = 64;
    while (capacity < 4 * (t->live + 1))
        capacity *= 2;
    t->ptrs = calloc(capacity, sizeof *t->ptrs);
    t->sizes = calloc(capacity, sizeof *t->sizes);
    if (!t->ptrs || !t->sizes)
        abort();
    t->capacity = capacity;
    t->used = t->live = 0;
    for (uint32_t i = 0; i < old_capacity; i++)
        if (old_ptrs[i] != 0 && old_ptrs[i] != TOMBSTONE)
            place(t, old_ptrs[i], old_sizes[i]);
    free(old_ptrs);
    free(old_sizes);
}

void ct_alloc_table_add(struct ct_alloc_table *t, uint64_t ptr, uint64_t size)
{
    if (ptr == 0 || ptr == TOMBSTONE)
        return;
    if (2 * (t->used + 1) > t->capacity)
        rebuild(t);
    place(t, ptr, size);
}

uint64_t ct_alloc_table_remove(struct ct_alloc_table *t, uint64_t ptr)
{
    if (t->capacity == 0 || ptr == 0 || ptr == TOMBSTONE)
        return 0;
    for (uint32_t at = slot_of(ptr, t->capacity); t->ptrs[at] != 0;
         at = (at + 1) & (t->capacity - 1)) {
        if (t->ptrs[at] == ptr) {
            t->ptrs[at] = TOMBSTONE;
            t->live--;
            return t->sizes[at];
        }
    }
    return 0;
}

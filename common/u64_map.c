/*
 * Open addressing with linear probing and tombstones; when live entries and
 * tombstones fill half of the table it is rebuilt at the smallest power of
 * two of at least four times the live count (64 at the least), so its size
 * follows what is live (allocations, kernels), never how long the run has
 * been.
 */
#include "common/u64_map.h"

#include <stdlib.h>

#define TOMBSTONE UINT64_MAX

static uint32_t slot_of(uint64_t key, uint32_t capacity)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (capacity - 1);
}

static void rebuild(struct ct_u64_map *m)
{
    struct ct_u64_map old = *m;
    uint32_t capacity = 64;
    while (capacity < 4 * (old.count + 1))
        capacity *= 2;
    m->keys = calloc(capacity, sizeof *m->keys);
    m->values = calloc(capacity, sizeof *m->values);
    if (!m->keys || !m->values)
        abort();
    m->capacity = capacity;
    m->used = m->count = 0;
    for (uint32_t i = 0; i < old.capacity; i++)
        if (old.keys[i] != 0 && old.keys[i] != TOMBSTONE)
            ct_u64_map_put(m, old.keys[i], old.values[i]);
    free(old.keys);
    free(old.values);
}

uint64_t *ct_u64_map_find(const struct ct_u64_map *m, uint64_t key)
{
    if (m->capacity == 0 || key == 0 || key == TOMBSTONE)
        return NULL;
    for (uint32_t at = slot_of(key, m->capacity); m->keys[at] != 0;
         at = (at + 1) & (m->capacity - 1))
        if (m->keys[at] == key)
            return &m->values[at];
    return NULL;
}

void ct_u64_map_put(struct ct_u64_map *m, uint64_t key, uint64_t value)
{
    if (key == 0 || key == TOMBSTONE)
        return;
    uint64_t *existing = ct_u64_map_find(m, key);
    if (existing) {
        *existing = value;
        return;
    }
    if (2 * (m->used + 1) > m->capacity)
        rebuild(m);
    uint32_t at = slot_of(key, m->capacity);
    while (m->keys[at] != 0 && m->keys[at] != TOMBSTONE)
        at = (at + 1) & (m->capacity - 1);
    m->used += m->keys[at] == 0;
    m->count++;
    m->keys[at] = key;
    m->values[at] = value;
}

int ct_u64_map_remove(struct ct_u64_map *m, uint64_t key, uint64_t *value)
{
    uint64_t *slot = ct_u64_map_find(m, key);
    if (!slot)
        return 0;
    *value = *slot;
    m->keys[slot - m->values] = TOMBSTONE;
    m->count--;
    return 1;
}

void ct_u64_map_free(struct ct_u64_map *m)
{
    free(m->keys);
    free(m->values);
    *m = (struct ct_u64_map){0};
}

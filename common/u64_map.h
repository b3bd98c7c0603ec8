/*
 * A map from non-zero 64-bit keys to 64-bit values, used wherever the
 * collector or the reader keys by pointer, uuid or interning id.
 */
#ifndef CT_U64_MAP_H
#define CT_U64_MAP_H

#include <stdint.h>

struct ct_u64_map {
    uint64_t *keys; /* 0 empty, UINT64_MAX removed */
    uint64_t *values;
    uint32_t capacity, used, count;
};

/* Sets key to value (keys 0 and UINT64_MAX are not storable and ignored). */
void ct_u64_map_put(struct ct_u64_map *m, uint64_t key, uint64_t value);
/* The value's address, or NULL when the key is absent. */
uint64_t *ct_u64_map_find(const struct ct_u64_map *m, uint64_t key);
/* Removes key; returns 1 and its value in *value if it was present. */
int ct_u64_map_remove(struct ct_u64_map *m, uint64_t key, uint64_t *value);
void ct_u64_map_free(struct ct_u64_map *m);

#endif

/*
 * Live allocations, so a free can be charged the size of what it frees.
 */
#ifndef CT_COLLECTOR_ALLOC_TABLE_H
#define CT_COLLECTOR_ALLOC_TABLE_H

#include <stdint.h>

struct ct_alloc_table {
    uint64_t *ptrs; /* 0 empty, UINT64_MAX removed */
    uint64_t *sizes;
    uint32_t capacity, used, live;
};

void ct_alloc_table_add(struct ct_alloc_table *t, uint64_t ptr, uint64_t size);
/* Removes `ptr`; returns its size, or 0 if it was not a live allocation. */
uint64_t ct_alloc_table_remove(struct ct_alloc_table *t, uint64_t ptr);

#endif

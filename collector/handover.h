/*
 * A bounded queue that hands events from a sampling thread of the
 * collector's (NVML's, the host's) to its main thread, which writes the
 * trace: fixed-size items under a lock that each side holds only to copy
 * one item in or out. A full queue drops the newest item and counts it, so
 * a main thread that falls behind costs detail, never memory.
 */
#ifndef CT_COLLECTOR_HANDOVER_H
#define CT_COLLECTOR_HANDOVER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct ct_handover {
    pthread_mutex_t lock;
    unsigned char *items;
    size_t item_size;
    uint32_t capacity, head, count;
    uint64_t dropped;
};

/* A queue over `items`, room for `capacity` items of `item_size` bytes. */
#define CT_HANDOVER_INIT(items, capacity)                                                          \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, (unsigned char *)(items), sizeof *(items), (capacity), 0, 0, 0  \
    }

void ct_handover_push(struct ct_handover *q, const void *item);
/* Copies the oldest item out; 0 when there is none. */
int ct_handover_take(struct ct_handover *q, void *out);
/* The items dropped so far. */
uint64_t ct_handover_dropped(struct ct_handover *q);

#endif

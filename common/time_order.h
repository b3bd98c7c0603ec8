/*
 * Events put back into time order: a min-heap of fixed-size items keyed by
 * a time, ties kept in arrival order. The collector drains the threads'
 * rings one after another and the report reads the threads' sequences one
 * packet after another, so events of different threads arrive out of time
 * order; where the order decides the figure (an address freed by one thread
 * and handed out again to another), both put them back through this.
 */
#ifndef CT_COMMON_TIME_ORDER_H
#define CT_COMMON_TIME_ORDER_H

#include <stddef.h>
#include <stdint.h>

#define CT_TIME_ORDER_PAYLOAD_MAX 96

struct ct_time_order {
    unsigned char *items; /* each: key, arrival, then the payload */
    size_t count, capacity, payload_size;
    uint64_t arrivals;
};

/* Events of `payload_size` bytes, at most CT_TIME_ORDER_PAYLOAD_MAX. */
void ct_time_order_init(struct ct_time_order *o, size_t payload_size);
/* Adds an event at time `key`; `payload` is copied. */
void ct_time_order_push(struct ct_time_order *o, uint64_t key, const void *payload);
/* The earliest event's time and payload, taken out of the order; 0 when
 * there is none, or its time is after `up_to`. */
int ct_time_order_pop(struct ct_time_order *o, uint64_t up_to, uint64_t *key, void *payload);
void ct_time_order_free(struct ct_time_order *o);

#endif

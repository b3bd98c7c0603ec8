/*
 * Checks of the time order (common/time_order.c) on its own: many events
 * pushed at random times leave in time order, each with its own payload;
 * events of one time leave in the order they came; nothing after the bound
 * given leaves; and a run of pushes and pops interleaved, as the collector
 * makes them, gives each event once, in order, with nothing left behind.
 */
#include <stdlib.h>

#include "common/time_order.h"
#include "tests/unit/check.h"

#define MANY 20000u

struct payload {
    uint64_t key, serial; /* what it was pushed with, to check it comes back whole */
};

static void random_times_leave_in_order(void)
{
    struct ct_time_order o;
    ct_time_order_init(&o, sizeof(struct payload));
    uint64_t state = 1;
    for (uint64_t i = 0; i < MANY; i++) {
        struct payload p = {ct_check_random(&state) % 1000000, i};
        ct_time_order_push(&o, p.key, &p);
    }
    uint64_t key, last = 0, count = 0, wrong = 0, disorder = 0;
    struct payload p;
    while (ct_time_order_pop(&o, UINT64_MAX, &key, &p)) {
        disorder += key < last;
        wrong += p.key != key;
        last = key;
        count++;
    }
    ct_check_u64(count, MANY, "every event leaves once");
    ct_check_u64(disorder, 0, "they leave in time order");
    ct_check_u64(wrong, 0, "each with its own payload");
    ct_time_order_free(&o);
}

static void ties_keep_their_arrival_order(void)
{
    struct ct_time_order o;
    ct_time_order_init(&o, sizeof(struct payload));
    for (uint64_t i = 0; i < 100; i++) { /* 5, 7, 5, 7, ... */
        struct payload p = {i % 2 ? 7 : 5, i};
        ct_time_order_push(&o, p.key, &p);
    }
    uint64_t key, next = 0, wrong = 0;
    struct payload p;
    while (ct_time_order_pop(&o, UINT64_MAX, &key, &p)) {
        wrong += p.serial != next; /* 0, 2, ..., 98, then 1, 3, ..., 99 */
        next = next == 98 ? 1 : next + 2;
    }
    ct_check_u64(wrong, 0, "events of one time leave in arrival order");
    ct_time_order_free(&o);
}

static void nothing_after_the_bound_leaves(void)
{
    struct ct_time_order o;
    ct_time_order_init(&o, sizeof(struct payload));
    for (uint64_t t = 10; t >= 1; t--) {
        struct payload p = {t, t};
        ct_time_order_push(&o, t, &p);
    }
    uint64_t key, count = 0;
    struct payload p;
    while (ct_time_order_pop(&o, 4, &key, &p))
        count++;
    ct_check_u64(count, 4, "the events up to the bound leave");
    ct_check_u64(o.count, 6, "those after it stay");
    ct_check(!ct_time_order_pop(&o, 4, &key, &p), "and do not leave when asked again");
    ct_check(ct_time_order_pop(&o, 5, &key, &p) && key == 5, "until the bound passes them");
    ct_time_order_free(&o);
}

/* Events come a little out of order and leave up to a bound that follows
 * them, as in the collector: each leaves once, in order. */
static void interleaved_pushes_and_pops(void)
{
    struct ct_time_order o;
    ct_time_order_init(&o, sizeof(struct payload));
    uint64_t state = 7, key, last = 0, count = 0, disorder = 0;
    struct payload p;
    for (uint64_t i = 0; i < MANY; i++) {
        struct payload in = {1000 + i * 10 - ct_check_random(&state) % 500, i};
        ct_time_order_push(&o, in.key, &in);
        while (ct_time_order_pop(&o, i * 10 + 500, &key, &p)) {
            disorder += key < last;
            last = key;
            count++;
        }
    }
    while (ct_time_order_pop(&o, UINT64_MAX, &key, &p)) {
        disorder += key < last;
        last = key;
        count++;
    }
    ct_check_u64(count, MANY, "interleaved: every event leaves once");
    ct_check_u64(disorder, 0, "interleaved: in time order");
    ct_check_u64(o.count, 0, "interleaved: none is left");
    ct_time_order_free(&o);
}

int main(void)
{
    random_times_leave_in_order();
    ties_keep_their_arrival_order();
    nothing_after_the_bound_leaves();
    interleaved_pushes_and_pops();
    return ct_check_finish();
}

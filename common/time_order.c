/*
 * The min-heap behind time_order.h, in one array: item i's children are
 * 2i + 1 and 2i + 2. Each item is its key, its arrival number (which breaks
 * ties, so events of one time leave in the order they came) and the
 * payload, copied in and out.
 */
#include "common/time_order.h"

#include <string.h>

#include "common/array.h"

struct item_head {
    uint64_t key, arrival;
};

static size_t item_size(const struct ct_time_order *o)
{
    return sizeof(struct item_head) + o->payload_size;
}

static struct item_head *item(const struct ct_time_order *o, size_t i)
{
    return (struct item_head *)(o->items + i * item_size(o));
}

static int earlier(const struct ct_time_order *o, size_t a, size_t b)
{
    const struct item_head *x = item(o, a), *y = item(o, b);
    return x->key < y->key || (x->key == y->key && x->arrival < y->arrival);
}

static void swap(struct ct_time_order *o, size_t a, size_t b)
{
    unsigned char held[sizeof(struct item_head) + CT_TIME_ORDER_PAYLOAD_MAX];
    size_t size = item_size(o);
    memcpy(held, item(o, a), size);
    memcpy(item(o, a), item(o, b), size);
    memcpy(item(o, b), held, size);
}

void ct_time_order_init(struct ct_time_order *o, size_t payload_size)
{
    if (payload_size > CT_TIME_ORDER_PAYLOAD_MAX)
        abort(); /* a caller's mistake, found by its first run */
    memset(o, 0, sizeof *o);
    o->payload_size = payload_size;
}

void ct_time_order_push(struct ct_time_order *o, uint64_t key, const void *payload)
{
    o->items = ct_array_reserve(o->items, &o->capacity, o->count + 1, item_size(o));
    struct item_head *added = item(o, o->count);
    *added = (struct item_head){key, o->arrivals++};
    memcpy(added + 1, payload, o->payload_size);
    for (size_t i = o->count++; i > 0 && earlier(o, i, (i - 1) / 2); i = (i - 1) / 2)
        swap(o, i, (i - 1) / 2);
}

int ct_time_order_pop(struct ct_time_order *o, uint64_t up_to, uint64_t *key, void *payload)
{
    if (o->count == 0 || item(o, 0)->key > up_to)
        return 0;
    *key = item(o, 0)->key;
    memcpy(payload, item(o, 0) + 1, o->payload_size);
    if (--o->count > 0)
        memcpy(item(o, 0), item(o, o->count), item_size(o));
    for (size_t i = 0;;) {
        size_t first = i, left = 2 * i + 1, right = left + 1;
        if (left < o->count && earlier(o, left, first))
            first = left;
        if (right < o->count && earlier(o, right, first))
            first = right;
        if (first == i)
            break;
        swap(o, i, first);
        i = first;
    }
    return 1;
}

void ct_time_order_free(struct ct_time_order *o)
{
    free(o->items);
    memset(o, 0, sizeof *o);
}

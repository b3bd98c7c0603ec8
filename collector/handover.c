/*
 * The hand-over queue: a ring of item slots; the lock is held for one copy.
 */
#include "collector/handover.h"

#include <string.h>

void ct_handover_push(struct ct_handover *q, const void *item)
{
    pthread_mutex_lock(&q->lock);
    if (q->count < q->capacity)
        memcpy(q->items + (size_t)((q->head + q->count++) % q->capacity) * q->item_size, item,
               q->item_size);
    else
        q->dropped++;
    pthread_mutex_unlock(&q->lock);
}

int ct_handover_take(struct ct_handover *q, void *out)
{
    pthread_mutex_lock(&q->lock);
    int any = q->count > 0;
    if (any) {
        memcpy(out, q->items + (size_t)q->head * q->item_size, q->item_size);
        q->head = (q->head + 1) % q->capacity;
        q->count--;
    }
    pthread_mutex_unlock(&q->lock);
    return any;
}

uint64_t ct_handover_dropped(struct ct_handover *q)
{
    pthread_mutex_lock(&q->lock);
    uint64_t dropped = q->dropped;
    pthread_mutex_unlock(&q->lock);
    return dropped;
}

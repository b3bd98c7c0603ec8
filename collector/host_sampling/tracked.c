/*
 * A fixed-capacity set of tracked threads or workers: a packed array, so a
 * sweep is one pass, and an index from id to place. Removal moves the last
 * entry into the hole. The capacity bounds what a thread storm can cost the
 * collector: past it, new threads are not sampled (the sampler counts them).
 * Closing every entry's files at the end is the sampler's: a sweep of a
 * round that saw none.
 */
#include "collector/host_sampling/tracked.h"

#include <stdlib.h>

struct ct_tracked *ct_tracked_get(struct ct_tracked_set *s, int32_t id)
{
    uint64_t *place = ct_u64_map_find(&s->index, (uint64_t)(uint32_t)id + 1);
    if (place)
        return &s->items[*place - 1];
    if (s->count == s->capacity)
        return NULL;
    if (!s->items && !(s->items = calloc(s->capacity, sizeof *s->items)))
        abort();
    s->items[s->count] = (struct ct_tracked){.id = id, .files = CT_PROC_FILES_NONE};
    ct_u64_map_put(&s->index, (uint64_t)(uint32_t)id + 1, ++s->count);
    return &s->items[s->count - 1];
}

void ct_tracked_sweep(struct ct_tracked_set *s, uint32_t round,
                      void (*gone)(const struct ct_tracked *t, void *ctx), void *ctx)
{
    for (uint32_t i = 0; i < s->count;) {
        if (s->items[i].round == round) {
            i++;
            continue;
        }
        gone(&s->items[i], ctx);
        ct_proc_files_close(&s->items[i].files);
        uint64_t place;
        ct_u64_map_remove(&s->index, (uint64_t)(uint32_t)s->items[i].id + 1, &place);
        s->items[i] = s->items[--s->count];
        if (i < s->count)
            ct_u64_map_put(&s->index, (uint64_t)(uint32_t)s->items[i].id + 1, i + 1);
    }
}

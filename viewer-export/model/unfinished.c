/*
 * The GPU work that was launched and never completed. With CUPTI, every
 * call that puts work on the GPU begins a flow (its correlation id) and the
 * GPU slice of that work ends it; a launch whose flow no GPU slice ends by
 * the end of the trace was still queued or running then: in a hung job,
 * the kernel (most often a collective) the host is waiting for. Only the
 * launches not yet completed are kept, so memory follows the GPU's queue,
 * not the run's length. Streams are named by CUPTI's id where some work of
 * the same stream handle completed (the handle is the program's, the id
 * the GPU track's), else by the handle.
 */
#include "viewer-export/model/unfinished.h"

#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "common/array.h"

static size_t take_slot(struct ct_unfinished_work *u)
{
    if (u->free_count)
        return u->free_slots[--u->free_count];
    u->launches = ct_array_grow(u->launches, u->count, sizeof *u->launches);
    return u->count++;
}

void ct_unfinished_call(struct ct_unfinished_work *u, int64_t tid, const char *function,
                        const struct ct_event *e, int ended)
{
    if (!e->flow_out || ended)
        return;
    const char *kernel = ct_event_text(e, ct_key_kernel);
    size_t slot = take_slot(u);
    u->launches[slot] = (struct ct_unfinished_launch){e->flow_out,
                                                      (uint64_t)ct_event_int(e, ct_key_stream, 0),
                                                      e->ts,
                                                      tid,
                                                      *kernel ? kernel : function,
                                                      ct_event_text(e, ct_key_site)};
    ct_u64_map_put(&u->by_flow, e->flow_out, slot + 1);
}

void ct_unfinished_gpu(struct ct_unfinished_work *u, const struct ct_event *e)
{
    uint64_t slot;
    if (!e->flow_in || !ct_u64_map_remove(&u->by_flow, e->flow_in, &slot))
        return;
    struct ct_unfinished_launch *l = &u->launches[slot - 1];
    ct_u64_map_put(&u->stream_ids, l->stream + 1, (uint64_t)ct_event_int(e, ct_key_stream, 0) + 1);
    l->flow = 0;
    u->free_slots = ct_array_grow(u->free_slots, u->free_count, sizeof *u->free_slots);
    u->free_slots[u->free_count++] = (size_t)(slot - 1);
}

/* The stream's entry in out[0..*n), added when new and there is room. */
static struct ct_unfinished_stream *stream_entry(const struct ct_unfinished_work *u,
                                                 uint64_t stream, struct ct_unfinished_stream *out,
                                                 size_t *n, size_t most)
{
    for (size_t i = 0; i < *n; i++)
        if (out[i].stream == stream)
            return &out[i];
    if (*n == most)
        return NULL;
    const uint64_t *id = ct_u64_map_find(&u->stream_ids, stream + 1);
    out[*n] = (struct ct_unfinished_stream){stream, id ? (int64_t)*id - 1 : -1, 0, NULL};
    return &out[(*n)++];
}

static int by_first_launch(const void *a, const void *b)
{
    uint64_t x = ((const struct ct_unfinished_stream *)a)->first->ts;
    uint64_t y = ((const struct ct_unfinished_stream *)b)->first->ts;
    return x < y ? -1 : x > y;
}

size_t ct_unfinished_streams(const struct ct_unfinished_work *u, uint64_t after_ns,
                             uint64_t before_ns, struct ct_unfinished_stream *out, size_t most)
{
    size_t n = 0;
    for (size_t i = 0; i < u->count; i++) {
        const struct ct_unfinished_launch *l = &u->launches[i];
        struct ct_unfinished_stream *s = l->flow && l->ts >= after_ns && l->ts < before_ns
                                             ? stream_entry(u, l->stream, out, &n, most)
                                             : NULL;
        if (!s)
            continue;
        s->launches++;
        if (!s->first || l->ts < s->first->ts)
            s->first = l;
    }
    qsort(out, n, sizeof *out, by_first_launch);
    return n;
}

void ct_unfinished_free(struct ct_unfinished_work *u)
{
    free(u->launches);
    free(u->free_slots);
    ct_u64_map_free(&u->by_flow);
    ct_u64_map_free(&u->stream_ids);
    memset(u, 0, sizeof *u);
}

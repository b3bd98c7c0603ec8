/*
 * The per-chunk figures of what a bounded trace must keep whole across its
 * dropped middle: the gap's totals (trace_gap.c), the usage tallies
 * (usage_tally.c), the live-memory levels (gap_memory.c) and the GPU's
 * work (gap_gpu.c) each keep one set of figures per chunk that may be
 * dropped, in a slot indexed by the chunk's number; a slot is reset when a
 * later chunk takes it, and folded into the gap's figures when its chunk
 * is dropped. A file never holds as
 * many chunks at once as there are slots, so a slot reused is one whose
 * chunk was already kept or folded.
 */
#include "collector/tracks/chunk_keeper.h"

#include <stdlib.h>
#include <string.h>

static void *slot_at(struct ct_chunk_keeper *k, size_t i)
{
    return k->figures + i * k->size;
}

static void forget(struct ct_chunk_keeper *k, size_t i)
{
    if (k->release)
        k->release(slot_at(k, i));
    memset(slot_at(k, i), 0, k->size);
    k->chunk[i] = 0;
}

void *ct_chunk_keeper_of(struct ct_chunk_keeper *k, uint32_t chunk)
{
    if (!k->figures && !(k->figures = calloc(CT_CHUNK_KEEPER_SLOTS, k->size)))
        abort();
    size_t i = chunk % CT_CHUNK_KEEPER_SLOTS;
    if (k->chunk[i] != chunk) {
        forget(k, i);
        k->chunk[i] = chunk;
    }
    return slot_at(k, i);
}

void ct_chunk_keeper_fold(struct ct_chunk_keeper *k, uint32_t first_kept,
                          void (*fold)(void *figures, void *into), void *into)
{
    for (size_t i = 0; k->figures && i < CT_CHUNK_KEEPER_SLOTS; i++)
        if (k->chunk[i] && k->chunk[i] < first_kept) {
            fold(slot_at(k, i), into);
            forget(k, i);
        }
}

/*
 * The state a chunk of a bounded trace must carry again for Perfetto to
 * read it alone once the chunks before it are dropped: the live sequences
 * (each restarts with a fresh id, so its interned data is defined anew),
 * every track descriptor still in use (a counter's must come before its
 * values in the file), and every counter's latest value, re-anchored at
 * its own timestamp so that live memory is exact on both sides of a gap.
 * Descriptors are kept packed, in the order first written, and go when
 * the sequence that wrote them is released (a thread that ended).
 */
#include "collector/perfetto/chunk_replay.h"

#include <stdlib.h>
#include <string.h>

#include "common/u64_map.h"

struct entry {
    struct entry *prev, *next;
    struct ct_sequence *seq;
    uint64_t uuid;
    uint8_t *packed;
    size_t len;
    int has_value;
    uint64_t ts;
    int64_t value;
};

static struct ct_sequence *first_seq, *last_seq;
static struct entry *first_entry, *last_entry;
static struct ct_u64_map by_uuid; /* uuid -> struct entry * */
static int replaying;             /* what is written again is known already */

void ct_replay_register(struct ct_sequence *seq)
{
    seq->live = 1;
    seq->prev_live = last_seq;
    seq->next_live = NULL;
    *(last_seq ? &last_seq->next_live : &first_seq) = seq;
    last_seq = seq;
}

static void unlink_entry(struct entry *e)
{
    *(e->prev ? &e->prev->next : &first_entry) = e->next;
    *(e->next ? &e->next->prev : &last_entry) = e->prev;
    uint64_t was;
    ct_u64_map_remove(&by_uuid, e->uuid, &was);
    free(e->packed);
    free(e);
}

void ct_replay_forget(struct ct_sequence *seq)
{
    if (!seq->live)
        return;
    for (struct entry *e = first_entry, *next; e; e = next) {
        next = e->next;
        if (e->seq == seq)
            unlink_entry(e);
    }
    *(seq->prev_live ? &seq->prev_live->next_live : &first_seq) = seq->next_live;
    *(seq->next_live ? &seq->next_live->prev_live : &last_seq) = seq->prev_live;
    seq->live = 0;
}

static struct entry *find(uint64_t uuid)
{
    uint64_t *found = ct_u64_map_find(&by_uuid, uuid);
    return found ? (struct entry *)(uintptr_t)*found : NULL;
}

static struct entry *new_entry(struct ct_sequence *seq, uint64_t uuid)
{
    struct entry *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    e->seq = seq;
    e->uuid = uuid;
    e->prev = last_entry;
    *(last_entry ? &last_entry->next : &first_entry) = e;
    last_entry = e;
    ct_u64_map_put(&by_uuid, uuid, (uint64_t)(uintptr_t)e);
    return e;
}

void ct_replay_descriptor(struct ct_sequence *seq, uint64_t uuid, const uint8_t *packed, size_t len)
{
    if (replaying || !seq->live)
        return;
    struct entry *e = find(uuid);
    if (!e)
        e = new_entry(seq, uuid);
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, packed, len);
    free(e->packed);
    e->packed = copy;
    e->len = len;
    e->seq = seq;
}

void ct_replay_counter(uint64_t uuid, uint64_t ts, int64_t value)
{
    struct entry *e = replaying ? NULL : find(uuid);
    if (!e)
        return;
    e->has_value = 1;
    e->ts = ts;
    e->value = value;
}

void ct_replay_all(void (*restart)(struct ct_sequence *seq),
                   void (*describe)(struct ct_sequence *seq, const uint8_t *packed, size_t len))
{
    replaying = 1;
    for (struct ct_sequence *s = first_seq; s; s = s->next_live)
        restart(s);
    for (struct entry *e = first_entry; e; e = e->next)
        describe(e->seq, e->packed, e->len);
    for (struct entry *e = first_entry; e; e = e->next)
        if (e->has_value)
            ct_write_counter(e->seq, e->uuid, e->ts, e->value);
    replaying = 0;
}

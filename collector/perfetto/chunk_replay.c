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

#include "collector/perfetto/writer.h"

struct ct_replay_entry {
    struct ct_replay_entry *prev, *next;
    struct ct_sequence *seq;
    uint64_t uuid;
    uint8_t *packed;
    size_t len;
    int has_value;
    uint64_t ts;
    int64_t value;
};

void ct_replay_register(struct ct_replay *r, struct ct_sequence *seq)
{
    seq->live = 1;
    seq->prev_live = r->last_seq;
    seq->next_live = NULL;
    *(r->last_seq ? &r->last_seq->next_live : &r->first_seq) = seq;
    r->last_seq = seq;
}

static void unlink_entry(struct ct_replay *r, struct ct_replay_entry *e)
{
    *(e->prev ? &e->prev->next : &r->first_entry) = e->next;
    *(e->next ? &e->next->prev : &r->last_entry) = e->prev;
    uint64_t was;
    ct_u64_map_remove(&r->by_uuid, e->uuid, &was);
    free(e->packed);
    free(e);
}

void ct_replay_forget(struct ct_replay *r, struct ct_sequence *seq)
{
    if (!seq->live)
        return;
    for (struct ct_replay_entry *e = r->first_entry, *next; e; e = next) {
        next = e->next;
        if (e->seq == seq)
            unlink_entry(r, e);
    }
    *(seq->prev_live ? &seq->prev_live->next_live : &r->first_seq) = seq->next_live;
    *(seq->next_live ? &seq->next_live->prev_live : &r->last_seq) = seq->prev_live;
    seq->live = 0;
}

static struct ct_replay_entry *find(const struct ct_replay *r, uint64_t uuid)
{
    uint64_t *found = ct_u64_map_find(&r->by_uuid, uuid);
    return found ? (struct ct_replay_entry *)(uintptr_t)*found : NULL;
}

static struct ct_replay_entry *new_entry(struct ct_replay *r, struct ct_sequence *seq,
                                         uint64_t uuid)
{
    struct ct_replay_entry *e = calloc(1, sizeof *e);
    if (!e)
        abort();
    e->seq = seq;
    e->uuid = uuid;
    e->prev = r->last_entry;
    *(r->last_entry ? &r->last_entry->next : &r->first_entry) = e;
    r->last_entry = e;
    ct_u64_map_put(&r->by_uuid, uuid, (uint64_t)(uintptr_t)e);
    return e;
}

void ct_replay_descriptor(struct ct_replay *r, struct ct_sequence *seq, uint64_t uuid,
                          const uint8_t *packed, size_t len)
{
    if (r->replaying || !seq->live)
        return;
    struct ct_replay_entry *e = find(r, uuid);
    if (!e)
        e = new_entry(r, seq, uuid);
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, packed, len);
    free(e->packed);
    e->packed = copy;
    e->len = len;
    e->seq = seq;
}

void ct_replay_counter(struct ct_replay *r, uint64_t uuid, uint64_t ts, int64_t value)
{
    struct ct_replay_entry *e = r->replaying ? NULL : find(r, uuid);
    if (!e)
        return;
    e->has_value = 1;
    e->ts = ts;
    e->value = value;
}

void ct_replay_all(struct ct_replay *r, void (*restart)(struct ct_sequence *seq),
                   void (*describe)(struct ct_sequence *seq, const uint8_t *packed, size_t len))
{
    r->replaying = 1;
    for (struct ct_sequence *s = r->first_seq; s; s = s->next_live)
        restart(s);
    for (struct ct_replay_entry *e = r->first_entry; e; e = e->next)
        describe(e->seq, e->packed, e->len);
    for (struct ct_replay_entry *e = r->first_entry; e; e = e->next)
        if (e->has_value)
            ct_write_counter(e->seq, e->uuid, e->ts, e->value);
    r->replaying = 0;
}

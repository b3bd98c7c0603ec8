/*
 * What each chunk of a bounded trace says again at its start, so that it
 * reads without the chunks before it (chunk_replay.c).
 */
#ifndef CT_COLLECTOR_CHUNK_REPLAY_H
#define CT_COLLECTOR_CHUNK_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/u64_map.h"

struct ct_sequence;
struct ct_replay_entry;

/* One writer's: its live sequences, and its descriptors in the order first
 * written. All zero is empty. */
struct ct_replay {
    struct ct_sequence *first_seq, *last_seq;
    struct ct_replay_entry *first_entry, *last_entry;
    struct ct_u64_map by_uuid; /* uuid -> struct ct_replay_entry * */
    int replaying;             /* what is written again is known already */
};

/* A sequence begins or ends; its descriptors end with it. */
void ct_replay_register(struct ct_replay *r, struct ct_sequence *seq);
void ct_replay_forget(struct ct_replay *r, struct ct_sequence *seq);
/* A track descriptor, packed, written on `seq` (a later one of the same
 * uuid replaces it), and a counter's latest value. */
void ct_replay_descriptor(struct ct_replay *r, struct ct_sequence *seq, uint64_t uuid,
                          const uint8_t *packed, size_t len);
void ct_replay_counter(struct ct_replay *r, uint64_t uuid, uint64_t ts, int64_t value);
/* Restarts every live sequence, then writes each descriptor again, in the
 * order they were first written (parents before children), and then each
 * counter's latest value at its own time. */
void ct_replay_all(struct ct_replay *r, void (*restart)(struct ct_sequence *seq),
                   void (*describe)(struct ct_sequence *seq, const uint8_t *packed, size_t len));

#endif

/*
 * What each chunk of a bounded trace says again at its start, so that it
 * reads without the chunks before it (chunk_replay.c).
 */
#ifndef CT_COLLECTOR_CHUNK_REPLAY_H
#define CT_COLLECTOR_CHUNK_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/writer.h"

/* A sequence begins or ends; its descriptors end with it. */
void ct_replay_register(struct ct_sequence *seq);
void ct_replay_forget(struct ct_sequence *seq);
/* A track descriptor, packed, written on `seq` (a later one of the same
 * uuid replaces it), and a counter's latest value. */
void ct_replay_descriptor(struct ct_sequence *seq, uint64_t uuid, const uint8_t *packed,
                          size_t len);
void ct_replay_counter(uint64_t uuid, uint64_t ts, int64_t value);
/* Restarts every live sequence, then writes each descriptor again, in the
 * order they were first written (parents before children), and then each
 * counter's latest value at its own time. */
void ct_replay_all(void (*restart)(struct ct_sequence *seq),
                   void (*describe)(struct ct_sequence *seq, const uint8_t *packed, size_t len));

#endif

/*
 * One slice per CUDA call, on its thread's track, named exactly as the
 * function called and annotated with what its family carries.
 */
#ifndef CT_COLLECTOR_CALL_SLICES_H
#define CT_COLLECTOR_CALL_SLICES_H

#include <stdint.h>

#include "collector/tracks/call_sites.h"
#include "cudatrace/shm_layout.h"
#include "collector/perfetto/writer.h"

void ct_call_slices_start(void);
/* "XxYxZ" for a packed dim3 (ct_pack_dim3), as a string id (GPU slices use it too). */
uint32_t ct_dim3_string(uint64_t packed);
/* The family (enum ct_family) of a valid call record, or -1. */
int ct_call_family(const struct ct_record *r);
/* Annotations a call's slice carries besides its family's (what it did to
 * a CUDA graph). */
#define CT_CALL_EXTRA_ARGS 3
struct ct_call_extra {
    struct ct_arg args[CT_CALL_EXTRA_ARGS];
    int count;
};
/* Writes a call's slice on `seq`'s default track, with its site's
 * annotations when it has one, `extra` (NULL: none), and its link to the
 * GPU work (NULL: none). */
void ct_call_slice(struct ct_sequence *seq, const struct ct_record *r, uint64_t begin, uint64_t end,
                   struct ct_call_site site, const struct ct_flow *flow,
                   const struct ct_call_extra *extra);
/* A thread's totals per function, whatever the rings did with the records:
 * one "cudatrace.calls" instant per function it called, on its track. */
void ct_call_totals(struct ct_sequence *seq, const struct ct_call_stats *stats, uint64_t ts);
/* A call its thread was still inside when the process ended. */
void ct_call_inflight_slice(struct ct_sequence *seq, uint32_t func, uint64_t begin, uint64_t end,
                            struct ct_call_site site);

#endif

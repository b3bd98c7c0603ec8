/*
 * What a CUDA call costs the host, in the terms of the usage findings: does
 * it block (a sync, a synchronous copy, an async copy from pageable memory,
 * cudaFree), is it a pageable or a small host<->device copy, a launch, an
 * allocation or free whose time counts. The
 * collector tallies by these rules over every record (so that a bounded
 * trace's dropped middle still counts, collector/tracks/usage_tally.c) and
 * the report applies them to the slices it reads (viewer-export/model/
 * usage.c): one set of rules for both. Pinned host memory is what
 * cudaMallocHost, cudaHostAlloc and cudaHostRegister returned and was not
 * yet released.
 */
#ifndef CT_CALL_COST_H
#define CT_CALL_COST_H

#include <stdint.h>

#include "common/u64_map.h"
#include "cudatrace/functions.h"

/* The default of the report's small_copy_bytes threshold, and the size
 * below which the collector counts a copy small. */
#define CT_SMALL_COPY_BYTES 65536

enum ct_copy_direction { CT_COPY_OTHER, CT_COPY_TO_DEVICE, CT_COPY_TO_HOST };

enum ct_call_cost_flags {
    CT_COST_BLOCKS = 1,   /* holds the host up until the device is done */
    CT_COST_PAGEABLE = 2, /* an async copy from or to pageable host memory */
    CT_COST_SMALL = 4,    /* a host<->device copy under the small size */
    CT_COST_LAUNCH = 8,   /* a kernel or graph launch */
    /* an allocation or free of device memory (or a virtual-memory handle's
     * create or release), whose time slow-alloc weighs */
    CT_COST_ALLOC_TIME = 16,
    /* no call's cost: an NVTX range whose name says step (common/step_names.h),
     * whose time a bounded trace's dropped middle keeps for the report's steps */
    CT_COST_STEP_RANGE = 32,
};

/* What one call of `fn` is; for a copy, its direction, bytes and host
 * address (ct_copy_host_address). */
struct ct_call_shape {
    enum ct_function fn;
    enum ct_copy_direction direction;
    uint64_t bytes, host;
};

/* Host memory the runtime pinned: start -> bytes. */
struct ct_pinned_memory {
    struct ct_u64_map ranges;
};

/* The host side of a copy from `src` to `dst`. */
static inline uint64_t ct_copy_host_address(enum ct_copy_direction d, uint64_t dst, uint64_t src)
{
    return d == CT_COPY_TO_DEVICE ? src : dst;
}

/* The record's copy kind (cudaMemcpyKind, or CT_COPY_KIND_PEER) as a direction. */
enum ct_copy_direction ct_copy_direction_of_kind(uint64_t kind);
/* The flags of `call`; copies under `small_bytes` are small. */
unsigned ct_call_cost(const struct ct_pinned_memory *pinned, const struct ct_call_shape *call,
                      uint64_t small_bytes);
/* Notes a successful call of `fn` that pins or unpins host memory at `ptr`. */
void ct_pinned_note(struct ct_pinned_memory *pinned, enum ct_function fn, uint64_t ptr,
                    uint64_t bytes);
void ct_pinned_free(struct ct_pinned_memory *pinned);

#endif

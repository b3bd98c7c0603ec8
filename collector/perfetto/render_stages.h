/*
 * GPU work as Perfetto's own GPU records (render_stages.c).
 */
#ifndef CT_COLLECTOR_PERFETTO_RENDER_STAGES_H
#define CT_COLLECTOR_PERFETTO_RENDER_STAGES_H

#include <stdint.h>

#include "collector/perfetto/writer.h"

/* One piece of GPU work. Names and string values are string ids. */
struct ct_render_stage {
    uint64_t event_id; /* what the host call's gpu_correlation names; 0: none */
    uint64_t begin_ns, end_ns;
    int32_t pid;
    uint32_t device;
    uint32_t queue; /* the hardware queue's name: one per device and stream */
    uint32_t stage; /* what kind of work: kernel, memcpy, memset */
    uint32_t name;
    uint32_t kernel, demangled; /* a kernel's name as compiled and demangled; 0: not a kernel */
    uint64_t grid, block;       /* a kernel's launch shape (ct_pack_dim3) */
    const struct ct_arg *args;  /* the figures the GPU track's slice would carry */
    int nargs;
};

void ct_render_stage_write(struct ct_sequence *seq, const struct ct_render_stage *stage);

#endif

/*
 * The node the runtime double and the NVML double present together: its
 * GPUs by PCI position (NVML's index in the NVML double), each with the PCI
 * bus and the UUID both doubles give it, so that a test can order CUDA's
 * devices differently from NVML's and the tracer can only match them by
 * what the two libraries agree on.
 */
#ifndef CT_DOUBLE_NODE_H
#define CT_DOUBLE_NODE_H

#include <stdio.h>

/* The PCI bus of the GPU at `position`. */
#define CT_DOUBLE_NODE_BUS(position) (0x18u + (position))

/* The UUID of the GPU at `position` ("GPU-c0ffee01-0000-4000-8000-000000000001"),
 * or of its MIG instance `mig` (1 on; 0 the GPU itself), as NVML writes it. */
static inline void ct_double_node_uuid(unsigned position, unsigned mig, char *out, size_t size)
{
    snprintf(out, size, "%s-c0ffee%02u-%04u-4000-8000-%012u", mig ? "MIG" : "GPU", position, mig,
             position);
}

#endif

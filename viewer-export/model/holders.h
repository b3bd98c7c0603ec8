/*
 * Who holds device memory apart from the program's own allocator: the CUDA
 * library (NCCL, cuBLAS, cuDNN, ...) an allocation came from, by the
 * innermost frame of its call stack outside the runtime, the driver, CUPTI
 * and the tracer, with the live and peak bytes each library held.
 */
#ifndef CT_MODEL_HOLDERS_H
#define CT_MODEL_HOLDERS_H

#include <stdint.h>

#define CT_HOLDERS 16

struct ct_holders {
    struct ct_holder {
        const char *library; /* its family, "nccl"; interned */
        uint64_t live, peak;
    } items[CT_HOLDERS];
    int count;
};

/* The library family of the CUDA library a call with this `stack`
 * annotation came from; NULL when it came from elsewhere (the program, the
 * framework's own allocator) or the stack says nothing. */
const char *ct_allocating_library(const char *stack);
/* A block of `bytes` the library allocated, or freed (NULL: none). */
void ct_holders_add(struct ct_holders *h, const char *library, uint64_t bytes);
void ct_holders_remove(struct ct_holders *h, const char *library, uint64_t bytes);

#endif

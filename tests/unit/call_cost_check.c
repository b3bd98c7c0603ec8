/*
 * Checks of the rules both the collector's tallies and the report apply
 * (common/call_cost.c): syncs and cudaFree block, allocations, frees and
 * virtual-memory creates and releases are timed, launches are launches, a
 * synchronous copy blocks, an async one blocks only from pageable memory
 * (inside a pinned range it does not, nor once that range was freed again
 * is it pinned), copies under the size are small, and device-to-device
 * async copies cost nothing.
 */
#include "common/call_cost.h"
#include "tests/unit/check.h"

#define PINNED 0x7f0000000000ull

static unsigned cost_of(const struct ct_pinned_memory *p, enum ct_function fn,
                        enum ct_copy_direction d, uint64_t bytes, uint64_t host)
{
    struct ct_call_shape shape = {fn, d, bytes, host};
    return ct_call_cost(p, &shape, CT_SMALL_COPY_BYTES);
}

int main(void)
{
    struct ct_pinned_memory p = {0};
    ct_check_u64(cost_of(&p, CT_FN_cudaDeviceSynchronize, CT_COPY_OTHER, 0, 0), CT_COST_BLOCKS,
                 "a device sync blocks");
    ct_check_u64(cost_of(&p, CT_FN_cudaFree, CT_COPY_OTHER, 0, 0),
                 CT_COST_BLOCKS | CT_COST_ALLOC_TIME, "cudaFree blocks, and its time counts");
    ct_check_u64(cost_of(&p, CT_FN_cudaFreeAsync, CT_COPY_OTHER, 0, 0), CT_COST_ALLOC_TIME,
                 "cudaFreeAsync does not block");
    ct_check_u64(cost_of(&p, CT_FN_cudaMalloc, CT_COPY_OTHER, 0, 0), CT_COST_ALLOC_TIME,
                 "an allocation's time counts");
    ct_check_u64(cost_of(&p, CT_FN_cuMemCreate, CT_COPY_OTHER, 0, 0), CT_COST_ALLOC_TIME,
                 "a handle's create counts");
    ct_check_u64(cost_of(&p, CT_FN_cuMemMap, CT_COPY_OTHER, 0, 0), 0, "a mapping does not");
    ct_check_u64(cost_of(&p, CT_FN_cudaLaunchKernel, CT_COPY_OTHER, 0, 0), CT_COST_LAUNCH,
                 "a launch");
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpy, CT_COPY_TO_DEVICE, 1 << 20, 0x1000), CT_COST_BLOCKS,
                 "a large synchronous copy blocks");
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpyAsync, CT_COPY_TO_HOST, 4096, 0x1000),
                 CT_COST_BLOCKS | CT_COST_PAGEABLE | CT_COST_SMALL,
                 "a small async copy to pageable memory");
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpyAsync, CT_COPY_OTHER, 4096, 0), 0,
                 "an async device-to-device copy");
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpy, CT_COPY_OTHER, 4096, 0), CT_COST_BLOCKS,
                 "a synchronous device-to-device copy blocks, and is not small");
    ct_pinned_note(&p, CT_FN_cudaMallocHost, PINNED, 1 << 20);
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpyAsync, CT_COPY_TO_DEVICE, 1 << 20, PINNED + 4096), 0,
                 "an async copy from inside a pinned range");
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpyAsync, CT_COPY_TO_DEVICE, 1 << 20, PINNED + (1 << 20)),
                 CT_COST_BLOCKS | CT_COST_PAGEABLE, "the byte after the range is pageable");
    ct_pinned_note(&p, CT_FN_cudaFreeHost, PINNED, 0);
    ct_check_u64(cost_of(&p, CT_FN_cudaMemcpyAsync, CT_COPY_TO_DEVICE, 1 << 20, PINNED),
                 CT_COST_BLOCKS | CT_COST_PAGEABLE, "freed pinned memory is pageable again");
    ct_pinned_note(&p, CT_FN_cudaHostRegister, PINNED, 4096);
    ct_pinned_note(&p, CT_FN_cudaHostUnregister, PINNED, 0);
    ct_check_u64(p.ranges.count, 0, "registered and unregistered");
    ct_check_u64(ct_copy_direction_of_kind(1), CT_COPY_TO_DEVICE, "kind 1");
    ct_check_u64(ct_copy_direction_of_kind(2), CT_COPY_TO_HOST, "kind 2");
    ct_check_u64(ct_copy_direction_of_kind(4), CT_COPY_OTHER, "default kind");
    ct_check_u64(ct_copy_host_address(CT_COPY_TO_DEVICE, 1, 2), 2, "the host side of H2D");
    ct_check_u64(ct_copy_host_address(CT_COPY_TO_HOST, 1, 2), 1, "the host side of D2H");
    ct_pinned_free(&p);
    return ct_check_finish();
}

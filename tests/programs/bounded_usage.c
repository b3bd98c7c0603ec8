/*
 * A long run whose trouble lies in its middle, for the usage findings of a
 * bounded trace (tests/test_collector_bounded_usage.py). `rounds` rounds of
 * 10 launches and 100 memsets whose arguments vary (detail that compresses
 * little, as in long_run.c); the middle half of the rounds each add one
 * cudaDeviceSynchronize (its cost the double's CT_DOUBLE_SYNC_NS) and one
 * 4 KiB cudaMemcpyAsync to the device from pageable memory in the "stalls"
 * mode, and one 1 MiB cudaMemcpyAsync from pinned memory in the "healthy"
 * mode. Prints how many syncs and copies it made. In the "leaks" and
 * "holds" modes the middle rounds each allocate a 64 KiB block and keep it,
 * in the "frees" mode they allocate one and free the one before (the last is
 * freed after the middle); all three then ask for 1 TiB, which fails
 * (CT_DOUBLE_MEM_LIMIT below it), with 1 MiB and the kept blocks live, and
 * print how many blocks they kept; "holds" frees them after that. In the
 * "allocs" mode the middle rounds each allocate a block and free it again,
 * every tenth a 64 KiB one (slow under CT_DOUBLE_SLOW_ALLOC_NS with
 * CT_DOUBLE_SLOW_ALLOC_BYTES=65536), the others 4 KiB, and it prints how
 * many allocations it made in the middle and how many of them were large.
 * In the "sites" mode the middle rounds take turns among 256 call sites
 * with names of over 250 characters, 64 that synchronise, 64 that copy 4
 * KiB from pinned memory, 64 that copy 4 KiB from pageable memory and 64
 * that launch a kernel: more text than the gap marker's packets have room
 * for; it prints how many middle rounds it made and how many of their
 * calls succeeded.
 * In the "idle" and "busy" modes every round ends with a
 * cudaDeviceSynchronize, so that the GPU (the driver double's, whose
 * kernels last CT_DOUBLE_KERNEL_NS) has done its work before the next; in
 * "idle" the middle rounds then sleep IDLE_MS each, and three of them
 * (those at a half, five eighths and three quarters of the middle) LONG_MS,
 * LONG_MS - 20 and LONG_MS - 40 ms: the GPU's longest idle gaps. It prints
 * how many middle rounds slept.
 * In the "steps" mode every round is an NVTX range "train_step" that
 * sleeps STEP_MS (an input wait, so that its time is the program's rather
 * than the machine's) and ends with a cudaDeviceSynchronize, and every
 * STEP_SLOW_EVERY-th middle round sleeps STEP_SLOW_MS more: slow steps in
 * what a cap drops. It prints how many slept more.
 * Usage: bounded_usage stalls|healthy|leaks|holds|frees|allocs|vmm|sites|idle|busy|steps
 *        [rounds=1500]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "program_args.h"

#define MIB ((size_t)1 << 20)
#define NOINLINE __attribute__((noinline))
#define SMALL 4096
#define BLOCK (64 * 1024)

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void bounded_usage_kernel(void) {}

static void background(void *block)
{
    static unsigned long long state = 1;
    dim3 one = {1, 1, 1};
    for (int i = 0; i < 10; i++)
        cudaLaunchKernel((const void *)bounded_usage_kernel, one, one, NULL, 0, NULL);
    for (int i = 0; i < 100; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size_t offset = (state >> 20) % (MIB / 2), size = (state >> 44) % 4096;
        cudaMemsetAsync((char *)block + offset, (int)(state >> 32), size, NULL);
    }
}

static NOINLINE void stall(void *device, const void *pageable)
{
    cudaDeviceSynchronize();                                                /* site: sync */
    cudaMemcpyAsync(device, pageable, SMALL, cudaMemcpyHostToDevice, NULL); /* site: pageable */
}

static NOINLINE void pinned_copy(void *device, const void *pinned)
{
    cudaMemcpyAsync(device, pinned, MIB, cudaMemcpyHostToDevice, NULL);
}

static NOINLINE void *middle_block(void)
{
    void *block = NULL;
    cudaMalloc(&block, BLOCK); /* site: the middle's blocks */
    return block;
}

/* The "allocs" mode's middle round `round`: a block made and freed. 1 if
 * it was a large one. */
static NOINLINE int timed_round(unsigned long long round)
{
    int large = round % 10 == 0;
    void *block = NULL;
    cudaMalloc(&block, large ? BLOCK : SMALL); /* site: the timed allocations */
    cudaFree(block);
    return large;
}

/* The "vmm" mode (the driver double's libcuda.so.1): the middle rounds each
 * make a 64 KiB virtual-memory handle and map it at the next block of a
 * reserved range, all kept to the end; it prints how many it made. */
static struct {
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
} cu;
static CUdeviceptr vmm_base;

static int vmm_start(unsigned long long rounds)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || !(*(void **)&cu.create = dlsym(lib, "cuMemCreate")) ||
        !(*(void **)&cu.reserve = dlsym(lib, "cuMemAddressReserve")) ||
        !(*(void **)&cu.map = dlsym(lib, "cuMemMap")))
        return 0;
    return cu.reserve(&vmm_base, rounds * BLOCK, 0, 0, 0) == CUDA_SUCCESS;
}

static NOINLINE int vmm_round(unsigned long long round)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h = 0;
    if (cu.create(&h, BLOCK, &prop, 0) != CUDA_SUCCESS) /* site: the middle's handles */
        return 0;
    return cu.map(vmm_base + round * BLOCK, BLOCK, 0, h, 0) == CUDA_SUCCESS;
}

/* The "sites" mode's call sites: four kinds of 64 functions each, whose
 * names make each site's text over 250 bytes (a symbol's name is cut past
 * 256, so each begins with its number); each returns whether its call
 * succeeded, so that the call is not a tail call and the site its own. */
#define LONG_NAME(kind, n)                                                                         \
    kind##_##n##_site_whose_name_is_long_enough_that_a_few_hundred_of_these_call_sites_overflow_the_gap_\
markers_packets_when_a_bounded_trace_carries_their_usage_tallies_across_the_dropped_middle_of_the_\
run_so_the_collector_must_say_what_it_cut_rather_than_drop_it_silently
#define SITE_FUNCTIONS(n)                                                                          \
    static NOINLINE int LONG_NAME(sync, n)(void *device, const void *pinned)                       \
    {                                                                                              \
        (void)device, (void)pinned;                                                                \
        return cudaDeviceSynchronize() == cudaSuccess;                                             \
    }                                                                                              \
    static NOINLINE int LONG_NAME(copy, n)(void *device, const void *pinned)                       \
    {                                                                                              \
        return cudaMemcpyAsync(device, pinned, SMALL, cudaMemcpyHostToDevice, NULL) ==             \
               cudaSuccess;                                                                        \
    }                                                                                              \
    static NOINLINE int LONG_NAME(pageable, n)(void *device, const void *pinned)                   \
    {                                                                                              \
        static char pageable[SMALL];                                                               \
        (void)pinned;                                                                              \
        return cudaMemcpyAsync(device, pageable, SMALL, cudaMemcpyHostToDevice, NULL) ==           \
               cudaSuccess;                                                                        \
    }                                                                                              \
    static NOINLINE int LONG_NAME(launch, n)(void *device, const void *pinned)                     \
    {                                                                                              \
        dim3 one = {1, 1, 1};                                                                      \
        (void)device, (void)pinned;                                                                \
        return cudaLaunchKernel((const void *)bounded_usage_kernel, one, one, NULL, 0, NULL) ==    \
               cudaSuccess;                                                                        \
    }
#define SITE_POINTERS(n)                                                                           \
    LONG_NAME(sync, n), LONG_NAME(copy, n), LONG_NAME(pageable, n), LONG_NAME(launch, n),
#define EIGHT(X, p) X(p##0) X(p##1) X(p##2) X(p##3) X(p##4) X(p##5) X(p##6) X(p##7)
#define SIXTY_FOUR(X)                                                                              \
    EIGHT(X, 0) EIGHT(X, 1) EIGHT(X, 2) EIGHT(X, 3) EIGHT(X, 4) EIGHT(X, 5) EIGHT(X, 6) EIGHT(X, 7)

SIXTY_FOUR(SITE_FUNCTIONS)
static int (*const sites[])(void *, const void *) = {SIXTY_FOUR(SITE_POINTERS)};

#define IDLE_MS 4
#define LONG_MS 100
#define STEP_MS 1
#define STEP_SLOW_EVERY 20
#define STEP_SLOW_MS 3

static void sleep_ms(long ms)
{
    struct timespec pause = {ms / 1000, ms % 1000 * 1000000L};
    while (nanosleep(&pause, &pause) != 0)
        ;
}

/* The "idle" mode's middle round `round` of `rounds`: the host away from
 * the GPU; 1 if it slept. */
static int idle_round(unsigned long long round, unsigned long long rounds)
{
    long ms = IDLE_MS;
    if (round == rounds / 2)
        ms = LONG_MS;
    else if (round == rounds * 5 / 8)
        ms = LONG_MS - 20;
    else if (round == rounds * 3 / 4)
        ms = LONG_MS - 40;
    sleep_ms(ms);
    return 1;
}

static void **kept;
static unsigned long long kept_count;
static void *previous;

/* The memory modes' middle round: a block kept, or one made and the one
 * before it freed. */
static void memory_round(int keeps)
{
    void *block = middle_block();
    if (keeps) {
        kept[kept_count++] = block;
        return;
    }
    cudaFree(previous);
    previous = block;
}

/* What the memory modes do after the middle: the allocation that fails,
 * then, in the "holds" mode, the kept blocks freed. 1 if it did not fail. */
static int memory_end(int holds)
{
    void *huge = NULL;
    cudaFree(previous);
    if (cudaMalloc(&huge, MIB << 20) == cudaSuccess)
        return 1;
    printf("blocks %llu\n", kept_count);
    for (unsigned long long i = 0; holds && i < kept_count; i++)
        cudaFree(kept[i]);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc < 2 ? "" : argv[1];
    int stalls = strcmp(mode, "stalls") == 0, holds = strcmp(mode, "holds") == 0;
    int keeps = holds || strcmp(mode, "leaks") == 0, memory = keeps || strcmp(mode, "frees") == 0;
    int allocs = strcmp(mode, "allocs") == 0, vmm = strcmp(mode, "vmm") == 0;
    int many_sites = strcmp(mode, "sites") == 0;
    int steps = strcmp(mode, "steps") == 0;
    int idle = strcmp(mode, "idle") == 0, synced = idle || steps || strcmp(mode, "busy") == 0;
    if (!stalls && !memory && !allocs && !vmm && !many_sites && !synced &&
        strcmp(mode, "healthy") != 0) {
        fprintf(stderr,
                "usage: bounded_usage "
                "stalls|healthy|leaks|holds|frees|allocs|vmm|sites|idle|busy|steps [rounds]\n");
        return 2;
    }
    unsigned long long rounds = arg_or(argc, argv, 2, 1500), middle = 0, large = 0, calls_done = 0,
                       slept = 0;
    kept = calloc(rounds + 1, sizeof *kept);
    void *device, *pinned;
    char *pageable = calloc(1, SMALL);
    if (!pageable || !kept || cudaMalloc(&device, MIB) != cudaSuccess ||
        cudaMallocHost(&pinned, MIB) != cudaSuccess || (vmm && !vmm_start(rounds)))
        return 1;
    for (unsigned long long r = 0; r < rounds; r++) {
        int in_middle = r >= rounds / 4 && r < rounds - rounds / 4;
        if (steps) {
            nvtxRangePushA("train_step");
            sleep_ms(STEP_MS);
        }
        background(device);
        if (steps && in_middle && (middle + 1) % STEP_SLOW_EVERY == 0) {
            sleep_ms(STEP_SLOW_MS);
            slept++;
        }
        if (synced)
            cudaDeviceSynchronize();
        if (steps)
            nvtxRangePop();
        if (!in_middle)
            continue;
        middle++;
        if (synced)
            slept += idle && idle_round(middle - 1, rounds - 2 * (rounds / 4));
        else if (vmm)
            kept_count += vmm_round(middle - 1);
        else if (allocs)
            large += timed_round(middle - 1);
        else if (memory)
            memory_round(keeps);
        else if (synced)
            printf("slept %llu\n", slept);
        else if (many_sites)
            calls_done += sites[(middle - 1) % (sizeof sites / sizeof sites[0])](device, pinned);
        else if (stalls)
            stall(device, pageable);
        else
            pinned_copy(device, pinned);
    }
    if (memory && memory_end(holds))
        return 1;
    if (vmm)
        printf("handles %llu\n", kept_count);
    else if (allocs)
        printf("allocs %llu\nlarge %llu\n", middle, large);
    else if (synced)
        printf("slept %llu\n", slept);
    else if (many_sites)
        printf("rounds %llu\ncalls %llu\n", middle, calls_done);
    else if (!memory)
        printf("syncs %llu\ncopies %llu\n", stalls ? middle : 0, middle);
    cudaFreeHost(pinned);
    cudaFree(device);
    free(pageable);
    free(kept);
    return 0;
}

/*
 * Workloads with a known way of misusing CUDA, each with a healthy twin, for the usage findings
 * (tests/test_report_usage_findings.py). Usage: usage_patterns MODE [N]. The line of each call a
 * finding should name carries a "site:" comment, which the test looks up. Costs come from the
 * double's knobs (CT_DOUBLE_LAUNCH_NS, CT_DOUBLE_SYNC_NS, CT_DOUBLE_SLOW_ALLOC_*,
 * CT_DOUBLE_MEM_LIMIT) and from host work, a spin on the CPU that stands for a step's real
 * computation. Exits 1 when a call fails that should not (the oom mode's last allocation must
 * fail).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "host_work.h"
#include "program_args.h"

#define MIB ((size_t)1 << 20)
#define NOINLINE __attribute__((noinline))

static unsigned long long failures;

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void usage_kernel(void) {}

static void check(cudaError_t rc)
{
    failures += rc != cudaSuccess;
}

static NOINLINE void launch_once(void)
{
    dim3 grid = {64, 1, 1}, block = {128, 1, 1};
    const void *kernel = (const void *)usage_kernel;
    check(cudaLaunchKernel(kernel, grid, block, NULL, 0, NULL)); /* site: launch */
}

/* Tiny kernels back to back: the host is the bottleneck. */
static void launch_bound(unsigned long long n)
{
    for (unsigned long long i = 0; i < n; i++)
        launch_once();
}

/* A few launches between long stretches of host work. */
static void launch_light(unsigned long long n)
{
    for (unsigned long long i = 0; i < n; i++) {
        launch_once();
        host_work_ns(2000000);
    }
}

static NOINLINE void sync_every_layer(void)
{
    check(cudaDeviceSynchronize()); /* site: sync-layer */
}

/* Ten synchronisations per step and little else. */
static void sync_storm(unsigned long long steps)
{
    for (unsigned long long s = 0; s < steps; s++)
        for (int layer = 0; layer < 10; layer++) {
            launch_once();
            sync_every_layer();
        }
}

static void *thirty_syncs(void *unused)
{
    (void)unused;
    for (int i = 0; i < 30; i++)
        check(cudaStreamSynchronize(NULL));
    return NULL;
}

/* n threads that do nothing but wait on the GPU, at the same time. */
static void sync_threads(unsigned long long n)
{
    pthread_t threads[16];
    n = n > 16 ? 16 : n;
    for (unsigned long long i = 0; i < n; i++)
        if (pthread_create(&threads[i], NULL, thirty_syncs, NULL) != 0)
            failures++;
    for (unsigned long long i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
}

/* One synchronisation per step of real work. */
static void sync_per_step(unsigned long long steps)
{
    for (unsigned long long s = 0; s < steps; s++) {
        for (int layer = 0; layer < 10; layer++)
            launch_once();
        host_work_ns(20000000);
        check(cudaDeviceSynchronize());
    }
}

static NOINLINE void copy_in(void *device, const void *host, size_t bytes, cudaStream_t stream)
{
    check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream)); /* site: copy-in */
}

static NOINLINE void copy_out(void *host, const void *device, size_t n, cudaStream_t stream)
{
    check(cudaMemcpyAsync(host, device, n, cudaMemcpyDeviceToHost, stream)); /* site: copy-out */
}

/* n copies in and n/2 out through `host`, then the same through pinned and registered memory,
 * which never count as pageable. */
static void async_copies(unsigned long long n, int pageable)
{
    size_t bytes = 256 << 10;
    void *device = NULL, *pinned = NULL;
    char *registered = malloc(bytes), *plain = malloc(bytes);
    cudaStream_t stream = NULL;
    check(cudaMalloc(&device, bytes));
    check(cudaMallocHost(&pinned, bytes));
    check(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
    check(cudaStreamCreate(&stream));
    if (pageable) {
        for (unsigned long long i = 0; i < n; i++) {
            copy_in(device, plain, bytes, stream);
            host_work_ns(200000);
        }
        for (unsigned long long i = 0; i < n / 2; i++) {
            copy_out(plain + 4096, device, bytes - 4096, stream);
            host_work_ns(200000);
        }
    }
    for (unsigned long long i = 0; i < n; i++) {
        copy_in(device, pinned, bytes, stream);
        copy_out(registered + 100, device, 1000, stream);
        host_work_ns(200000);
    }
    check(cudaStreamSynchronize(stream));
    check(cudaStreamDestroy(stream));
    check(cudaHostUnregister(registered));
    check(cudaFreeHost(pinned));
    check(cudaFree(device));
    free(registered);
    free(plain);
}

static NOINLINE void read_scalar(float *out, const float *device)
{
    check(cudaMemcpy(out, device, sizeof *out, cudaMemcpyDeviceToHost)); /* site: scalar */
}

/* n scalar reads, one per short step of work: a small-copy storm. */
static void small_copies(unsigned long long n)
{
    float *device = NULL, value;
    check(cudaMalloc((void **)&device, sizeof *device));
    for (unsigned long long i = 0; i < n; i++) {
        read_scalar(&value, device);
        host_work_ns(100000);
    }
    check(cudaFree(device));
}

/* n large copies between steps of work: the same kind of call, not a storm. */
static void big_copies(unsigned long long n)
{
    void *device = NULL;
    char *host = calloc(1, MIB);
    check(cudaMalloc(&device, MIB));
    for (unsigned long long i = 0; i < n; i++) {
        check(cudaMemcpy(device, host, MIB, cudaMemcpyHostToDevice));
        host_work_ns(5000000);
    }
    check(cudaFree(device));
    free(host);
}

static NOINLINE void *keep_for_later(void)
{
    void *kept = NULL;
    check(cudaMalloc(&kept, 64 << 10)); /* site: leak */
    return kept;
}

/* A pool made up front and a work buffer per step; `leak` keeps 64 KiB more each step. */
static void steps_with_memory(unsigned long long steps, int leak)
{
    void *pool = NULL;
    check(cudaMalloc(&pool, 8 * MIB)); /* site: pool */
    for (unsigned long long s = 0; s < steps; s++) {
        void *work = NULL;
        check(cudaMalloc(&work, MIB));
        void *kept = keep_for_later();
        host_work_ns(500000);
        check(cudaFree(work));
        if (!leak)
            check(cudaFree(kept));
    }
}

static NOINLINE void *keep_fast(void)
{
    void *kept = NULL;
    check(cudaMalloc(&kept, 10 * MIB)); /* site: fast-leak */
    return kept;
}

/* n allocations of 10 MiB back to back, none freed: a leak that takes milliseconds. */
static void fast_leak(unsigned long long n)
{
    for (unsigned long long i = 0; i < n; i++)
        keep_fast();
}

/* The same memory as a pool made up front and kept: n allocations of 10 MiB, then the job:
 * 100 steps of 1 ms that each use every block (a small memset on each). */
static void pool_up_front(unsigned long long n)
{
    void **pool = calloc(n, sizeof *pool);
    for (unsigned long long i = 0; pool && i < n; i++)
        check(cudaMalloc(&pool[i], 10 * MIB));
    for (int step = 0; pool && step < 100; step++) {
        for (unsigned long long i = 0; i < n; i++)
            check(cudaMemset(pool[i], step, 4096));
        host_work_ns(1000000);
    }
    free(pool);
}

static NOINLINE void *allocate(size_t bytes)
{
    void *p = NULL;
    check(cudaMalloc(&p, bytes)); /* site: block */
    return p;
}

/* 32, 16 and 8 MiB live, then 32 MiB more: fails under CT_DOUBLE_MEM_LIMIT=64 MiB. */
static void out_of_memory(void)
{
    allocate(32 * MIB);
    allocate(16 * MIB);
    allocate(8 * MIB);
    void *p = NULL;
    if (cudaMalloc(&p, 32 * MIB) != cudaErrorMemoryAllocation) /* site: oom */
        failures++;
}

static NOINLINE void *allocate_big(void)
{
    void *p = NULL;
    check(cudaMalloc(&p, 8 * MIB)); /* site: big-alloc */
    return p;
}

/* n small allocations, then four big ones (slow under CT_DOUBLE_SLOW_ALLOC_*). */
static void allocations(unsigned long long n)
{
    for (unsigned long long i = 0; i < n; i++) {
        void *p = NULL;
        check(cudaMalloc(&p, 64 << 10));
        check(cudaFree(p));
    }
    for (int i = 0; i < 4; i++)
        check(cudaFree(allocate_big()));
}

/* errno after calls that carry a site (a sync, an allocation, a free, a failed call), each made
 * with errno set first: a tracer must leave it as the runtime did. */
static void errno_after_calls(void)
{
    void *p = NULL;
    errno = 4242;
    check(cudaDeviceSynchronize());
    printf("sync %d\n", errno);
    errno = 4343;
    check(cudaMalloc(&p, 4096));
    printf("malloc %d\n", errno);
    errno = 4444;
    check(cudaFree(p));
    printf("free %d\n", errno);
    errno = 4545;
    failures += cudaSetDevice(-1) == cudaSuccess; /* it must fail */
    printf("failed %d\n", errno);
}

/* Two error codes, each failing more than once, for the snapshot triggers: cudaErrorInvalidDevice
 * three times, then out of memory (a 2^62-byte allocation) twice. */
static void failing_calls(void)
{
    for (int i = 0; i < 3; i++)
        failures += cudaSetDevice(-1) == cudaSuccess; /* each must fail */
    for (int i = 0; i < 2; i++) {
        void *p = NULL;
        failures += cudaMalloc(&p, (size_t)1 << 62) == cudaSuccess;
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned long long n = arg_or(argc, argv, 2, 100);
    if (strcmp(mode, "launch-bound") == 0)
        launch_bound(n);
    else if (strcmp(mode, "launch-light") == 0)
        launch_light(n);
    else if (strcmp(mode, "sync-storm") == 0)
        sync_storm(n);
    else if (strcmp(mode, "sync-threads") == 0)
        sync_threads(n);
    else if (strcmp(mode, "sync-per-step") == 0)
        sync_per_step(n);
    else if (strcmp(mode, "pageable") == 0 || strcmp(mode, "pinned") == 0)
        async_copies(n, strcmp(mode, "pageable") == 0);
    else if (strcmp(mode, "small-copies") == 0)
        small_copies(n);
    else if (strcmp(mode, "big-copies") == 0)
        big_copies(n);
    else if (strcmp(mode, "growth") == 0 || strcmp(mode, "steady") == 0)
        steps_with_memory(n, strcmp(mode, "growth") == 0);
    else if (strcmp(mode, "fast-leak") == 0)
        fast_leak(n);
    else if (strcmp(mode, "pool-up-front") == 0)
        pool_up_front(n);
    else if (strcmp(mode, "oom") == 0)
        out_of_memory();
    else if (strcmp(mode, "allocations") == 0)
        allocations(n);
    else if (strcmp(mode, "errno") == 0)
        errno_after_calls();
    else if (strcmp(mode, "failing") == 0)
        failing_calls();
    else {
        fprintf(stderr, "usage: usage_patterns MODE [N]\n");
        return 2;
    }
    if (failures) {
        fprintf(stderr, "usage_patterns: %llu calls failed\n", failures);
        return 1;
    }
    return 0;
}

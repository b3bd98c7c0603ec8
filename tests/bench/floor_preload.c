/*
 * The floor of `make bench`: the least any call tracer can add to a CUDA
 * call, to hold cudatrace's cost against (issue "The hot path at the
 * floor"). A preload that forwards cudaLaunchKernel and
 * cudaDeviceSynchronize and, around each, reads the TSC twice and stores the
 * two readings, 16 bytes, into a thread-local buffer: no call site, no
 * arguments, no ring shared with anyone, nothing drained. It records nothing
 * anyone reads.
 *
 * Built again with FLOOR_READ (libfloor_read.so), the same floor whose stamps
 * are read: each takes CT_FLOOR_READER bytes (16, the floor's own, or 64, a
 * whole cache line as a cudatrace record does) in a ring shared with a
 * reader process forked at load (off the program's CPUs when it is bound
 * to some, as the collector moves), which reads every stamp, spends
 * CT_FLOOR_READER_NS after each (about what the collector spends on a
 * record), and waits a millisecond when it found fewer than 64, as the
 * collector does. What the program pays for being read from another process
 * on the machine the bench runs on is then the difference to the plain
 * floor: a part of cudatrace's steady state no change to its hook can take
 * away. Two builds, so the plain floor's store stays one store.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cuda_runtime_api.h>

#ifndef FLOOR_READ
#define SLOTS 4096

struct stamp {
    uint64_t begin, end;
};

/* initial-exec: a TLS access is then one load off %fs, as a tracer would make it */
static __thread struct stamp stamps[SLOTS] __attribute__((tls_model("initial-exec")));
static __thread unsigned next_stamp __attribute__((tls_model("initial-exec")));

static void keep(uint64_t begin, uint64_t end)
{
    stamps[next_stamp++ % SLOTS] = (struct stamp){begin, end};
}
#else
#define SHARED_RING_BYTES (1u << 21) /* as large as cudatrace's default ring */
#define READER_BUSY_STAMPS 64

/* The read floor's ring: the head on a line of its own, as in cudatrace. */
struct shared_ring {
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) unsigned char bytes[SHARED_RING_BYTES];
};
static struct shared_ring *shared;
static unsigned stamp_bytes;

static void keep(uint64_t begin, uint64_t end)
{
    uint64_t h = atomic_load_explicit(&shared->head, memory_order_relaxed);
    uint64_t *slot = (uint64_t *)(shared->bytes + h * stamp_bytes % SHARED_RING_BYTES);
    slot[0] = begin;
    slot[1] = end;
    for (unsigned i = 2; i < stamp_bytes / 8; i++) /* the rest of a record's line */
        slot[i] = begin;
    atomic_store_explicit(&shared->head, h + 1, memory_order_release);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t read_stamp(uint64_t position)
{
    const uint64_t *slot =
        (const uint64_t *)(shared->bytes + position * stamp_bytes % SHARED_RING_BYTES);
    uint64_t sum = 0;
    for (unsigned i = 0; i < stamp_bytes / 8; i++)
        sum += slot[i];
    return sum;
}

/* Off the program's CPUs when it is bound to some, as the collector moves
 * (collector/cpu_placement.c, without its NUMA nodes): beside the program,
 * not in its way. */
static void leave_program_cpus(void)
{
    cpu_set_t program, others;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof program, &program))
        return;
    CPU_ZERO(&others);
    for (long cpu = 0; cpu < online && cpu < CPU_SETSIZE; cpu++)
        if (!CPU_ISSET(cpu, &program))
            CPU_SET(cpu, &others);
    if (CPU_COUNT(&others))
        sched_setaffinity(0, sizeof others, &others);
}

/* The reader process: until the program is gone. */
static _Noreturn void read_stamps(pid_t program, uint64_t busy_ns)
{
    const struct timespec pause = {0, 1000 * 1000};
    uint64_t next = 0, sum = 0;
    while (getppid() == program) {
        uint64_t head = atomic_load_explicit(&shared->head, memory_order_acquire), read = 0;
        for (; next < head; next++, read++) {
            sum += read_stamp(next);
            for (uint64_t start = now_ns(); now_ns() - start < busy_ns;)
                ;
        }
        if (read < READER_BUSY_STAMPS)
            nanosleep(&pause, NULL);
    }
    _exit(sum == 1); /* uses the sum, so the reads are made */
}

static _Noreturn void refuse(const char *why)
{
    fprintf(stderr, "libfloor_read: %s\n", why);
    _exit(2);
}

/* No measurement rather than another one: a bad setting, or no ring or
 * reader, ends the program before it starts. */
__attribute__((constructor)) static void start_reader(void)
{
    const char *bytes = getenv("CT_FLOOR_READER"), *ns = getenv("CT_FLOOR_READER_NS");
    char *end = NULL;
    uint64_t busy_ns = ns ? strtoull(ns, &end, 10) : 300;
    if (!bytes || (strcmp(bytes, "16") && strcmp(bytes, "64")))
        refuse("CT_FLOOR_READER must be 16 or 64");
    if (ns && (!*ns || *end))
        refuse("CT_FLOOR_READER_NS must be a number of nanoseconds");
    void *ring =
        mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ring == MAP_FAILED)
        refuse("no memory for the ring");
    pid_t program = getpid(), reader;
    stamp_bytes = (unsigned)atoi(bytes);
    shared = ring;
    if ((reader = fork()) == 0) {
        leave_program_cpus();
        read_stamps(program, busy_ns);
    }
    if (reader < 0)
        refuse("no reader process");
}
#endif

__attribute__((visibility("default"))) cudaError_t cudaLaunchKernel(const void *func, dim3 grid,
                                                                    dim3 block, void **args,
                                                                    size_t shared_bytes,
                                                                    cudaStream_t stream)
{
    static cudaError_t (*real)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cudaLaunchKernel");
    uint64_t begin = __rdtsc();
    cudaError_t result = real(func, grid, block, args, shared_bytes, stream);
    keep(begin, __rdtsc());
    return result;
}

__attribute__((visibility("default"))) cudaError_t cudaDeviceSynchronize(void)
{
    static cudaError_t (*real)(void);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cudaDeviceSynchronize");
    uint64_t begin = __rdtsc();
    cudaError_t result = real();
    keep(begin, __rdtsc());
    return result;
}

/*
 * A caching allocator's imitation that never calls cudaMalloc: it grows a segment through the
 * driver's virtual-memory API, as PyTorch's expandable segments do, one 2 MiB granule at a time
 * (cuMemCreate, cuMemMap at the segment's next address, cuMemSetAccess), all found with dlsym
 * in libcuda.so.1. One runtime call first starts CUDA, as the framework around it would.
 * Usage: vmm_allocator MODE [N=50], MODE one of
 *   leak N           N steps of 1 ms, each growing the segment by a granule kept to the end;
 *   reuse N          4 granules made at once up front and kept, then N steps of 1 ms that use
 *                    them;
 *   early-release N  as leak, but each handle is released as soon as it is mapped (its memory
 *                    stays until the unmap), and the whole segment is unmapped at the end;
 *   double-map       one 8 MiB handle mapped at two addresses, then both unmapped;
 *   oom N            as leak until cuMemCreate fails (CT_DOUBLE_VMM_LIMIT).
 * Each step grants access to the segment's first granule again. Prints "vmm_allocator: peak P final
 * F creates C failed K" with the physical bytes held as the program counts them; exits 1 if a call
 * that should succeed failed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "host_work.h"
#include "program_args.h"

#define GRANULE (2ull << 20)
#define NOINLINE __attribute__((noinline))

static struct {
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*address_free)(CUdeviceptr, size_t);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
} cu;

static unsigned long long held, peak, creates, failed_creates, failures;

#define RESOLVE(lib, field, symbol) ((*(void **)&cu.field = dlsym(lib, symbol)) != NULL)

static int resolve(void *lib)
{
    return RESOLVE(lib, create, "cuMemCreate") && RESOLVE(lib, release, "cuMemRelease") &&
           RESOLVE(lib, reserve, "cuMemAddressReserve") &&
           RESOLVE(lib, address_free, "cuMemAddressFree") && RESOLVE(lib, map, "cuMemMap") &&
           RESOLVE(lib, unmap, "cuMemUnmap") && RESOLVE(lib, set_access, "cuMemSetAccess");
}

static void check(CUresult r)
{
    failures += r != CUDA_SUCCESS;
}

/* The segment the steps use: each grants access to it again, a call that neither waits for
 * the device nor holds memory. */
static CUdeviceptr segment;
static size_t segment_bytes;

static void grant_access(CUdeviceptr at, size_t bytes)
{
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(cu.set_access(at, bytes, &access, 1));
}

static void step(void)
{
    host_work_ns(1000000);
    if (segment)
        grant_access(segment, segment_bytes);
}

/* A granule of `bytes` made; 0 when the driver had no memory left. */
static NOINLINE CUmemGenericAllocationHandle make(size_t bytes)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemGenericAllocationHandle h = 0;
    CUresult r = cu.create(&h, bytes, &prop, 0); /* site: create */
    if (r != CUDA_SUCCESS) {
        failed_creates++;
        return 0;
    }
    creates++;
    held += bytes;
    peak = held > peak ? held : peak;
    return h;
}

static void map_at(CUdeviceptr at, size_t bytes, CUmemGenericAllocationHandle h)
{
    check(cu.map(at, bytes, 0, h, 0));
    grant_access(at, bytes);
}

/* Grows the segment at `base` by `n` granules, a step after each when `paced`; returns the
 * granules made. */
static unsigned long long grow(CUdeviceptr base, unsigned long long n, int paced,
                               int release_at_once, CUmemGenericAllocationHandle *handles)
{
    unsigned long long made = 0;
    for (unsigned long long i = 0; i < n; i++) {
        CUmemGenericAllocationHandle h = make(GRANULE);
        if (!h)
            break;
        map_at(base + made * GRANULE, GRANULE, h);
        if (release_at_once)
            check(cu.release(h));
        else if (handles)
            handles[made] = h;
        made++;
        if (paced)
            step();
    }
    return made;
}

/* The segment of handles released already, unmapped whole in one call. */
static void give_back(CUdeviceptr base, unsigned long long made)
{
    check(cu.unmap(base, made * GRANULE));
    check(cu.address_free(base, made * GRANULE));
    held -= made * GRANULE;
}

static void double_map(void)
{
    CUdeviceptr a = 0, b = 0;
    check(cu.reserve(&a, 4 * GRANULE, 0, 0, 0));
    check(cu.reserve(&b, 4 * GRANULE, 0, 0, 0));
    CUmemGenericAllocationHandle h = make(4 * GRANULE);
    map_at(a, 4 * GRANULE, h);
    map_at(b, 4 * GRANULE, h);
    step();
    check(cu.unmap(a, 4 * GRANULE));
    check(cu.unmap(b, 4 * GRANULE));
    check(cu.release(h));
    held -= 4 * GRANULE;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "leak";
    unsigned long long n = arg_or(argc, argv, 2, 50);
    int devices = 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (cudaGetDeviceCount(&devices) != cudaSuccess || !lib || !resolve(lib)) {
        fprintf(stderr, "vmm_allocator: no CUDA device or driver\n");
        return 1;
    }
    static CUmemGenericAllocationHandle handles[4096];
    CUdeviceptr base = 0;
    if (strcmp(mode, "double-map") == 0) {
        double_map();
    } else {
        unsigned long long granules = strcmp(mode, "reuse") == 0 ? 4 : n;
        check(cu.reserve(&base, granules * GRANULE, 0, 0, 0));
        segment = base;
        segment_bytes = GRANULE;
        if (strcmp(mode, "reuse") == 0) {
            grow(base, 4, 0, 0, handles);
            for (unsigned long long i = 0; i < n; i++)
                step();
        } else if (strcmp(mode, "early-release") == 0) {
            give_back(base, grow(base, n, 1, 1, NULL));
        } else {
            grow(base, n < 4096 ? n : 4096, 1, 0, handles);
        }
    }
    printf("vmm_allocator: peak %llu final %llu creates %llu failed %llu\n", peak, held, creates,
           failed_creates);
    return failures ? 1 : 0;
}

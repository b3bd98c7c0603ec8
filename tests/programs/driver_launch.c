/*
 * A program that launches through the driver API the way Triton's launcher does: one runtime
 * call first (as the framework around it would make), then libcuda.so.1 opened with dlopen and
 * cuModuleLoadData, cuModuleGetFunction, cuMemAlloc, cuMemcpyHtoD, N cuLaunchKernel of each of
 * two kernels, cuCtxSynchronize, cuMemcpyDtoH and cuMemFree through dlsym. Usage:
 * driver_launch [launches per kernel=100] [driver only=0] [per-thread=0]; with driver only = 1
 * there is no runtime call at all: the driver is started with its own cuInit, found with dlsym
 * (as XLA, with its static runtime, does). With per-thread = 1 the entry points come from
 * cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, as code built with
 * --default-stream per-thread gets them: cuLaunchKernel_ptsz, cuMemcpyHtoD_v2_ptds and so on. A
 * tracer that hooks only the runtime sees none of the launches; CUPTI sees them all. Prints one
 * summary line; exits 1 if any call failed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "program_args.h"

#define BYTES 4096

static const char *const kernel_names[] = {"triton_poi_fused_add_0", "triton_red_fused_sum_1"};

/* The driver entry points the launcher resolves, by their exported names. */
static struct {
    CUresult (*load_data)(CUmodule *, const void *);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*synchronize)(void);
} cu;

/* cuGetProcAddress_v2, when the entry points are to come from it. */
static CUresult (*get_proc)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);
static int driver_version;

/* The exported `symbol`, or what cuGetProcAddress answers for its base name. */
static void *find(void *lib, const char *base, const char *symbol)
{
    void *found = NULL;
    CUdriverProcAddressQueryResult status;
    if (!get_proc)
        return dlsym(lib, symbol);
    if (get_proc(base, &found, driver_version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                 &status) != CUDA_SUCCESS)
        return NULL;
    return found;
}

#define RESOLVE(lib, field, base, symbol) ((*(void **)&cu.field = find(lib, base, symbol)) != NULL)

static int resolve(void *lib)
{
    return RESOLVE(lib, load_data, "cuModuleLoadData", "cuModuleLoadData") &&
           RESOLVE(lib, get_function, "cuModuleGetFunction", "cuModuleGetFunction") &&
           RESOLVE(lib, alloc, "cuMemAlloc", "cuMemAlloc_v2") &&
           RESOLVE(lib, free, "cuMemFree", "cuMemFree_v2") &&
           RESOLVE(lib, htod, "cuMemcpyHtoD", "cuMemcpyHtoD_v2") &&
           RESOLVE(lib, dtoh, "cuMemcpyDtoH", "cuMemcpyDtoH_v2") &&
           RESOLVE(lib, launch, "cuLaunchKernel", "cuLaunchKernel") &&
           RESOLVE(lib, synchronize, "cuCtxSynchronize", "cuCtxSynchronize");
}

/* Readies cuGetProcAddress_v2 and the version to ask it for. */
static int use_get_proc(void *lib)
{
    CUresult (*version)(int *) = (CUresult(*)(int *))dlsym(lib, "cuDriverGetVersion");
    *(void **)&get_proc = dlsym(lib, "cuGetProcAddress_v2");
    return version && get_proc && version(&driver_version) == CUDA_SUCCESS;
}

/* Runs the workload; the number of calls that failed. */
static unsigned long long run(unsigned long long launches, unsigned char *host)
{
    static const char image[] = "a cubin image";
    unsigned long long failures = 0;
    CUmodule module = NULL;
    CUfunction functions[2] = {NULL, NULL};
    CUdeviceptr buffer = 0;
    failures += cu.load_data(&module, image) != CUDA_SUCCESS;
    for (int k = 0; k < 2; k++)
        failures += cu.get_function(&functions[k], module, kernel_names[k]) != CUDA_SUCCESS;
    failures += cu.alloc(&buffer, BYTES) != CUDA_SUCCESS;
    failures += cu.htod(buffer, host, BYTES) != CUDA_SUCCESS;
    void *args[] = {&buffer};
    for (unsigned long long i = 0; i < launches; i++)
        for (int k = 0; k < 2; k++)
            failures +=
                cu.launch(functions[k], 64, 1, 1, 128, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS;
    failures += cu.synchronize() != CUDA_SUCCESS;
    memset(host, 0, BYTES);
    failures += cu.dtoh(host, buffer, BYTES) != CUDA_SUCCESS;
    failures += cu.free(buffer) != CUDA_SUCCESS;
    return failures;
}

int main(int argc, char **argv)
{
    unsigned long long launches = arg_or(argc, argv, 1, 100);
    int driver_only = arg_or(argc, argv, 2, 0) == 1, devices = 0;
    int per_thread = arg_or(argc, argv, 3, 0) == 1;
    if (!driver_only && (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1)) {
        fprintf(stderr, "driver_launch: no CUDA device\n");
        return 1;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || (per_thread && !use_get_proc(lib)) || !resolve(lib)) {
        fprintf(stderr, "driver_launch: cannot load the driver: %s\n",
                lib ? "missing symbol" : dlerror());
        return 1;
    }
    CUresult (*init)(unsigned int) = (CUresult(*)(unsigned int))dlsym(lib, "cuInit");
    if (driver_only && (!init || init(0) != CUDA_SUCCESS)) {
        fprintf(stderr, "driver_launch: cuInit failed\n");
        return 1;
    }
    unsigned char host[BYTES];
    for (int i = 0; i < BYTES; i++)
        host[i] = (unsigned char)i;
    unsigned long long failures = run(launches, host);
    if (failures != 0 || host[BYTES - 1] != (unsigned char)(BYTES - 1)) {
        fprintf(stderr, "driver_launch: %llu calls failed\n", failures);
        return 1;
    }
    printf("driver_launch: %llu launches of each of 2 kernels, %d bytes round-tripped\n", launches,
           BYTES);
    return 0;
}

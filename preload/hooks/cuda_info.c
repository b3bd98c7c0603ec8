/*
 * Records the libraries' own versions after the program's first CUDA call
 * of any kind, and the runtime and driver versions, the device count and
 * the device names and UUIDs, once, right after its first CUDA call that
 * initialises CUDA returned (deferred.c: not a version or error query). The
 * UUID is how the collector finds each device in NVML, whose index may not
 * be CUDA's ordinal. By then
 * the program itself has initialised CUDA, so these queries never do it for
 * it; if that first call left an error pending (no driver, say) the device
 * queries are skipped, as they would only fail and disturb the error state.
 */
#include "preload/hooks/cuda_info.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "preload/hooks/cuda_call.h"
#include "preload/loader/dl_real.h"
#include "common/library_family.h"
#include "preload/core/ring.h"

/* cudaDeviceProp has grown with every release; the name stays first and
 * the UUID second (from CUDA 10 on), and a generous buffer keeps a newer
 * runtime from writing past our copy. That is also why the plain
 * cudaGetDeviceProperties serves every runtime: the only name libcudart 11
 * and 13 export, and in 12 (beside _v2) the entry for the CUDA 11 layout,
 * which starts the same way. */
union device_properties {
    struct {
        char name[256];
        unsigned char uuid[16];
    } head;
    unsigned char bytes[16384];
};

/* The UUID as NVML writes it after its "GPU-": 8-4-4-4-12 hex digits. */
static void emit_device_uuid(struct ct_ring *ring, int ordinal, const unsigned char uuid[16])
{
    static const char hex[] = "0123456789abcdef";
    char text[40];
    size_t len = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            text[len++] = '-';
        text[len++] = hex[uuid[i] >> 4];
        text[len++] = hex[uuid[i] & 15];
    }
    text[len] = '\0';
    ct_emit_string(ring, CT_STR_DEVICE_UUID, (uint64_t)ordinal, text);
}

static int query_version(cudaError_t (*get)(int *), int pending)
{
    int version = 0;
    if (get)
        ct_cuda_forget_own_error(pending, get(&version));
    return version;
}

static void emit_devices(struct ct_ring *ring, int count)
{
    CT_REAL(get_props, cudaGetDeviceProperties, (union device_properties *, int));
    if (!get_props)
        return;
    CT_REAL(get_attribute, cudaDeviceGetAttribute, (int *, enum cudaDeviceAttr, int));
    static union device_properties props;
    for (int i = 0; i < count && i < 64; i++) {
        memset(&props.head, 0, sizeof props.head);
        cudaError_t r = get_props(&props, i);
        ct_cuda_forget_own_error(0, r);
        int major = 0, minor = 0;
        if (get_attribute) {
            ct_cuda_forget_own_error(0,
                                     get_attribute(&major, cudaDevAttrComputeCapabilityMajor, i));
            ct_cuda_forget_own_error(0,
                                     get_attribute(&minor, cudaDevAttrComputeCapabilityMinor, i));
        }
        if (r == cudaSuccess) {
            props.head.name[sizeof props.head.name - 1] = '\0';
            ct_emit_string(ring, CT_STR_DEVICE_NAME,
                           ct_pack_device_key((uint32_t)i, (uint32_t)(major * 10 + minor)),
                           props.head.name);
            emit_device_uuid(ring, i, props.head.uuid);
        }
    }
}

/* The version each loaded runtime, cuBLAS, cuBLASLt and NCCL reports
 * through its own API: getters that return constants and load nothing (checked: the same
 * files stay mapped). Two runtimes of one major (12.4 and 12.9 wheels)
 * differ only here, not in their file names. cudnnGetVersion is not called:
 * it makes cuDNN load its sub-libraries, which would change what the program
 * loads. cuBLAS, cuBLASLt and NCCL report major * 10000 + minor * 100 +
 * patch. */
struct version_scan {
    struct ct_ring *ring;
    int cuda_initialised; /* by the program: a runtime may be asked for its error state */
};

/* Before the program initialised CUDA: from CUDA 12 on the getter returns a
 * constant, and nothing else of the runtime may be asked (its error state
 * makes it look for the driver). */
static uint64_t runtime_constant_of(void *lib)
{
    cudaError_t (*get)(int *) = (cudaError_t(*)(int *))ct_dl_real_sym(lib, "cudaRuntimeGetVersion");
    int v = 0;
    return get && get(&v) == cudaSuccess ? (uint64_t)v : 0;
}

static uint64_t runtime_version_of(void *lib)
{
    /* Before CUDA 12 this fails without a driver and latches the error in
     * that runtime copy; clear it again unless one was pending already. */
    cudaError_t (*get)(int *) = (cudaError_t(*)(int *))ct_dl_real_sym(lib, "cudaRuntimeGetVersion");
    cudaError_t (*peek)(void) = (cudaError_t(*)(void))ct_dl_real_sym(lib, "cudaPeekAtLastError");
    cudaError_t (*take)(void) = (cudaError_t(*)(void))ct_dl_real_sym(lib, "cudaGetLastError");
    int v = 0, pending = !peek || peek() != cudaSuccess;
    cudaError_t r = get ? get(&v) : cudaErrorUnknown;
    if (r != cudaSuccess && !pending && take)
        take();
    return r == cudaSuccess ? (uint64_t)v : 0;
}

static uint64_t cublas_version_of(void *lib)
{
    int (*get)(int, int *) = (int (*)(int, int *))ct_dl_real_sym(lib, "cublasGetProperty");
    int part[3] = {0, 0, 0}; /* MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL */
    for (int i = 0; get && i < 3; i++)
        if (get(i, &part[i]) != 0)
            return 0;
    return get ? (uint64_t)(part[0] * 10000 + part[1] * 100 + part[2]) : 0;
}

static uint64_t cublaslt_version_of(void *lib)
{
    size_t (*get)(void) = (size_t(*)(void))ct_dl_real_sym(lib, "cublasLtGetVersion");
    return get ? (uint64_t)get() : 0;
}

static uint64_t nccl_version_of(void *lib)
{
    int (*get)(int *) = (int (*)(int *))ct_dl_real_sym(lib, "ncclGetVersion");
    int v = 0;
    return get && get(&v) == 0 ? (uint64_t)v : 0;
}

typedef uint64_t version_getter(void *lib);

/* The getter that may be asked of a library of `family` now, or NULL. */
static version_getter *getter_for(const char *family, const char *path, int cuda_initialised)
{
    if (strcmp(family, "cudart") == 0)
        return cuda_initialised              ? runtime_version_of
               : ct_soname_major(path) >= 12 ? runtime_constant_of
                                             : NULL;
    if (strcmp(family, "cublas") == 0)
        return cublas_version_of;
    if (strcmp(family, "cublasLt") == 0)
        return cublaslt_version_of;
    return strcmp(family, "nccl") == 0 ? nccl_version_of : NULL;
}

static int record_library_version(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct version_scan *scan = data;
    char family[64];
    if (!info->dlpi_name || !*info->dlpi_name ||
        !ct_library_family(info->dlpi_name, family, sizeof family))
        return 0;
    version_getter *version_of = getter_for(family, info->dlpi_name, scan->cuda_initialised);
    void *lib = version_of ? ct_dl_real_open(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (!lib)
        return 0;
    uint64_t version = version_of(lib);
    ct_dl_real_close(lib);
    if (version)
        ct_emit_string(scan->ring, CT_STR_LIBRARY_VERSION, version, info->dlpi_name);
    return 0;
}

static void record_library_versions(struct ct_ring *ring, int cuda_initialised)
{
    struct version_scan scan = {ring, cuda_initialised};
    dl_iterate_phdr(record_library_version, &scan);
}

static int record_info(struct ct_ring *ring)
{
    record_library_versions(ring, 1);
    int pending = ct_cuda_error_pending();
    CT_REAL(runtime_version, cudaRuntimeGetVersion, (int *));
    CT_REAL(driver_version, cudaDriverGetVersion, (int *));
    CT_REAL(device_count, cudaGetDeviceCount, (int *));
    int runtime = query_version(runtime_version, pending);
    int driver = query_version(driver_version, pending);
    int devices = -1;
    if (!pending && device_count) {
        cudaError_t r = device_count(&devices);
        ct_cuda_forget_own_error(0, r);
        if (r != cudaSuccess)
            devices = -1;
    }
    if (devices > 0)
        emit_devices(ring, devices);
    struct ct_record rec = {
        .type = CT_REC_PROCESS_INFO,
        .arg = {(uint64_t)(int64_t)runtime, (uint64_t)(int64_t)driver, (uint64_t)(int64_t)devices}};
    ct_emit_record(ring, &rec, 1);
    return devices;
}

void ct_cuda_library_versions_record(struct ct_ring *ring)
{
    CT_OWN_CALL(record_library_versions(ring, 0));
}

int ct_cuda_info_record(struct ct_ring *ring)
{
    int devices;
    CT_OWN_CALL(devices = record_info(ring));
    return devices;
}

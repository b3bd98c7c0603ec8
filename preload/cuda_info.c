/*
 * Records the runtime and driver versions, the device count and the device
 * names, once, right after the program's first CUDA call returned. By then
 * the program itself has initialised CUDA, so these queries never do it for
 * it; if that first call left an error pending (no driver, say) the device
 * queries are skipped, as they would only fail and disturb the error state.
 */
#include "cuda_info.h"

#include <stdint.h>
#include <string.h>

#include "cuda_call.h"
#include "ring.h"

/* cudaDeviceProp has grown with every release; the name stays first, and a
 * generous buffer keeps a newer runtime from writing past our copy. */
union device_properties {
    char name[256];
    unsigned char bytes[16384];
};

static int query_version(cudaError_t (*get)(int *), int pending)
{
    int version = 0;
    if (get)
        ct_cuda_forget_own_error(pending, get(&version));
    return version;
}

static void emit_device_names(struct ct_ring *ring, int count)
{
    CT_REAL(get_props, cudaGetDeviceProperties_v2, (union device_properties *, int));
    if (!get_props) {
        CT_REAL(get_props_v1, cudaGetDeviceProperties, (union device_properties *, int));
        get_props = get_props_v1;
    }
    if (!get_props)
        return;
    static union device_properties props;
    for (int i = 0; i < count && i < 64; i++) {
        memset(props.name, 0, sizeof props.name);
        cudaError_t r = get_props(&props, i);
        ct_cuda_forget_own_error(0, r);
        if (r == cudaSuccess) {
            props.name[sizeof props.name - 1] = '\0';
            ct_emit_string(ring, CT_STR_DEVICE_NAME, (uint64_t)i, props.name);
        }
    }
}

void ct_cuda_info_record(struct ct_ring *ring)
{
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
        emit_device_names(ring, devices);
    uint64_t head;
    struct ct_record *rec;
    if (!ct_ring_enter(ring))
        return;
    if ((rec = ct_ring_reserve(ring, &head)) != NULL) {
        memset(rec, 0, sizeof *rec);
        rec->type = CT_REC_PROCESS_INFO;
        rec->arg[0] = (uint64_t)(int64_t)runtime;
        rec->arg[1] = (uint64_t)(int64_t)driver;
        rec->arg[2] = (uint64_t)(int64_t)devices;
        ct_ring_publish(ring, head);
    }
    ct_ring_leave(ring);
}

/*
 * Kernel and graph launch hooks, including __cudaLaunchKernel, which is what
 * nvcc's <<<>>> calls since CUDA 13 (with a cudaKernel_t from
 * __cudaGetKernel rather than the host function), and cudaLaunchKernelExC,
 * which carries its configuration in a struct.
 */
#include "preload/hooks/hook.h"
#include "preload/hooks/kernel_names.h"

#define LAUNCH_ARGS(func, by_handle, grid, block, smem, stream)                                    \
    ct_kernel_key((func), (by_handle), result == cudaSuccess), CT_PTR(stream),                     \
        ct_pack_dim3((grid).x, (grid).y, (grid).z), ct_pack_dim3((block).x, (block).y, (block).z), \
        (smem)

#define HOOK_LAUNCH(name, func_type, by_handle)                                                    \
    CT_HOOK(                                                                                       \
        name,                                                                                      \
        (func_type func, dim3 grid, dim3 block, void **args, size_t smem, cudaStream_t stream),    \
        (func, grid, block, args, smem, stream),                                                   \
        LAUNCH_ARGS(func, by_handle, grid, block, smem, stream))
HOOK_LAUNCH(cudaLaunchKernel, const void *, 0)
HOOK_LAUNCH(cudaLaunchKernel_ptsz, const void *, 0)
HOOK_LAUNCH(cudaLaunchCooperativeKernel, const void *, 0)
HOOK_LAUNCH(cudaLaunchCooperativeKernel_ptsz, const void *, 0)
HOOK_LAUNCH(__cudaLaunchKernel, cudaKernel_t, 1)
HOOK_LAUNCH(__cudaLaunchKernel_ptsz, cudaKernel_t, 1)

/* A NULL configuration makes the call fail; it is recorded as all zeros. */
static const cudaLaunchConfig_t *config_or_zeros(const cudaLaunchConfig_t *config)
{
    static const cudaLaunchConfig_t zeros;
    return config ? config : &zeros;
}

#define HOOK_LAUNCH_EX(name)                                                                       \
    CT_HOOK(                                                                                       \
        name, (const cudaLaunchConfig_t *config, const void *func, void **args),                   \
        (config, func, args),                                                                      \
        LAUNCH_ARGS(func, 0, config_or_zeros(config)->gridDim, config_or_zeros(config)->blockDim,  \
                    config_or_zeros(config)->dynamicSmemBytes, config_or_zeros(config)->stream))
HOOK_LAUNCH_EX(cudaLaunchKernelExC)
HOOK_LAUNCH_EX(cudaLaunchKernelExC_ptsz)

#define HOOK_GRAPH_LAUNCH(name)                                                                    \
    CT_HOOK(name, (cudaGraphExec_t graph, cudaStream_t stream), (graph, stream), CT_PTR(graph),    \
            CT_PTR(stream), 0, 0, 0)
HOOK_GRAPH_LAUNCH(cudaGraphLaunch)
HOOK_GRAPH_LAUNCH(cudaGraphLaunch_ptsz)

/* Not traced as a call: it runs once per launch site, and only teaches us
 * which host function a cudaKernel_t stands for. */
CT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    static _Atomic(void *) real_slot;
    cudaError_t (*real)(cudaKernel_t *, const void *) =
        (cudaError_t(*)(cudaKernel_t *, const void *))ct_real_function(&real_slot,
                                                                       "__cudaGetKernel");
    if (!real)
        return cudaErrorSharedObjectSymbolNotFound;
    cudaError_t result = real(kernel, func);
    if (result == cudaSuccess && kernel)
        ct_kernel_handle_note(*kernel, func);
    return result;
}

/* Not traced either: nvcc's registration of each kernel when its module
 * loads, which names the device function behind a host stub whether or not
 * the stub is an exported symbol, and before any launch. */
CT_EXPORT void __cudaRegisterFunction(void **module, const char *host_fun, char *device_fun,
                                      const char *device_name, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *block, dim3 *grid, int *warp_size)
{
    static _Atomic(void *) real_slot;
    void (*real)(void **, const char *, char *, const char *, int, uint3 *, uint3 *, dim3 *, dim3 *,
                 int *) =
        (void (*)(void **, const char *, char *, const char *, int, uint3 *, uint3 *, dim3 *,
                  dim3 *, int *))ct_real_function(&real_slot, "__cudaRegisterFunction");
    if (real)
        real(module, host_fun, device_fun, device_name, thread_limit, tid, bid, block, grid,
             warp_size);
    ct_kernel_register_name(host_fun, device_name);
}

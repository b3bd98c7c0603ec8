/*
 * Sends each kernel's name once per ring, ahead of the first launch record
 * that refers to it, so the collector can name every launch however it
 * interleaves the rings. The name comes from cudaFuncGetName where the
 * runtime has it, else the exact dynamic symbol of the host function, else
 * the address; first of all, the device function name nvcc registered for
 * the stub (__cudaRegisterFunction), which needs no exported symbol and no
 * successful launch. nvcc's <<<>>> launches through a cudaKernel_t handle, so
 * the handle-to-function mapping is learnt from __cudaGetKernel, and a handle
 * it did not map is taken for the host function. Names CUPTI gives (for
 * launches only it saw, and for the kernels the GPU ran) are sent once per
 * ring the same way. Both tables are
 * fixed-size open-addressing sets: lookups take no lock, and a full table
 * only means a name is sent again.
 */
#include "preload/hooks/kernel_names.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>

#include "preload/hooks/cuda_call.h"
#include "preload/core/ring.h"

#define SENT_SLOTS 1024
#define HANDLE_SLOTS 8192

struct sent_set {
    uint64_t keys[SENT_SLOTS];
};

static struct sent_set *sent_sets; /* one per ring, process-private */
static uint32_t sent_set_count;
/* Two lock-free maps of the same shape: cudaKernel_t handle -> host
 * function, and host function -> registered device function name. */
struct pointer_map {
    _Atomic(uintptr_t) keys[HANDLE_SLOTS];
    _Atomic(uintptr_t) values[HANDLE_SLOTS];
};

static struct pointer_map host_of_handle, name_of_host;

int ct_kernel_names_init(uint32_t rings)
{
    if (sent_sets) /* a fork child's new session: the parent's sets are stale */
        munmap(sent_sets, sizeof(struct sent_set) * sent_set_count);
    sent_sets = NULL;
    sent_set_count = 0;
    void *mem = mmap(NULL, sizeof(struct sent_set) * rings, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    sent_sets = mem;
    sent_set_count = rings;
    return 0;
}

static uint32_t hash_pointer(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40);
}

/* The slot that holds `key`, or the free slot where it belongs; NULL when
 * the probe window is full (the name is then simply sent every time). */
static uint64_t *sent_slot(struct sent_set *set, uint64_t key)
{
    uint32_t start = hash_pointer(key);
    for (uint32_t i = 0; i < 16; i++) {
        uint64_t *slot = &set->keys[(start + i) % SENT_SLOTS];
        if (*slot == key || *slot == 0)
            return slot;
    }
    return NULL;
}

static void pointer_map_put(struct pointer_map *m, uintptr_t key, uintptr_t value)
{
    if (!key)
        return;
    uint32_t start = hash_pointer(key);
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t at = (start + i) % HANDLE_SLOTS;
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&m->keys[at], &expected, key) || expected == key) {
            atomic_store_explicit(&m->values[at], value, memory_order_release);
            return;
        }
    }
}

static uintptr_t pointer_map_get(struct pointer_map *m, uintptr_t key)
{
    uint32_t start = hash_pointer(key);
    for (uint32_t i = 0; i < 64; i++) {
        uint32_t at = (start + i) % HANDLE_SLOTS;
        uintptr_t k = atomic_load_explicit(&m->keys[at], memory_order_relaxed);
        if (k == key)
            return atomic_load_explicit(&m->values[at], memory_order_acquire);
        if (k == 0)
            break;
    }
    return 0;
}

void ct_kernel_handle_note(const void *handle, const void *host_func)
{
    pointer_map_put(&host_of_handle, (uintptr_t)handle, (uintptr_t)host_func);
}

void ct_kernel_register_name(const void *host_func, const char *device_name)
{
    pointer_map_put(&name_of_host, (uintptr_t)host_func, (uintptr_t)device_name);
}

static const void *host_function_of(const void *handle)
{
    return (const void *)pointer_map_get(&host_of_handle, (uintptr_t)handle);
}
static const char *runtime_name(const void *func)
{
    CT_REAL(func_get_name, cudaFuncGetName, (const char **, const void *));
    if (!func_get_name || ct_cuda_error_pending())
        return NULL;
    const char *name = NULL;
    cudaError_t r;
    CT_OWN_CALL(r = func_get_name(&name, func));
    ct_cuda_forget_own_error(0, r);
    return r == cudaSuccess ? name : NULL;
}

static void resolve_name(const void *func, int launch_ok, char *out, size_t size)
{
    const char *name = (const char *)pointer_map_get(&name_of_host, (uintptr_t)func);
    if (!name && launch_ok && func)
        name = runtime_name(func);
    Dl_info info;
    if (!name && func && dladdr(func, &info) && info.dli_saddr == func)
        name = info.dli_sname;
    if (name)
        snprintf(out, size, "%s", name);
    else
        snprintf(out, size, "kernel@%p", func);
}

/* Marks the name sent only once it is in the ring: a full ring means it is
 * tried again at the next launch of that kernel. */
static __attribute__((noinline)) void send_name(struct ct_ring *ring, uint64_t *sent,
                                                const void *func, int by_handle, int launch_ok)
{
    const void *host = by_handle ? host_function_of(func) : func;
    /* Only a successful __cudaGetKernel is noted, and the handle a failed one
     * hands back (CUDA 13.0 without a driver) is the host function itself. */
    char name[CT_STRING_MAX];
    resolve_name(host ? host : func, launch_ok && host, name, sizeof name);
    uint64_t key = (uint64_t)(uintptr_t)func;
    /* The file that holds the kernel: where its GPU code (or the lack of
     * it for this GPU) is to be read. */
    Dl_info info;
    if (host && dladdr(host, &info) && info.dli_fname && *info.dli_fname &&
        ct_emit_string(ring, CT_STR_KERNEL_LIBRARY, key, info.dli_fname) != 0)
        return;
    if (ct_emit_string(ring, CT_STR_KERNEL_NAME, key, name) == 0 && sent)
        *sent = key;
}

/* Whether `key`'s name has still to be sent on `ring`; *slot is where to
 * mark it sent once it is (NULL: the set has no room, so every time). */
static int must_send(struct ct_ring *ring, uint64_t key, uint64_t **slot)
{
    *slot = NULL;
    if (!ring || !key || ring->index >= sent_set_count)
        return 0;
    *slot = sent_slot(&sent_sets[ring->index], key);
    return !*slot || **slot != key;
}

void ct_kernel_name_once(struct ct_ring *ring, uint16_t kind, uint64_t key, const char *name)
{
    uint64_t *slot;
    if (must_send(ring, key, &slot) && ct_emit_string(ring, kind, key, name) == 0 && slot)
        *slot = key;
}

uint64_t ct_kernel_key_slow(struct ct_ring *ring, const void *func, int by_handle, int launch_ok)
{
    uint64_t key = (uint64_t)(uintptr_t)func, *sent;
    if (must_send(ring, key, &sent))
        send_name(ring, sent, func, by_handle, launch_ok);
    if (sent && *sent == key)
        ring->last_kernel = key;
    return key;
}

/*
 * Runtime functions looked up in a library's handle: ctypes
 * (`CDLL("libcudart.so.13").cudaDeviceSynchronize`), cffi and JIT code call
 * the runtime through dlsym(handle, name), which binds past our hooks. When
 * the name is one we hook and glibc's answer is the very function our hook
 * calls, the lookup gets our hook instead, so those calls are traced like
 * any other. The driver's cuInit is one too (hooks/driver.c): frameworks
 * with their own static runtime (XLA) find it this way. So are the CUPTI
 * entry points that take CUPTI over (cupti/session.c): frameworks that load
 * CUPTI at run time find cuptiSubscribe this way, and a dlsym on a libcupti
 * handle binds past LD_PRELOAD. Any other answer
 * (another runtime than the one our hooks forward to, a name we do not
 * hook) is passed on untouched: a program must never reach different code
 * than it asked for. Lookups from inside the preload use ct_dl_real_sym and
 * never come here.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "cudatrace/functions.h"
#include "preload/cupti/gpu_trace.h"
#include "preload/loader/dl_real.h"
#include "preload/hooks/resolve.h"

/* Declared for the trampoline in dl_trampoline.S, which jumps here. */
void *ct_dlsym_in_handle(void *handle, const char *name);

static int is_hooked(const char *name)
{
    for (int fn = 0; fn < CT_FN_COUNT; fn++)
        if (strcmp(ct_function_name(fn), name) == 0)
            return 1;
    return 0;
}

/* This library, to look our hooks up in; found once. */
static void *own_handle(void)
{
    static _Atomic(void *) handle;
    void *h = atomic_load_explicit(&handle, memory_order_acquire);
    Dl_info self;
    if (!h && dladdr((void *)own_handle, &self) && self.dli_fname) {
        h = ct_dl_real_open(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        atomic_store_explicit(&handle, h, memory_order_release);
    }
    return h;
}

/* The library family whose function our hook of `name` calls, or NULL. */
static const char *hooked_family(const char *name)
{
    if (strcmp(name, "cuInit") == 0)
        return "cuda";
    if (ct_cupti_hooks(name))
        return "cupti";
    return strncmp(name, "cuda", 4) == 0 && is_hooked(name) ? "cudart" : NULL;
}

void *ct_dlsym_in_handle(void *handle, const char *name)
{
    void *found = ct_dl_real_sym(handle, name);
    const char *family = found && name ? hooked_family(name) : NULL;
    if (!family)
        return found;
    void *self = own_handle();
    if (!self || ct_resolve_in(family, name) != found)
        return found;
    void *hook = ct_dl_real_sym(self, name);
    return hook ? hook : found;
}

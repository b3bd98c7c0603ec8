/*
 * The dl* functions as the program calls them, the loader view's way in. It
 * never changes what loads: dlopen is a trampoline (dl_trampoline.S) that
 * asks ct_loader_dlopen_request where to jump and keeps the caller's return
 * address for glibc, which resolves a bare name against the caller's
 * RUNPATH; dlclose and dlerror, which do not depend on their caller, are
 * plain wrappers. Each notes what it tells of the loader (a request, an
 * error the program read, a handle going) and has the loader view look at
 * the link map afterwards. Our own calls, and those of the CUPTI we loaded,
 * are not the program's and pass through untouched; errno is left as the
 * program's call left it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "preload/core/deferred.h"
#include "preload/core/export.h"
#include "preload/core/init.h"
#include "preload/loader/dl_real.h"
#include "preload/loader/loaded_objects.h"
#include "preload/loader/loader_view.h"
#include "preload/loader/requests.h"

static void *no_dlopen(const char *file, int mode)
{
    (void)file;
    (void)mode;
    return NULL;
}

void ct_loader_note_own_dlopen(const char *file, int mode)
{
    ct_request_note(file, mode, ct_own_base());
}

/* Called by the dlopen trampoline; returns where it jumps. */
void *ct_loader_dlopen_request(const char *file, int mode, uintptr_t caller)
{
    void *real = ct_dl_real_open_address();
    if (!real)
        return (void *)no_dlopen;
    if (!file || ct_is_own_address(caller))
        return real;
    ct_init_once();
    if (!ct_tracing_allowed)
        return real;
    int saved_errno = errno;
    ct_request_note(file, mode, caller);
    atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
    ct_loader_observe();
    errno = saved_errno;
    return real;
}

CT_EXPORT char *dlerror(void)
{
    char *text = ct_dl_real_error();
    if (text && ct_tracing_allowed && !ct_is_own_address((uintptr_t)__builtin_return_address(0))) {
        int saved_errno = errno;
        if (ct_request_note_error(text)) {
            atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
            ct_loader_observe();
        }
        errno = saved_errno;
    }
    return text;
}

CT_EXPORT int dlclose(void *handle)
{
    ct_loader_observe(); /* what this handle's dlopen loaded, before it goes */
    int result = ct_dl_real_close(handle);
    if (ct_tracing_allowed) {
        int saved_errno = errno;
        atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
        ct_loader_observe();
        errno = saved_errno;
    }
    return result;
}

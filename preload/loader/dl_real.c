/*
 * Finds glibc's own dlopen, dlclose, dlerror and dlsym behind the
 * definitions the preload exports. dlsym(RTLD_NEXT) from the preload skips
 * the preload itself; dlsym, which the preload exports too, comes from
 * dlvsym, which it does not, so no lookup can come back to us. The pointers
 * are found once; a failed lookup (a libc without them cannot run this
 * preload anyway) leaves the calls failing as they would.
 */
#include "preload/loader/dl_real.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

static void *(*real_open)(const char *, int);
static int (*real_close)(void *);
static char *(*real_error)(void);
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find_real(void)
{
    real_open = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    real_close = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    real_error = (char *(*)(void))dlsym(RTLD_NEXT, "dlerror");
    if (real_error)
        real_error(); /* a failed lookup of ours must leave the program no error */
}

void *ct_dl_real_open(const char *file, int mode)
{
    pthread_once(&once, find_real);
    return real_open ? real_open(file, mode) : NULL;
}

int ct_dl_real_close(void *handle)
{
    pthread_once(&once, find_real);
    return real_close ? real_close(handle) : -1;
}

char *ct_dl_real_error(void)
{
    pthread_once(&once, find_real);
    return real_error ? real_error() : NULL;
}

typedef void *(*dlsym_function)(void *, const char *);

static void *no_symbol(void *handle, const char *name)
{
    (void)handle;
    (void)name;
    return NULL;
}

/* Not under `once`: find_real's own dlsym calls come through here. */
void *ct_dl_real_sym_address(void)
{
    static _Atomic(dlsym_function) real_sym;
    dlsym_function sym = atomic_load_explicit(&real_sym, memory_order_relaxed);
    if (!sym) {
        sym = (dlsym_function)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!sym)
            sym = (dlsym_function)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!sym)
            sym = no_symbol;
        atomic_store_explicit(&real_sym, sym, memory_order_relaxed);
    }
    return (void *)sym;
}

void *ct_dl_real_sym(void *handle, const char *name)
{
    return ((dlsym_function)ct_dl_real_sym_address())(handle, name);
}

/* What the trampoline jumps to: glibc's dlopen, reached with the caller's
 * own return address still on the stack. */
void *ct_dl_real_open_address(void)
{
    pthread_once(&once, find_real);
    return (void *)real_open;
}

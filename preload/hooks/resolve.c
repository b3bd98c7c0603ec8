/*
 * Resolves real runtime functions lazily, at their first call, so the
 * runtime may be loaded at any time (a framework dlopens it long after
 * start-up). RTLD_NEXT finds a runtime in the global scope. A runtime that
 * was dlopen'ed RTLD_LOCAL is invisible to it, so we then look for a loaded
 * libcudart (including hash-renamed copies such as libcudart-d0da41ae.so.11.0)
 * and ask it directly; the dlopen with RTLD_NOLOAD only takes a reference to
 * an object that is already there and never loads anything. The program's
 * own libcupti is found the same way.
 */
#include "preload/hooks/resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "preload/loader/dl_real.h"
#include "common/library_family.h"

/* A function `name` in a loaded library of `family`, or (name NULL) the
 * first such library's path. */
struct library_search {
    const char *family, *name;
    void *found;
    char *path;
    size_t path_size;
};

static int search_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct library_search *search = data;
    char family[32];
    if (!info->dlpi_name || !ct_library_family(info->dlpi_name, family, sizeof family) ||
        strcmp(family, search->family) != 0)
        return 0;
    if (!search->name) {
        snprintf(search->path, search->path_size, "%s", info->dlpi_name);
        return 1;
    }
    void *handle = ct_dl_real_open(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return 0;
    search->found = ct_dl_real_sym(handle, search->name);
    ct_dl_real_close(handle);
    return search->found != NULL;
}

void *ct_resolve_in(const char *family, const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        struct library_search search = {family, name, NULL, NULL, 0};
        dl_iterate_phdr(search_loaded, &search);
        fn = search.found;
    }
    if (!fn)
        ct_dl_real_error(); /* our failed lookup must not become the program's dlerror() */
    return fn;
}

int ct_loaded_library(const char *family, char *path, size_t size)
{
    char none[1];
    struct library_search search = {family, NULL, NULL, path ? path : none,
                                    path ? size : sizeof none};
    return dl_iterate_phdr(search_loaded, &search);
}

void *ct_resolve_slow(_Atomic(void *) *slot, const char *family, const char *name)
{
    void *fn = ct_resolve_in(family, name);
    if (fn)
        atomic_store_explicit(slot, fn, memory_order_relaxed);
    return fn;
}

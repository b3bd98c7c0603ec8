/*
 * Finding the real CUDA runtime functions behind our interposed names.
 */
#ifndef CT_PRELOAD_RESOLVE_H
#define CT_PRELOAD_RESOLVE_H

#include <stdatomic.h>
#include <stddef.h>

void *ct_resolve_slow(_Atomic(void *) *slot, const char *family, const char *name);
/* `name` in the global scope after us, else in a loaded library of `family`
 * (library_family.h), or NULL. */
void *ct_resolve_in(const char *family, const char *name);
/* Whether a library of `family` is loaded; its path in `path` (may be NULL). */
int ct_loaded_library(const char *family, char *path, size_t size);

/* The real function `name` of a library of `family` (ct_resolve_in),
 * cached in `slot` after the first lookup that found it. */
static inline void *ct_real_function_in(_Atomic(void *) *slot, const char *family, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_relaxed);
    if (__builtin_expect(fn != NULL, 1))
        return fn;
    return ct_resolve_slow(slot, family, name);
}

/* The real runtime function for `name`. */
static inline void *ct_real_function(_Atomic(void *) *slot, const char *name)
{
    return ct_real_function_in(slot, "cudart", name);
}

#endif

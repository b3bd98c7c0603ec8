/*
 * Finding the real CUDA runtime functions behind our interposed names.
 */
#ifndef CT_PRELOAD_RESOLVE_H
#define CT_PRELOAD_RESOLVE_H

#include <stdatomic.h>
#include <stddef.h>

void *ct_resolve_slow(_Atomic(void *) *slot, const char *name);
/* `name` in the global scope after us, else in a loaded library of `family`
 * (library_family.h), or NULL. */
void *ct_resolve_in(const char *family, const char *name);
/* The real function `name` our hook of that name calls, or NULL. */
void *ct_resolve_lookup(const char *name);

/* The real function for `name`, cached in `slot` after the first lookup. */
static inline void *ct_real_function(_Atomic(void *) *slot, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_relaxed);
    if (__builtin_expect(fn != NULL, 1))
        return fn;
    return ct_resolve_slow(slot, name);
}

#endif

/*
 * Work a hook does after its call once it is due, rather than where it
 * became due: a look at the link map after a dlopen (loader_view.c), the libraries'
 * own versions, asked at the first call of any kind, and the preload's
 * runtime, driver and device queries, which wait for a program call that has
 * initialised CUDA itself. One flag word, so the hot path pays one relaxed
 * load for all of them.
 */
#ifndef CT_PRELOAD_DEFERRED_H
#define CT_PRELOAD_DEFERRED_H

#include <stdatomic.h>

enum {
    CT_DEFER_LOOK = 1,             /* the link map may have changed             */
    CT_DEFER_CUDA_INFO = 2,        /* versions and devices not yet recorded      */
    CT_DEFER_LIBRARY_VERSIONS = 4, /* the libraries' own versions not yet asked */
    CT_DEFER_GRAPH_MEMORY = 8,     /* graphs with allocation nodes exist: follow their memory */
};

extern _Atomic unsigned ct_deferred;

void ct_deferred_run(unsigned func);

/* The libraries' versions, if no call asked for them: at exit, while the
 * session still runs. */
void ct_deferred_at_exit(void);

static inline void ct_deferred_check(unsigned func)
{
    if (__builtin_expect(atomic_load_explicit(&ct_deferred, memory_order_relaxed) != 0, 0))
        ct_deferred_run(func);
}

#endif

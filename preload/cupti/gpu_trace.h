/*
 * CUPTI, the GPU's side of the trace: what the rest of the preload sees of
 * it. CUPTI is loaded at run time, never linked (library.c), started
 * once per process after the program's own first call that initialises CUDA
 * (session.c), and from then on its callbacks record the driver and
 * runtime calls the hooks cannot see (callbacks.c) and its activity
 * buffers the GPU's work as it ran (activity.c). A hook learns
 * CUPTI's correlation id for its own call through one thread-local word,
 * written by the callback inside the call, so that the trace can draw a
 * flow from the host call to the GPU work it caused.
 */
#ifndef CT_PRELOAD_CUPTI_H
#define CT_PRELOAD_CUPTI_H

#include <stdint.h>

#include "preload/core/ring.h"

/* Hooked calls this thread is inside: their callbacks record nothing. */
extern __thread uint32_t ct_cupti_in_hook CT_TLS;
/* Calls the preload makes on its own account (cuda_call.h): not traced. */
extern __thread uint32_t ct_cupti_own_calls CT_TLS;
/* CUPTI's correlation id of the hooked call this thread is in, 0 when none. */
extern __thread uint32_t ct_cupti_correlation CT_TLS;

/* Sends the pending correlation id ahead of the record of the call of
 * `func` begun at `begin`, if that call makes GPU work; clears it. */
void ct_cupti_emit_correlation(uint64_t begin, uint16_t func);

static inline void ct_cupti_correlate(uint64_t begin, uint16_t func)
{
    if (__builtin_expect(ct_cupti_correlation != 0, 0))
        ct_cupti_emit_correlation(begin, func);
}

/* Starts CUPTI once, from a hook after the program's first call that
 * initialised CUDA (`devices`: what the runtime counted, -1 when it could
 * not), or from InitializeInjection (the driver's cuInit: CT_CUPTI_AT_CUINIT). */
void ct_cupti_start(int devices);
#define CT_CUPTI_AT_CUINIT (-2)
/* Hands everything CUPTI still holds to the rings (at exit). */
void ct_cupti_flush(void);
/* A fork child: CUPTI's state belongs to the parent. */
void ct_cupti_forget_in_child(void);
/* Whether `name` is a CUPTI entry point the preload hooks (session.c). */
int ct_cupti_hooks(const char *name);

#endif

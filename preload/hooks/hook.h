/*
 * The shape every interposed CUDA runtime function shares: find the real
 * function, read the clock, call it, read the clock, emit one record (after
 * CUPTI's correlation id for it, when CUPTI runs: cupti/gpu_trace.h). Each
 * hook file states only what differs: the prototype and which arguments go
 * into the record (layouts per family in include/cudatrace/functions.h).
 * The definitions are unversioned on purpose: an unversioned definition in a
 * preloaded object interposes references bound to libcudart.so.13's
 * versioned symbols, whereas one under another version node would be skipped.
 */
#ifndef CT_PRELOAD_HOOK_H
#define CT_PRELOAD_HOOK_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "preload/sites/call_site.h"
#include "preload/core/clock.h"
#include "preload/cupti/gpu_trace.h"
#include "preload/core/deferred.h"
#include "cudatrace/functions.h"
#include "preload/core/export.h"
#include "preload/hooks/resolve.h"
#include "preload/core/ring.h"

/* The five record arguments; a level of indirection so that a macro which
 * expands to several of them (LAUNCH_ARGS) counts as what it expands to. */
#define CT_CALL_ARGS(...) CT_CALL_ARGS_(__VA_ARGS__)
#define CT_CALL_ARGS_(a0, a1, a2, a3, a4)                                                          \
    (uint64_t)(a0), (uint64_t)(a1), (uint64_t)(a2), (uint64_t)(a3), (uint64_t)(a4)

/* Inside CT_HOOK's argument expressions, `result` is the call's return value. */
#define CT_HOOK(name, params, args, ...)                                                           \
    CT_EXPORT cudaError_t name params                                                              \
    {                                                                                              \
        static _Atomic(void *) real_slot;                                                          \
        cudaError_t(*real) params = (cudaError_t(*) params)ct_real_function(&real_slot, #name);    \
        if (__builtin_expect(real == NULL, 0))                                                     \
            return cudaErrorSharedObjectSymbolNotFound;                                            \
        uint64_t begin = ct_clock_now();                                                           \
        struct ct_ring *inflight =                                                                 \
            ct_call_enter(CT_FN_##name, begin, __builtin_return_address(0));                       \
        ct_cupti_in_hook++;                                                                        \
        cudaError_t result = real args;                                                            \
        ct_cupti_in_hook--;                                                                        \
        uint64_t end = ct_clock_now();                                                             \
        ct_call_leave(inflight);                                                                   \
        if (ct_call_site_due(CT_FN_##name, (int)result, begin))                                    \
            ct_call_site_capture(begin, __builtin_return_address(0),                               \
                                 ct_function_is_kept(CT_FN_##name));                               \
        ct_cupti_correlate(begin, CT_FN_##name);                                                   \
        ct_emit_call(CT_FN_##name, begin, end, (int32_t)result, CT_CALL_ARGS(__VA_ARGS__));        \
        ct_deferred_check(CT_FN_##name);                                                           \
        return result;                                                                             \
    }

/* What a successful call stored through `out` (a pointer, handle or integer;
 * ints sign-extend), else 0: a failed call may leave it unwritten. */
#define CT_OUT(out) (result == cudaSuccess && (out) ? (uint64_t) * (out) : 0)
#define CT_PTR(p) ((uintptr_t)(p))

#endif

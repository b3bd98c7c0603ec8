/*
 * Starts CUPTI once per process and says what became of it. The start waits
 * for the program's own first call that initialises CUDA (deferred.c), or
 * for the driver's InitializeInjection, so CUPTI never initialises a driver
 * the program had not, and a process without one is not made to load
 * CUPTI for nothing: by default CUPTI is tried only when libcuda is mapped
 * and the runtime counted a device (CUDATRACE_CUPTI=1 tries anyway; 0 never,
 * and says nothing). The outcome is one CT_REC_CUPTI_STATE, with the library
 * used or the reason: NO_GPU when there was nothing to trace (the findings
 * about the driver say why), UNAVAILABLE when there was and CUPTI could not
 * be had (none found, the one subscriber slot taken by another profiler, an
 * error). Tracing goes on through the hooks either way. CUPTI has one set
 * of activity callbacks per process, and one subscriber before CUDA 13.3 or
 * driver r610 (several after): when the program registers activity
 * callbacks itself (torch.profiler starting), cudatrace hands CUPTI over
 * first (YIELDED), and when it subscribes (cuptiSubscribe, cuptiSubscribe_v2,
 * linked or found with dlsym), cudatrace hands CUPTI over only if CUPTI
 * refused the program's subscription as a second one, and then subscribes
 * it again: the program's profiler works as it would untraced, and the GPU
 * timings stop there only where CUPTI allows no second subscriber. The
 * activity still buffered is handed over from an atexit handler, registered
 * once CUPTI is running: it runs before the libraries' destructors, CUDA's
 * and CUPTI's.
 */
#include "preload/cupti/gpu_trace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/core/clock.h"
#include "preload/core/config.h"
#include "preload/cupti/api.h"
#include "preload/cupti/flusher.h"
#include "preload/cupti/internal.h"
#include "preload/core/export.h"
#include "preload/hooks/resolve.h"

/* INHERITED: a fork child of a process with CUPTI running. */
enum start_state { NOT_STARTED, STARTING, RUNNING, NOT_RUNNING, INHERITED };

static _Atomic int start_state;
static CUpti_SubscriberHandle subscriber;
static uint32_t cupti_version;

void ct_cupti_note_state(enum ct_cupti_state state, int result, uint64_t dropped, const char *text)
{
    struct ct_ring *ring = ct_ring_current();
    if (!ring)
        return;
    uint64_t now = ct_clock_now();
    if (text && ct_emit_string(ring, CT_STR_CUPTI_TEXT, now, text) != 0)
        return;
    struct ct_record r = {.type = CT_REC_CUPTI_STATE,
                          .func = (uint16_t)state,
                          .result = result,
                          .begin = now,
                          .end = now,
                          .arg = {cupti_version, dropped}};
    ct_emit_record(ring, &r, 1);
}

static void not_running(enum ct_cupti_state state, int result, const char *why)
{
    ct_cupti_note_state(state, result, 0, why);
    atomic_store(&start_state, NOT_RUNNING);
}

static void unavailable(int result, const char *why)
{
    not_running(CT_CUPTI_UNAVAILABLE, result, why);
}

static void subscribe_failed(CUptiResult r)
{
    char why[512];
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(why, sizeof why,
                 "cuptiSubscribe: %s: another profiler (Nsight Systems, Nsight Compute, "
                 "torch.profiler/Kineto) holds CUPTI's one subscriber slot",
                 ct_cupti_result_name(r));
    else
        snprintf(why, sizeof why, "cuptiSubscribe: %s%s", ct_cupti_result_name(r),
                 ct_cupti_driver_loaded() ? "" : " (no CUDA driver is loaded)");
    unavailable((int)r, why);
}

static void at_exit(void)
{
    ct_cupti_flush();
}

/* Why there is no GPU to trace, or NULL. */
static const char *no_gpu(int devices)
{
    if (!ct_cupti_driver_loaded())
        return "no CUDA driver (libcuda.so.1) is loaded in this process";
    if (devices == -1)
        return "the CUDA runtime found no usable driver or device";
    if (devices == 0)
        return "the CUDA runtime found no device";
    return NULL;
}

static void start(int devices)
{
    const char *nothing = ct_config.cupti == CT_CUPTI_AUTO ? no_gpu(devices) : NULL;
    if (nothing) {
        not_running(CT_CUPTI_NO_GPU, 0, nothing);
        return;
    }
    char path[4096], why[4200];
    if (ct_cupti_library_load(path, sizeof path, why, sizeof why) != 0) {
        unavailable(0, why);
        return;
    }
    ct_cupti.get_version(&cupti_version);
    CUptiResult r = ct_cupti.subscribe(&subscriber, ct_cupti_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        subscribe_failed(r);
        return;
    }
    ct_cupti_callbacks_enable(subscriber);
    ct_cupti_graph_callbacks_enable(subscriber);
    if (ct_cupti_activity_enable(why, sizeof why) != 0) {
        ct_cupti.unsubscribe(subscriber);
        unavailable(0, why);
        return;
    }
    ct_cupti_clock_sample(); /* on the clock activity_enable chose */
    atomic_store(&start_state, RUNNING);
    ct_cupti_flusher_start();
    atexit(at_exit);
    ct_cupti_note_state(CT_CUPTI_ACTIVE, 0, 0, path);
}

void ct_cupti_start(int devices)
{
    int expected = INHERITED;
    if (ct_config.cupti == CT_CUPTI_OFF)
        return;
    if (atomic_compare_exchange_strong(&start_state, &expected, NOT_RUNNING)) {
        ct_cupti_note_state(CT_CUPTI_UNAVAILABLE, 0, 0,
                            "this process was forked from one with CUPTI running, and neither "
                            "CUPTI nor CUDA survives fork");
        return;
    }
    expected = NOT_STARTED;
    if (!atomic_compare_exchange_strong(&start_state, &expected, STARTING))
        return;
    int saved_errno = errno;
    start(devices);
    errno = saved_errno;
}

static int running(void)
{
    return atomic_load_explicit(&start_state, memory_order_acquire) == RUNNING;
}

void ct_cupti_flush(void)
{
    if (!running())
        return;
    int saved_errno = errno;
    ct_cupti_flusher_stop();
    ct_cupti_flush_at_exit();
    ct_cupti_clock_sample();
    errno = saved_errno;
}

/* Flushes what CUPTI holds, then gives up the activity API and the
 * subscription, once: whether this call did. */
static int yield(void)
{
    int expected = RUNNING;
    if (!atomic_compare_exchange_strong(&start_state, &expected, NOT_RUNNING))
        return 0;
    int saved_errno = errno;
    ct_cupti_flusher_stop();
    /* Disabled first, so no record can take a buffer of ours after the flush. */
    ct_cupti_activity_disable();
    ct_cupti.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    ct_cupti.unsubscribe(subscriber);
    ct_cupti_note_state(CT_CUPTI_YIELDED, 0, 0,
                        "the program took CUPTI itself (torch.profiler, Kineto or another tool "
                        "in the process): cudatrace handed it over, so GPU timings stop here");
    errno = saved_errno;
    return 1;
}

/* Whether the program's subscription (not CUPTI's own call from inside the
 * libcupti we use), refused with `result`, was refused for ours and is worth
 * a second try now that ours is handed over. CUPTI's documentation, Legacy
 * Initialization: "For applications running on CUDA 13.2 or older, or with
 * drivers older than r610, CUPTI limits activity tracing to a single
 * subscriber"; "On systems meeting the CUDA 13.3 and driver r610
 * requirements, this error will no longer be triggered by concurrent tool
 * usage". Nothing tells a tool in advance which holds, so the program's own
 * attempt is the test: a first refusal it never sees when ours was the
 * cause, and no hand-over where CUPTI takes both. */
static int handed_over_for(CUptiResult result, const void *caller)
{
    return result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
           !ct_cupti_made_call(caller) && yield();
}

/* The program's own calls of the entry points that take CUPTI over,
 * forwarded to its libcupti. Programs that dlsym them from a libcupti
 * handle reach them through dlsym_handle.c (ct_cupti_hooks). */
CT_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber_out,
                                     CUpti_CallbackFunc callback, void *userdata)
{
    static _Atomic(void *) real_slot;
    CUptiResult (*real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) =
        (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))ct_real_function_in(
            &real_slot, "cupti", "cuptiSubscribe");
    if (!real)
        return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult r = real(subscriber_out, callback, userdata);
    if (handed_over_for(r, __builtin_return_address(0)))
        r = real(subscriber_out, callback, userdata);
    return r;
}

/* What new tools call (cupti_callbacks.h recommends "transitioning to the
 * new API cuptiSubscribe_v2"). */
CT_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber_out,
                                        CUpti_CallbackFunc callback, void *userdata,
                                        CUpti_SubscriberParams *params)
{
    static _Atomic(void *) real_slot;
    CUptiResult (*real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                        CUpti_SubscriberParams *) =
        (CUptiResult(*)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                        CUpti_SubscriberParams *))ct_real_function_in(&real_slot, "cupti",
                                                                      "cuptiSubscribe_v2");
    if (!real)
        return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult r = real(subscriber_out, callback, userdata, params);
    if (handed_over_for(r, __builtin_return_address(0)))
        r = real(subscriber_out, callback, userdata, params);
    return r;
}

/* One set of activity callbacks per process, whatever the subscribers: the
 * program's would replace ours, so ours are handed over first. */
CT_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                     CUpti_BuffersCallbackCompleteFunc completed)
{
    static _Atomic(void *) real_slot;
    CUptiResult (*real)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
        (CUptiResult(*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))
            ct_real_function_in(&real_slot, "cupti", "cuptiActivityRegisterCallbacks");
    if (!real)
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (!ct_cupti_made_call(__builtin_return_address(0)))
        (void)yield();
    return real(requested, completed);
}

void ct_cupti_forget_in_child(void)
{
    /* The parent's subscription and buffers came along but CUPTI's threads
     * did not: a child of a process with CUPTI running leaves it alone (its
     * CUDA is unusable anyway) and says so if it calls CUDA; any other may
     * start its own. */
    int was = atomic_load(&start_state);
    ct_cupti_activity_forget_in_child();
    ct_cupti_flusher_forget_in_child();
    atomic_store(&start_state, was == RUNNING ? INHERITED : NOT_STARTED);
}

int ct_cupti_hooks(const char *name)
{
    return strcmp(name, "cuptiSubscribe") == 0 || strcmp(name, "cuptiSubscribe_v2") == 0 ||
           strcmp(name, "cuptiActivityRegisterCallbacks") == 0;
}

/*
 * The CUPTI entry points the preload calls, found with dlsym in the
 * libcupti library.c loaded: CUPTI is never linked, so a process
 * without it, or with another version, loads and runs as before.
 */
#ifndef CT_PRELOAD_CUPTI_API_H
#define CT_PRELOAD_CUPTI_API_H

#include <cupti.h>
#include <stddef.h>

struct ct_cupti_api {
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*get_result_string)(CUptiResult, const char **);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                   CUpti_CallbackId);
    CUptiResult (*get_callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*get_timestamp)(uint64_t *);
    CUptiResult (*activity_enable)(CUpti_ActivityKind);
    CUptiResult (*activity_disable)(CUpti_ActivityKind);
    CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                               CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*activity_flush_all)(uint32_t);
    CUptiResult (*activity_flush_period)(uint32_t);
    CUptiResult (*activity_get_next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*activity_get_num_dropped_records)(CUcontext, uint32_t, size_t *);
    /* Graphs' ids (cupti_activity.h); without the first two no replay is named. */
    CUptiResult (*get_graph_node_id)(CUgraphNode, uint64_t *);
    CUptiResult (*get_graph_id)(CUgraph, uint32_t *);
    CUptiResult (*get_graph_exec_id)(CUgraphExec, uint32_t *);
    /* Absent before CUDA 11.6: GPU times are then CLOCK_REALTIME's. */
    CUptiResult (*activity_register_timestamp_callback)(CUpti_TimestampCallbackFunc);
};

extern struct ct_cupti_api ct_cupti;

/* Loads libcupti and fills ct_cupti: 0 with the file's path in `path`, or
 * -1 with the reason in `why`. */
int ct_cupti_library_load(char *path, size_t path_size, char *why, size_t why_size);
/* Whether code at `address` is the libcupti cudatrace opened (or, while it
 * opens one, any libcupti). */
int ct_cupti_made_call(const void *address);
/* Whether a CUDA driver (libcuda) is mapped into the process. */
int ct_cupti_driver_loaded(void);
/* CUPTI's name for a result code, or "CUPTI error N". */
const char *ct_cupti_result_name(CUptiResult r);

#endif

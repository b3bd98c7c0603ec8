/*
 * What the cupti_*.c files share among themselves and no other file needs.
 */
#ifndef CT_PRELOAD_CUPTI_INTERNAL_H
#define CT_PRELOAD_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#include "cudatrace/record.h"

/* session.c */
/* One CT_REC_CUPTI_STATE, after its text when it has one. */
void ct_cupti_note_state(enum ct_cupti_state state, int result, uint64_t dropped, const char *text);

/* callbacks.c */
void CUPTIAPI ct_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *data);
/* Enables the callbacks of every runtime and driver function cudatrace names. */
void ct_cupti_callbacks_enable(CUpti_SubscriberHandle subscriber);
/* Whether calls of `func` submit GPU work (launches, graphs, copies, sets). */
int ct_cupti_makes_gpu_work(uint16_t func);
/* The begin clock of the API call this thread is in: the hooked call's, or
 * the outermost call only CUPTI sees; now when it is in none. */
uint64_t ct_cupti_call_begin(void);

/* graph_nodes.c */
/* Enables the resource callbacks of graphs, their nodes and executables. */
void ct_cupti_graph_callbacks_enable(CUpti_SubscriberHandle subscriber);
/* One of those callbacks: a CT_REC_GRAPH record, and the call's site. */
void ct_cupti_graph_event(CUpti_CallbackId cbid, const CUpti_ResourceData *data);

/* activity.c */
/* Registers the buffer callbacks and enables the activity kinds: 0, or -1
 * with the reason in `why`. */
int ct_cupti_activity_enable(char *why, size_t why_size);
/* Disables the kinds ct_cupti_activity_enable enabled. */
void ct_cupti_activity_disable(void);
/* Records a reading of CUPTI's clock between two of ours. */
void ct_cupti_clock_sample(void);
/* Kernel, copy and memset records CUPTI handed over so far, timed or not. */
uint64_t ct_cupti_activity_work_records(void);
void ct_cupti_activity_forget_in_child(void);

#endif

/*
 * The preload's thread that hands CUPTI's finished work to the trace
 * (flusher.c), and the flush at exit.
 */
#ifndef CT_PRELOAD_CUPTI_FLUSHER_H
#define CT_PRELOAD_CUPTI_FLUSHER_H

/* Starts the thread, once CUPTI runs. */
void ct_cupti_flusher_start(void);
/* Ends it and waits for it (at exit, or before handing CUPTI over). */
void ct_cupti_flusher_stop(void);
/* Waits a bounded time for the work in flight, then flushes all of it. */
void ct_cupti_flush_at_exit(void);
/* A fork child has no flusher thread. */
void ct_cupti_flusher_forget_in_child(void);

#endif

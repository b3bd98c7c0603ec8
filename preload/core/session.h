/*
 * The tracing session of one process: the shared-memory rings and the
 * collector process that drains them. A session starts when the process
 * first touches CUDA (a call, or a CUDA-stack library loaded or looked for),
 * not at load, so the shells, compilers and tools that inherit LD_PRELOAD run
 * with no collector and leave no file.
 */
#ifndef CT_PRELOAD_SESSION_H
#define CT_PRELOAD_SESSION_H

#include "cudatrace/shm_layout.h"

/* The session's shared memory, starting the session on first use; NULL when
 * tracing is off, failed to start or has ended. */
struct ct_shm_header *ct_session_shm(void);
/* Whether a session is running, without starting one. */
int ct_session_active(void);
/* The ring library events go to (starting the session), or NULL. */
struct ct_ring *ct_session_loader_ring(void);

/* Waits until `ready(ctx)` returns nonzero, retrying every 100 us; 0 when
 * the collector is gone or the wait ran past the exit timeout. */
int ct_session_wait_until(int (*ready)(void *ctx), void *ctx);

/* Counts a call that found no ring (all taken, or the thread was busy
 * starting the session when a signal handler called CUDA), so recorded plus
 * dropped stays equal to the calls made. */
void ct_session_count_lost(void);

/* pthread_atfork handlers. A fork waits while a session is being started, so
 * the child never inherits half-made pipes; the child must never write into
 * its parent's rings, and starts a session of its own on its first CUDA call,
 * with its own start time. */
void ct_session_lock_for_fork(void);
void ct_session_unlock_after_fork(void);
void ct_session_forget_in_child(void);
/* Where the collector binary is (CUDATRACE_COLLECTOR, else beside us). */
void ct_session_find_collector(void);

#endif

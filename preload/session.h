/*
 * The tracing session of one process: the shared-memory rings and the
 * collector process that drains them. A session starts on the first CUDA
 * call, not at load, so the shells, compilers and tools that inherit
 * LD_PRELOAD run with no collector and leave no file.
 */
#ifndef CT_PRELOAD_SESSION_H
#define CT_PRELOAD_SESSION_H

#include "cudatrace/record.h"

/* The session's shared memory, starting the session on first use; NULL when
 * tracing is off, failed to start or has ended. */
struct ct_shm_header *ct_session_shm(void);

#endif

/*
 * Snapshots of a running trace (snapshot.c): what the trace holds so far,
 * plus every running thread's state, copied beside it while it goes on.
 */
#ifndef CT_COLLECTOR_SNAPSHOT_H
#define CT_COLLECTOR_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/trace_file.h"
#include "collector/perfetto/writer.h"
#include "cudatrace/shm_layout.h"

enum ct_snapshot_trigger {
    CT_SNAPSHOT_ASKED, /* by hand: `cudatrace ctl PID snapshot` */
    CT_SNAPSHOT_ERROR, /* the first failure of a CUDA error code */
    CT_SNAPSHOT_OOM,   /* an out-of-memory failure */
    CT_SNAPSHOT_HANG,  /* a thread inside one call past CUDATRACE_HANG_S */
};

/* Why a snapshot is written, as its cudatrace.snapshot instant says. */
struct ct_snapshot_reason {
    enum ct_snapshot_trigger trigger;
    uint32_t func;     /* the call that failed or hangs (not read for ASKED) */
    int32_t result;    /* ERROR, OOM: the code it failed with */
    int32_t tid;       /* HANG: the thread */
    uint64_t since_ns; /* HANG: when the call began */
    uint64_t hang_ns;  /* HANG: the threshold it passed */
};

/* Once the builder has started, with the rings the threads' state is read
 * from, the writer of the trace and its file. */
void ct_snapshot_start(struct ct_shm_header *shm, struct ct_writer *w, struct ct_trace_file *file);
/* Writes trace.snapshot-N.pftrace.zst beside the trace (perfetto/
 * trace_file.c names it) and its name into `path`; 0, or an errno value
 * when it could not (nothing is left behind then). Called from the
 * collector's loop between drain passes (the builder and the writer are
 * that thread's), as the triggers do; `ctl snapshot` must ask it there too.
 * The drain waits for it: one copy of the trace file, which a bound keeps
 * to CUDATRACE_MAX_MB. */
int ct_snapshot_write(const struct ct_snapshot_reason *why, char *path, size_t path_size);

#endif

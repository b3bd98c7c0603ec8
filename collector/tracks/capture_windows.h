/*
 * The capture windows of CUDATRACE_CAPTURE and `cudatrace ctl`: their flag
 * in the shared header, the time window the collector opens and closes
 * itself, and their slices in the trace (capture_windows.c, struct
 * ct_capture_windows, which the builder holds).
 */
#ifndef CT_COLLECTOR_CAPTURE_WINDOWS_H
#define CT_COLLECTOR_CAPTURE_WINDOWS_H

#include <stdint.h>

#include "collector/perfetto/process_tracks.h"
#include "cudatrace/shm_layout.h"

struct ct_capture_windows {
    struct ct_shm_header *header; /* whose capture_open is the flag */
    struct ct_process *process;   /* on whose track the windows are */
    int window_open, closed_any;
    uint64_t opened_ns;
    const char *opened_by;
    /* The time window: when it opens and closes (0: never), and how far it got. */
    uint64_t time_open_ns, time_close_ns;
    int time_opened, time_done;
};

/* The windows of the process whose header is `shm`, which started at
 * `start_ns`, on a track of `process`. */
void ct_capture_windows_start(struct ct_capture_windows *w, struct ct_shm_header *shm,
                              struct ct_process *process, uint64_t start_ns);
/* A CT_REC_CAPTURE at `ns`: the preload opened or closed the window. */
void ct_capture_windows_record(struct ct_capture_windows *w, const struct ct_record *record,
                               uint64_t ns);
/* Once per drain cycle: opens and closes the time window when it is due. */
void ct_capture_windows_tick(struct ct_capture_windows *w, uint64_t now_ns);
/* Opens or closes the window from outside (`cudatrace ctl`); `by` says who. */
void ct_capture_windows_set(struct ct_capture_windows *w, int open, uint64_t now_ns,
                            const char *by);
/* Whether the window is open now. */
int ct_capture_windows_open(const struct ct_capture_windows *w);
/* The process ended: an open window ends with it. */
void ct_capture_windows_finish(struct ct_capture_windows *w, uint64_t end_ns);

#endif

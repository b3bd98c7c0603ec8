/*
 * Under `cudatrace run` (CUDATRACE_RUN_WATCH), one line at the end of a run
 * in which nothing touched CUDA (run_watch.c).
 */
#ifndef CT_PRELOAD_RUN_WATCH_H
#define CT_PRELOAD_RUN_WATCH_H

/* At load: the run's top process starts listening. */
void ct_run_watch_start(void);
/* A session is starting: this process touched CUDA. */
void ct_run_watch_touched(void);
/* At exit: a process tells the top what it saw; the top speaks if nothing
 * in the run touched CUDA. */
void ct_run_watch_finish(void);

#endif

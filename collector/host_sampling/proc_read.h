/*
 * What /proc says of one thread or one process of the traced program, read
 * from outside: the scheduler state and CPU time of a thread (its stat and
 * schedstat files), what it sleeps in (wchan), and the CPU time of a whole
 * process and its parent (for the workers). Each read is a file read; a
 * thread or process that has gone fails it, nothing else.
 */
#ifndef CT_COLLECTOR_HOST_PROC_READ_H
#define CT_COLLECTOR_HOST_PROC_READ_H

#include <stdint.h>
#include <sys/types.h>

#define CT_HOST_NAME_MAX 16  /* a comm, NUL included */
#define CT_HOST_WCHAN_MAX 48 /* a kernel function name */

struct ct_task_reading {
    char state; /* stat's: R, S, D, T, t, Z, X, I */
    char name[CT_HOST_NAME_MAX];
    uint64_t run_ns, wait_ns;      /* schedstat: on a CPU, waiting on a run queue */
    char wchan[CT_HOST_WCHAN_MAX]; /* "" when not sleeping or not readable */
};

struct ct_process_reading {
    pid_t ppid;
    char name[CT_HOST_NAME_MAX];
    uint64_t cpu_ns;  /* user and system time of all its threads */
    uint64_t wait_ns; /* its main thread's on a run queue */
};

/* The files of one thread or process kept open between rounds (-1: not
 * open), which spares each read its open and close. */
struct ct_proc_files {
    int stat, sched;
};
#define CT_PROC_FILES_NONE ((struct ct_proc_files){-1, -1})

/* Reads thread `tid` of the directory `task_fd` (/proc/PID/task), through
 * `files` where it can keep them; 0, or -1 with errno when it has gone or
 * may not be read (its files are closed then). */
int ct_task_read(int task_fd, pid_t tid, struct ct_proc_files *files, struct ct_task_reading *out);
/* Reads process `pid` (`proc_fd`: /proc) the same way; 0 or -1 with errno. */
int ct_process_read(int proc_fd, pid_t pid, struct ct_proc_files *files,
                    struct ct_process_reading *out);
void ct_proc_files_close(struct ct_proc_files *files);

#endif

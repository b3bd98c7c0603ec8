/*
 * The collector child: starting it so that it keeps out of the program's
 * way, knowing whether it still runs, and which child it is
 * (collector_spawn.c).
 */
#ifndef CT_PRELOAD_CORE_COLLECTOR_SPAWN_H
#define CT_PRELOAD_CORE_COLLECTOR_SPAWN_H

#include <sys/types.h>

#define CT_COLLECTOR_FDS 3

/* Runs the program at `path` with `argv` and `env`, the descriptors `fds`
 * open in it (and in no other child); its pid, or -1 with errno set. */
pid_t ct_collector_spawn(const char *path, char *const argv[], char *const env[],
                         const int fds[CT_COLLECTOR_FDS]);
/* Whether the collector has not yet ended; one found dead is reaped and
 * forgotten. The program's errno is its own. */
int ct_collector_alive(void);
/* The collector's pid while it is this process's child (it stays one after
 * the session ends, until the process exits), else 0. Async-signal-safe. */
pid_t ct_collector_child(void);
/* It has been reaped, or this is a forked child, whose it never was. */
void ct_collector_forget(void);

#endif

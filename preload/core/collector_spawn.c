/*
 * Starts the collector as a direct child of the traced process, with only
 * its three descriptors kept open in it. No double fork: an orphan goes to
 * the nearest subreaper, which in a container is the program itself when it
 * runs as PID 1, so a double-forked collector would still be the program's
 * child, only later, and the intermediate's exit would send the program a
 * SIGCHLD it never gets untraced. Instead the collector stays our child and
 * keeps out of the program's way: it leaves the program's session and
 * process group (main.c), it exits only after the program has, so its end
 * signals nothing, and the program's waits for any child pass over it
 * (wait_hiding.c), which must know its pid until the process exits.
 * Liveness is a waitid on the child with WNOWAIT, which also tells a
 * collector that died (a zombie, which kill(pid, 0) still finds) from one
 * that runs; made as a system call, since the waitid the preload exports is
 * the program's.
 */
#include "preload/core/collector_spawn.h"

#include <errno.h>
#include <stdatomic.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static _Atomic pid_t collector;

pid_t ct_collector_spawn(const char *path, char *const argv[], char *const env[],
                         const int fds[CT_COLLECTOR_FDS])
{
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    /* dup2 onto itself clears FD_CLOEXEC in the child only. */
    for (int i = 0; i < CT_COLLECTOR_FDS; i++)
        posix_spawn_file_actions_adddup2(&actions, fds[i], fds[i]);
    /* The program's handlers and mask are its own: the collector starts clean. */
    posix_spawnattr_t attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int err = posix_spawn(&pid, path, &actions, &attr, argv, env);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    errno = err;
    if (err)
        return -1;
    atomic_store(&collector, pid);
    return pid;
}

static long waitid_call(pid_t pid, siginfo_t *info, int options)
{
    return syscall(SYS_waitid, P_PID, (id_t)pid, info, options | __WALL, NULL);
}

int ct_collector_alive(void)
{
    pid_t pid = atomic_load(&collector);
    if (pid <= 0)
        return 0;
    siginfo_t info = {0};
    int saved = errno;
    long r = waitid_call(pid, &info, WEXITED | WNOHANG | WNOWAIT);
    int alive = r == 0 && info.si_pid == 0;
    if (!alive) { /* no zombie left behind, and no pid the program may get again */
        waitid_call(pid, &info, WEXITED | WNOHANG);
        ct_collector_forget();
    }
    errno = saved;
    return alive;
}

pid_t ct_collector_child(void)
{
    return atomic_load(&collector);
}

void ct_collector_forget(void)
{
    atomic_store(&collector, 0);
}

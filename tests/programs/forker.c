/*
 * Process-creation workloads for the tracer's fork/exec handling: a parent that makes CUDA calls,
 * creates a child in one of several ways, then makes more calls. Usage (N, M: launch counts):
 *   forker fork N M             parent N, fork, child M then exit(), parent waits, parent N more
 *   forker fork-nocuda N        as fork, but the child makes no CUDA call and _exit(0)s at once
 *   forker exec N PATH ARG...   parent N, fork + execv(PATH, PATH ARG...), wait, parent N more
 *   forker spawn N PATH ARG...  the same through posix_spawn
 *   forker vfork N PATH ARG...  the same through vfork + execv
 *   forker daemon N M [HOLD_MS=1000]
 *                               parent N, double fork + setsid; the daemon sends its pid up a pipe,
 *                               points stdio at /dev/null, sleeps HOLD_MS, makes M calls, exit()s;
 *                               the parent waits only for the intermediate child, then N more
 * Every process that calls CUDA gets one line "forker: ROLE pid=PID launches=COUNT", COUNT being
 * the launches that returned cudaSuccess in it (the parent prints the daemon's line, with the M
 * it asked for, as the daemon has no stdout; an exec'ed program's line is "forker: ROLE pid=PID"
 * as its count is its own), so a test can find each per-pid trace and knows its exact launch
 * count; the parent exits 1 if a call failed or a child did not exit with 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "program_args.h"

extern char **environ;

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void forker_kernel(void) {}

/* count launches; returns how many succeeded: the count this process reports. */
static unsigned long long launch(unsigned long long count)
{
    dim3 grid = {8, 1, 1};
    dim3 block = {32, 1, 1};
    unsigned long long made = 0;
    for (unsigned long long i = 0; i < count; i++)
        made += cudaLaunchKernel((const void *)forker_kernel, grid, block, NULL, 0, NULL) ==
                cudaSuccess;
    return made;
}

static void report(const char *role, pid_t pid, unsigned long long launches)
{
    printf("forker: %s pid=%d launches=%llu\n", role, (int)pid, launches);
    /* Flushed before any fork, so a child never inherits (and prints again) buffered lines. */
    fflush(stdout);
}

/* 0 when pid ended by exiting with status 0. */
static int wait_ok(pid_t pid, const char *what)
{
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            perror("forker: waitpid");
            return 1;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    fprintf(stderr, "forker: %s %d ended with status 0x%x\n", what, (int)pid, status);
    return 1;
}

static int run_fork(unsigned long long n, unsigned long long m, int child_uses_cuda)
{
    unsigned long long made = launch(n);
    pid_t pid = fork();
    if (pid < 0) {
        perror("forker: fork");
        return 1;
    }
    if (pid == 0) {
        if (!child_uses_cuda)
            _exit(0); /* like `true`: no CUDA, no atexit work, no destructors */
        unsigned long long child_made = launch(m);
        report("child", getpid(), child_made);
        /* exit(), not _exit(): the child's own session must end the normal way. */
        exit(child_made == m ? 0 : 1);
    }
    if (!child_uses_cuda)
        report("nocuda-child", pid, 0);
    int bad = wait_ok(pid, "child");
    made += launch(n);
    report("parent", getpid(), made);
    return made != 2 * n || bad ? 1 : 0;
}

/* how: 'e' fork + execv, 's' posix_spawn, 'v' vfork + execv. */
static int run_exec(char how, unsigned long long n, char **child_argv)
{
    unsigned long long made = launch(n);
    pid_t pid = -1;
    if (how == 's') {
        int err = posix_spawn(&pid, child_argv[0], NULL, NULL, child_argv, environ);
        if (err) {
            fprintf(stderr, "forker: posix_spawn %s: %s\n", child_argv[0], strerror(err));
            return 1;
        }
    } else {
        pid = how == 'v' ? vfork() : fork();
        if (pid < 0) {
            perror("forker: fork");
            return 1;
        }
        if (pid == 0) {
            /* A vfork child may only exec or _exit: it shares the parent's memory and stack. */
            execv(child_argv[0], child_argv);
            _exit(127);
        }
    }
    /* The program run knows its own count; only its pid is ours to tell. */
    printf("forker: %s pid=%d\n",
           how == 's'   ? "spawned"
           : how == 'v' ? "vforked"
                        : "execed",
           (int)pid);
    int bad = wait_ok(pid, "exec'ed child");
    made += launch(n);
    report("parent", getpid(), made);
    return made != 2 * n || bad ? 1 : 0;
}

static void sleep_ms(unsigned long long ms)
{
    struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) < 0 && errno == EINTR)
        ;
}

/* The daemon itself: detached from the test's pipes, as daemon(3) would leave it. */
static void daemon_body(int pid_pipe, unsigned long long m, unsigned long long hold_ms)
{
    pid_t self = getpid();
    if (write(pid_pipe, &self, sizeof self) != (ssize_t)sizeof self)
        _exit(1);
    close(pid_pipe);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || chdir("/") < 0)
        _exit(1);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (null > 2)
        close(null);
    /* Still idle when the original parent exits, so that parent's trace must be finished
     * without waiting for this process. */
    sleep_ms(hold_ms);
    exit(launch(m) == m ? 0 : 1);
}

static int run_daemon(unsigned long long n, unsigned long long m, unsigned long long hold_ms)
{
    unsigned long long made = launch(n);
    int fds[2];
    if (pipe(fds) < 0) {
        perror("forker: pipe");
        return 1;
    }
    pid_t middle = fork();
    if (middle < 0) {
        perror("forker: fork");
        return 1;
    }
    if (middle == 0) {
        close(fds[0]);
        if (setsid() < 0)
            _exit(1);
        pid_t daemon = fork();
        if (daemon < 0)
            _exit(1);
        if (daemon == 0)
            daemon_body(fds[1], m, hold_ms);
        _exit(0);
    }
    close(fds[1]);
    pid_t daemon = -1;
    ssize_t got = read(fds[0], &daemon, sizeof daemon);
    close(fds[0]);
    int bad = wait_ok(middle, "intermediate child");
    if (got != (ssize_t)sizeof daemon) {
        fprintf(stderr, "forker: the daemon did not report its pid\n");
        return 1;
    }
    report("daemon", daemon, m);
    made += launch(n);
    report("parent", getpid(), made);
    return made != 2 * n || bad ? 1 : 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: forker fork N M | fork-nocuda N | exec|spawn|vfork N PATH [ARG...] |"
                    " daemon N M [HOLD_MS]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    const char *mode = argv[1];
    unsigned long long n = arg_or(argc, argv, 2, 0);
    if (strcmp(mode, "fork") == 0 && argc == 4)
        return run_fork(n, arg_or(argc, argv, 3, 0), 1);
    if (strcmp(mode, "fork-nocuda") == 0 && argc == 3)
        return run_fork(n, 0, 0);
    if (strcmp(mode, "daemon") == 0 && (argc == 4 || argc == 5))
        return run_daemon(n, arg_or(argc, argv, 3, 0), arg_or(argc, argv, 4, 1000));
    if (argc >= 4) {
        if (strcmp(mode, "exec") == 0)
            return run_exec('e', n, argv + 3);
        if (strcmp(mode, "spawn") == 0)
            return run_exec('s', n, argv + 3);
        if (strcmp(mode, "vfork") == 0)
            return run_exec('v', n, argv + 3);
    }
    return usage();
}

/*
 * Programs that live in the conditions real jobs meet, for the tests that
 * the tracer never changes how they run (tests/test_preload_hostile.py).
 * Usage: hostile MODE N [PATH], where N is the number of cudaMalloc/cudaFree
 * pairs it makes. It dlopens the runtime at its first pair rather than
 * linking it, so the tracer's session starts there, after the program has
 * set itself up (as a subreaper, say), as in a program that loads CUDA late:
 *   reaper: a child subreaper (PR_SET_CHILD_SUBREAPER) that forks a child,
 *     makes its calls, forks two more, then reaps every child it has with
 *     wait(), as a container's PID 1 does before it exits; prints "reaped K
 *     exits S" with the sum of their exit codes (3 and 3 untraced). Run as
 *     PID 1 of a new PID namespace, it is that PID 1.
 *   reaper-waitid: the same, reaping two with waitid(P_ALL), then forking a
 *     fourth and reaping the rest with waitpid(-1, WNOHANG) in a SIGCHLD
 *     handler (4 and 3 untraced).
 *   ignored: ignores SIGCHLD (the kernel then reaps exited children), makes
 *     its calls, forks two children that live 50 ms, and waits for any
 *     child, which returns once both are gone; prints "wait R errno E"
 *     (-1 and ECHILD untraced).
 *   sigchld: counts the SIGCHLD signals it receives while it makes its calls
 *     and 200 ms after; prints "sigchld K" (0 untraced).
 *   daemon: started with descriptors 0-2 closed, makes N/2 pairs, writes
 *     to stderr twice (which fails untraced), sets up its descriptors as a
 *     daemon does (/dev/null on 0 and 1, the log file PATH on 2), writes
 *     100 lines to stderr between the other N/2 pairs; exits 3 when
 *     /dev/null did not land on 0.
 *   closefrom: makes N/2 pairs, closes descriptors 3 to 1023 (as daemons
 *     and subprocess's children do), makes four pipes, makes the other N/2
 *     pairs and forks a child that writes into each pipe; prints "child S"
 *     with the child's exit status, and exits with its pipes still open.
 *   lost-collector: a child subreaper that makes 10 pairs, prints "ready",
 *     waits for a line on stdin (the test kills the tracer's collector
 *     meanwhile), then makes N pairs and prints "pairs took MS ms".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/programs/program_args.h"

static int pairs(unsigned long long n)
{
    static int (*malloc_fn)(void **, size_t), (*free_fn)(void *);
    if (!malloc_fn) {
        void *cudart = dlopen("libcudart.so.13", RTLD_NOW);
        malloc_fn = cudart ? (int (*)(void **, size_t))dlsym(cudart, "cudaMalloc") : NULL;
        free_fn = cudart ? (int (*)(void *))dlsym(cudart, "cudaFree") : NULL;
        if (!malloc_fn || !free_fn)
            return -1;
    }
    for (unsigned long long i = 0; i < n; i++) {
        void *p = NULL;
        if (malloc_fn(&p, 256) != 0 || free_fn(p) != 0)
            return -1;
    }
    return 0;
}

static void pause_ms(long ms)
{
    struct timespec rest = {0, ms * 1000000L};
    while (nanosleep(&rest, &rest) != 0 && errno == EINTR)
        ;
}

/* A child that lives `ms` and exits with `code`. */
static pid_t child(int code, long ms)
{
    pid_t pid = fork();
    if (pid == 0) {
        pause_ms(ms);
        _exit(code);
    }
    return pid;
}

static int reaped, exit_sum;

static void count_reaped(int status)
{
    reaped++;
    exit_sum += WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static void reap_with_wait(void)
{
    int status;
    while (wait(&status) > 0)
        count_reaped(status);
}

static void reap_in_handler(int sig)
{
    int status;
    (void)sig;
    while (waitpid(-1, &status, WNOHANG) > 0)
        count_reaped(status);
}

static void reap_with_waitid(void)
{
    siginfo_t info;
    struct sigaction sa = {.sa_handler = reap_in_handler};
    sigemptyset(&sa.sa_mask);
    for (int left = 2; left > 0 && waitid(P_ALL, 0, &info, WEXITED) == 0; left--)
        count_reaped(info.si_code == CLD_EXITED ? info.si_status << 8 : 100);
    sigaction(SIGCHLD, &sa, NULL);
    child(0, 0);
    pause_ms(200);
    reap_in_handler(SIGCHLD); /* a SIGCHLD that came before the handler was set */
}

static int reaper(unsigned long long n, void (*reap)(void))
{
    if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        return 1;
    if (child(0, 0) < 0 || pairs(n) || child(1, 0) < 0 || child(2, 20) < 0)
        return 1;
    reap();
    printf("reaped %d exits %d\n", reaped, exit_sum);
    return 0;
}

static int ignored(unsigned long long n)
{
    signal(SIGCHLD, SIG_IGN);
    if (pairs(n) || child(0, 50) < 0 || child(0, 50) < 0)
        return 1;
    pid_t got = wait(NULL);
    printf("wait %d errno %s\n", (int)got, got < 0 && errno == ECHILD ? "ECHILD" : "other");
    return 0;
}

static volatile sig_atomic_t sigchld_count;

static void on_sigchld(int sig)
{
    (void)sig;
    sigchld_count++;
}

static int sigchld(unsigned long long n)
{
    struct sigaction sa = {.sa_handler = on_sigchld};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) || pairs(n))
        return 1;
    pause_ms(200);
    printf("sigchld %d\n", (int)sigchld_count);
    return 0;
}

/* It writes to stderr before it has one, as programs do (untraced, the
 * writes fail with EBADF), and gives the tracer time to act on that. */
static int daemon_setup(unsigned long long n, const char *log)
{
    if (pairs(n / 2))
        return 1;
    for (int i = 0; i < 2; i++) {
        fprintf(stderr, "starting\n");
        fflush(stderr);
        pause_ms(100);
    }
    if (open("/dev/null", O_RDWR) != 0 || dup2(0, 1) != 1)
        return 3;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (fd != 2 && (dup2(fd, 2) != 2 || close(fd))))
        return 1;
    pause_ms(100);
    for (int line = 0; line < 100; line++) {
        fprintf(stderr, "log line %d\n", line);
        if (pairs((n - n / 2) / 100 + ((unsigned long long)line < (n - n / 2) % 100)))
            return 1;
    }
    return 0;
}

#define PIPES 4

/* The child writes a byte into each pipe; it fails when one is closed. */
static int closefrom_then_fork(unsigned long long n)
{
    int p[PIPES][2];
    if (pairs(n / 2))
        return 1;
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    for (int i = 0; i < PIPES; i++)
        if (pipe(p[i]))
            return 1;
    if (pairs(n - n / 2))
        return 1;
    pid_t child = fork();
    if (child == 0) {
        int ok = 1;
        for (int i = 0; i < PIPES; i++)
            ok &= write(p[i][1], "x", 1) == 1;
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    if (waitpid(child, &status, 0) != child)
        return 1;
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0; /* the pipes stay open until the process ends */
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int lost_collector(unsigned long long n)
{
    char line[16];
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || pairs(10))
        return 1;
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        return 1;
    long long start = now_ms();
    if (pairs(n))
        return 1;
    printf("pairs took %lld ms\n", now_ms() - start);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned long long n = arg_or(argc, argv, 2, 100);
    int status;
    if (strcmp(mode, "reaper") == 0)
        status = reaper(n, reap_with_wait);
    else if (strcmp(mode, "reaper-waitid") == 0)
        status = reaper(n, reap_with_waitid);
    else if (strcmp(mode, "ignored") == 0)
        status = ignored(n);
    else if (strcmp(mode, "sigchld") == 0)
        status = sigchld(n);
    else if (strcmp(mode, "daemon") == 0 && argc > 3)
        status = daemon_setup(n, argv[3]);
    else if (strcmp(mode, "closefrom") == 0)
        status = closefrom_then_fork(n);
    else if (strcmp(mode, "lost-collector") == 0)
        status = lost_collector(n);
    else
        return 2;
    fflush(stdout);
    return status;
}

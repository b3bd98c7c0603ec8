/*
 * The program's waits for any child, answered as though the collector were
 * not its child (collector_spawn.c says why it is one). A wait for a given
 * pid or process group never sees the collector, which has a process group
 * of its own, and goes straight to libc; only a wait for any child (pid -1,
 * P_ALL) is changed. It answers ECHILD when the collector is the only child
 * (a reaper loop such as `while (wait(NULL) > 0);` ends as untraced),
 * otherwise it looks at the next event without taking it (WNOWAIT): one of
 * the collector's (stopped, continued, or its death) is taken here and the
 * wait goes on; another child's is taken by libc's own call for that pid, so
 * the program gets exactly what it would have. Programs reap children in
 * SIGCHLD handlers, so everything here is async-signal-safe: system calls,
 * no allocation, no lock. Two races are left: a wait that blocks while
 * another thread reaps the last other child blocks until the next child
 * event instead of failing with ECHILD, and one whose child another thread
 * reaps between the look and the take looks again.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/core/collector_spawn.h"
#include "preload/core/export.h"
#include "preload/loader/dl_real.h"

typedef pid_t (*wait4_function)(pid_t, int *, int, struct rusage *);
typedef int (*waitid_function)(idtype_t, id_t, siginfo_t *, int);

static wait4_function real_wait4_fn;
static waitid_function real_waitid_fn;

/* Resolved before main, as dlsym may not be called in a signal handler;
 * libc's own calls keep their cancellation points. A wait made earlier still,
 * by another library's constructor, is a system call. */
__attribute__((constructor)) static void find_real_waits(void)
{
    real_wait4_fn = (wait4_function)ct_dl_real_sym(RTLD_NEXT, "wait4");
    real_waitid_fn = (waitid_function)ct_dl_real_sym(RTLD_NEXT, "waitid");
}

static pid_t real_wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
    if (real_wait4_fn)
        return real_wait4_fn(pid, status, options, usage);
    return (pid_t)syscall(SYS_wait4, pid, status, options, usage);
}

static int real_waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    if (real_waitid_fn)
        return real_waitid_fn(type, id, info, options);
    return (int)syscall(SYS_waitid, type, id, info, options, NULL);
}

/* --- Whether the process has a child other than the collector. --- */

enum { NO = 0, YES = 1, UNKNOWN = -1 };

static size_t format_path(char *out, const char *prefix, unsigned long n, const char *suffix)
{
    char digits[24];
    size_t len = 0, d = 0;
    while (*prefix)
        out[len++] = *prefix++;
    do
        digits[d++] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    while (d)
        out[len++] = digits[--d];
    while (*suffix)
        out[len++] = *suffix++;
    out[len] = '\0';
    return len;
}

/* Calls `visit(n, ctx)` for each entry of `dir` named by a number until it
 * returns other than NO; that answer, NO when none did, UNKNOWN when the
 * directory cannot be read. */
static int each_numbered_entry(const char *dir, int (*visit)(unsigned long n, void *ctx), void *ctx)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return UNKNOWN;
    char buf[2048] __attribute__((aligned(8)));
    int answer = NO;
    long got;
    while (answer == NO && (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long at = 0; answer == NO && at < got;) {
            struct dirent64 *e = (struct dirent64 *)(buf + at);
            at += e->d_reclen;
            unsigned long n = 0;
            const char *c = e->d_name;
            for (; *c >= '0' && *c <= '9'; c++)
                n = n * 10 + (unsigned long)(*c - '0');
            if (c != e->d_name && *c == '\0')
                answer = visit(n, ctx);
        }
    }
    close(fd);
    return got < 0 ? UNKNOWN : answer;
}

struct child_search {
    pid_t collector;
    pid_t self;
};

/* A thread's children, as the kernel lists them (CONFIG_PROC_CHILDREN). */
static int thread_has_other_child(unsigned long tid, void *ctx)
{
    const struct child_search *s = ctx;
    char path[64], buf[256];
    format_path(path, "/proc/self/task/", tid, "/children");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return UNKNOWN;
    int answer = NO;
    unsigned long pid = 0;
    long got;
    while (answer == NO && (got = read(fd, buf, sizeof buf)) > 0) {
        for (long i = 0; i < got && answer == NO; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                pid = pid * 10 + (unsigned long)(buf[i] - '0');
                continue;
            }
            answer = pid && pid != (unsigned long)s->collector ? YES : NO;
            pid = 0;
        }
    }
    close(fd);
    return answer;
}

/* Without the children lists: a process whose parent is this one. */
static int process_is_other_child(unsigned long pid, void *ctx)
{
    const struct child_search *s = ctx;
    char path[64], buf[512];
    if (pid == (unsigned long)s->collector || pid == (unsigned long)s->self)
        return NO;
    format_path(path, "/proc/", pid, "/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NO; /* gone meanwhile */
    long got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return NO;
    buf[got] = '\0';
    /* "pid (comm) state ppid ...": comm may hold anything, so from the last ')' */
    char *at = NULL;
    for (char *c = buf; *c; c++)
        if (*c == ')')
            at = c;
    if (!at || at[1] != ' ' || !at[2] || at[3] != ' ')
        return NO;
    unsigned long ppid = 0;
    for (at += 4; *at >= '0' && *at <= '9'; at++)
        ppid = ppid * 10 + (unsigned long)(*at - '0');
    return ppid == (unsigned long)s->self ? YES : NO;
}

static int has_other_child(pid_t collector)
{
    struct child_search s = {collector, getpid()};
    int answer = each_numbered_entry("/proc/self/task", thread_has_other_child, &s);
    if (answer == UNKNOWN)
        answer = each_numbered_entry("/proc", process_is_other_child, &s);
    return answer != NO; /* when /proc cannot say, as though there were one */
}

/* --- Waiting for any child but the collector. --- */

/* Exited children reaped by the kernel, never reported: a blocking wait for
 * any child then returns only once all are gone, which the collector never
 * is before the program, so it is made of short non-blocking ones. */
static int children_reaped_by_kernel(void)
{
    struct sigaction sa;
    return sigaction(SIGCHLD, NULL, &sa) == 0 &&
           (sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_NOCLDWAIT));
}

static int is_death(const siginfo_t *info)
{
    return info->si_code == CLD_EXITED || info->si_code == CLD_KILLED ||
           info->si_code == CLD_DUMPED;
}

/* Takes the collector's event that `seen` looked at: its stop or continue
 * report, or its exit status, after which it is forgotten. */
static void take_collector_event(pid_t collector, const siginfo_t *seen)
{
    siginfo_t taken = {0};
    int kinds = is_death(seen) ? WEXITED : WSTOPPED | WCONTINUED;
    if (real_waitid(P_PID, (id_t)collector, &taken, kinds | WNOHANG | __WALL) == 0 &&
        taken.si_pid == collector && is_death(&taken))
        ct_collector_forget();
}

/* The next event of a child other than the collector, left for the caller
 * to take: 1 and its pid in `info`; 0 when WNOHANG found none; -1 with
 * errno as the wait failed (ECHILD: the collector is the only child).
 * `options` are waitid's. */
static int look_for_other_child(siginfo_t *info, int options)
{
    int poll_wait = !(options & WNOHANG) && children_reaped_by_kernel();
    const struct timespec pause = {0, 10 * 1000 * 1000};
    for (;;) {
        pid_t collector = ct_collector_child();
        if (collector > 0 && !has_other_child(collector)) {
            errno = ECHILD;
            return -1;
        }
        *info = (siginfo_t){0};
        int look = options | WNOWAIT | (poll_wait ? WNOHANG : 0);
        if (real_waitid(P_ALL, 0, info, look) != 0)
            return -1;
        if (info->si_pid == 0 && poll_wait) {
            if (nanosleep(&pause, NULL) != 0)
                return -1; /* EINTR, as the blocking wait would have */
            continue;
        }
        if (info->si_pid == 0)
            return 0;
        if (collector <= 0 || info->si_pid != collector)
            return 1;
        take_collector_event(collector, info);
    }
}

static pid_t any_child_wait4(int *status, int options, struct rusage *usage)
{
    for (;;) {
        siginfo_t info;
        /* wait4's options are waitid's (WUNTRACED is WSTOPPED), exits implied */
        int found = look_for_other_child(&info, options | WEXITED);
        if (found <= 0)
            return found;
        pid_t got = real_wait4(info.si_pid, status, options, usage);
        if (got != -1 || errno != ECHILD) /* ECHILD: another thread took it */
            return got;
    }
}

static int any_child_waitid(siginfo_t *info, int options)
{
    for (;;) {
        siginfo_t seen;
        int found = look_for_other_child(&seen, options);
        if (found <= 0) {
            if (found == 0 && info)
                *info = seen;
            return found;
        }
        int got = real_waitid(P_PID, (id_t)seen.si_pid, info, options);
        if (got != -1 || errno != ECHILD)
            return got;
    }
}

static pid_t hidden_wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
    if (pid != -1 || ct_collector_child() <= 0)
        return real_wait4(pid, status, options, usage);
    return any_child_wait4(status, options, usage);
}

CT_EXPORT pid_t wait(int *status)
{
    return hidden_wait4(-1, status, 0, NULL);
}

CT_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
    return hidden_wait4(pid, status, options, NULL);
}

CT_EXPORT pid_t wait3(int *status, int options, struct rusage *usage)
{
    return hidden_wait4(-1, status, options, usage);
}

CT_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage)
{
    return hidden_wait4(pid, status, options, usage);
}

CT_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    if (type != P_ALL || ct_collector_child() <= 0)
        return real_waitid(type, id, info, options);
    return any_child_waitid(info, options);
}

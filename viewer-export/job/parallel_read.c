/*
 * Reads many traces at once: one child process per trace, at most as many
 * at a time as this process may run on CPUs, each reading its trace and
 * writing back only the summary, so memory is bounded by a few traces
 * however many the job has, and a trace that crashes its reader fails
 * alone, with a message. A child, not a thread: the trace reader interns
 * its strings in one table for the process's lifetime, which is right for
 * one trace and wrong for a thousand. The summaries are added in the order
 * the traces were given, whatever order they finish in.
 */
#include "viewer-export/job/job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/write_all.h"
#include "viewer-export/job/summary.h"

#define MAX_WORKERS 64

struct result {
    char *text; /* the summary, or after a failure the reason */
    size_t len, capacity;
    int fd;
    pid_t pid;
    int status;
};

static size_t workers_for(size_t count)
{
    cpu_set_t cpus;
    size_t n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? (size_t)CPU_COUNT(&cpus) : 1;
    n = n > MAX_WORKERS ? MAX_WORKERS : n ? n : 1;
    return n < count ? n : count;
}

/* The child: '0' and the summary, or '1' and why not. */
static _Noreturn void read_in_child(const char *path, int fd)
{
    char error[512];
    size_t len = 0;
    char *text = ct_summary_of_trace(path, &len, error, sizeof error);
    int ok = text != NULL;
    if (!ok)
        len = strlen(error);
    int written =
        ct_write_all(fd, ok ? "0" : "1", 1) == 1 && ct_write_all(fd, ok ? text : error, len) == len;
    _exit(written ? 0 : 1);
}

static int start(struct result *r, const char *path)
{
    int fds[2];
    r->pid = -1;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        r->status = errno;
        return -1;
    }
    fflush(NULL);
    r->pid = fork();
    if (r->pid == 0) {
        close(fds[0]);
        read_in_child(path, fds[1]);
    }
    r->status = errno;
    close(fds[1]);
    if (r->pid < 0) {
        close(fds[0]);
        return -1;
    }
    r->fd = fds[0];
    return 0;
}

/* Reads what is there; 1 when the child has closed its end. */
static int drain(struct result *r)
{
    if (r->capacity - r->len < 65536) {
        r->capacity = r->capacity * 2 + 65536;
        r->text = realloc(r->text, r->capacity + 1);
        if (!r->text)
            abort();
    }
    ssize_t n = read(r->fd, r->text + r->len, r->capacity - r->len);
    if (n > 0) {
        r->len += (size_t)n;
        return 0;
    }
    if (n < 0 && errno == EINTR)
        return 0;
    close(r->fd);
    r->fd = -1;
    /* its own size: the buffer grew in doubling steps, and a thousand
     * summaries wait here until every trace is read */
    char *fitted = realloc(r->text, r->len + 1);
    if (fitted)
        r->text = fitted;
    while (waitpid(r->pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    return 1;
}

/* Runs the children, `workers` at a time, until every trace is read. */
static void run_all(struct result *results, char *const *paths, size_t count, size_t workers)
{
    size_t next = 0, running = 0;
    struct pollfd fds[MAX_WORKERS];
    size_t owner[MAX_WORKERS];
    while (next < count || running) {
        while (running < workers && next < count) {
            if (start(&results[next], paths[next]) == 0)
                owner[running++] = next;
            next++;
        }
        for (size_t i = 0; i < running; i++)
            fds[i] = (struct pollfd){.fd = results[owner[i]].fd, .events = POLLIN};
        if (poll(fds, running, -1) < 0 && errno != EINTR)
            abort();
        for (size_t i = 0; i < running; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)) || !drain(&results[owner[i]]))
                continue;
            owner[i] = owner[--running];
            fds[i] = fds[running];
            i--;
        }
    }
}

/* The child's summary, or why there is none. */
static char *outcome(struct result *r, size_t *len, char *error, size_t error_size)
{
    int exited = r->pid > 0 && WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0;
    if (exited && r->len > 0 && r->text[0] == '0') {
        memmove(r->text, r->text + 1, r->len - 1);
        *len = r->len - 1;
        r->text[*len] = '\0';
        char *text = r->text;
        r->text = NULL;
        return text;
    }
    if (exited && r->len > 0)
        snprintf(error, error_size, "%.*s", (int)(r->len - 1), r->text + 1);
    else if (r->pid > 0 && WIFSIGNALED(r->status))
        snprintf(error, error_size, "its reader was killed by signal %d (%s)", WTERMSIG(r->status),
                 strsignal(WTERMSIG(r->status)));
    else
        snprintf(error, error_size, "could not be read: %s",
                 strerror(r->pid > 0 ? EIO : r->status));
    return NULL;
}

int ct_job_read_traces(struct ct_job *job, char *const *paths, size_t count, char *error,
                       size_t error_size)
{
    size_t workers = workers_for(count);
    struct result *results = calloc(count ? count : 1, sizeof *results);
    if (!results)
        abort();
    if (workers > 1)
        run_all(results, paths, count, workers);
    int status = 0;
    for (size_t i = 0; i < count; i++) {
        char reason[512];
        size_t len = 0;
        char *text = status        ? NULL
                     : workers > 1 ? outcome(&results[i], &len, reason, sizeof reason)
                                   : ct_summary_of_trace(paths[i], &len, reason, sizeof reason);
        if (!status && (!text || ct_job_add_summary(job, text, len, reason, sizeof reason))) {
            snprintf(error, error_size, "%s: %s", paths[i], reason);
            status = -1;
        }
        free(results[i].text);
    }
    free(results);
    return status;
}

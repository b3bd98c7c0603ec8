/*
 * The rounds' bookkeeping: what each thread or worker read last time is in
 * its tracked entry, so each event carries the CPU time and run-queue time
 * since then. The directory streams are kept open and rewound each round,
 * which makes /proc list the tasks afresh; a task that exits between the
 * listing and the read fails the read and is simply not in the round.
 */
#include "collector/host_sampling/rounds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/host_sampling/python_stacks.h"

#define THREADS_MAX 4096
#define WORKERS_MAX 1024
#define FORGET_EVERY 64 /* scans: the processes known not to be children are read again */

int ct_host_rounds_open(struct ct_host_rounds *r, struct ct_shm_header *shm, char *reason,
                        size_t size)
{
    char path[64];
    pid_t pid = shm->pid;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    r->pid = pid;
    r->self = getpid(); /* the collector is a child too, and no worker */
    r->shm = shm;
    if (!(r->in_call = calloc(shm->ring_count + 1, sizeof *r->in_call)))
        abort();
    r->threads.capacity = THREADS_MAX;
    r->workers.capacity = WORKERS_MAX;
    r->tasks = opendir(path);
    r->proc = opendir("/proc");
    struct ct_task_reading first;
    struct ct_proc_files files = CT_PROC_FILES_NONE;
    int refused = !r->tasks || !r->proc || ct_task_read(dirfd(r->tasks), pid, &files, &first);
    if (refused)
        snprintf(reason, size, "cannot read %s: %s", path, strerror(errno));
    ct_proc_files_close(&files);
    return refused ? -1 : 0;
}

/* A numeric directory entry's id, or 0. */
static int32_t entry_id(const struct dirent *d)
{
    char *end;
    long id = strtol(d->d_name, &end, 10);
    return *d->d_name && !*end && id > 0 && id < INT32_MAX ? (int32_t)id : 0;
}

/* Fills the event's deltas from the entry's last reading and notes the new
 * one; the first reading of an entry has none. */
static void since_last(struct ct_tracked *t, struct ct_host_event *e, uint64_t cpu, uint64_t wait)
{
    if (t->ts_ns && cpu >= t->cpu_ns && wait >= t->wait_ns) {
        e->interval_ns = e->ts_ns - t->ts_ns;
        e->cpu_ns = cpu - t->cpu_ns;
        e->wait_ns = wait - t->wait_ns;
    }
    t->ts_ns = e->ts_ns;
    t->cpu_ns = cpu;
    t->wait_ns = wait;
}

static int by_tid(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Which threads are inside a call now: each ring's thread marks the call it
 * enters for the collector anyway (for a process that dies mid-call). */
static void note_calls_in_flight(struct ct_host_rounds *r)
{
    r->in_call_count = 0;
    for (uint32_t i = 0, n = ct_shm_rings_in_use(r->shm); i < n; i++) {
        struct ct_ring *ring = ct_shm_ring(r->shm, i);
        if (i != r->shm->loader_ring &&
            atomic_load_explicit(&ring->state, memory_order_acquire) == CT_RING_ACTIVE &&
            __atomic_load_n(&ring->inflight_begin, __ATOMIC_ACQUIRE))
            r->in_call[r->in_call_count++] = ring->tid;
    }
    qsort(r->in_call, r->in_call_count, sizeof *r->in_call, by_tid);
}

/* A thread that has gone since the listing fails its read and stays out
 * of the round, which its sweep then says. */
/* Whether the `index`-th thread listed this round has its stack read: the
 * CT_HOST_STACKS_PER_ROUND from where this round's turn starts, wrapping
 * round the listing; and never more in a round, even when threads started
 * since the last round's listing lengthen this one's. */
static int stack_turn(const struct ct_host_rounds *r, uint32_t index)
{
    uint32_t n = r->listed > index ? r->listed : index + 1;
    return r->stacks_read < CT_HOST_STACKS_PER_ROUND &&
           (index + n - r->stacks_from % n) % n < CT_HOST_STACKS_PER_ROUND;
}

static void sample_thread(struct ct_host_rounds *r, int32_t tid, uint32_t index, uint64_t ts_ns)
{
    struct ct_tracked *t = ct_tracked_get(&r->threads, tid);
    struct ct_task_reading now;
    if (!t) {
        r->untracked++;
        return;
    }
    if (ct_task_read(dirfd(r->tasks), tid, &t->files, &now))
        return;
    t->round = r->round;
    struct ct_host_event e = {.kind = CT_HOST_THREAD, .ts_ns = ts_ns, .id = tid};
    e.state = now.state;
    e.in_cuda = bsearch(&tid, r->in_call, r->in_call_count, sizeof tid, by_tid) != NULL;
    memcpy(e.name, now.name, sizeof e.name);
    memcpy(e.wchan, now.wchan, sizeof e.wchan);
    if (stack_turn(r, index)) {
        ct_py_stacks_read(r->pid, tid, &e.py);
        r->stacks_read++;
    }
    since_last(t, &e, now.run_ns, now.wait_ns);
    r->thread_samples++;
    r->emit(&e);
}

struct gone_context {
    struct ct_host_rounds *rounds;
    enum ct_host_event_kind kind;
};

/* Says an entry has gone, at the time it was last seen. */
static void emit_gone(const struct ct_tracked *t, void *ctx)
{
    struct gone_context *g = ctx;
    if (g->kind == CT_HOST_WORKER_GONE)
        ct_py_stacks_forget(t->id);
    struct ct_host_event e = {.kind = g->kind, .ts_ns = t->ts_ns, .id = t->id};
    g->rounds->emit(&e);
}

void ct_host_thread_round(struct ct_host_rounds *r, uint64_t ts_ns)
{
    r->round++;
    r->stacks_read = 0;
    note_calls_in_flight(r);
    ct_py_stacks_round(r->pid);
    rewinddir(r->tasks);
    uint32_t index = 0;
    for (struct dirent *d; (d = readdir(r->tasks));) {
        int32_t tid = entry_id(d);
        if (tid)
            sample_thread(r, tid, index++, ts_ns);
    }
    r->listed = index;
    r->stacks_from += CT_HOST_STACKS_PER_ROUND;
    struct gone_context g = {r, CT_HOST_THREAD_GONE};
    ct_tracked_sweep(&r->threads, r->round, emit_gone, &g);
}

/* Reads a worker the set has; one that has gone stays out of the round. */
static void sample_worker(struct ct_host_rounds *r, struct ct_tracked *t, uint64_t ts_ns)
{
    struct ct_process_reading now;
    if (ct_process_read(dirfd(r->proc), t->id, &t->files, &now) || now.ppid != r->pid)
        return;
    t->round = r->worker_round;
    struct ct_host_event e = {.kind = CT_HOST_WORKER, .ts_ns = ts_ns, .id = t->id};
    memcpy(e.name, now.name, sizeof e.name);
    ct_py_stacks_round(t->id);
    ct_py_stacks_read(t->id, t->id, &e.py);
    since_last(t, &e, now.cpu_ns, now.wait_ns);
    r->worker_samples++;
    r->emit(&e);
}

/* Whether `pid` needs no look: ours, a worker already, or known not to be
 * a child (a process's parent changes only when its parent dies, so only a
 * pid taken again could turn one into a child: `others` is forgotten every
 * FORGET_EVERY scans for that). */
static int known(struct ct_host_rounds *r, int32_t pid)
{
    uint64_t key = (uint64_t)(uint32_t)pid + 1;
    return pid == r->pid || pid == r->self || ct_u64_map_find(&r->workers.index, key) ||
           ct_u64_map_find(&r->others, key);
}

/* Adds the process's children that are not in the set yet, reading only
 * the processes that are new since the scan before. */
static void find_workers(struct ct_host_rounds *r)
{
    if (r->worker_round % FORGET_EVERY == 0)
        ct_u64_map_free(&r->others);
    rewinddir(r->proc);
    for (struct dirent *d; (d = readdir(r->proc));) {
        int32_t pid = entry_id(d);
        struct ct_process_reading now;
        struct ct_proc_files files = CT_PROC_FILES_NONE;
        if (!pid || known(r, pid))
            continue;
        if (ct_process_read(dirfd(r->proc), pid, &files, &now) || now.ppid != r->pid) {
            ct_u64_map_put(&r->others, (uint64_t)(uint32_t)pid + 1, 1);
            ct_proc_files_close(&files);
            continue;
        }
        struct ct_tracked *t = ct_tracked_get(&r->workers, pid);
        if (t)
            t->files = files;
        else
            ct_proc_files_close(&files);
    }
}

void ct_host_worker_round(struct ct_host_rounds *r, uint64_t ts_ns)
{
    r->worker_round++;
    find_workers(r);
    for (uint32_t i = 0; i < r->workers.count; i++)
        sample_worker(r, &r->workers.items[i], ts_ns);
    struct gone_context g = {r, CT_HOST_WORKER_GONE};
    ct_tracked_sweep(&r->workers, r->worker_round, emit_gone, &g);
}

static void nothing_to_say(const struct ct_tracked *t, void *ctx)
{
    (void)t;
    (void)ctx;
}

void ct_host_rounds_close(struct ct_host_rounds *r)
{
    ct_tracked_sweep(&r->threads, r->round + 1, nothing_to_say, NULL);
    ct_tracked_sweep(&r->workers, r->worker_round + 1, nothing_to_say, NULL);
    if (r->tasks)
        closedir(r->tasks);
    if (r->proc)
        closedir(r->proc);
    ct_u64_map_free(&r->threads.index);
    ct_u64_map_free(&r->workers.index);
    ct_u64_map_free(&r->others);
    free(r->threads.items);
    free(r->in_call);
    free(r->workers.items);
}

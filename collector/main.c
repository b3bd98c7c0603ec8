/*
 * cudatrace-collector: started by libcudatrace.so on a process's first CUDA
 * call, as a child the program's waits pass over (preload/core/
 * collector_spawn.c), with the rings' memfd, the lifeline pipe and the done
 * pipe. It leaves the program's session and ignores the signals a terminal
 * or a job scheduler sends the whole group, because its job is to outlive
 * the process. It watches the process through a pidfd where the kernel has
 * them (and says so in the header, so the process can let go of the lifeline),
 * else through the lifeline; either way, when the process has ended, or has
 * said in the header that it is exiting, it drains what is left, ends the
 * last frame and closes the done pipe. Then it stays until the process has
 * exited, failed or not, so that its own end signals nothing to the program;
 * only a process that exec'd, whose next program never started it, sees it
 * go at once. It touches nothing in the traced process but the rings.
 * Between drain passes it looks, every LIBRARY_SCAN_NS, for a thread stuck
 * in a call, and writes the snapshots its triggers asked for (snapshot/).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/cpu_placement.h"
#include "collector/perfetto/clock_map.h"
#include "cudatrace/shm_layout.h"
#include "collector/ring_drain.h"
#include "collector/snapshot/snapshot.h"
#include "collector/snapshot/triggers.h"
#include "collector/trace_builder.h"
#include "collector/perfetto/trace_file.h"

#define FRAME_INTERVAL_NS 1000000000ull
#define LIBRARY_SCAN_NS 100000000ull /* how often /proc/PID/maps is read */
#define IDLE_POLL_MS 1
#define BUSY_RECORDS 64          /* fewer per cycle than this: wait before the next */
#define ORDER_SLACK_NS 100000ull /* how far one thread may run ahead of the others in the trace */

struct options {
    int shm_fd, lifeline_fd, done_fd;
};

static int parse_fd(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    return *text && !*end && v >= 0 && v < 1 << 20 ? (int)v : -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    o->shm_fd = o->lifeline_fd = o->done_fd = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        int fd = parse_fd(argv[i + 1]);
        if (strcmp(argv[i], "--shm-fd") == 0)
            o->shm_fd = fd;
        else if (strcmp(argv[i], "--lifeline-fd") == 0)
            o->lifeline_fd = fd;
        else if (strcmp(argv[i], "--done-fd") == 0)
            o->done_fd = fd;
        else
            return -1;
    }
    return o->shm_fd < 0 || o->lifeline_fd < 0 || o->done_fd < 0 ? -1 : 0;
}

static struct ct_shm_header *map_shm(int fd)
{
    struct stat st;
    if (fstat(fd, &st) || (size_t)st.st_size < sizeof(struct ct_shm_header))
        return NULL;
    void *mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        return NULL;
    struct ct_shm_header *shm = mem;
    if (shm->magic != CT_SHM_MAGIC || shm->version != CT_RECORD_VERSION ||
        shm->ring_count > CT_RINGS_MAX + 1 || shm->ring_capacity == 0 ||
        (shm->ring_capacity & (shm->ring_capacity - 1)) || shm->spill_count > CT_SPILL_CHAIN ||
        ct_shm_size(shm->ring_count, shm->ring_capacity, shm->spill_count) > (size_t)st.st_size)
        return NULL;
    return shm;
}

static void detach(void)
{
    setsid();
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error, not our death */
}

/* What tells the collector that the process (its parent) has ended: a
 * pidfd of it, readable once it has, else the lifeline, whose write end only
 * the process holds. */
struct watch {
    int fd;
    int is_pidfd;
    pid_t process;
};

static struct watch watch_process(int lifeline_fd)
{
    struct watch w = {lifeline_fd, 0, getppid()};
#ifdef SYS_pidfd_open
    int pidfd = (int)syscall(SYS_pidfd_open, w.process, 0);
    if (pidfd >= 0 && getppid() == w.process) { /* not a pid taken again */
        close(lifeline_fd);
        return (struct watch){pidfd, 1, w.process};
    }
    if (pidfd >= 0)
        close(pidfd);
#endif
    return w;
}

/* Returns once the process has exited: the collector is its child, and an
 * end of ours before it would send it a SIGCHLD it never gets untraced. */
static void outlive_process(const struct watch *w)
{
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    const struct timespec pause = {0, 20 * 1000 * 1000};
    if (w->is_pidfd)
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
    else
        while (getppid() == w->process)
            nanosleep(&pause, NULL);
}

/* Whether the process has ended or is exiting, waiting up to `timeout_ms`
 * for that (a wait that ends early on exit). A lifeline that closes while
 * the process is still our parent was closed by the program itself (a
 * closefrom before a fork, say): from then on its end is the parent
 * changing, looked at every millisecond at most. */
static int process_ended(struct ct_shm_header *shm, struct watch *w, int timeout_ms)
{
    if (atomic_load(&shm->exit_ticks))
        return 1;
    if (w->fd < 0) {
        const struct timespec pause = {0, 1000 * 1000};
        if (timeout_ms > 0 && getppid() == w->process)
            nanosleep(&pause, NULL);
        return getppid() != w->process;
    }
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    int closed = poll(&p, 1, timeout_ms) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN));
    if (closed && !w->is_pidfd && getppid() == w->process) {
        close(w->fd);
        w->fd = -1;
        return 0;
    }
    return closed;
}

/* Traces the process until it ends; 1 when it ended by an exec, which only
 * this session ended, not the process. */
static int run(struct ct_shm_header *shm, struct watch *w, struct ct_trace_file *file)
{
    uint64_t last_frame_ns = ct_clock_map_now_ns(), last_scan_ns = last_frame_ns;
    int exec_d = 0;
    ct_builder_scan_libraries(0);
    for (;;) {
        int ended = process_ended(shm, w, 0);
        uint64_t drained_from = ct_clock_map_now_ns(), oldest_call;
        uint64_t drained = ct_drain_rings(shm, &oldest_call);
        ct_clock_map_refresh();
        ct_builder_tick(ct_shm_dropped(shm), drained_from, oldest_call);
        uint64_t now = ct_clock_map_now_ns();
        if (now - last_scan_ns >= LIBRARY_SCAN_NS) {
            /* A process that exec'd maps the rings no more, and never ends
             * its session: its trace ends here. */
            exec_d = ct_builder_scan_libraries(0) == 0;
            ended |= exec_d;
            last_scan_ns = now;
            ct_snapshot_check_hangs(shm);
        }
        ct_snapshot_run_pending();
        if (now - last_frame_ns >= FRAME_INTERVAL_NS) { /* a full batch ends one sooner */
            ct_builder_flush();
            ct_drain_trim_spill(shm);
            last_frame_ns = now;
        }
        if (ended)
            break;
        if (drained < BUSY_RECORDS)
            process_ended(shm, w, IDLE_POLL_MS);
    }
    uint64_t oldest_call;
    ct_drain_rings(shm, &oldest_call); /* what a thread published while we were deciding */
    uint64_t exit_ticks = atomic_load(&shm->exit_ticks);
    uint64_t end_ns = exit_ticks ? ct_clock_map_ns(exit_ticks) : ct_clock_map_now_ns();
    ct_drain_finish(shm, end_ns);
    ct_builder_scan_libraries(1);
    ct_builder_finish(end_ns, ct_shm_dropped(shm), exit_ticks != 0);
    ct_builder_flush();
    ct_trace_file_close(file);
    return exec_d;
}

/* Says it failed (the done pipe closed without the ready byte) and stays
 * until the process has exited. */
static int fail(int done_fd, const struct watch *w)
{
    close(done_fd);
    outlive_process(w);
    return 1;
}

int main(int argc, char **argv)
{
    struct options o;
    if (parse_options(argc, argv, &o)) {
        fprintf(stderr, "cudatrace-collector: started by libcudatrace.so, not by hand\n");
        return 2;
    }
    detach();
    struct watch w = watch_process(o.lifeline_fd);
    ct_cpu_placement_beside(w.process);
    struct ct_shm_header *shm = map_shm(o.shm_fd);
    if (!shm) {
        fprintf(stderr, "cudatrace-collector: the trace buffers are not from this version\n");
        return fail(o.done_fd, &w);
    }
    close(o.shm_fd);
    shm->collector_watches_pid = (uint32_t)w.is_pidfd;
    struct ct_trace_file file;
    int err = ct_trace_file_open(&file, shm->output_path, sizeof shm->output_path);
    if (err) {
        shm->collector_error = (uint32_t)err;
        return fail(o.done_fd, &w);
    }
    /* Ready as soon as the file exists: records wait in the rings while the
     * clock is calibrated, so the traced program need not. */
    char ready = 'R';
    if (write(o.done_fd, &ready, 1) != 1)
        return fail(o.done_fd, &w);
    ct_clock_map_init(shm->clock, shm->start_ticks, shm->start_boot_ns);
    ct_drain_order_slack(ct_clock_map_span_ticks(ORDER_SLACK_NS));
    ct_builder_start(shm, &file);
    ct_snapshot_triggers_start();
    int exec_d = run(shm, &w, &file);
    shm->collector_error = (uint32_t)ct_trace_file_error(&file);
    atomic_store(&shm->collector_records, ct_builder_calls());
    atomic_store(&shm->collector_bytes, ct_trace_file_bytes(&file));
    atomic_store(&shm->collector_done, 1);
    close(o.done_fd);
    if (!exec_d) /* after an exec the next program has it as a child it never made */
        outlive_process(&w);
    return 0;
}

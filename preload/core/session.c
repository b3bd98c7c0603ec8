/*
 * Starts and ends the tracing session. Starting creates the rings in a memfd
 * (no name another user could open), starts the collector (collector_spawn.c)
 * with that memfd, a lifeline pipe whose write end only this process holds
 * and a done pipe, and waits for the collector to say it is ready, so no
 * record is lost to a slow start. Where the kernel has pidfds the collector
 * watches the process itself, and the process lets go of the lifeline; else
 * the collector notices the end of the process by the lifeline closing,
 * which the kernel does even on SIGKILL. The pipes the process keeps are
 * kept with their identity (descriptors.h), as the program may close and
 * reuse their numbers. A normal exit tells the collector so in the shared
 * header, waits (bounded, and only while the collector lives) for the trace
 * to be complete, on the done pipe while it is ours, and prints a one-line
 * summary. Everything here runs at most once per process and never on the
 * hot path.
 */
#include "preload/core/session.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/launcher.h"
#include "preload/core/capture.h"
#include "preload/core/clock.h"
#include "preload/core/collector_spawn.h"
#include "preload/core/run_watch.h"
#include "preload/core/descriptors.h"
#include "preload/cupti/gpu_trace.h"
#include "preload/sites/call_site.h"
#include "preload/core/config.h"
#include "preload/core/init.h"
#include "preload/core/deferred.h"
#include "preload/hooks/kernel_names.h"
#include "preload/loader/loader_view.h"
#include "preload/core/ring.h"

extern char **environ;

enum session_state { SESSION_NONE, SESSION_ACTIVE, SESSION_OFF };

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int session_state = SESSION_NONE;
static struct ct_shm_header *session_shm;
static char collector_file[4096];
/* The lifeline's write end, whose closing tells the collector we ended (kept
 * only when it has no pidfd of us), and the done pipe's read end, which it
 * closes when the trace is whole. */
static struct ct_fd lifeline = CT_NO_FD, done = CT_NO_FD;

static const char *lookup_env(const char *name)
{
    return getenv(name);
}

/* %p the pid, %r the rank its launcher gave it ("norank" when none did),
 * %h the host: one pattern serves every process of a job. */
static void format_output_path(char *out, size_t size)
{
    const char *pattern =
        ct_config.output && *ct_config.output ? ct_config.output : "cudatrace-%p.pftrace.zst";
    long rank = ct_launcher_number(lookup_env, CT_LAUNCHER_RANK);
    size_t n = 0;
    for (const char *p = pattern; *p && n + 1 < size; p++) {
        char part[256] = "norank";
        if (p[0] == '%' && p[1] == 'p')
            snprintf(part, sizeof part, "%d", (int)getpid());
        else if (p[0] == '%' && p[1] == 'r' && rank >= 0)
            snprintf(part, sizeof part, "%ld", rank);
        else if (p[0] == '%' && p[1] == 'h')
            ct_host_name(lookup_env, part, sizeof part);
        else if (p[0] != '%' || p[1] != 'r') {
            out[n++] = *p;
            continue;
        }
        n += (size_t)snprintf(out + n, size - n, "%s", part);
        p++;
    }
    out[n < size ? n : size - 1] = '\0';
}

/* Found at initialisation, not at session start: dladdr takes the loader's
 * lock, which a thread inside dlopen holds while it may wait for our
 * session lock. */
void ct_session_find_collector(void)
{
    if (ct_config.collector && *ct_config.collector) {
        snprintf(collector_file, sizeof collector_file, "%s", ct_config.collector);
        return;
    }
    Dl_info self;
    const char *dir = ".";
    size_t dir_len = 1;
    if (dladdr((void *)ct_session_find_collector, &self) && self.dli_fname) {
        const char *slash = strrchr(self.dli_fname, '/');
        if (slash) {
            dir = self.dli_fname;
            dir_len = (size_t)(slash - self.dli_fname);
        }
    }
    snprintf(collector_file, sizeof collector_file, "%.*s/cudatrace-collector", (int)dir_len, dir);
}

static struct ct_shm_header *create_shm(int *fd_out)
{
    uint32_t rings = ct_config.rings + 1; /* and the loader's */
    uint32_t spill = (uint32_t)(((uint64_t)ct_config.spill_mb << 20) / CT_SPILL_SEGMENT_BYTES);
    size_t size = ct_shm_size(rings, ct_config.ring_records, spill);
    /* Growing a memfd past RLIMIT_FSIZE would raise SIGXFSZ in the program:
     * without the spill pool if need be, else not at all. */
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        limit.rlim_cur < size) {
        spill = 0;
        size = ct_shm_size(rings, ct_config.ring_records, spill);
        if (limit.rlim_cur < size) {
            errno = EFBIG;
            return NULL;
        }
    }
    int fd = ct_fd_above_stdio(memfd_create(CT_SHM_NAME, MFD_CLOEXEC));
    if (fd < 0)
        return NULL;
    void *mem = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0)
        mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    struct ct_shm_header *shm = mem;
    shm->magic = CT_SHM_MAGIC;
    shm->version = CT_RECORD_VERSION;
    shm->ring_count = rings;
    shm->ring_capacity = ct_config.ring_records;
    shm->spill_count = spill;
    shm->nvml_ms = ct_config.nvml_ms;
    shm->max_trace_mb = ct_config.max_mb;
    shm->sample_hz = ct_config.sample_hz;
    shm->gpu_records = ct_config.gpu_records;
    shm->gpu_graph_level = (uint32_t)ct_config.graph_level;
    shm->clock = ct_clock_kind;
    shm->pid = (int32_t)getpid();
    ct_shm_init_rings(shm);
    shm->start_ticks = ct_clock_kind == CT_CLOCK_TSC ? ct_start_ticks : ct_start_boot_ns;
    shm->start_boot_ns = ct_start_boot_ns;
    format_output_path(shm->output_path, sizeof shm->output_path);
    ct_capture_write_header(shm);
    ct_ring_mask = ct_config.ring_records - 1;
    *fd_out = fd;
    return shm;
}

/* The collector must not inherit the preload or the audit module: it never
 * touches CUDA, and a tracer tracing its own collector would only confuse. */
static char **environment_without_tracer(void)
{
    size_t count = 0;
    while (environ && environ[count])
        count++;
    char **env = calloc(count + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "LD_AUDIT=", 9) != 0)
            env[kept++] = environ[i];
    return env;
}

static int spawn_collector(int shm_fd, int lifeline_read, int done_write)
{
    char shm_arg[16], life_arg[16], done_arg[16];
    char *path = collector_file;
    snprintf(shm_arg, sizeof shm_arg, "%d", shm_fd);
    snprintf(life_arg, sizeof life_arg, "%d", lifeline_read);
    snprintf(done_arg, sizeof done_arg, "%d", done_write);
    char *argv[] = {path,     "--shm-fd",  shm_arg,  "--lifeline-fd",
                    life_arg, "--done-fd", done_arg, NULL};
    const int fds[CT_COLLECTOR_FDS] = {shm_fd, lifeline_read, done_write};
    char **env = environment_without_tracer();
    errno = ENOMEM;
    pid_t pid = env ? ct_collector_spawn(path, argv, env, fds) : -1;
    free(env);
    if (pid < 0) {
        ct_warn("cannot start the collector %s: %s; tracing is off", path, strerror(errno));
        return -1;
    }
    /* Under Yama's ptrace_scope 1 the collector, our child and not our
     * ancestor, may read what its sampler needs of us (wchan) only once we
     * name it; without Yama the call fails and changes nothing. */
    if (ct_config.sample_hz)
        prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0);
    return 0;
}

static const char *output_error_text(uint32_t error)
{
    return error == CT_ERROR_NOT_A_FILE ? "not a regular file" : strerror((int)error);
}

/* Waits until the collector writes its ready byte or closes the pipe. */
static int wait_for_collector(int timeout_ms)
{
    struct pollfd p = {.fd = done.fd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    if (n <= 0)
        return -1;
    char byte;
    return read(done.fd, &byte, 1) == 1 ? 0 : -1;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* A pipe whose ends never take 0-2; -1 when there is none. */
static int make_pipe(int ends[2])
{
    if (pipe2(ends, O_CLOEXEC))
        return -1;
    ends[0] = ct_fd_above_stdio(ends[0]);
    ends[1] = ct_fd_above_stdio(ends[1]);
    return ends[0] < 0 || ends[1] < 0 ? -1 : 0;
}

static void start_session(void)
{
    ct_run_watch_touched();
    ct_config_say_warnings();
    int shm_fd = -1, lifeline_ends[2] = {-1, -1}, done_ends[2] = {-1, -1};
    struct ct_shm_header *shm = create_shm(&shm_fd);
    if (!shm || ct_kernel_names_init(ct_config.rings) || make_pipe(lifeline_ends) ||
        make_pipe(done_ends)) {
        ct_warn("cannot set up trace buffers: %s; tracing is off", strerror(errno));
        goto fail;
    }
    lifeline = ct_fd_keep(lifeline_ends[1]);
    done = ct_fd_keep(done_ends[0]);
    if (spawn_collector(shm_fd, lifeline_ends[0], done_ends[1]))
        goto fail;
    close_fd(&lifeline_ends[0]);
    close_fd(&done_ends[1]);
    close_fd(&shm_fd);
    if (wait_for_collector(10000)) {
        if (shm->collector_error)
            ct_warn("cannot write the trace %s: %s; tracing is off", shm->output_path,
                    output_error_text(shm->collector_error));
        else
            ct_warn("the collector did not start; tracing is off");
        goto fail;
    }
    if (shm->collector_watches_pid)
        ct_fd_release(&lifeline);
    ct_call_sites_prepare();
    ct_capture_session_start(shm);
    session_shm = shm;
    atomic_fetch_or(&ct_deferred, CT_DEFER_CUDA_INFO | CT_DEFER_LIBRARY_VERSIONS);
    atomic_store(&session_state, SESSION_ACTIVE);
    return;
fail:
    /* An untraced program keeps running: leave it none of our memory. */
    if (shm)
        munmap(shm, ct_shm_size(shm->ring_count, shm->ring_capacity, shm->spill_count));
    close_fd(&shm_fd);
    close_fd(&lifeline_ends[0]);
    close_fd(&done_ends[1]);
    ct_fd_release(&lifeline);
    ct_fd_release(&done);
    atomic_store(&session_state, SESSION_OFF);
}

/* Calls lost while the session was being started, not yet in its header. */
static _Atomic uint64_t lost_before_session;

void ct_session_count_lost(void)
{
    if (atomic_load_explicit(&session_state, memory_order_acquire) == SESSION_ACTIVE)
        atomic_fetch_add_explicit(&session_shm->dropped_no_ring, 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&lost_before_session, 1, memory_order_relaxed);
}

struct ct_shm_header *ct_session_shm(void)
{
    int state = atomic_load_explicit(&session_state, memory_order_acquire);
    if (state == SESSION_ACTIVE)
        return session_shm;
    if (state == SESSION_OFF)
        return NULL;
    ct_init_once();
    if (!ct_tracing_allowed) {
        atomic_store(&session_state, SESSION_OFF);
        return NULL;
    }
    pthread_mutex_lock(&session_lock);
    if (atomic_load(&session_state) == SESSION_NONE) {
        start_session();
        if (session_shm)
            atomic_fetch_add(&session_shm->dropped_no_ring,
                             atomic_exchange(&lost_before_session, 0));
    }
    pthread_mutex_unlock(&session_lock);
    return atomic_load(&session_state) == SESSION_ACTIVE ? session_shm : NULL;
}

int ct_session_active(void)
{
    return atomic_load_explicit(&session_state, memory_order_acquire) == SESSION_ACTIVE;
}

struct ct_ring *ct_session_loader_ring(void)
{
    struct ct_shm_header *shm = ct_session_shm();
    return shm ? ct_shm_ring(shm, shm->loader_ring) : NULL;
}

/* The collector drains every millisecond or so; a kept record waits for it
 * in steps of 100 us while it lives, bounded by the exit timeout so that a
 * stopped collector cannot hold the program for long. The program's errno
 * is its own. */
int ct_session_wait_until(int (*ready)(void *ctx), void *ctx)
{
    struct ct_shm_header *shm = session_shm;
    uint64_t deadline = ct_clock_boottime_ns() + (uint64_t)ct_config.exit_timeout_ms * 1000000u;
    const struct timespec pause = {0, 100000};
    int saved_errno = errno, ok = 0;
    while (!ok && shm && ct_clock_boottime_ns() < deadline && ct_collector_alive()) {
        nanosleep(&pause, NULL);
        ok = ready(ctx);
    }
    errno = saved_errno;
    return ok;
}

static void print_summary(struct ct_shm_header *shm)
{
    if (ct_config.quiet)
        return;
    if (!atomic_load(&shm->collector_done)) {
        ct_warn("the trace %s may be incomplete: the collector ended early or took over %u ms",
                shm->output_path, ct_config.exit_timeout_ms);
        return;
    }
    if (shm->collector_error) {
        ct_warn("writing the trace %s failed (%s): it holds only what was written before",
                shm->output_path, output_error_text(shm->collector_error));
        return;
    }
    ct_warn("trace %s: %llu calls recorded, %llu dropped, %llu bytes", shm->output_path,
            (unsigned long long)atomic_load(&shm->collector_records),
            (unsigned long long)ct_shm_dropped(shm),
            (unsigned long long)atomic_load(&shm->collector_bytes));
}

static int collector_finished(void *ctx)
{
    return atomic_load(&((struct ct_shm_header *)ctx)->collector_done) != 0;
}

static void end_session(void)
{
    if (atomic_load(&session_state) != SESSION_ACTIVE)
        return;
    atomic_store(&session_state, SESSION_OFF);
    struct ct_shm_header *shm = session_shm;
    atomic_store(&shm->exit_ticks, ct_clock_now());
    ct_fd_release(&lifeline);
    if (ct_fd_is_ours(&done)) { /* closed by the collector once the last frame is on disk */
        struct pollfd p = {.fd = done.fd, .events = POLLIN};
        while (poll(&p, 1, (int)ct_config.exit_timeout_ms) < 0 && errno == EINTR)
            ;
    } else {
        ct_session_wait_until(collector_finished, shm);
    }
    ct_fd_release(&done);
    print_summary(shm);
}

void ct_session_lock_for_fork(void)
{
    pthread_mutex_lock(&session_lock);
}

void ct_session_unlock_after_fork(void)
{
    pthread_mutex_unlock(&session_lock);
}

void ct_session_forget_in_child(void)
{
    ct_ring_forget_thread();
    ct_loader_view_forget_in_child();
    ct_cupti_forget_in_child();
    ct_init_mark_start();
    atomic_fetch_and(&ct_deferred, ~(unsigned)(CT_DEFER_CUDA_INFO | CT_DEFER_LIBRARY_VERSIONS));
    atomic_store(&lost_before_session, 0);
    pthread_mutex_init(&session_lock, NULL);
    ct_fd_release(&lifeline);
    ct_fd_release(&done);
    ct_collector_forget();
    ct_capture_forget_in_child();
    session_shm = NULL;
    atomic_store(&session_state, SESSION_NONE);
}

__attribute__((destructor)) static void ct_preload_fini(void)
{
    ct_loader_view_finish();
    ct_deferred_at_exit();
    end_session();
    ct_run_watch_finish();
}

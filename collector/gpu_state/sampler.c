/*
 * The sampler's thread and what it hands over. NVML is opened on the
 * thread, not the collector's main one, since nvmlInit alone takes tens of
 * milliseconds; events wait in a bounded queue (collector/handover.h). At the end the main thread
 * asks the thread to stop and waits a bounded time: an NVML call that blocks is abandoned with its
 * thread, which dies with the collector, never waited for. Timestamps are read on the thread, from
 * CLOCK_BOOTTIME, the trace's clock, when each device's reading begins.
 * Where CUDA's order decides which devices the process uses, none is
 * followed until CUDA's account of their UUIDs has come from the main
 * thread (devices.c).
 */
#include "collector/gpu_state/sampler.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collector/gpu_state/devices.h"
#include "collector/gpu_state/sample_read.h"
#include "collector/handover.h"

#define QUEUE_EVENTS 256u

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, finished;
    pthread_t thread;
    int started, stopping, done;
    uint32_t interval_ms;
    const char *visible;
    struct ct_gpu_status status;
    /* CUDA's account of the process's devices: UUIDs by ordinal, and how
     * many (-1 until it has come) */
    char cuda_uuids[CT_GPU_DEVICES_MAX][CT_GPU_UUID_MAX];
    int cuda_count;
} sampler = {.lock = PTHREAD_MUTEX_INITIALIZER, .cuda_count = -1};

static struct ct_gpu_event queue_items[QUEUE_EVENTS];
static struct ct_handover queue = CT_HANDOVER_INIT(queue_items, QUEUE_EVENTS);

static uint64_t boottime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void set_state(enum ct_gpu_state state, const char *reason)
{
    pthread_mutex_lock(&sampler.lock);
    sampler.status.state = state;
    snprintf(sampler.status.reason, sizeof sampler.status.reason, "%s", reason);
    pthread_mutex_unlock(&sampler.lock);
}

/* Waits out the interval from `since`; 1 when asked to stop. */
static int wait_interval(const struct timespec *since)
{
    struct timespec until = *since;
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)sampler.interval_ms * 1000000ull;
    until.tv_sec += (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&sampler.lock);
    while (!sampler.stopping && pthread_cond_timedwait(&sampler.wake, &sampler.lock, &until) == 0)
        ;
    int stop = sampler.stopping;
    pthread_mutex_unlock(&sampler.lock);
    return stop;
}

/* One reading of every device still read: `unread` marks the ones lost, or
 * never opened. */
static void sample_all(const struct ct_nvml *nvml, const struct ct_gpu_handles *handles,
                       int *unread, uint32_t count)
{
    for (uint32_t slot = 0; slot < count; slot++) {
        if (unread[slot])
            continue;
        struct ct_gpu_event e = {.kind = CT_GPU_EVENT_SAMPLE, .ts_ns = boottime_ns()};
        e.sample.ts_ns = e.ts_ns;
        e.sample.slot = slot;
        uint64_t failed = 0;
        unread[slot] =
            ct_gpu_sample_read(nvml, handles[slot], &e.sample, &failed) == NVML_ERROR_GPU_IS_LOST;
        if (unread[slot])
            e = (struct ct_gpu_event){
                .kind = CT_GPU_EVENT_LOST, .ts_ns = e.ts_ns, .lost_slot = slot};
        ct_handover_push(&queue, &e);
        pthread_mutex_lock(&sampler.lock);
        sampler.status.failed_calls += failed;
        pthread_mutex_unlock(&sampler.lock);
    }
}

/* Hands over the devices chosen; the ones NVML would not open are said
 * with them, and never read. */
static void follow(const struct ct_gpu_device *devices, uint32_t count, int *unread)
{
    for (uint32_t i = 0; i < count; i++) {
        struct ct_gpu_event e = {.kind = CT_GPU_EVENT_DEVICE, .ts_ns = boottime_ns()};
        e.device = devices[i];
        ct_handover_push(&queue, &e);
        unread[i] =
            devices[i].opened != NVML_SUCCESS && devices[i].opened != NVML_ERROR_GPU_IS_LOST;
    }
    set_state(CT_GPU_STATE_SAMPLING, count ? "" : "no device the process can see");
}

/* Copies CUDA's account of the devices, once it has all come; 0 before. */
static int cuda_named(char uuids[][CT_GPU_UUID_MAX], uint32_t *count)
{
    pthread_mutex_lock(&sampler.lock);
    int named = sampler.cuda_count >= 0;
    if (named) {
        *count = (uint32_t)sampler.cuda_count;
        memcpy(uuids, sampler.cuda_uuids, sizeof sampler.cuda_uuids);
    }
    pthread_mutex_unlock(&sampler.lock);
    return named;
}

void ct_gpu_sampler_cuda_device(uint32_t ordinal, const char *uuid)
{
    pthread_mutex_lock(&sampler.lock);
    snprintf(sampler.cuda_uuids[ordinal], sizeof sampler.cuda_uuids[ordinal], "%s", uuid);
    pthread_mutex_unlock(&sampler.lock);
}

void ct_gpu_sampler_cuda_devices(uint32_t count)
{
    pthread_mutex_lock(&sampler.lock);
    if (sampler.cuda_count < 0)
        sampler.cuda_count = (int)count;
    pthread_mutex_unlock(&sampler.lock);
}

static void sample_until_stopped(const struct ct_nvml *nvml)
{
    static struct ct_gpu_device devices[CT_GPU_DEVICES_MAX];
    static struct ct_gpu_handles handles[CT_GPU_DEVICES_MAX];
    int unread[CT_GPU_DEVICES_MAX] = {0};
    char driver[80] = "";
    if (nvml->nvmlSystemGetDriverVersion)
        nvml->nvmlSystemGetDriverVersion(driver, sizeof driver);
    static char uuids[CT_GPU_DEVICES_MAX][CT_GPU_UUID_MAX];
    int by_cuda;
    uint32_t count = ct_gpu_devices_choose(nvml, sampler.visible, devices, handles, &by_cuda);
    pthread_mutex_lock(&sampler.lock);
    memcpy(sampler.status.driver, driver, sizeof driver);
    pthread_mutex_unlock(&sampler.lock);
    if (by_cuda)
        set_state(CT_GPU_STATE_SAMPLING, "CUDA never said which devices the process uses");
    else
        follow(devices, count, unread);
    struct timespec since;
    do {
        clock_gettime(CLOCK_MONOTONIC, &since);
        if (by_cuda && cuda_named(uuids, &count)) {
            count = ct_gpu_devices_match(nvml, uuids, count, devices, handles);
            follow(devices, count, unread);
            by_cuda = 0;
        }
        sample_all(nvml, handles, unread, count);
    } while (!wait_interval(&since));
}

static void *run(void *unused)
{
    (void)unused;
    struct ct_nvml nvml;
    char error[256];
    int absent;
    if (ct_nvml_open(&nvml, &absent, error, sizeof error) == 0) {
        sample_until_stopped(&nvml);
        ct_nvml_close(&nvml);
    } else {
        set_state(absent ? CT_GPU_STATE_ABSENT : CT_GPU_STATE_FAILED, error);
    }
    pthread_mutex_lock(&sampler.lock);
    sampler.done = 1;
    pthread_cond_signal(&sampler.finished);
    pthread_mutex_unlock(&sampler.lock);
    return NULL;
}

static void init_conditions(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&sampler.wake, &attr);
    pthread_cond_init(&sampler.finished, &attr);
    pthread_condattr_destroy(&attr);
}

void ct_gpu_sampler_start(uint32_t interval_ms, const char *visible)
{
    sampler.interval_ms = interval_ms;
    sampler.visible = visible;
    if (!interval_ms)
        return; /* the state stays off */
    init_conditions();
    sampler.status.state = CT_GPU_STATE_FAILED;
    snprintf(sampler.status.reason, sizeof sampler.status.reason, "NVML did not start in time");
    sampler.started = pthread_create(&sampler.thread, NULL, run, NULL) == 0;
    if (!sampler.started)
        snprintf(sampler.status.reason, sizeof sampler.status.reason, "no thread to sample on");
}

int ct_gpu_sampler_next(struct ct_gpu_event *out)
{
    return ct_handover_take(&queue, out);
}

void ct_gpu_sampler_stop(uint32_t bound_ms, struct ct_gpu_status *out)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += bound_ms / 1000;
    until.tv_nsec += (long)(bound_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&sampler.lock);
    sampler.stopping = 1;
    pthread_cond_signal(&sampler.wake);
    while (sampler.started && !sampler.done &&
           pthread_cond_timedwait(&sampler.finished, &sampler.lock, &until) == 0)
        ;
    int finished = !sampler.started || sampler.done;
    if (!finished)
        sampler.status.state = CT_GPU_STATE_STUCK;
    sampler.status.dropped_events = ct_handover_dropped(&queue);
    *out = sampler.status;
    pthread_mutex_unlock(&sampler.lock);
    if (finished && sampler.started)
        pthread_join(sampler.thread, NULL);
    else if (sampler.started)
        pthread_detach(sampler.thread);
}

/*
 * Replays a capture (capture_format.h) through this build's trace builder
 * and writes the trace it makes: `replay CAPTURE OUT`. The collector's clock
 * reads what it read in the captured run, its resource figures read zero and
 * the process is given a pid no process can have, so nothing but the
 * capture and the files it names decides the output: two builds that write
 * the same trace of a run write the same bytes, and a difference is a change
 * in what the trace says. (What the collector reads of the living process,
 * its maps, command line and environment, is therefore not replayed; the
 * command side is compared on real traces instead.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tests/replay/capture_format.h"
#include "collector/perfetto/clock_map.h"
#include "cudatrace/shm_layout.h"
#include "collector/trace_builder.h"
#include "collector/perfetto/trace_file.h"

#define NO_SUCH_PID 4194305 /* above the kernel's largest pid_max */

static uint64_t replay_now_ns;

/* The collector's clock, as the capture says it read. */
int clock_gettime(clockid_t clock, struct timespec *ts)
{
    (void)clock;
    ts->tv_sec = (time_t)(replay_now_ns / 1000000000u);
    ts->tv_nsec = (long)(replay_now_ns % 1000000000u);
    return 0;
}

int getrusage(int who, struct rusage *usage)
{
    (void)who;
    memset(usage, 0, sizeof *usage);
    return 0;
}

static FILE *in;

static void take(void *data, size_t size)
{
    if (fread(data, 1, size, in) != size) {
        fprintf(stderr, "replay: the capture is cut short\n");
        exit(1);
    }
}

static void replay_event(const struct ct_capture_event *e)
{
    replay_now_ns = e->now_ns;
    switch (e->op) {
    case CT_CAP_THREAD: {
        int32_t tid;
        char name[17] = {0};
        take(&tid, sizeof tid);
        take(name, 16);
        ct_builder_thread(e->ring, tid, name);
        break;
    }
    case CT_CAP_THREAD_END:
        ct_builder_thread_end(e->ring);
        break;
    case CT_CAP_RECORD: {
        struct ct_record r;
        take(&r, sizeof r);
        ct_builder_record(e->ring, &r);
        break;
    }
    case CT_CAP_CALLS: {
        static struct ct_call_stats stats[CT_FN_COUNT];
        take(stats, sizeof stats);
        ct_builder_thread_calls(e->ring, stats);
        break;
    }
    case CT_CAP_INFLIGHT: {
        struct ct_call_now call;
        uint64_t end;
        take(&call, sizeof call);
        take(&end, sizeof end);
        ct_builder_inflight(call, end);
        break;
    }
    case CT_CAP_SCAN: {
        int32_t ended;
        take(&ended, sizeof ended);
        ct_builder_scan_libraries(ended);
        break;
    }
    case CT_CAP_TICK: {
        uint64_t dropped, drained_from, oldest_call;
        take(&dropped, sizeof dropped);
        take(&drained_from, sizeof drained_from);
        take(&oldest_call, sizeof oldest_call);
        ct_builder_tick(dropped, drained_from, oldest_call);
        break;
    }
    case CT_CAP_FINISH: {
        uint64_t end_ns, dropped;
        int32_t exited;
        take(&end_ns, sizeof end_ns);
        take(&dropped, sizeof dropped);
        take(&exited, sizeof exited);
        ct_builder_finish(end_ns, dropped, exited);
        break;
    }
    case CT_CAP_FLUSH:
        ct_builder_flush();
        break;
    default:
        fprintf(stderr, "replay: unknown event %u in the capture\n", e->op);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: replay CAPTURE OUT\n");
        return 2;
    }
    in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, "replay: cannot open %s\n", argv[1]);
        return 1;
    }
    uint32_t magic;
    static struct ct_shm_header shm;
    take(&magic, sizeof magic);
    if (magic != CT_CAPTURE_MAGIC) {
        fprintf(stderr, "replay: %s is not a capture\n", argv[1]);
        return 1;
    }
    take(&shm, sizeof shm);
    take(&replay_now_ns, sizeof replay_now_ns);
    if (shm.clock != CT_CLOCK_BOOTTIME) {
        fprintf(stderr, "replay: the run was not captured with CUDATRACE_CLOCK=boottime\n");
        return 1;
    }
    shm.pid = NO_SUCH_PID;
    char out[4096];
    snprintf(out, sizeof out, "%s", argv[2]);
    static struct ct_trace_file file;
    if (ct_trace_file_open(&file, out, sizeof out)) {
        fprintf(stderr, "replay: cannot create %s\n", argv[2]);
        return 1;
    }
    ct_clock_map_init(shm.clock, shm.start_ticks, shm.start_boot_ns);
    ct_builder_start(&shm, &file);
    struct ct_capture_event e;
    while (fread(&e, sizeof e, 1, in) == 1)
        replay_event(&e);
    ct_trace_file_close(&file);
    return 0;
}

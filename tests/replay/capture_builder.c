/*
 * A stand-in for the trace builder, linked with the collector's own main.c,
 * ring_drain.c and clock_map.c into a collector (CUDATRACE_COLLECTOR) that
 * writes a capture (capture_format.h) where the real one writes a trace. It
 * speaks the preload's protocol unchanged, because it is the collector's
 * own code but for what happens to each drained record.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/replay/capture_format.h"
#include "collector/perfetto/clock_map.h"
#include "cudatrace/shm_layout.h"
#include "collector/trace_builder.h"
#include "collector/perfetto/trace_file.h"
#include "collector/snapshot/snapshot.h"
#include "collector/snapshot/triggers.h"

static FILE *out;
static int write_error;
static uint64_t records, calls;

static void put(const void *data, size_t size)
{
    if (out && fwrite(data, 1, size, out) != size)
        write_error = 5; /* EIO */
}

static void event(enum ct_capture_op op, uint32_t ring)
{
    struct ct_capture_event e = {op, ring, ct_clock_map_now_ns()};
    put(&e, sizeof e);
}

int ct_trace_file_open(struct ct_trace_file *f, char *path, size_t path_size)
{
    (void)f, (void)path_size;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    out = fd < 0 ? NULL : fdopen(fd, "w");
    return out ? 0 : 13; /* EACCES */
}

void ct_trace_file_close(struct ct_trace_file *f)
{
    (void)f;
    if (out && fclose(out))
        write_error = 5;
    out = NULL;
}

uint64_t ct_trace_file_bytes(const struct ct_trace_file *f)
{
    (void)f;
    return records * sizeof(struct ct_record);
}

int ct_trace_file_error(const struct ct_trace_file *f)
{
    (void)f;
    return write_error;
}

void ct_builder_flush(void)
{
    event(CT_CAP_FLUSH, 0);
}

void ct_builder_start(struct ct_shm_header *shm, struct ct_trace_file *file)
{
    (void)file;
    uint32_t magic = CT_CAPTURE_MAGIC;
    put(&magic, sizeof magic);
    put(shm, sizeof *shm);
    uint64_t now = ct_clock_map_now_ns();
    put(&now, sizeof now);
}

void ct_builder_thread(uint32_t index, int32_t tid, const char *name)
{
    char padded[16] = {0};
    memcpy(padded, name, strnlen(name, sizeof padded));
    event(CT_CAP_THREAD, index);
    put(&tid, sizeof tid);
    put(padded, sizeof padded);
}

void ct_builder_thread_end(uint32_t index)
{
    event(CT_CAP_THREAD_END, index);
}

void ct_builder_record(uint32_t index, const struct ct_record *record)
{
    event(CT_CAP_RECORD, index);
    put(record, sizeof *record);
    records++;
    calls += record->type == CT_REC_CALL || record->type == CT_REC_CUPTI_CALL;
}

void ct_builder_thread_calls(uint32_t index, const struct ct_call_stats *stats)
{
    event(CT_CAP_CALLS, index);
    put(stats, sizeof *stats * CT_FN_COUNT);
}

void ct_builder_inflight(struct ct_call_now call, uint64_t end_ns)
{
    event(CT_CAP_INFLIGHT, call.index);
    put(&call, sizeof call);
    put(&end_ns, sizeof end_ns);
}

int ct_builder_scan_libraries(int process_ended)
{
    int32_t ended = process_ended;
    event(CT_CAP_SCAN, 0);
    put(&ended, sizeof ended);
    return 1;
}

void ct_builder_tick(uint64_t dropped, uint64_t drained_from_ns, uint64_t oldest_call_ticks)
{
    event(CT_CAP_TICK, 0);
    put(&dropped, sizeof dropped);
    put(&drained_from_ns, sizeof drained_from_ns);
    put(&oldest_call_ticks, sizeof oldest_call_ticks);
}

void ct_builder_finish(uint64_t end_ns, uint64_t dropped, int exited_normally)
{
    int32_t exited = exited_normally;
    event(CT_CAP_FINISH, 0);
    put(&end_ns, sizeof end_ns);
    put(&dropped, sizeof dropped);
    put(&exited, sizeof exited);
}

uint64_t ct_builder_calls(void)
{
    return calls;
}

/* A capture records what the drain hands over, not snapshots: the
 * triggers are off, and a thread's state is never asked for. */
void ct_builder_thread_now(uint32_t index, const char *name, const struct ct_call_stats *stats,
                           struct ct_call_now call, uint64_t now_ns)
{
    (void)index, (void)name, (void)stats, (void)call, (void)now_ns;
}

void ct_snapshot_triggers_start(void) {}

void ct_snapshot_check_hangs(struct ct_shm_header *shm)
{
    (void)shm;
}

void ct_snapshot_run_pending(void) {}

/*
 * The snapshot triggers. CUDATRACE_SNAPSHOT_ON lists the kinds that take a
 * snapshot by themselves: `error` (the first failure of each CUDA error
 * code but out-of-memory; cudaErrorNotReady, a query's answer, is no
 * failure), `oom` (the first out-of-memory failure) and `hang` (a thread
 * inside one CUDA call longer than CUDATRACE_HANG_S, the first time for
 * each function); `none` for none. The default is hang alone: a stuck job
 * is the one whose state is lost when its watchdog kills it, while a
 * failure is in the trace anyway, and failures are often on purpose
 * (programs probe devices and peer access as they start; PyTorch's
 * allocator frees its cache and retries after an out-of-memory), where
 * each first code would leave a copy of the trace the user never asked
 * for. The hang
 * default, 120 s, is well inside the watchdogs that kill a stuck job
 * (PyTorch's NCCL timeout, 10 minutes; torchrun's and schedulers' longer)
 * and past any call a healthy step makes. At most one snapshot per kind
 * and code, and CUDATRACE_SNAPSHOT_MAX (default 8) in all, so a failing
 * job never fills the disk with copies. A bad value is said once on
 * stderr and the default kept.
 */
#include "collector/snapshot/triggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/functions.h"
#include "collector/perfetto/clock_map.h"
#include "collector/perfetto/process_tracks.h"
#include "collector/ring_drain.h"
#include "collector/snapshot/snapshot.h"
#include "common/u64_map.h"

#define CUDA_ERROR_OOM 2         /* cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY */
#define CUDA_ERROR_NOT_READY 600 /* cudaErrorNotReady, CUDA_ERROR_NOT_READY */
#define HANG_S_DEFAULT 120
#define HANG_S_MOST 86400
#define SNAPSHOTS_DEFAULT 8
#define SNAPSHOTS_MOST 1000
#define PENDING_MAX 8

static struct {
    unsigned on; /* bit per enum ct_snapshot_trigger */
    uint64_t hang_ns;
    uint32_t most, taken;
    struct ct_u64_map seen; /* trigger << 40 | code, plus one */
    struct ct_snapshot_reason pending[PENDING_MAX];
    uint32_t pending_count;
} t;

static unsigned parse_kinds(const char *text)
{
    static const char *const names[] = {
        [CT_SNAPSHOT_ERROR] = "error", [CT_SNAPSHOT_OOM] = "oom", [CT_SNAPSHOT_HANG] = "hang"};
    if (strcmp(text, "none") == 0)
        return 0;
    unsigned on = 0;
    for (const char *at = text; *at;) {
        size_t len = strcspn(at, ",");
        unsigned kind = CT_SNAPSHOT_ERROR;
        while (kind <= CT_SNAPSHOT_HANG &&
               (strlen(names[kind]) != len || strncmp(at, names[kind], len) != 0))
            kind++;
        if (kind > CT_SNAPSHOT_HANG)
            return ~0u;
        on |= 1u << kind;
        at += len + (at[len] == ',');
    }
    return on ? on : ~0u;
}

static uint32_t env_count(const char *name, uint32_t fallback, uint32_t least, uint32_t most)
{
    const char *text = ct_process_env(name);
    if (!text)
        return fallback;
    char *end;
    unsigned long value = strtoul(text, &end, 10);
    if (*text >= '0' && *text <= '9' && !*end && value >= least && value <= most)
        return (uint32_t)value;
    fprintf(stderr, "cudatrace: ignoring %s=%s: expected a whole number from %u to %u\n", name,
            text, least, most);
    return fallback;
}

void ct_snapshot_triggers_start(void)
{
    t.on = 1u << CT_SNAPSHOT_HANG;
    const char *kinds = ct_process_env("CUDATRACE_SNAPSHOT_ON");
    unsigned parsed = kinds ? parse_kinds(kinds) : t.on;
    if (parsed == ~0u)
        fprintf(stderr,
                "cudatrace: ignoring CUDATRACE_SNAPSHOT_ON=%s: expected none or a list of "
                "error, oom and hang\n",
                kinds);
    else
        t.on = parsed;
    t.hang_ns = env_count("CUDATRACE_HANG_S", HANG_S_DEFAULT, 1, HANG_S_MOST) * 1000000000ull;
    t.most = env_count("CUDATRACE_SNAPSHOT_MAX", SNAPSHOTS_DEFAULT, 0, SNAPSHOTS_MOST);
}

/* Queues a snapshot unless its kind is off, its kind and code already had
 * one, or the cap is reached. */
static void ask(const struct ct_snapshot_reason *why, uint32_t code)
{
    uint64_t key = ((uint64_t)why->trigger << 40 | code) + 1;
    if (!(t.on & 1u << why->trigger) || t.taken + t.pending_count >= t.most ||
        t.pending_count == PENDING_MAX || ct_u64_map_find(&t.seen, key))
        return;
    ct_u64_map_put(&t.seen, key, 1);
    t.pending[t.pending_count++] = *why;
}

void ct_snapshot_note_result(uint32_t func, int32_t result)
{
    if (result == 0 || result == CUDA_ERROR_NOT_READY)
        return;
    enum ct_snapshot_trigger trigger =
        result == CUDA_ERROR_OOM ? CT_SNAPSHOT_OOM : CT_SNAPSHOT_ERROR;
    struct ct_snapshot_reason why = {trigger, func, result, 0, 0, 0};
    ask(&why, (uint32_t)result);
}

void ct_snapshot_check_hangs(struct ct_shm_header *shm)
{
    if (!(t.on & 1u << CT_SNAPSHOT_HANG) || t.taken >= t.most)
        return;
    static struct ct_call_now calls[CT_RINGS_MAX + 1];
    uint32_t n = ct_drain_calls_now(shm, calls);
    uint64_t now = ct_clock_map_now_ns();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t since = ct_clock_map_ns(calls[i].begin_ticks);
        if (calls[i].func >= CT_FN_COUNT || now < since || now - since < t.hang_ns)
            continue;
        struct ct_snapshot_reason why = {CT_SNAPSHOT_HANG, calls[i].func, 0,
                                         calls[i].tid,     since,         t.hang_ns};
        ask(&why, calls[i].func);
    }
}

void ct_snapshot_run_pending(void)
{
    for (uint32_t i = 0; i < t.pending_count; i++) {
        char path[4096];
        if (ct_snapshot_write(&t.pending[i], path, sizeof path) == 0)
            t.taken++;
    }
    t.pending_count = 0;
}

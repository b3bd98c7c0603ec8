/*
 * What each control command does. The table is the whole list: `help`
 * prints it, and a command is added as one more entry (its function, a
 * ct_control_command, may live in a file of its own). They run on the
 * collector's own thread between drains, so they read its state as it
 * stands and never wait on the program.
 */
#include "collector/control/commands.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collector/control/totals.h"
#include "collector/catch_up.h"
#include "collector/perfetto/trace_file.h"
#include "collector/snapshot/snapshot.h"
#include "collector/tracks/capture_windows.h"
#include "collector/tracks/memory_counters.h"
#include "collector/trace_builder.h"
#include "cudatrace/functions.h"

void ct_reply_printf(struct ct_reply *reply, const char *fmt, ...)
{
    if (reply->len + 1 >= reply->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(reply->text + reply->len, reply->size - reply->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        reply->len +=
            (size_t)n < reply->size - reply->len ? (size_t)n : reply->size - reply->len - 1;
}

static void window_line(const struct ct_control_parts *parts, struct ct_reply *reply)
{
    ct_reply_printf(reply, "window %s\n",
                    ct_capture_windows_open(parts->windows) ? "open" : "closed");
}

static void status(const struct ct_control_parts *parts, uint64_t now_ns, struct ct_reply *reply)
{
    (void)now_ns;
    struct ct_shm_header *shm = parts->shm;
    static struct ct_call_stats totals[CT_FN_COUNT];
    ct_catch_up(shm, 0);
    ct_control_totals_now(shm, totals);
    ct_reply_printf(reply, "ok\npid %d\ncapture %s\n", (int)shm->pid,
                    shm->capture_setting[0] ? shm->capture_setting : "all");
    window_line(parts, reply);
    ct_reply_printf(reply, "records %llu\ndropped %llu\ntrace_bytes %llu\ndevice_bytes %llu\n",
                    (unsigned long long)ct_builder_calls(), (unsigned long long)ct_shm_dropped(shm),
                    (unsigned long long)ct_trace_file_bytes(parts->file),
                    (unsigned long long)ct_memory_counters_live_device(parts->memory));
    for (int fn = 0; fn < CT_FN_COUNT; fn++)
        if (totals[fn].calls)
            ct_reply_printf(reply, "calls %s %llu errors %llu\n", ct_function_name(fn),
                            (unsigned long long)totals[fn].calls,
                            (unsigned long long)totals[fn].errors);
}

static void set_window(const struct ct_control_parts *parts, int open, uint64_t now_ns,
                       struct ct_reply *reply)
{
    ct_capture_windows_set(parts->windows, open, now_ns, "cudatrace ctl");
    ct_reply_printf(reply, "ok\n");
    window_line(parts, reply);
}

static void start(const struct ct_control_parts *parts, uint64_t now_ns, struct ct_reply *reply)
{
    set_window(parts, 1, now_ns, reply);
}

static void stop(const struct ct_control_parts *parts, uint64_t now_ns, struct ct_reply *reply)
{
    set_window(parts, 0, now_ns, reply);
}

/* A copy of the trace so far, with every thread's state, beside it. */
static void snapshot(const struct ct_control_parts *parts, uint64_t now_ns, struct ct_reply *reply)
{
    (void)parts, (void)now_ns;
    char path[PATH_MAX];
    struct ct_snapshot_reason why = {.trigger = CT_SNAPSHOT_ASKED};
    int err = ct_snapshot_write(&why, path, sizeof path);
    if (err)
        ct_reply_printf(reply, "error: no snapshot written: %s\n", strerror(err));
    else
        ct_reply_printf(reply, "ok\nsnapshot %s\n", path);
}

static ct_control_command help;

static const struct {
    const char *name, *help;
    ct_control_command *run;
} commands[] = {
    {"status", "calls per function so far, live device memory, records, trace bytes, window",
     status},
    {"start", "open a capture window: record detail from now", start},
    {"stop", "close the capture window: from now only the totals", stop},
    {"snapshot", "write the trace so far, with each thread's state, beside the trace", snapshot},
    {"help", "this list", help},
};

#define COMMANDS (sizeof commands / sizeof commands[0])

static void help(const struct ct_control_parts *parts, uint64_t now_ns, struct ct_reply *reply)
{
    (void)parts, (void)now_ns;
    ct_reply_printf(reply, "ok\n");
    for (size_t i = 0; i < COMMANDS; i++)
        ct_reply_printf(reply, "%-8s %s\n", commands[i].name, commands[i].help);
}

void ct_control_run(const struct ct_control_parts *parts, const char *line, uint64_t now_ns,
                    struct ct_reply *reply)
{
    for (size_t i = 0; i < COMMANDS; i++)
        if (strcmp(line, commands[i].name) == 0) {
            commands[i].run(parts, now_ns, reply);
            return;
        }
    /* The bytes as given, those that would garble a terminal replaced. */
    ct_reply_printf(reply, "error: unknown command '");
    for (const char *p = line; *p && p - line < 40; p++)
        ct_reply_printf(reply, "%c", *p >= ' ' && *p < 127 ? *p : '?');
    ct_reply_printf(reply, "' (try help)\n");
}

/*
 * The commands `cudatrace ctl` sends to a live process's collector, in one
 * table (commands.c): each is a name, a line of help and a function that
 * writes its reply. A reply begins "ok" or "error: ", one line, and status's
 * goes on with one "key value" line a figure.
 */
#ifndef CT_COLLECTOR_CONTROL_COMMANDS_H
#define CT_COLLECTOR_CONTROL_COMMANDS_H

#include <stddef.h>
#include <stdint.h>

#include "collector/perfetto/trace_file.h"
#include "collector/tracks/capture_windows.h"
#include "collector/tracks/memory_counters.h"
#include "cudatrace/shm_layout.h"

/* A reply being written: text up to size, cut short rather than overrun. */
struct ct_reply {
    char *text;
    size_t size, len;
};

void ct_reply_printf(struct ct_reply *reply, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What the commands read and change: the process's header and the parts
 * of its trace the builder holds. */
struct ct_control_parts {
    struct ct_shm_header *shm;
    struct ct_trace_file *file;
    struct ct_capture_windows *windows;
    const struct ct_memory_counters *memory;
};

/* A command: writes its reply for the process `parts` trace, at `now_ns`
 * on the trace's clock. */
typedef void ct_control_command(const struct ct_control_parts *parts, uint64_t now_ns,
                                struct ct_reply *reply);

/* Runs the command `line` (without its newline) on the process `parts`
 * trace, at `now_ns`, and writes its reply. */
void ct_control_run(const struct ct_control_parts *parts, const char *line, uint64_t now_ns,
                    struct ct_reply *reply);

#endif

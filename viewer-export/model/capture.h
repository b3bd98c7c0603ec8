/*
 * What a trace says about its capture windows (CUDATRACE_CAPTURE, `cudatrace
 * ctl`): the setting, and each window with what opened it (capture.c). The
 * call counts stay the whole run's; the detail is only the windows'.
 */
#ifndef CT_REPORT_CAPTURE_H
#define CT_REPORT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "viewer-export/read/trace_decode.h"

struct ct_capture_window {
    uint64_t from_ns, to_ns;
    const char *opened_by;
};

struct ct_capture_view {
    const char *setting; /* CUDATRACE_CAPTURE; NULL when it was unset */
    struct ct_capture_window *windows;
    size_t count;
};

/* Whether the run recorded only windows (a setting, or ctl closed one). */
static inline int ct_capture_windowed(const struct ct_capture_view *c)
{
    return c->setting || c->count;
}

/* Each returns 1 when the event was one of the capture windows' own. */
int ct_capture_instant(struct ct_capture_view *c, const struct ct_event *e);
int ct_capture_slice(struct ct_capture_view *c, const struct ct_event *e);

#endif

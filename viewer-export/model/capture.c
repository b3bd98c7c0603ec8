/*
 * Reads the capture windows back out of a trace: the "capture setting"
 * instant the collector writes at the start and one "capture window" slice
 * per window, in the order they opened.
 */
#include "viewer-export/model/capture.h"

#include <string.h>

#include "common/array.h"
#include "cudatrace/trace_names.h"

int ct_capture_instant(struct ct_capture_view *c, const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_capture_setting) != 0)
        return 0;
    c->setting = ct_event_text(e, ct_key_capture);
    return 1;
}

int ct_capture_slice(struct ct_capture_view *c, const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_capture_window) != 0)
        return 0;
    c->windows = ct_array_grow(c->windows, c->count, sizeof *c->windows);
    size_t at = c->count++;
    while (at > 0 && c->windows[at - 1].from_ns > e->ts) {
        c->windows[at] = c->windows[at - 1];
        at--;
    }
    c->windows[at] = (struct ct_capture_window){e->ts, e->end, ct_event_text(e, ct_key_opened_by)};
    return 1;
}

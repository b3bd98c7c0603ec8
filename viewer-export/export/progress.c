/*
 * Shows how far a long export has read through its input, as "N of M MiB"
 * on one line of a terminal rewritten in place. It is redrawn at most four
 * times a second, and only looks at the clock when the count moved (the
 * input is read 64 KiB at a time), so updating it per packet costs a
 * comparison; it is erased at the end, leaving the terminal as it was.
 * When stderr is not a terminal (a log, a pipe, a test) nothing is printed
 * at all.
 */
#include "viewer-export/export/progress.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REDRAW_NS 250000000ull
#define MIB (1024.0 * 1024.0)

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

void ct_progress_start(struct ct_progress *p, const char *path)
{
    struct stat st;
    const char *slash = strrchr(path, '/'); /* the name alone keeps the line short */
    *p = (struct ct_progress){.what = slash ? slash + 1 : path, .on = isatty(STDERR_FILENO)};
    if (p->on && stat(path, &st) == 0)
        p->total = (uint64_t)st.st_size;
}

void ct_progress_update(struct ct_progress *p, uint64_t done)
{
    if (!p->on || done == p->done)
        return;
    p->done = done;
    uint64_t now = now_ns();
    if (p->shown_ns && now - p->shown_ns < REDRAW_NS)
        return;
    p->shown_ns = now;
    unsigned percent = p->total ? (unsigned)(done * 100 / p->total) : 0;
    fprintf(stderr, "\rcudatrace: exporting %s: %.1f of %.1f MiB (%u%%)", p->what, done / MIB,
            p->total / MIB, percent);
    fflush(stderr);
}

void ct_progress_end(struct ct_progress *p)
{
    if (p->on && p->shown_ns)
        fputs("\r\033[K", stderr); /* back to the line's start, erase to its end */
}

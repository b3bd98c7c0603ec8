/*
 * A one-line progress display for long exports, on a terminal only.
 */
#ifndef CT_EXPORT_PROGRESS_H
#define CT_EXPORT_PROGRESS_H

#include <stdint.h>

struct ct_progress {
    const char *what; /* the name of the file being read */
    uint64_t total;   /* its size in bytes */
    uint64_t done;    /* bytes read at the last update */
    uint64_t shown_ns;
    int on;
};

/* Shows progress through `path` when stderr is a terminal. */
void ct_progress_start(struct ct_progress *p, const char *path);
/* Notes that `done` bytes of the file were read. */
void ct_progress_update(struct ct_progress *p, uint64_t done);
/* Erases the line. */
void ct_progress_end(struct ct_progress *p);

#endif

/*
 * The loader view's table of dlopen requests for CUDA-stack names that have
 * not been seen through yet (requests.c), shared with the look at the link
 * map (loader_view.c) that settles them. Every access to the table is made
 * between ct_requests_lock and ct_requests_unlock, a short spin lock under
 * which nothing calls into the loader.
 */
#ifndef CT_PRELOAD_LOADER_REQUESTS_H
#define CT_PRELOAD_LOADER_REQUESTS_H

#include <stdint.h>

#include "preload/loader/loaded_objects.h"

#define CT_REQUEST_ERROR_LEN 512

/* The strings of a request live apart from the flags every look scans, so
 * a process that never loads a CUDA library touches (and faults in) one
 * page of the table, not hundreds of kilobytes. */
struct ct_request_text {
    char name[CT_LOADER_PATH_LEN];
    char caller[CT_LOADER_PATH_LEN];  /* the object that called dlopen */
    char via[CT_LOADER_PATH_LEN];     /* a dependency that failed: the name dlopen'ed */
    char python[CT_LOADER_PATH_LEN];  /* the Python line that called dlopen, or "" */
    char error[CT_REQUEST_ERROR_LEN]; /* what dlerror() told the program */
};

struct ct_request {
    int used, failed;
    /* An RTLD_NOLOAD dlopen of a name that was not loaded when asked: it
     * loads nothing by design, so it is neither answered nor failed. */
    int query;
    uint32_t attempts; /* failed: identical failures folded into this one */
    int32_t tid;
    int mode;
    uint64_t ticks;
    struct ct_request_text *text;
};

void ct_requests_lock(void);
void ct_requests_unlock(void);
/* The requests in the table after `q` (the first when NULL), or NULL. */
struct ct_request *ct_requests_next(struct ct_request *q);
/* The pending request that an object loaded as `path` with `soname`
 * answers, or NULL. */
struct ct_request *ct_request_answered_by(const char *path, const char *soname);
/* The clock of the latest dlopen of any name: when an object no request
 * asked for was loaded. */
uint64_t ct_requests_latest_ticks(void);

/* Takes these outside the lock. A dlopen of `file` by the code at `caller`. */
void ct_request_note(const char *file, int mode, uintptr_t caller);
/* An error dlerror() gave this thread: given to the request it is about;
 * 1 when there was one. */
int ct_request_note_error(const char *text);
/* Fork child: the lock and the requests in flight belong to the parent. */
void ct_requests_forget_in_child(void);

#endif

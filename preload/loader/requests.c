/*
 * The dlopen requests the loader view has yet to see through (requests.h).
 * A request is noted when the program's dlopen of a CUDA-stack name starts,
 * answered when a look finds an object it gets, and failed when dlerror()
 * tells the program of an error about it. An RTLD_NOLOAD dlopen of a name
 * that is not loaded is a query: it loads nothing by design, so it is
 * noted to be written as such, never answered or failed. The table is
 * fixed in size: a new request takes a free slot, else the oldest
 * unanswered one's, which is given up, sparing a failure that waits to be
 * written. A load retried in a loop fails the same way each time, so
 * identical failures fold into one that carries their count.
 */
#include "preload/loader/requests.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload/core/clock.h"
#include "preload/core/ring.h"
#include "preload/sites/python_frames.h"

#define MAX_REQUESTS 64

static atomic_flag requests_busy = ATOMIC_FLAG_INIT;
static struct ct_request requests[MAX_REQUESTS];
static struct ct_request_text request_texts[MAX_REQUESTS];
static _Atomic uint64_t last_request_ticks;

/* The thread's latest dlopen of any name, for a dependency that fails. */
static __thread struct {
    char name[CT_LOADER_PATH_LEN];
    uintptr_t caller;
    uint64_t ticks;
    int query; /* with RTLD_NOLOAD */
} last_request CT_TLS;

void ct_requests_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&requests_busy, memory_order_acquire))
        sched_yield();
}

void ct_requests_unlock(void)
{
    atomic_flag_clear_explicit(&requests_busy, memory_order_release);
}

struct ct_request *ct_requests_next(struct ct_request *q)
{
    for (q = q ? q + 1 : requests; q < requests + MAX_REQUESTS; q++)
        if (q->used)
            return q;
    return NULL;
}

struct ct_request *ct_request_answered_by(const char *path, const char *soname)
{
    for (int r = 0; r < MAX_REQUESTS; r++) {
        struct ct_request *q = &requests[r];
        if (q->used && !q->failed && !q->query && ct_answers_to(q->text->name, path, soname))
            return q;
    }
    return NULL;
}

uint64_t ct_requests_latest_ticks(void)
{
    return atomic_load(&last_request_ticks);
}

void ct_requests_forget_in_child(void)
{
    atomic_flag_clear(&requests_busy);
    for (int r = 0; r < MAX_REQUESTS; r++)
        requests[r].used = 0;
}

/* Whether `r` is a better slot to give a new request than `q`: a free one,
 * else the oldest, sparing a failure that waits to be written. */
static int better_slot(const struct ct_request *r, const struct ct_request *q)
{
    if (!r->used || !q->used)
        return !r->used;
    if (r->failed != q->failed)
        return !r->failed;
    return r->ticks < q->ticks;
}

/* A free slot, else the oldest unanswered request's (given up), cleared. */
static struct ct_request *take_request(int32_t tid, int mode, uint64_t ticks)
{
    struct ct_request *q = &requests[0];
    for (int r = 1; r < MAX_REQUESTS && q->used; r++)
        if (better_slot(&requests[r], q))
            q = &requests[r];
    *q = (struct ct_request){.used = 1,
                             .attempts = 1,
                             .tid = tid,
                             .mode = mode,
                             .ticks = ticks,
                             .text = &request_texts[q - requests]};
    memset(q->text, 0, sizeof *q->text);
    return q;
}

/* The Python line that asked, "file:line in function": the innermost frame
 * outside the ctypes package, whose CDLL is what calls dlopen (PyTorch
 * preloads its CUDA libraries so). Asked only when ctypes' extension is the
 * caller: a library's own dlopen from its constructor, while a CDLL runs,
 * was not asked for by that line. The native requester, the extension, is
 * true and says nothing to a person. */
static void python_requester(char *out, size_t size)
{
    struct ct_py_frame frames[16];
    size_t n = ct_python_frames(frames, sizeof frames / sizeof frames[0]);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!memmem(frames[i].file, frames[i].file_len, "/ctypes/", 8)) {
            snprintf(out, size, "%.*s:%d in %.*s", (int)frames[i].file_len, frames[i].file,
                     frames[i].line, (int)frames[i].function_len, frames[i].function);
            return;
        }
}

void ct_request_note(const char *file, int mode, uintptr_t caller)
{
    uint64_t now = ct_clock_now();
    ct_copy_truncated(last_request.name, sizeof last_request.name, file);
    last_request.caller = caller;
    last_request.ticks = now;
    last_request.query = (mode & RTLD_NOLOAD) != 0;
    atomic_store(&last_request_ticks, now);
    /* A query that finds its library loaded tells nothing new. */
    if (!ct_is_cuda_stack(file) || (last_request.query && ct_name_is_loaded(file)))
        return;
    char caller_path[CT_LOADER_PATH_LEN], python[CT_LOADER_PATH_LEN] = "";
    ct_object_containing(caller, caller_path, sizeof caller_path);
    if (strncmp(ct_base_name(caller_path), "_ctypes", 7) == 0)
        python_requester(python, sizeof python);
    ct_requests_lock();
    struct ct_request *q = take_request((int32_t)gettid(), mode, now);
    q->query = last_request.query;
    ct_copy_truncated(q->text->name, sizeof q->text->name, file);
    ct_copy_truncated(q->text->caller, sizeof q->text->caller, caller_path);
    ct_copy_truncated(q->text->python, sizeof q->text->python, python);
    ct_requests_unlock();
}

/* Frees `q`'s slot when an earlier failure is the same (under the lock). */
static void fold_into_earlier_failure(struct ct_request *q)
{
    for (int r = 0; r < MAX_REQUESTS; r++) {
        struct ct_request *p = &requests[r];
        if (p != q && p->used && p->failed && strcmp(p->text->name, q->text->name) == 0 &&
            strcmp(p->text->caller, q->text->caller) == 0 &&
            strcmp(p->text->error, q->text->error) == 0 &&
            strcmp(p->text->via, q->text->via) == 0) {
            p->attempts++;
            q->used = 0;
            return;
        }
    }
}

/* The thread's latest unanswered request, by `name` (compared by base name:
 * glibc may name the file it tried rather than the name asked for) or by
 * any name when NULL; NULL when there is none (under the lock). */
static struct ct_request *latest_request_of(int32_t tid, const char *name)
{
    struct ct_request *latest = NULL;
    for (int r = 0; r < MAX_REQUESTS; r++) {
        const struct ct_request *q = &requests[r];
        if (q->used && !q->failed && !q->query && q->tid == tid &&
            (!latest || q->ticks > latest->ticks) &&
            (!name || strcmp(ct_base_name(q->text->name), ct_base_name(name)) == 0))
            latest = &requests[r];
    }
    return latest;
}

/* Gives the error to the thread's latest request by `name` (any when
 * NULL); 0 when there is none. */
static int mark_failed(int32_t tid, const char *name, const char *text)
{
    ct_requests_lock();
    struct ct_request *q = latest_request_of(tid, name);
    if (q) {
        q->failed = 1;
        ct_copy_truncated(q->text->error, sizeof q->text->error, text);
        fold_into_earlier_failure(q);
    }
    ct_requests_unlock();
    return q != NULL;
}

/* A failure of the thread's latest dlopen whose request is no longer
 * pending (it was given up for a newer one), or of a dependency of it: the
 * object that named a dependency was unmapped again, so the collector finds
 * it from the files (the dlopen'ed name, its caller). */
static void note_failed_load(const char *name, const char *text, int32_t tid)
{
    char caller_path[CT_LOADER_PATH_LEN];
    ct_object_containing(last_request.caller, caller_path, sizeof caller_path);
    ct_requests_lock();
    struct ct_request *q = take_request(tid, -1, last_request.ticks);
    q->failed = 1;
    ct_copy_truncated(q->text->name, sizeof q->text->name, name);
    ct_copy_truncated(q->text->caller, sizeof q->text->caller, caller_path);
    if (strcmp(name, last_request.name) != 0)
        ct_copy_truncated(q->text->via, sizeof q->text->via, last_request.name);
    ct_copy_truncated(q->text->error, sizeof q->text->error, text);
    fold_into_earlier_failure(q);
    ct_requests_unlock();
}

/* glibc's load errors begin with the file that failed ("NAME: cannot open
 * shared object file: ..."); an error naming an object that is loaded came
 * from something else (a dlsym), and one after the thread's query only says
 * that the name is not loaded. The failing file is the request itself, a
 * CUDA library it needed (or one whose request was given up), or another
 * library a CUDA request needed: only while that request is the thread's
 * latest dlopen, as a later dlopen of something else (a framework probing
 * an optional library after a CUDA load failed) owns its own error. */
int ct_request_note_error(const char *text)
{
    char failing[CT_LOADER_PATH_LEN], latest[CT_LOADER_PATH_LEN] = "";
    const char *colon = strstr(text, ": ");
    snprintf(failing, sizeof failing, "%.*s", colon ? (int)(colon - text) : 0, text);
    if (!*failing || last_request.query || ct_name_is_loaded(failing))
        return 0;
    int32_t tid = (int32_t)gettid();
    if (mark_failed(tid, failing, text))
        return 1;
    if (ct_is_cuda_stack(failing) && *last_request.name) {
        note_failed_load(failing, text, tid);
        return 1;
    }
    ct_requests_lock();
    struct ct_request *q = latest_request_of(tid, NULL);
    if (q && q->ticks == last_request.ticks)
        ct_copy_truncated(latest, sizeof latest, q->text->name);
    ct_requests_unlock();
    return *latest && !ct_name_is_loaded(latest) && mark_failed(tid, latest, text);
}

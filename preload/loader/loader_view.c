/*
 * The loader's view of CUDA-stack libraries under a bare LD_PRELOAD, where
 * no rtld-audit module can be set (LD_AUDIT is read only at exec): the look
 * at the link map that learns what the requests (requests.c) led to. A look
 * runs at the next dlopen, dlclose or dlerror (dl_entry.c), at the next
 * CUDA call once a dlopen has run, and at exit. It compares the CUDA-stack
 * objects mapped now with the ones mapped at the last look: new ones are
 * loads (answering a request by their name, or else the DT_NEEDED entry of
 * the first object that names them), missing ones unloads, and a request
 * whose object never appears failed, with the text dlerror() gave the
 * program when it asked; an RTLD_NOLOAD query that found nothing is
 * written as a query. Seeing a load or a failure starts the session:
 * loading a CUDA library is touching CUDA (asking whether one is loaded is
 * not). How each file was found and where a failed one was looked for is
 * worked out by the collector from the files
 * (collector/libraries/ld_search.c), never in here.
 *
 * Locks: a look holds `observer` while it walks the link map (which takes
 * glibc's link-map lock), so nothing ever waits for `observer` but exit:
 * every other look gives up when another thread is looking, and a request
 * only takes the short spin lock of the request table, under which nothing
 * calls into the loader. So no thread inside the loader can end up waiting
 * for us.
 */
#include "preload/loader/loader_view.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "preload/core/clock.h"
#include "preload/core/deferred.h"
#include "preload/core/init.h"
#include "preload/core/ring.h"
#include "preload/core/session.h"
#include "preload/loader/loaded_objects.h"
#include "preload/loader/requests.h"

#define MAX_KNOWN 64
#define PATH_LEN CT_LOADER_PATH_LEN

/* The strings of a known object live apart from the flags every look
 * scans, as a request's do. */
struct known_text {
    char path[PATH_LEN], soname[256], requested_as[PATH_LEN], requested_by[PATH_LEN];
    char python[PATH_LEN]; /* the Python line that asked, or "" */
};

/* A CUDA-stack object mapped at the last look. */
struct known {
    int used, present, emitted, already_told;
    int how, mode;
    int32_t tid;
    unsigned order; /* position in the link map at the look that found it */
    uintptr_t base;
    const void *phdr;
    uint64_t ticks;
    struct known_text *text;
};

static pthread_mutex_t observer = PTHREAD_MUTEX_INITIALIZER;
static struct known known[MAX_KNOWN];
static struct known_text known_texts[MAX_KNOWN];
static unsigned long long seen_adds, seen_subs;
static uint64_t next_event_key;

static struct known *find_known(uintptr_t base, const void *phdr)
{
    for (int i = 0; i < MAX_KNOWN; i++)
        if (known[i].used && known[i].base == base && known[i].phdr == phdr)
            return &known[i];
    return NULL;
}

static struct known *add_known(void)
{
    for (int i = 0; i < MAX_KNOWN; i++)
        if (!known[i].used) {
            known[i] = (struct known){.used = 1, .text = &known_texts[i]};
            memset(known[i].text, 0, sizeof *known[i].text);
            return &known[i];
        }
    return NULL; /* more CUDA libraries than we follow: the maps scan still lists them */
}

struct look {
    unsigned order;
    uint64_t now;
    int at_start;
};

static int note_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct look *look = data;
    unsigned order = look->order++;
    const char *path = ct_object_path(info);
    if (!ct_is_cuda_stack(path))
        return 0;
    struct known *k = find_known(info->dlpi_addr, info->dlpi_phdr);
    if (k) {
        k->present = 1;
        return 0;
    }
    if (!(k = add_known()))
        return 0;
    k->present = 1;
    k->order = order;
    k->base = info->dlpi_addr;
    k->phdr = info->dlpi_phdr;
    k->ticks = look->at_start ? ct_start_ticks : look->now;
    k->how = look->at_start ? CT_LIB_AT_START : 0;
    k->mode = -1;
    ct_copy_truncated(k->text->path, sizeof k->text->path, path);
    ct_object_soname(info, k->text->soname, sizeof k->text->soname);
    return 0;
}

/* For each new object no request asked for: the first object before it in
 * the link map whose DT_NEEDED names it, which is the one ld.so loaded it
 * for (dependencies are loaded breadth first, each appended in turn). */
static int note_needed(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    unsigned *order = data;
    unsigned mine = (*order)++;
    const char *strings;
    for (const ElfW(Dyn) *d = ct_object_dynamic(info, &strings); d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag != DT_NEEDED)
            continue;
        const char *needed = strings + d->d_un.d_val;
        for (int i = 0; i < MAX_KNOWN; i++) {
            struct known *k = &known[i];
            if (k->used && !k->emitted && !*k->text->requested_by && k->order > mine &&
                ct_answers_to(needed, k->text->path, k->text->soname)) {
                ct_copy_truncated(k->text->requested_as, sizeof k->text->requested_as, needed);
                ct_copy_truncated(k->text->requested_by, sizeof k->text->requested_by,
                                  ct_object_path(info));
            }
        }
    }
    return 0;
}

struct generation {
    unsigned long long adds, subs;
};

static int read_generation(struct dl_phdr_info *info, size_t size, void *data)
{
    struct generation *g = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        g->adds = info->dlpi_adds;
        g->subs = info->dlpi_subs;
    }
    return 1;
}

/* Gives new objects their request: a pending dlopen by their name, else
 * the DT_NEEDED entry that brought them. */
static void attribute_new_objects(int at_start)
{
    int need_needed = 0;
    for (int i = 0; i < MAX_KNOWN; i++) {
        struct known *k = &known[i];
        if (!k->used || k->emitted || k->how)
            continue;
        k->how = CT_LIB_BY_NEEDED;
        k->ticks = ct_requests_latest_ticks();
        struct ct_request *q = ct_request_answered_by(k->text->path, k->text->soname);
        if (q) {
            k->how = CT_LIB_BY_DLOPEN;
            k->ticks = q->ticks;
            k->tid = q->tid;
            k->mode = q->mode;
            ct_copy_truncated(k->text->requested_as, sizeof k->text->requested_as, q->text->name);
            ct_copy_truncated(k->text->requested_by, sizeof k->text->requested_by, q->text->caller);
            ct_copy_truncated(k->text->python, sizeof k->text->python, q->text->python);
            q->used = 0;
        }
        need_needed |= k->how == CT_LIB_BY_NEEDED;
    }
    if (at_start || need_needed) {
        unsigned order = 0;
        dl_iterate_phdr(note_needed, &order);
    }
}

/* Emits one event on the loader ring (starting the session); 0 when it is
 * in the trace. */
static int emit(enum ct_library_event event, int how, uint32_t attempts, uint64_t ticks, int mode,
                int32_t tid, uintptr_t base, const char *name, const char *requester,
                const char *python, const char *path, const char *error, const char *via)
{
    struct ct_ring *ring = ct_session_loader_ring();
    if (!ring)
        return -1;
    uint64_t key = ++next_event_key;
    const struct {
        uint16_t kind;
        const char *text;
    } strings[] = {{CT_STR_LIB_NAME, name},     {CT_STR_LIB_REQUESTER, requester},
                   {CT_STR_LIB_PYTHON, python}, {CT_STR_LIB_PATH, path},
                   {CT_STR_LIB_ERROR, error},   {CT_STR_LIB_VIA, via}};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (strings[i].text && *strings[i].text &&
            ct_emit_string(ring, strings[i].kind, key, strings[i].text))
            return -1;
    struct ct_record r = {.type = CT_REC_LIBRARY,
                          .func = (uint16_t)event,
                          .result = mode,
                          .begin = ticks,
                          .end = ct_clock_now(),
                          .arg = {key, (uint64_t)(uint32_t)tid, (uint64_t)how, base, attempts}};
    return ct_emit_record(ring, &r, 1) ? 0 : -1;
}

static void emit_loads(void)
{
    for (int i = 0; i < MAX_KNOWN; i++) {
        struct known *k = &known[i];
        if (!k->used || k->emitted || (k->how == CT_LIB_INHERITED && !ct_session_active()))
            continue;
        k->emitted = !emit(CT_LIB_LOADED, k->how, 1, k->ticks, k->mode, k->tid, k->base,
                           k->text->requested_as, k->text->requested_by, k->text->python,
                           k->text->path, NULL, NULL);
    }
}

static void emit_unloads(uint64_t now)
{
    for (int i = 0; i < MAX_KNOWN; i++) {
        struct known *k = &known[i];
        if (k->used && !k->present) {
            if (k->emitted)
                emit(CT_LIB_UNLOADED, k->how, 1, now, -1, 0, k->base, k->text->requested_as, NULL,
                     NULL, k->text->path, NULL, NULL);
            k->used = 0;
        }
    }
}

/* A query is written once the session runs; alone it does not start one
 * (asking whether a library is loaded loads nothing), and at exit without
 * a session it is dropped. */
static void settle_query(struct ct_request *q, int final)
{
    if (ct_session_active())
        emit(CT_LIB_QUERIED, CT_LIB_BY_DLOPEN, q->attempts, q->ticks, q->mode, q->tid, 0,
             q->text->name, q->text->caller, q->text->python, NULL, NULL, NULL);
    if (ct_session_active() || final)
        q->used = 0;
}

/* Requests answered by an object that was there before them, requests
 * that failed (the program read the error, or the process is ending), and
 * queries. */
static void settle_requests(int final)
{
    for (struct ct_request *q = ct_requests_next(NULL); q; q = ct_requests_next(q)) {
        if (q->query) {
            settle_query(q, final);
            continue;
        }
        struct known *k = NULL;
        for (int i = 0; i < MAX_KNOWN && !q->failed; i++)
            if (known[i].used &&
                ct_answers_to(q->text->name, known[i].text->path, known[i].text->soname))
                k = &known[i];
        if (k) {
            if (!k->already_told)
                emit(CT_LIB_LOADED, CT_LIB_ALREADY, 1, q->ticks, q->mode, q->tid, k->base,
                     q->text->name, q->text->caller, q->text->python, k->text->path, NULL, NULL);
            k->already_told = 1;
            q->used = 0;
        } else if (q->failed || final) {
            emit(CT_LIB_FAILED, *q->text->via ? CT_LIB_BY_NEEDED : CT_LIB_BY_DLOPEN, q->attempts,
                 q->ticks, q->mode, q->tid, 0, q->text->name, q->text->caller, q->text->python,
                 NULL, q->text->error, q->text->via);
            q->used = 0;
        }
    }
}

static void look(int at_start, int final)
{
    struct generation g = {0, 0};
    dl_iterate_phdr(read_generation, &g);
    int changed = g.adds != seen_adds || g.subs != seen_subs;
    seen_adds = g.adds;
    seen_subs = g.subs;
    struct look walk = {0, ct_clock_now(), at_start};
    if (changed || at_start) {
        for (int i = 0; i < MAX_KNOWN; i++)
            known[i].present = 0;
        dl_iterate_phdr(note_object, &walk);
    }
    ct_requests_lock();
    attribute_new_objects(at_start);
    ct_requests_unlock();
    emit_loads();
    ct_requests_lock();
    settle_requests(final);
    ct_requests_unlock();
    if (changed)
        emit_unloads(walk.now);
}

/* Only start-up and exit wait for the lock; every other look gives up when
 * another thread is looking (see the locking note at the top). */
static void look_locked(int blocking, int at_start, int final)
{
    if (!ct_tracing_allowed)
        return;
    if (blocking ? pthread_mutex_lock(&observer) : pthread_mutex_trylock(&observer))
        return;
    int saved_errno = errno;
    atomic_fetch_and(&ct_deferred, ~(unsigned)CT_DEFER_LOOK);
    look(at_start, final);
    errno = saved_errno;
    pthread_mutex_unlock(&observer);
}

void ct_loader_observe(void)
{
    look_locked(0, 0, 0);
}

void ct_loader_view_start(void)
{
    look_locked(1, 1, 0);
}

void ct_loader_view_finish(void)
{
    look_locked(1, 0, 1);
}

void ct_loader_view_forget_in_child(void)
{
    pthread_mutex_init(&observer, NULL);
    ct_requests_forget_in_child();
    for (int i = 0; i < MAX_KNOWN; i++)
        if (known[i].used) {
            known[i].emitted = 0;
            known[i].how = CT_LIB_INHERITED;
        }
    atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
}

/*
 * The loader's view of CUDA-stack libraries under a bare LD_PRELOAD, where
 * no rtld-audit module can be set (LD_AUDIT is read only at exec). It never
 * changes what loads: dlopen is a trampoline that notes the request and
 * jumps to glibc's with the caller's return address intact
 * (dl_trampoline.S); dlclose and dlerror, which do not depend on their
 * caller, are plain wrappers. What a request led to is learnt afterwards,
 * by looking at the link map: at the next dlopen, dlclose or dlerror, at the
 * next CUDA call once a dlopen has run, and at exit. A look compares the
 * CUDA-stack objects mapped now with the ones mapped at the last look: new
 * ones are loads (answering a request by their name, or else the DT_NEEDED
 * entry of the first object that names them), missing ones unloads, and a
 * request whose object never appears failed, with the text dlerror() gave
 * the program when it asked. Seeing any of it starts the session: loading a
 * CUDA library is touching CUDA. How each file was found and where a
 * failed one was looked for is worked out by the collector from the files
 * (collector/ld_search.c), never in here.
 *
 * Locks: a look holds `observer` while it walks the link map (which takes
 * glibc's link-map lock), so nothing ever waits for `observer` but exit:
 * every other look gives up when another thread is looking, and a request
 * only takes the short `requests_busy` spin lock, under which nothing calls
 * into the loader. So no thread inside the loader can end up waiting for us.
 */
#include "preload/loader/loader_view.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload/core/clock.h"
#include "preload/cupti/api.h"
#include "preload/core/deferred.h"
#include "preload/loader/dl_real.h"
#include "preload/core/export.h"
#include "preload/core/init.h"
#include "common/library_family.h"
#include "preload/loader/main_program.h"
#include "preload/core/ring.h"
#include "preload/core/session.h"

#define MAX_REQUESTS 64
#define MAX_KNOWN 64
#define PATH_LEN 1024
#define ERROR_LEN 512

/* The strings of a request and of a known object live apart from the flags
 * every look scans, so a process that never loads a CUDA library touches
 * (and faults in) one page of these tables, not hundreds of kilobytes. */
struct request_text {
    char name[PATH_LEN];
    char caller[PATH_LEN]; /* the object that called dlopen */
    char via[PATH_LEN];    /* a dependency that failed: the name dlopen'ed */
    char error[ERROR_LEN]; /* what dlerror() told the program */
};

/* A dlopen of a CUDA-stack name that has not been seen through yet. */
struct request {
    int used, failed;
    uint32_t attempts; /* failed: identical failures folded into this one */
    int32_t tid;
    int mode;
    uint64_t ticks;
    struct request_text *text;
};

struct known_text {
    char path[PATH_LEN], soname[256], requested_as[PATH_LEN], requested_by[PATH_LEN];
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
static atomic_flag requests_busy = ATOMIC_FLAG_INIT;
static struct request requests[MAX_REQUESTS];
static struct request_text request_texts[MAX_REQUESTS];
static struct known known[MAX_KNOWN];
static struct known_text known_texts[MAX_KNOWN];
static unsigned long long seen_adds, seen_subs;
static uint64_t next_event_key;
static _Atomic uint64_t last_request_ticks;
static uintptr_t own_begin, own_end;
static pthread_once_t own_range_once = PTHREAD_ONCE_INIT;

/* The thread's latest dlopen of any name, for a dependency that fails. */
static __thread struct {
    char name[PATH_LEN];
    uintptr_t caller;
    uint64_t ticks;
} last_request CT_TLS;

static void requests_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&requests_busy, memory_order_acquire))
        sched_yield();
}

static void requests_unlock(void)
{
    atomic_flag_clear_explicit(&requests_busy, memory_order_release);
}

/* Cut to fit, on purpose: a path longer than the field keeps its start. */
static void copy(char *out, size_t size, const char *text)
{
    size_t n = text ? strnlen(text, size - 1) : 0;
    memcpy(out, text ? text : "", n);
    out[n] = '\0';
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int is_cuda_stack(const char *path)
{
    char family[64];
    return ct_library_family(path, family, sizeof family);
}

/* The main program's link-map name is empty; the audit module and the
 * report name it by its file. */
static const char *object_path(const struct dl_phdr_info *info)
{
    if (info->dlpi_name && *info->dlpi_name)
        return info->dlpi_name;
    return ct_main_program();
}

static int contains(const struct dl_phdr_info *info, uintptr_t address)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && address >= start && address < start + ph->p_memsz)
            return 1;
    }
    return 0;
}

struct address_search {
    uintptr_t address;
    char *path;
    size_t size;
    uintptr_t begin, end;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct address_search *search = data;
    if (!contains(info, search->address))
        return 0;
    copy(search->path, search->size, object_path(info));
    search->begin = search->end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD)
            continue;
        if (!search->begin || start < search->begin)
            search->begin = start;
        if (start + ph->p_memsz > search->end)
            search->end = start + ph->p_memsz;
    }
    return 1;
}

/* The path of the object that holds `address`, or "". */
static void object_containing(uintptr_t address, char *path, size_t size)
{
    struct address_search search = {address, path, size, 0, 0};
    path[0] = '\0';
    dl_iterate_phdr(find_object, &search);
}

static void find_own_range(void)
{
    char path[PATH_LEN];
    struct address_search search = {(uintptr_t)find_own_range, path, sizeof path, 0, 0};
    dl_iterate_phdr(find_object, &search);
    own_begin = search.begin;
    own_end = search.end;
}

/* Our own calls (the preload's version getters, CUPTI's dlopen of the
 * driver) are not the program's. */
static int is_own_address(uintptr_t address)
{
    pthread_once(&own_range_once, find_own_range);
    return (address >= own_begin && address < own_end) || ct_cupti_made_call((void *)address);
}

/* The string table and dynamic section of a loaded object. ld.so has
 * relocated DT_STRTAB in place on x86-64; an unrelocated value (below the
 * load address) is made absolute here. */
static const ElfW(Dyn) * dynamic_section(const struct dl_phdr_info *info, const char **strings)
{
    *strings = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_STRTAB)
                *strings =
                    (const char *)(d->d_un.d_ptr < info->dlpi_addr ? d->d_un.d_ptr + info->dlpi_addr
                                                                   : d->d_un.d_ptr);
        return *strings ? dyn : NULL;
    }
    return NULL;
}

static void read_soname(const struct dl_phdr_info *info, char *out, size_t size)
{
    const char *strings;
    out[0] = '\0';
    for (const ElfW(Dyn) *d = dynamic_section(info, &strings); d && d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_SONAME)
            copy(out, size, strings + d->d_un.d_val);
}

/* Whether an object loaded as `path` with `soname` is what a request by
 * `name` gets: glibc matches a bare name against the names an object was
 * loaded by and its SONAME, and a path against the path. */
static int answers_to(const char *name, const char *path, const char *soname)
{
    if (strchr(name, '/'))
        return strcmp(name, path) == 0;
    return strcmp(base_name(path), name) == 0 || strcmp(soname, name) == 0;
}

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
    const char *path = object_path(info);
    if (!is_cuda_stack(path))
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
    copy(k->text->path, sizeof k->text->path, path);
    read_soname(info, k->text->soname, sizeof k->text->soname);
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
    for (const ElfW(Dyn) *d = dynamic_section(info, &strings); d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag != DT_NEEDED)
            continue;
        const char *needed = strings + d->d_un.d_val;
        for (int i = 0; i < MAX_KNOWN; i++) {
            struct known *k = &known[i];
            if (k->used && !k->emitted && !*k->text->requested_by && k->order > mine &&
                answers_to(needed, k->text->path, k->text->soname)) {
                copy(k->text->requested_as, sizeof k->text->requested_as, needed);
                copy(k->text->requested_by, sizeof k->text->requested_by, object_path(info));
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
        k->ticks = atomic_load(&last_request_ticks);
        for (int r = 0; r < MAX_REQUESTS; r++) {
            struct request *q = &requests[r];
            if (q->used && !q->failed &&
                answers_to(q->text->name, k->text->path, k->text->soname)) {
                k->how = CT_LIB_BY_DLOPEN;
                k->ticks = q->ticks;
                k->tid = q->tid;
                k->mode = q->mode;
                copy(k->text->requested_as, sizeof k->text->requested_as, q->text->name);
                copy(k->text->requested_by, sizeof k->text->requested_by, q->text->caller);
                q->used = 0;
                break;
            }
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
                const char *path, const char *error, const char *via)
{
    struct ct_ring *ring = ct_session_loader_ring();
    if (!ring)
        return -1;
    uint64_t key = ++next_event_key;
    const struct {
        uint16_t kind;
        const char *text;
    } strings[] = {{CT_STR_LIB_NAME, name},
                   {CT_STR_LIB_REQUESTER, requester},
                   {CT_STR_LIB_PATH, path},
                   {CT_STR_LIB_ERROR, error},
                   {CT_STR_LIB_VIA, via}};
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
                           k->text->requested_as, k->text->requested_by, k->text->path, NULL, NULL);
    }
}

static void emit_unloads(uint64_t now)
{
    for (int i = 0; i < MAX_KNOWN; i++) {
        struct known *k = &known[i];
        if (k->used && !k->present) {
            if (k->emitted)
                emit(CT_LIB_UNLOADED, k->how, 1, now, -1, 0, k->base, k->text->requested_as, NULL,
                     k->text->path, NULL, NULL);
            k->used = 0;
        }
    }
}

/* Requests answered by an object that was there before them, and requests
 * that failed (the program read the error, or the process is ending). */
static void settle_requests(int final)
{
    for (int r = 0; r < MAX_REQUESTS; r++) {
        struct request *q = &requests[r];
        if (!q->used)
            continue;
        struct known *k = NULL;
        for (int i = 0; i < MAX_KNOWN && !q->failed; i++)
            if (known[i].used &&
                answers_to(q->text->name, known[i].text->path, known[i].text->soname))
                k = &known[i];
        if (k) {
            if (!k->already_told)
                emit(CT_LIB_LOADED, CT_LIB_ALREADY, 1, q->ticks, q->mode, q->tid, k->base,
                     q->text->name, q->text->caller, k->text->path, NULL, NULL);
            k->already_told = 1;
            q->used = 0;
        } else if (q->failed || final) {
            emit(CT_LIB_FAILED, *q->text->via ? CT_LIB_BY_NEEDED : CT_LIB_BY_DLOPEN, q->attempts,
                 q->ticks, q->mode, q->tid, 0, q->text->name, q->text->caller, NULL, q->text->error,
                 q->text->via);
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
    requests_lock();
    attribute_new_objects(at_start);
    requests_unlock();
    emit_loads();
    requests_lock();
    settle_requests(final);
    requests_unlock();
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
    atomic_flag_clear(&requests_busy);
    for (int r = 0; r < MAX_REQUESTS; r++)
        requests[r].used = 0;
    for (int i = 0; i < MAX_KNOWN; i++)
        if (known[i].used) {
            known[i].emitted = 0;
            known[i].how = CT_LIB_INHERITED;
        }
    atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
}

/* Whether `r` is a better slot to give a new request than `q`: a free one,
 * else the oldest, sparing a failure that waits to be written. */
static int better_slot(const struct request *r, const struct request *q)
{
    if (!r->used || !q->used)
        return !r->used;
    if (r->failed != q->failed)
        return !r->failed;
    return r->ticks < q->ticks;
}

/* A free slot, else the oldest unanswered request's (given up), cleared. */
static struct request *take_request(int32_t tid, int mode, uint64_t ticks)
{
    struct request *q = &requests[0];
    for (int r = 1; r < MAX_REQUESTS && q->used; r++)
        if (better_slot(&requests[r], q))
            q = &requests[r];
    *q = (struct request){.used = 1,
                          .attempts = 1,
                          .tid = tid,
                          .mode = mode,
                          .ticks = ticks,
                          .text = &request_texts[q - requests]};
    memset(q->text, 0, sizeof *q->text);
    return q;
}

static void note_request(const char *file, int mode, uintptr_t caller)
{
    uint64_t now = ct_clock_now();
    copy(last_request.name, sizeof last_request.name, file);
    last_request.caller = caller;
    last_request.ticks = now;
    atomic_store(&last_request_ticks, now);
    /* A probe with RTLD_NOLOAD loads nothing, so it cannot fail to load. */
    if (!is_cuda_stack(file) || (mode & RTLD_NOLOAD))
        return;
    char caller_path[PATH_LEN];
    object_containing(caller, caller_path, sizeof caller_path);
    requests_lock();
    struct request *q = take_request((int32_t)gettid(), mode, now);
    copy(q->text->name, sizeof q->text->name, file);
    copy(q->text->caller, sizeof q->text->caller, caller_path);
    requests_unlock();
}

static void *no_dlopen(const char *file, int mode)
{
    (void)file;
    (void)mode;
    return NULL;
}

void ct_loader_note_own_dlopen(const char *file, int mode)
{
    pthread_once(&own_range_once, find_own_range);
    note_request(file, mode, own_begin);
}

/* Called by the dlopen trampoline; returns where it jumps. */
void *ct_loader_dlopen_request(const char *file, int mode, uintptr_t caller)
{
    void *real = ct_dl_real_open_address();
    if (!real)
        return (void *)no_dlopen;
    if (!file || is_own_address(caller))
        return real;
    ct_init_once();
    if (!ct_tracing_allowed)
        return real;
    int saved_errno = errno;
    note_request(file, mode, caller);
    atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
    ct_loader_observe();
    errno = saved_errno;
    return real;
}

struct presence {
    const char *name;
    int found;
};

static int find_by_name(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct presence *p = data;
    char soname[256];
    read_soname(info, soname, sizeof soname);
    p->found = answers_to(p->name, object_path(info), soname);
    return p->found;
}

static int is_loaded(const char *name)
{
    struct presence p = {name, 0};
    dl_iterate_phdr(find_by_name, &p);
    return p.found;
}

/* A load retried in a loop fails the same way each time: one request
 * carries the count, and the slot is free again (under requests_lock). */
static void fold_into_earlier_failure(struct request *q)
{
    for (int r = 0; r < MAX_REQUESTS; r++) {
        struct request *p = &requests[r];
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
 * any name when NULL; NULL when there is none (under requests_lock). */
static struct request *latest_request_of(int32_t tid, const char *name)
{
    struct request *latest = NULL;
    for (int r = 0; r < MAX_REQUESTS; r++) {
        const struct request *q = &requests[r];
        if (q->used && !q->failed && q->tid == tid && (!latest || q->ticks > latest->ticks) &&
            (!name || strcmp(base_name(q->text->name), base_name(name)) == 0))
            latest = &requests[r];
    }
    return latest;
}

/* Gives the error to the thread's latest request by `name` (any when
 * NULL); 0 when there is none. */
static int mark_failed(int32_t tid, const char *name, const char *text)
{
    requests_lock();
    struct request *q = latest_request_of(tid, name);
    if (q) {
        q->failed = 1;
        copy(q->text->error, sizeof q->text->error, text);
        fold_into_earlier_failure(q);
    }
    requests_unlock();
    return q != NULL;
}

/* A failure of the thread's latest dlopen whose request is no longer
 * pending (it was given up for a newer one), or of a dependency of it: the
 * object that named a dependency was unmapped again, so the collector finds
 * it from the files (the dlopen'ed name, its caller). */
static void note_failed_load(const char *name, const char *text, int32_t tid)
{
    char caller_path[PATH_LEN];
    object_containing(last_request.caller, caller_path, sizeof caller_path);
    requests_lock();
    struct request *q = take_request(tid, -1, last_request.ticks);
    q->failed = 1;
    copy(q->text->name, sizeof q->text->name, name);
    copy(q->text->caller, sizeof q->text->caller, caller_path);
    if (strcmp(name, last_request.name) != 0)
        copy(q->text->via, sizeof q->text->via, last_request.name);
    copy(q->text->error, sizeof q->text->error, text);
    fold_into_earlier_failure(q);
    requests_unlock();
}

/* glibc's load errors begin with the file that failed ("NAME: cannot open
 * shared object file: ..."); an error naming an object that is loaded came
 * from something else (a dlsym). The failing file is the request itself, a
 * CUDA library it needed (or one whose request was given up), or another
 * library a CUDA request needed. */
static void note_error(const char *text)
{
    char failing[PATH_LEN], latest[PATH_LEN] = "";
    const char *colon = strstr(text, ": ");
    snprintf(failing, sizeof failing, "%.*s", colon ? (int)(colon - text) : 0, text);
    if (!*failing || is_loaded(failing))
        return;
    int32_t tid = (int32_t)gettid();
    if (!mark_failed(tid, failing, text)) {
        if (is_cuda_stack(failing) && *last_request.name) {
            note_failed_load(failing, text, tid);
        } else {
            requests_lock();
            struct request *q = latest_request_of(tid, NULL);
            if (q)
                copy(latest, sizeof latest, q->text->name);
            requests_unlock();
            if (!*latest || is_loaded(latest) || !mark_failed(tid, latest, text))
                return;
        }
    }
    atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
    ct_loader_observe();
}

CT_EXPORT char *dlerror(void)
{
    char *text = ct_dl_real_error();
    if (text && ct_tracing_allowed && !is_own_address((uintptr_t)__builtin_return_address(0))) {
        int saved_errno = errno;
        note_error(text);
        errno = saved_errno;
    }
    return text;
}

CT_EXPORT int dlclose(void *handle)
{
    ct_loader_observe(); /* what this handle's dlopen loaded, before it goes */
    int result = ct_dl_real_close(handle);
    if (ct_tracing_allowed) {
        int saved_errno = errno;
        atomic_fetch_or(&ct_deferred, CT_DEFER_LOOK);
        ct_loader_observe();
        errno = saved_errno;
    }
    return result;
}

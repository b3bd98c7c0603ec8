/*
 * A test-only interposer that counts the calls a process makes to the heap
 * and to blocking primitives: malloc, calloc, realloc, free, posix_memalign,
 * pthread_mutex_lock, pthread_rwlock_*lock and sem_wait. Preloaded ahead of
 * libcudatrace.so, it lets a test show that the tracer's per-call path makes
 * none of these calls: the counts of a run with N calls and of a run with
 * 100 N calls must be the same. It writes them as "name count" lines to
 * $CT_PROBE_OUT at exit. Heap calls are forwarded to glibc's __libc_*
 * entry points so counting never recurses through dlsym. With
 * CT_PROBE_DLOPEN_IN_MALLOC=1 it also dlopens libm from inside the first
 * malloc or calloc after start-up, the way some allocators and profilers do,
 * so a dlopen runs nested in an allocation while the program (and the
 * tracer's session start, which allocates) goes on. The counts end with
 * "dlopen_in_malloc N": how many such dlopens returned a handle.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

#define COUNTED(X)                                                                                 \
    X(malloc)                                                                                      \
    X(calloc)                                                                                      \
    X(realloc)                                                                                     \
    X(free)                                                                                        \
    X(posix_memalign)                                                                              \
    X(pthread_mutex_lock)                                                                          \
    X(pthread_rwlock_rdlock)                                                                       \
    X(pthread_rwlock_wrlock)                                                                       \
    X(sem_wait)
#define DECLARE(name) static atomic_ulong count_##name;
COUNTED(DECLARE)

static int dlopen_in_malloc = -1; /* -1: not yet read from the environment */
static int dlopened_in_malloc;    /* how many of those dlopens returned a handle */
static __thread int in_dlopen;

static void maybe_dlopen(void)
{
    if (dlopen_in_malloc == 1 && !in_dlopen) {
        in_dlopen = 1;
        dlopen_in_malloc = 0;
        dlopened_in_malloc += dlopen("libm.so.6", RTLD_NOW) != NULL;
        in_dlopen = 0;
    }
}

void *malloc(size_t size)
{
    count_malloc++;
    maybe_dlopen();
    return __libc_malloc(size);
}

__attribute__((constructor)) static void read_settings(void)
{
    const char *v = getenv("CT_PROBE_DLOPEN_IN_MALLOC");
    dlopen_in_malloc = v && v[0] == '1';
}

void *calloc(size_t n, size_t size)
{
    count_calloc++;
    maybe_dlopen();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    count_realloc++;
    return __libc_realloc(p, size);
}

void free(void *p)
{
    count_free++;
    __libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    count_posix_memalign++;
    *out = __libc_memalign(align, size);
    return *out ? 0 : 12;
}

#define FORWARD(name, type, arg)                                                                   \
    int name(type arg)                                                                             \
    {                                                                                              \
        static int (*real)(type);                                                                  \
        count_##name++;                                                                            \
        if (!real)                                                                                 \
            real = (int (*)(type))dlsym(RTLD_NEXT, #name);                                         \
        return real(arg);                                                                          \
    }
FORWARD(pthread_mutex_lock, pthread_mutex_t *, m)
FORWARD(pthread_rwlock_rdlock, pthread_rwlock_t *, l)
FORWARD(pthread_rwlock_wrlock, pthread_rwlock_t *, l)
FORWARD(sem_wait, sem_t *, s)

__attribute__((destructor)) static void write_counts(void)
{
    const char *path = getenv("CT_PROBE_OUT");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (!out)
        return;
#define PRINT(name) fprintf(out, "%s %lu\n", #name, (unsigned long)count_##name);
    COUNTED(PRINT)
    fprintf(out, "dlopen_in_malloc %d\n", dlopened_in_malloc);
    fclose(out);
}

/*
 * A process that looks, from outside, like CPython 3.12 or 3.13 running two
 * threads, for the collector's outside Python reader
 * (collector/host_sampling/python_stacks.c) on a machine that has only
 * another CPython. It exports _PyRuntime, Py_Version, PyCode_Type and
 * PyUnicode_Type (its name starts with "python", as the reader looks for)
 * and lays out, at the offsets the version's headers give, one interpreter
 * whose thread states carry the threads' real native ids, their frames
 * (the main thread's three deep; the second's under a shim entry frame the
 * C stack pushed, which Python never shows), code objects with location
 * tables and compact ASCII strings. Then the main thread makes CUDA calls
 * for STEPS steps of 10 ms while nothing moves, so every stack read gives
 * the same innermost file:line, which it prints:
 * "thread TID FILE:LINE FUNCTION".
 *
 * The offsets are written here from the headers on their own (not taken
 * from common/python_layout.c), so the test compares two readings of the
 * headers. For 3.13 the reader must follow _PyRuntime's _Py_DebugOffsets,
 * so the fields it names are placed where only that table says (the
 * interpreter's after an opaque _ceval_state).
 *
 * Usage: python_double 12|13 MODE STEPS, MODE one of: ok; moved (3.13 with
 * the thread state's and interpreter's fields elsewhere, as said in its
 * debug offsets); bad-cookie; other-version (debug offsets of 3.12 in a
 * 3.13); free-threaded; too-far (a debug offset past what the reader
 * copies); unknown (Py_Version 3.14). Exits 1 if a CUDA call failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define STEP_NS 10000000L
#define OWNED_BY_THREAD 0
#define OWNED_BY_CSTACK 3 /* FRAME_OWNED_BY_CSTACK in 3.12 and 3.13 */

_Alignas(64) unsigned char py_runtime[1024] __asm__("_PyRuntime");
_Alignas(64) unsigned char py_code_type[512] __asm__("PyCode_Type");
_Alignas(64) unsigned char py_unicode_type[512] __asm__("PyUnicode_Type");
unsigned long py_version __asm__("Py_Version");

/* Where each field is, per version (pycore_runtime.h, pycore_interp.h,
 * cpython/pystate.h, pycore_frame.h, cpython/code.h, cpython/unicodeobject.h). */
struct offsets {
    int runtime_interpreters, interp_next, interp_threads;
    int tstate_next, tstate_frame, tstate_native_id, cframe_frame;
    int frame_code, frame_previous, frame_instr, frame_owner;
    int code_firstlineno, code_filename, code_qualname, code_linetable, code_firsttraceable,
        code_bytecode;
    int str_data;
};

static const struct offsets v3_12 = {
    /* _PyRuntimeState: five ints, _finalizing, interpreters.mutex, .head */
    .runtime_interpreters = 40,
    /* _is: next first; threads.head after id, id_refcount, requires_idref,
     * id_mutex, _initialized, finalizing, monitoring_version,
     * last_restart_version, threads.next_unique_id */
    .interp_next = 0,
    .interp_threads = 72,
    /* _ts: prev, next, interp, _status, six ints, cframe; native_thread_id
     * after c_profilefunc .. thread_id */
    .tstate_next = 8,
    .tstate_frame = 56,
    .tstate_native_id = 144,
    .cframe_frame = 0, /* _PyCFrame.current_frame, first since use_tracing went */
    /* _PyInterpreterFrame: f_code, previous, f_funcobj, f_globals,
     * f_builtins, f_locals, frame_obj, prev_instr, stacktop,
     * return_offset, owner */
    .frame_code = 0,
    .frame_previous = 8,
    .frame_instr = 56,
    .frame_owner = 70,
    /* PyCodeObject */
    .code_firstlineno = 68,
    .code_filename = 112,
    .code_qualname = 128,
    .code_linetable = 136,
    .code_firsttraceable = 176,
    .code_bytecode = 192,
    .str_data = 40, /* sizeof(PyASCIIObject), without 3.11's wstr */
};

static const struct offsets v3_13 = {
    /* after the 584-byte _Py_DebugOffsets, five ints, _finalizing,
     * _finalizing_id and interpreters.mutex (a PyMutex) */
    .runtime_interpreters = 632,
    /* after struct _ceval_state, whose size is not restated here */
    .interp_next = 512,
    .interp_threads = 528,
    /* _ts: ... eval_breaker, _status, _whence, state, six ints, current_frame */
    .tstate_next = 8,
    .tstate_frame = 72,
    .tstate_native_id = 160,
    .cframe_frame = -1,
    /* _PyInterpreterFrame: f_executable, previous, ..., instr_ptr, stacktop,
     * return_offset, owner */
    .frame_code = 0,
    .frame_previous = 8,
    .frame_instr = 56,
    .frame_owner = 70,
    .code_firstlineno = 68,
    .code_filename = 112,
    .code_qualname = 128,
    .code_linetable = 136,
    .code_firsttraceable = 184, /* co_executors moved it 8 on */
    .code_bytecode = 200,
    .str_data = 40,
};

static const struct offsets *at;

static void put64(unsigned char *base, int off, uint64_t v)
{
    memcpy(base + off, &v, sizeof v);
}

static void put32(unsigned char *base, int off, uint32_t v)
{
    memcpy(base + off, &v, sizeof v);
}

/* A compact ASCII str: PyASCIIObject's length at 16, state at 32 (kind 1,
 * compact, ascii), the characters after the header. */
static unsigned char *make_str(const char *text)
{
    unsigned char *s = calloc(1, 128);
    size_t len = strlen(text);
    if (!s || len > 64)
        abort();
    put64(s, 8, (uintptr_t)py_unicode_type);
    put64(s, 16, len);
    put32(s, 32, 1u << 2 | 0x20u | 0x40u);
    memcpy(s + at->str_data, text, len);
    return s;
}

/* A location table, being written. */
struct table {
    unsigned char bytes[64];
    int size, units;
};

static void varint(struct table *t, unsigned v)
{
    for (; v >= 0x40; v >>= 6)
        t->bytes[t->size++] = (unsigned char)(0x40 | (v & 0x3f));
    t->bytes[t->size++] = (unsigned char)v;
}

static void signed_varint(struct table *t, int v)
{
    varint(t, v < 0 ? (unsigned)-v << 1 | 1 : (unsigned)v << 1);
}

/* One entry of Objects/locations.md's format: form, code units, line delta. */
enum { SHORT0 = 0, ONE_LINE1 = 11, NO_COLUMNS = 13, LONG = 14 };

static void entry(struct table *t, int form, int units, int delta)
{
    t->bytes[t->size++] = (unsigned char)(0x80 | form << 3 | (units - 1));
    t->units += units;
    if (form == SHORT0) {
        t->bytes[t->size++] = 5; /* a column */
    } else if (form == ONE_LINE1) {
        t->bytes[t->size++] = 4; /* start and end columns */
        t->bytes[t->size++] = 9;
    } else {
        signed_varint(t, delta);
        if (form == LONG) /* end line delta, columns + 1 */
            varint(t, 0), varint(t, 1), varint(t, 7);
    }
}

static unsigned char *make_bytes(const struct table *t)
{
    unsigned char *b = calloc(1, 32 + (size_t)t->size + 1);
    if (!b)
        abort();
    put64(b, 16, (uint64_t)t->size);
    memcpy(b + 32, t->bytes, (size_t)t->size);
    return b;
}

static unsigned char *make_code(const char *file, const char *function, int first_line,
                                const struct table *t)
{
    unsigned char *c = calloc(1, 512);
    if (!c)
        abort();
    put64(c, 8, (uintptr_t)py_code_type);
    put64(c, 16, (uint64_t)t->units); /* ob_size: code units */
    put32(c, at->code_firstlineno, (uint32_t)first_line);
    put64(c, at->code_filename, (uintptr_t)make_str(file));
    put64(c, at->code_qualname, (uintptr_t)make_str(function));
    put64(c, at->code_linetable, (uintptr_t)make_bytes(t));
    put32(c, at->code_firsttraceable, 0);
    return c;
}

/* Code whose `unit`-th instruction is on `line`, in one entry. */
static unsigned char *simple_code(const char *file, const char *function, int first_line, int line)
{
    struct table t = {0};
    entry(&t, NO_COLUMNS, 4, line - first_line);
    return make_code(file, function, first_line, &t);
}

/* A thread's frames, pushed upwards on its own data stack as CPython does. */
struct thread_frames {
    _Alignas(16) unsigned char stack[1024];
    _Alignas(16) unsigned char cframe[16];
    int count;
};

static unsigned char *push(struct thread_frames *f, unsigned char *code, int unit, int owner)
{
    unsigned char *frame = f->stack + 96 * f->count;
    put64(frame, at->frame_code, (uintptr_t)code);
    put64(frame, at->frame_previous, f->count ? (uintptr_t)(frame - 96) : 0);
    put64(frame, at->frame_instr, (uintptr_t)(code + at->code_bytecode + 2 * unit));
    frame[at->frame_owner] = (unsigned char)owner;
    f->count++;
    return frame;
}

static _Alignas(64) unsigned char interp[1024];
static _Alignas(64) unsigned char tstates[2][256];
static struct thread_frames frames[2];
static _Alignas(16) unsigned char none_object[16]; /* 3.13's shim executable */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long second_tid;
static int stopping;

static void set_thread(int i, long tid, unsigned char *innermost)
{
    put64(tstates[i], at->tstate_native_id, (uint64_t)tid);
    if (at->cframe_frame < 0) {
        put64(tstates[i], at->tstate_frame, (uintptr_t)innermost);
        return;
    }
    put64(frames[i].cframe, at->cframe_frame, (uintptr_t)innermost);
    put64(tstates[i], at->tstate_frame, (uintptr_t)frames[i].cframe);
}

/* The main thread: <module> → train → load_batch, whose location table
 * uses five entry forms; its instruction 6 is on line 47. */
static unsigned char *main_frames(void)
{
    const char *file = "/srv/double/train.py";
    struct table t = {0};
    entry(&t, NO_COLUMNS, 2, 1); /* units 0-1: 41 */
    entry(&t, SHORT0, 1, 0);     /* 2: 41 */
    entry(&t, ONE_LINE1, 2, 1);  /* 3-4: 42 */
    entry(&t, NO_COLUMNS, 3, 5); /* 5-7: 47 */
    entry(&t, LONG, 1, -2);      /* 8: 45 */
    push(&frames[0], simple_code(file, "<module>", 1, 60), 1, OWNED_BY_THREAD);
    push(&frames[0], simple_code(file, "train", 20, 27), 2, OWNED_BY_THREAD);
    printf("thread %ld %s:47 load_batch\n", (long)getpid(), file);
    return push(&frames[0], make_code(file, "load_batch", 40, &t), 6, OWNED_BY_THREAD);
}

/* The second thread: run → decode, under a shim entry frame (3.12's holds
 * the interpreter's trampoline code; 3.13's holds None). */
static unsigned char *second_frames(long tid)
{
    const char *file = "/srv/double/worker.py";
    push(&frames[1], simple_code(file, "run", 3, 5), 1, OWNED_BY_THREAD);
    push(&frames[1], simple_code(file, "decode", 10, 14), 3, OWNED_BY_THREAD);
    printf("thread %ld %s:14 decode\n", tid, file);
    unsigned char *shim = at == &v3_12 ? simple_code("<shim>", "<shim>", 1, 1) : none_object;
    put64(none_object, 8, (uintptr_t)&none_object); /* any type but code's */
    return push(&frames[1], shim, 0, OWNED_BY_CSTACK);
}

static void *second_thread(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    second_tid = syscall(SYS_gettid);
    pthread_cond_broadcast(&changed);
    while (!stopping)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* 3.13's _Py_DebugOffsets at _PyRuntime's start, each field a uint64_t at
 * its place in the v3.13 header's struct. */
static void debug_offsets(const char *mode)
{
    memcpy(py_runtime, strcmp(mode, "bad-cookie") == 0 ? "xdebugpz" : "xdebugpy", 8);
    put64(py_runtime, 8, strcmp(mode, "other-version") == 0 ? 0x030c04f0 : py_version);
    put64(py_runtime, 16, strcmp(mode, "free-threaded") == 0); /* free_threaded */
    put64(py_runtime, 40, (uint64_t)at->runtime_interpreters); /* runtime_state */
    put64(py_runtime, 64, (uint64_t)at->interp_next);          /* interpreter_state.next */
    put64(py_runtime, 72, (uint64_t)at->interp_threads);       /* .threads_head */
    put64(py_runtime, 152, 256);                               /* thread_state.size */
    put64(py_runtime, 168, (uint64_t)at->tstate_next);
    put64(py_runtime, 184, (uint64_t)at->tstate_frame); /* .current_frame */
    /* .native_thread_id; "too-far": past any thread state the reader copies */
    put64(py_runtime, 200, strcmp(mode, "too-far") == 0 ? 4096 : (uint64_t)at->tstate_native_id);
    put64(py_runtime, 232, (uint64_t)at->frame_previous); /* interpreter_frame */
    put64(py_runtime, 240, (uint64_t)at->frame_code);     /* .executable */
    put64(py_runtime, 248, (uint64_t)at->frame_instr);    /* .instr_ptr */
    put64(py_runtime, 264, (uint64_t)at->frame_owner);
    put64(py_runtime, 280, (uint64_t)at->code_filename); /* code_object */
    put64(py_runtime, 288, 120);                         /* .name */
    put64(py_runtime, 296, (uint64_t)at->code_qualname);
    put64(py_runtime, 304, (uint64_t)at->code_linetable);
    put64(py_runtime, 312, (uint64_t)at->code_firstlineno);
    put64(py_runtime, 344, (uint64_t)at->code_bytecode); /* .co_code_adaptive */
    put64(py_runtime, 360, 8);                           /* pyobject.ob_type */
    put64(py_runtime, 520, 16);                          /* bytes_object.ob_size */
    put64(py_runtime, 528, 32);                          /* .ob_sval */
    put64(py_runtime, 544, 32);                          /* unicode_object.state */
    put64(py_runtime, 552, 16);                          /* .length */
    put64(py_runtime, 560, (uint64_t)at->str_data);      /* .asciiobject_size */
}

/* 3.13 as a patch release might lay it out: the thread state's and the
 * interpreter's fields elsewhere than the reader's own table has them. */
static struct offsets moved(void)
{
    struct offsets m = v3_13;
    m.tstate_frame += 16;
    m.tstate_native_id += 16;
    m.interp_threads += 8;
    return m;
}

static void lay_out(const char *version, const char *mode, long tid2)
{
    static struct offsets shifted;
    int v13 = strcmp(version, "13") == 0;
    shifted = moved();
    at = !v13 ? &v3_12 : strcmp(mode, "moved") == 0 ? &shifted : &v3_13;
    py_version = !v13 ? 0x030c04f0 : strcmp(mode, "unknown") == 0 ? 0x030e00f0 : 0x030d01f0;
    set_thread(0, getpid(), main_frames());
    set_thread(1, tid2, second_frames(tid2));
    put64(tstates[1], at->tstate_next, (uintptr_t)tstates[0]); /* newest first */
    put64(interp, at->interp_threads, (uintptr_t)tstates[1]);
    put64(py_runtime, at->runtime_interpreters, (uintptr_t)interp);
    if (v13)
        debug_offsets(mode);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "12") && strcmp(argv[1], "13"))) {
        fprintf(stderr, "usage: python_double 12|13 MODE STEPS\n");
        return 2;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, second_thread, NULL))
        return 1;
    pthread_mutex_lock(&lock);
    while (!second_tid)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    lay_out(argv[1], argv[2], second_tid);

    int failures = 0;
    void *buffer = NULL;
    failures += cudaMalloc(&buffer, 4096) != cudaSuccess;
    struct timespec step = {0, STEP_NS};
    for (long i = 0, steps = atol(argv[3]); i < steps; i++) {
        nanosleep(&step, NULL);
        failures += cudaDeviceSynchronize() != cudaSuccess;
    }
    failures += cudaFree(buffer) != cudaSuccess;
    pthread_mutex_lock(&lock);
    stopping = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    return failures ? 1 : 0;
}

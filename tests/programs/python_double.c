/*
 * A process that looks, from outside, like CPython 3.9, 3.10, 3.12 or 3.13
 * running two threads, for the collector's outside Python reader
 * (collector/host_sampling/python_stacks.c) on a machine that has only
 * another CPython. It exports _PyRuntime, PyCode_Type and PyUnicode_Type
 * (its name starts with "python", as the reader looks for) and what tells
 * the version: Py_Version (3.11+), or, built with CT_PY_DOUBLE_MINOR 9 or
 * 10 (build/tests/python_double_3_9, _3_10), PyFrame_Type, PyFrame_GetCode
 * and for 3.10 Py_NewRef, the functions those versions added (built with 8,
 * a Python older than 3.9: neither; it is laid out as 3.9). It lays out,
 * at the offsets the version's headers give, one interpreter whose thread
 * states carry the threads' ids (3.12+: their native ids; 3.9/3.10: their
 * pthread_t, which points at glibc's struct pthread), their frames (the
 * main thread's three deep; the second's, from 3.12, under a shim entry
 * frame the C stack pushed, which Python never shows; 3.9/3.10 frames are
 * PyFrameObjects), code objects with the version's line tables (3.9
 * co_lnotab, 3.10 co_linetable, the location table after) and compact
 * ASCII strings. Then the main thread makes CUDA calls for STEPS steps of
 * 10 ms while nothing moves, so every stack read gives the same innermost
 * file:line, which it prints: "thread TID FILE:LINE FUNCTION".
 *
 * The offsets are written here from the headers on their own (not taken
 * from common/python_layout.c), so the test compares two readings of the
 * headers. For 3.13 the reader must follow _PyRuntime's _Py_DebugOffsets,
 * so the fields it names are placed where only that table says (the
 * interpreter's after an opaque _ceval_state).
 *
 * Usage: python_double 12|13 MODE STEPS (python_double_3_8 8, _3_9 9,
 * _3_10 10),
 * MODE one of: ok; moved (3.13 with the thread state's and interpreter's
 * fields elsewhere, as said in its debug offsets); bad-cookie;
 * other-version (debug offsets of 3.12 in a 3.13); free-threaded; too-far
 * (a debug offset past what the reader copies); unknown (Py_Version 3.14);
 * garbage-frame (the second thread's outermost frame links to an unmapped
 * address); and for 3.9/3.10: fake-pthread (the thread ids point at made
 * struct pthreads holding the tid elsewhere than glibc does, and decoys: the
 * pid in every struct, as old glibc's pid field, and in the main's alone
 * where the second's holds no thread); no-pid (made struct pthreads, none
 * holding the pid); unmapped (the second thread's pthread_t points at an
 * unmapped page). Exits 1 if a CUDA call failed.
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
#define UNMAPPED 0x1000   /* an aligned address no process maps */
#define FAKE_TID_AT 416   /* where the made struct pthreads hold the tid (glibc: 720) */

_Alignas(64) unsigned char py_runtime[1024] __asm__("_PyRuntime");
_Alignas(64) unsigned char py_code_type[512] __asm__("PyCode_Type");
_Alignas(64) unsigned char py_unicode_type[512] __asm__("PyUnicode_Type");
#ifdef CT_PY_DOUBLE_MINOR
_Alignas(64) unsigned char py_frame_type[512] __asm__("PyFrame_Type");
#if CT_PY_DOUBLE_MINOR >= 9
unsigned char py_frame_get_code[16] __asm__("PyFrame_GetCode");
#endif
#if CT_PY_DOUBLE_MINOR >= 10
unsigned char py_new_ref[16] __asm__("Py_NewRef");
#endif
static unsigned long py_version;
#else
static unsigned char py_frame_type[16]; /* frames are no objects from 3.11 */
unsigned long py_version __asm__("Py_Version");
#endif

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

/* 3.9 and 3.10 (pycore_runtime.h, pycore_interp.h, cpython/pystate.h,
 * cpython/frameobject.h, cpython/code.h, cpython/unicodeobject.h). */
static const struct offsets v3_9 = {
    /* _PyRuntimeState: four ints, _finalizing, interpreters.mutex, .head */
    .runtime_interpreters = 32,
    /* _is: next, tstate_head */
    .interp_next = 0,
    .interp_threads = 8,
    /* _ts: prev, next, interp, frame, then recursion_depth,
     * overflowed/recursion_critical, stackcheck_counter, tracing,
     * use_tracing, c_profilefunc, c_tracefunc, c_profileobj, c_traceobj,
     * curexc_type/value/traceback, exc_state (four pointers), exc_info,
     * dict, gilstate_counter, async_exc, thread_id */
    .tstate_next = 8,
    .tstate_frame = 24,
    .tstate_native_id = 176,
    .cframe_frame = -1,
    /* PyFrameObject: PyObject_VAR_HEAD, f_back, f_code, f_builtins,
     * f_globals, f_locals, f_valuestack, f_stacktop, f_trace,
     * f_trace_lines/opcodes, f_gen, f_lasti */
    .frame_code = 32,
    .frame_previous = 24,
    .frame_instr = 104,
    .frame_owner = -1,
    /* PyCodeObject: seven ints (co_firstlineno the last), co_code ..
     * co_cell2arg, co_filename, co_name, co_lnotab */
    .code_firstlineno = 40,
    .code_filename = 104,
    .code_qualname = 112,
    .code_linetable = 120,
    .code_firsttraceable = -1,
    .code_bytecode = -1,
    .str_data = 48, /* sizeof(PyASCIIObject), with its wstr */
};

/* 3.10: the same but f_stacktop gave way to an int f_stackdepth, which
 * moves f_lasti (now in code units) to 96; co_lnotab became co_linetable. */
static const struct offsets v3_10 = {
    .runtime_interpreters = 32,
    .interp_next = 0,
    .interp_threads = 8,
    .tstate_next = 8,
    .tstate_frame = 24,
    .tstate_native_id = 176, /* cframe took use_tracing's place */
    .cframe_frame = -1,
    .frame_code = 32,
    .frame_previous = 24,
    .frame_instr = 96,
    .frame_owner = -1,
    .code_firstlineno = 40,
    .code_filename = 104,
    .code_qualname = 112,
    .code_linetable = 120,
    .code_firsttraceable = -1,
    .code_bytecode = -1,
    .str_data = 48,
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
static int minor;

/* 3.9 and 3.10 frames are PyFrameObjects, with no owner byte. */
static int frames_are_objects(void)
{
    return at->frame_owner < 0;
}

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

/* A line table, being written. */
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

/* One pair of 3.9's co_lnotab or 3.10's co_linetable: a bytecode delta in
 * bytes and a line delta (3.10: -128 for no line). */
static void pair(struct table *t, int bytes, int delta)
{
    t->bytes[t->size++] = (unsigned char)bytes;
    t->bytes[t->size++] = (unsigned char)(signed char)delta;
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
    if (at->code_firsttraceable >= 0)
        put32(c, at->code_firsttraceable, 0);
    return c;
}

/* Code whose instructions 0 to 3 are on `line`, in one entry or pair. */
static unsigned char *simple_code(const char *file, const char *function, int first_line, int line)
{
    struct table t = {0};
    if (minor == 9)
        pair(&t, 0, line - first_line); /* from byte 0 on */
    else if (minor == 10)
        pair(&t, 8, line - first_line); /* bytes 0-7 */
    else
        entry(&t, NO_COLUMNS, 4, line - first_line);
    return make_code(file, function, first_line, &t);
}

/* A thread's frames: from 3.11 pushed upwards on its own data stack as
 * CPython does; before, PyFrameObjects wherever they were allocated. */
struct thread_frames {
    _Alignas(16) unsigned char stack[1024];
    _Alignas(16) unsigned char cframe[16];
    unsigned char *outermost, *innermost;
    int count;
};

static unsigned char *new_frame(struct thread_frames *f)
{
    if (!frames_are_objects())
        return f->stack + 96 * f->count;
    unsigned char *object = calloc(1, 128);
    if (!object)
        abort();
    put64(object, 8, (uintptr_t)py_frame_type);
    return object;
}

static unsigned char *push(struct thread_frames *f, unsigned char *code, int unit, int owner)
{
    unsigned char *frame = new_frame(f);
    put64(frame, at->frame_code, (uintptr_t)code);
    put64(frame, at->frame_previous, (uintptr_t)f->innermost);
    if (frames_are_objects()) { /* f_lasti: 3.9 in bytes, 3.10 in code units */
        put32(frame, at->frame_instr, (uint32_t)(minor == 9 ? 2 * unit : unit));
    } else {
        put64(frame, at->frame_instr, (uintptr_t)(code + at->code_bytecode + 2 * unit));
        frame[at->frame_owner] = (unsigned char)owner;
    }
    if (!f->count++)
        f->outermost = frame;
    return f->innermost = frame;
}

static _Alignas(64) unsigned char interp[1024];
static _Alignas(64) unsigned char tstates[2][256];
static struct thread_frames frames[2];
static _Alignas(16) unsigned char none_object[16]; /* 3.13's shim executable */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long second_tid;
static pthread_t second_pthread;
static int stopping;
/* fake-pthread's struct pthreads, main's first */
static _Alignas(64) unsigned char fake_pthreads[2][1024];

/* The thread id the state of thread `i` holds: its tid from 3.11, else its
 * pthread_t, real or, by the mode, made or unmapped. */
static uint64_t held_id(int i, long tid, const char *mode)
{
    if (!frames_are_objects()) /* 3.12, 3.13 */
        return (uint64_t)tid;
    if (strcmp(mode, "no-pid") == 0) { /* the main's struct as an exited thread's: tid 0 */
        put32(fake_pthreads[i], FAKE_TID_AT, i == 0 ? 0 : (uint32_t)tid);
        return (uintptr_t)fake_pthreads[i];
    }
    if (strcmp(mode, "fake-pthread") == 0) {
        put32(fake_pthreads[i], FAKE_TID_AT, (uint32_t)tid);
        put32(fake_pthreads[i], 64, (uint32_t)getpid()); /* as old glibc's pid field */
        if (i == 0)
            put32(fake_pthreads[i], 32, (uint32_t)getpid()); /* the second's holds 0 there */
        return (uintptr_t)fake_pthreads[i];
    }
    if (i == 1 && strcmp(mode, "unmapped") == 0)
        return UNMAPPED;
    return (uintptr_t)(i == 0 ? pthread_self() : second_pthread);
}

static void set_thread(int i, uint64_t id, unsigned char *innermost)
{
    put64(tstates[i], at->tstate_native_id, id);
    if (at->cframe_frame < 0) {
        put64(tstates[i], at->tstate_frame, (uintptr_t)innermost);
        return;
    }
    put64(frames[i].cframe, at->cframe_frame, (uintptr_t)innermost);
    put64(tstates[i], at->tstate_frame, (uintptr_t)frames[i].cframe);
}

/* load_batch's line table: its instruction 6 (byte 12) is on line 47. */
static void load_batch_lines(struct table *t)
{
    if (minor == 9) { /* from byte 0: 41; 6: 42; 10: 47; 16: 45 */
        pair(t, 0, 1);
        pair(t, 6, 1);
        pair(t, 4, 5);
        pair(t, 6, -2);
    } else if (minor == 10) { /* 0-5: 41, an empty range to 42, 6-9: none, 10-15: 47, 16-17: 45 */
        pair(t, 6, 1);
        pair(t, 0, 1);
        pair(t, 4, -128);
        pair(t, 6, 5);
        pair(t, 2, -2);
    } else {                        /* five entry forms */
        entry(t, NO_COLUMNS, 2, 1); /* units 0-1: 41 */
        entry(t, SHORT0, 1, 0);     /* 2: 41 */
        entry(t, ONE_LINE1, 2, 1);  /* 3-4: 42 */
        entry(t, NO_COLUMNS, 3, 5); /* 5-7: 47 */
        entry(t, LONG, 1, -2);      /* 8: 45 */
    }
}

/* The main thread: <module> → train → load_batch. */
static unsigned char *main_frames(void)
{
    const char *file = "/srv/double/train.py";
    struct table t = {0};
    load_batch_lines(&t);
    push(&frames[0], simple_code(file, "<module>", 1, 60), 1, OWNED_BY_THREAD);
    push(&frames[0], simple_code(file, "train", 20, 27), 2, OWNED_BY_THREAD);
    printf("thread %ld %s:47 load_batch\n", (long)getpid(), file);
    return push(&frames[0], make_code(file, "load_batch", 40, &t), 6, OWNED_BY_THREAD);
}

/* The second thread: run → decode, from 3.12 under a shim entry frame
 * (3.12's holds the interpreter's trampoline code; 3.13's holds None). */
static unsigned char *second_frames(long tid, const char *mode)
{
    const char *file = "/srv/double/worker.py";
    push(&frames[1], simple_code(file, "run", 3, 5), 1, OWNED_BY_THREAD);
    unsigned char *decode =
        push(&frames[1], simple_code(file, "decode", 10, 14), 3, OWNED_BY_THREAD);
    printf("thread %ld %s:14 decode\n", tid, file);
    if (strcmp(mode, "garbage-frame") == 0)
        put64(frames[1].outermost, at->frame_previous, UNMAPPED);
    if (frames_are_objects())
        return decode;
    unsigned char *shim = at == &v3_12 ? simple_code("<shim>", "<shim>", 1, 1) : none_object;
    put64(none_object, 8, (uintptr_t)&none_object); /* any type but code's */
    return push(&frames[1], shim, 0, OWNED_BY_CSTACK);
}

static void *second_thread(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    second_tid = syscall(SYS_gettid);
    second_pthread = pthread_self();
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

static const struct offsets *offsets_of(const char *mode)
{
    static struct offsets shifted;
    shifted = moved();
    if (minor == 13)
        return strcmp(mode, "moved") == 0 ? &shifted : &v3_13;
    return minor == 12 ? &v3_12 : minor == 10 ? &v3_10 : &v3_9;
}

static void lay_out(const char *mode, long tid2)
{
    set_thread(0, held_id(0, getpid(), mode), main_frames());
    set_thread(1, held_id(1, tid2, mode), second_frames(tid2, mode));
    put64(tstates[1], at->tstate_next, (uintptr_t)tstates[0]); /* newest first */
    put64(interp, at->interp_threads, (uintptr_t)tstates[1]);
    put64(py_runtime, at->runtime_interpreters, (uintptr_t)interp);
    fflush(stdout);
}

/* Whether this build plays 3.`minor`: 9 or 10 where it was built so,
 * 12 or 13 otherwise. */
static int plays(int wanted)
{
#ifdef CT_PY_DOUBLE_MINOR
    return wanted == CT_PY_DOUBLE_MINOR;
#else
    return wanted == 12 || wanted == 13;
#endif
}

/* What the reader looks at once, when it first finds the process (its
 * Py_Version, 3.13's debug offsets), is in a real CPython's image from the
 * start; the collector may look before main, so it is set before main. The
 * thread states, read every round, are laid out in main. */
__attribute__((constructor)) static void set_version(int argc, char **argv)
{
    minor = argc == 4 ? atoi(argv[1]) : 0;
    if (!plays(minor))
        return;
    at = offsets_of(argv[2]);
    py_version = minor == 12                       ? 0x030c04f0
                 : strcmp(argv[2], "unknown") == 0 ? 0x030e00f0
                                                   : 0x030d01f0;
    if (minor == 13)
        debug_offsets(argv[2]);
}

int main(int argc, char **argv)
{
    if (!plays(minor) || argc != 4) {
        fprintf(stderr, "usage: python_double 12|13 MODE STEPS (python_double_3_8 8, "
                        "python_double_3_9 9, python_double_3_10 10)\n");
        return 2;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, second_thread, NULL))
        return 1;
    pthread_mutex_lock(&lock);
    while (!second_tid)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    lay_out(argv[2], second_tid);

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

/*
 * The calling thread's Python stack, read straight from CPython's structures:
 * CPython 3.9 to 3.13 on x86_64, release builds with a GIL (debug and
 * free-threaded builds, and any other version, read nothing). libpython is
 * never linked: its few symbols are found with dlsym when Python is first
 * seen, and looked for again rarely, for programs that load it late. The
 * offsets are the per-version table the collector's outside reader shares
 * (common/python_layout.h); 3.13 uses the table too rather than its
 * _Py_DebugOffsets, which lack _co_firsttraceable. No GIL is needed because
 * the walk only reads, and only the calling thread's own frames, which
 * cannot change or be freed while that thread is inside our
 * hook; the code objects and strings they point to live as long as they do.
 * Since the hooks usually run without the GIL, nothing here allocates, waits
 * for a lock or touches a reference count: the only CPython functions called are
 * PyGILState_GetThisThreadState (a TLS read) and PyCode_Addr2Line (pure
 * arithmetic over the line table). That arithmetic scans the table from its
 * start and was most of a site's cost (about 230 ns of 390 on 3.11, one
 * frame deep), while a loop asks for the same line every time: the lines
 * looked up are remembered by what PyCode_Addr2Line reads, the table's
 * bytes (as a 64-bit hash), the first line and the offset, never by the
 * code object's address, which a freed code object leaves to the next. The
 * memo is the process's, held for a whole walk behind a flag no thread
 * waits on (a walk that finds it taken asks CPython), not the thread's:
 * initial-exec TLS that large would not fit the static TLS a dlopen'ed
 * tracer gets.
 */
#include "preload/sites/python_frames.h"

#include "common/python_layout.h"
#include "preload/loader/dl_real.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Frames skipped (C-stack shims, incomplete frames) count against this too,
 * so a cycle in corrupted memory ends the walk. */
#define WALK_SLACK 64
#define RETRY_EVERY 1024
#define LINE_MEMO_SLOTS 256 /* a power of two */

static struct {
    void *(*this_thread_state)(void);
    int (*addr2line)(void *code, int byte_offset);
    const void *code_type, *unicode_type, *frame_type, *bytes_type;
    const struct ct_py_layout *layout;
} py;

struct line_memo {
    uint64_t table_hash; /* 0: an empty slot */
    long offset;
    int32_t first_line, line;
};

static struct line_memo line_memo[LINE_MEMO_SLOTS];
/* Held for a walk, taken only with a test-and-set that never waits: a fork
 * while another thread held it leaves the child asking CPython every time,
 * never stuck. */
static atomic_flag line_memo_taken = ATOMIC_FLAG_INIT;

enum { PY_UNKNOWN, PY_BUSY, PY_READY, PY_ABSENT, PY_UNSUPPORTED };
static _Atomic int py_state;
/* Relaxed and racy on purpose: a lost increment only delays a retry. */
static _Atomic unsigned py_calls_absent;
static unsigned long long py_loads_seen; /* written only while PY_BUSY */

static const char *load_ptr(const char *base, int16_t off)
{
    return (const char *)ct_py_load_ptr(base, off);
}

static int aligned(const void *p)
{
    return p != NULL && ((uintptr_t)p & 7) == 0;
}

static int is_a(const char *obj, const void *type)
{
    return aligned(obj) && load_ptr(obj, CT_PY_OB_TYPE) == type;
}

static int loads_seen(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1; /* the counter is the same in every entry */
}

static unsigned long long loads_so_far(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(loads_seen, &adds);
    return adds;
}

/* A failed dlsym leaves its error for the program's next dlerror(): ours
 * must not be the one it reads. */
static int forget_lookup_error(int state)
{
    ct_dl_real_error();
    return state;
}

static int resolve(void)
{
    py.this_thread_state = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    if (py.this_thread_state == NULL)
        return forget_lookup_error(PY_ABSENT);
    const char *(*get_version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    py.addr2line = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
    py.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    py.unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    py.frame_type = dlsym(RTLD_DEFAULT, "PyFrame_Type");
    py.bytes_type = dlsym(RTLD_DEFAULT, "PyBytes_Type");
    /* Only debug builds (Py_REF_DEBUG) define it; the table holds release layouts. */
    int debug_build = dlsym(RTLD_DEFAULT, "_Py_NegativeRefcount") != NULL;
    forget_lookup_error(0);
    if (get_version == NULL || py.addr2line == NULL || py.code_type == NULL ||
        py.unicode_type == NULL || py.frame_type == NULL || py.bytes_type == NULL || debug_build)
        return PY_UNSUPPORTED;
    py.layout = ct_py_layout_for(ct_py_version_minor(get_version()));
    return py.layout != NULL ? PY_READY : PY_UNSUPPORTED;
}

/* Python may be dlopen'ed after our first look: retry once every
 * RETRY_EVERY calls, and then only when something new was loaded, since a
 * failed dlsym allocates its error message. */
static int py_ready_slow(int state)
{
    if (state == PY_ABSENT) {
        unsigned calls = atomic_load_explicit(&py_calls_absent, memory_order_relaxed) + 1;
        atomic_store_explicit(&py_calls_absent, calls, memory_order_relaxed);
        if (calls % RETRY_EVERY != 0)
            return 0;
    }
    if (state != PY_UNKNOWN && state != PY_ABSENT)
        return 0;
    if (!atomic_compare_exchange_strong(&py_state, &state, PY_BUSY))
        return 0;
    unsigned long long loads = loads_so_far();
    int found = PY_ABSENT;
    if (state == PY_UNKNOWN || loads != py_loads_seen)
        found = resolve();
    py_loads_seen = loads;
    atomic_store_explicit(&py_state, found, memory_order_release);
    return found == PY_READY;
}

static int py_ready(void)
{
    int state = atomic_load_explicit(&py_state, memory_order_acquire);
    return state == PY_READY || py_ready_slow(state);
}

/* "?" for what is no str or has no UTF-8 to hand (making it would allocate). */
static void read_str(const char *s, const char **text, size_t *len)
{
    uintptr_t at;
    if (is_a(s, py.unicode_type) && ct_py_str_text(py.layout, s, (uintptr_t)s, &at, len) == 0) {
        *text = (const char *)at;
        return;
    }
    *text = "?";
    *len = 1;
}

/* A word at a time, for speed: tables run to hundreds of bytes. Never 0. */
static uint64_t hash_table(const char *bytes, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t word = 0;
        memcpy(&word, bytes + i, len - i < 8 ? len - i : 8);
        h = (h ^ word) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h ? h : 1;
}

/* The line table's hash, or 0 when the code has none we can read. */
static uint64_t line_table_hash(const char *code)
{
    if (py.layout->code_linetable < 0)
        return 0;
    const char *table = load_ptr(code, py.layout->code_linetable);
    if (!is_a(table, py.bytes_type))
        return 0;
    long len = (long)ct_py_load_ptr(table, CT_PY_OB_SIZE);
    return len >= 0 ? hash_table(table + CT_PY_BYTES_DATA, (size_t)len) : 0;
}

/* The memo's entry for `key` (its table_hash never 0). */
static struct line_memo *memo_slot(const struct line_memo *key)
{
    uint64_t at = (key->table_hash ^ (uint64_t)key->offset * 0x9e3779b97f4a7c15ull) >> 32;
    return &line_memo[at & (LINE_MEMO_SLOTS - 1)];
}

/* The line of the instruction the frame is at; the def line when the
 * instruction is unknown, out of range or has no line. `memo`: whether
 * this walk holds the memo. */
static int frame_line(const char *frame, const char *code, int memo)
{
    int32_t first_line = ct_py_load_i32(code, py.layout->code_firstlineno);
    long offset = ct_py_instr_offset(py.layout, frame, code, (uintptr_t)code);
    if (offset < 0)
        return first_line;
    struct line_memo key = {memo ? line_table_hash(code) : 0, offset, first_line, 0};
    struct line_memo *m = key.table_hash ? memo_slot(&key) : NULL;
    if (m && m->table_hash == key.table_hash && m->offset == offset && m->first_line == first_line)
        return m->line;
    key.line = py.addr2line((void *)code, (int)offset);
    if (key.line < 0)
        key.line = first_line;
    if (m)
        *m = key;
    return key.line;
}

static const char *innermost_frame(const char *tstate)
{
    const struct ct_py_layout *l = py.layout;
    const char *p = load_ptr(tstate, l->tstate_frame);
    if (l->cframe_frame >= 0 && aligned(p))
        p = load_ptr(p, l->cframe_frame);
    return p;
}

size_t ct_python_frames(struct ct_py_frame *out, size_t max)
{
    if (max == 0 || !py_ready())
        return 0;
    const struct ct_py_layout *l = py.layout;
    const char *tstate = py.this_thread_state();
    if (!aligned(tstate))
        return 0;
    size_t n = 0, budget = 2 * max + WALK_SLACK;
    int memo = !atomic_flag_test_and_set_explicit(&line_memo_taken, memory_order_acquire);
    for (const char *frame = innermost_frame(tstate); n < max && budget-- > 0;
         frame = load_ptr(frame, l->frame_back)) {
        if (!aligned(frame) || (ct_py_frames_are_objects(l) && !is_a(frame, py.frame_type)))
            break;
        const char *code = load_ptr(frame, l->frame_code);
        if (!is_a(code, py.code_type) || !ct_py_frame_complete(l, frame, code, (uintptr_t)code))
            continue;
        struct ct_py_frame *f = &out[n++];
        read_str(load_ptr(code, l->code_filename), &f->file, &f->file_len);
        read_str(load_ptr(code, l->code_name), &f->function, &f->function_len);
        f->line = frame_line(frame, code, memo);
    }
    if (memo)
        atomic_flag_clear_explicit(&line_memo_taken, memory_order_release);
    return n;
}

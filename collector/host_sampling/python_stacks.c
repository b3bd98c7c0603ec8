/*
 * The outside Python reader. Per process (the traced one and each worker)
 * it keeps where CPython's runtime and type objects are, found once from
 * /proc/PID/maps and the ELF symbols of the first mapped python or
 * libpython that defines _PyRuntime (looked for again every RETRY_ROUNDS
 * rounds while there is none, for a program that loads Python late), and
 * each round the map from native thread id to thread state (3.9 and 3.10
 * hold a pthread_t instead: mapped through the tid its struct pthread
 * holds, at an offset found once in the process). A 3.11+ stack is read in
 * a few system calls whatever its depth (the memory under the innermost
 * frame, where most of its callers' frames lie, then all their code
 * objects at once); 3.9 and 3.10 frames are heap objects, read one by one.
 * A stack is dropped when a check fails: a misaligned pointer, a code
 * object whose type is not PyCode_Type (a 3.9/3.10 frame not PyFrame_Type),
 * or a second look at
 * the innermost frame and its code object (and the thread state's thread)
 * that differs from the first, which is a frame pushed or popped under the
 * read. The walk is bounded (WALK_MAX frames), so a cycle ends it.
 * A bad address only fails the read (EFAULT). EPERM, from Yama's
 * ptrace_scope, another uid or a seccomp profile, marks the process
 * refused and is said once.
 */
#include "collector/host_sampling/python_stacks.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "collector/elf/elf_symbols.h"
#include "collector/host_sampling/python_debug_offsets.h"
#include "collector/host_sampling/python_lines.h"
#include "common/array.h"
#include "common/python_layout.h"
#include "common/u64_map.h"

#define PROCESSES_MAX 1100
#define THREAD_STATES_MAX 4096
#define INTERPRETERS_MAX 16
#define WALK_MAX (CT_PY_STACK_MAX + 8) /* frames copied, shown or not */
#define WINDOW 8192                    /* bytes under the innermost frame read at once */
#define RETRY_ROUNDS 64
#define CODES_MAX 65536
#define TEXT_MAX 1024
#define LINES_MAX (256u << 10)
#define PTHREAD_SCAN 1024 /* bytes of a struct pthread searched for its tid (glibc x86_64: 720) */
#define PTHREAD_PEERS 8   /* thread states' structs read to find and confirm where */
#define PTHREAD_TRIES 64

enum { UNSEEN, READY, ABSENT, UNSUPPORTED, REFUSED };

struct process {
    int32_t pid;
    int state;
    uint32_t rounds;            /* since it was last looked for, while ABSENT */
    struct ct_py_layout layout; /* the table's, or 3.13's own debug offsets */
    uintptr_t runtime, code_type, unicode_type, frame_type;
    /* 3.9/3.10: where glibc's struct pthread holds the tid; 0 while unknown,
     * looked for each round until PTHREAD_TRIES rounds found none. */
    int32_t tid_in_pthread;
    uint32_t pthread_tries;
    struct ct_u64_map tstates; /* tid + 1 -> thread state */
};

static struct {
    struct ct_u64_map by_pid; /* pid + 1 -> place + 1 */
    struct process *processes;
    size_t process_count;
    struct ct_u64_map by_addr; /* code address -> place + 1 of its latest entry */
    struct ct_py_code **codes;
    size_t code_count;
    struct ct_py_stacks_status status;
} py;

static void say_once(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    if (!*py.status.reason)
        vsnprintf(py.status.reason, sizeof py.status.reason, format, args);
    va_end(args);
}

/* EPERM, whichever read met it, marks the process refused for good. */
static void note_refusal(struct process *p, ssize_t got)
{
    if (got >= 0 || errno != EPERM)
        return;
    p->state = REFUSED;
    say_once("process_vm_readv refused (%s): Yama ptrace_scope, another uid or a seccomp profile",
             strerror(EPERM));
}

/* Copies `len` bytes at `addr` of the process; 0, or -1 (EPERM marks it
 * refused). */
static int peek(struct process *p, uintptr_t addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)addr, len};
    if (!addr)
        return -1;
    ssize_t got = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
    note_refusal(p, got);
    return got == (ssize_t)len ? 0 : -1;
}

static int aligned(uintptr_t addr)
{
    return addr && (addr & 7) == 0;
}

/* The pointer at `addr`; 0 when it cannot be read or is misaligned. */
static uintptr_t peek_ptr(struct process *p, uintptr_t addr)
{
    uintptr_t v = 0;
    return peek(p, addr, &v, sizeof v) || !aligned(v) ? 0 : v;
}

/* The next python or libpython the maps list, as its path and the start
 * of its mapping at file offset 0; 0 when there is none. */
static int next_python(FILE *maps, char *path, size_t size, uintptr_t *start)
{
    char line[4096];
    while (fgets(line, sizeof line, maps)) {
        unsigned long from, offset;
        int name_at = 0;
        if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %n", &from, &offset, &name_at) < 2 || !name_at ||
            offset != 0 || line[name_at] != '/')
            continue;
        char *name = line + name_at, *base = strrchr(name, '/') + 1;
        name[strcspn(name, "\n")] = '\0';
        if (strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0) {
            snprintf(path, size, "%s", name);
            *start = from;
            return 1;
        }
    }
    return 0;
}

enum {
    SYM_RUNTIME,
    SYM_CODE_TYPE,
    SYM_UNICODE_TYPE,
    SYM_FRAME_TYPE,
    SYM_VERSION,
    SYM_DEBUG,
    SYM_NEW_REF,
    SYM_FRAME_GET_CODE,
    SYMBOLS
};
/* Py_Version came in 3.11; before it, the functions each version added
 * tell them apart: Py_NewRef 3.10, PyFrame_GetCode 3.9. */
static const char *const symbol_names[SYMBOLS] = {
    "_PyRuntime", "PyCode_Type",          "PyUnicode_Type", "PyFrame_Type",
    "Py_Version", "_Py_NegativeRefcount", "Py_NewRef",      "PyFrame_GetCode",
};

/* The load bias of the file whose first mapping starts at `start`: its
 * first PT_LOAD segment is mapped there. */
static uintptr_t load_bias(const struct ct_elf *elf, uintptr_t start)
{
    for (int i = 0; i < elf->count; i++)
        if (elf->ph[i].p_type == PT_LOAD)
            return start - (elf->ph[i].p_vaddr & ~(uint64_t)0xfff);
    return start;
}

/* Why a process whose Py_Version is `version` (release builds only) cannot
 * be read, having set its layout; NULL when it can. 3.13 and later say
 * where their fields are in the _Py_DebugOffsets at _PyRuntime's start. */
static const char *take_layout(struct process *p, unsigned long version)
{
    int minor = (int)(version >> 16 & 0xff);
    const struct ct_py_layout *known = version >> 24 == 3 ? ct_py_layout_for(minor) : NULL;
    if (!known)
        return "no layout of it is known here (3.9 to 3.13 are read)";
    p->layout = *known;
    if (minor >= 13) {
        unsigned char table[CT_PY_DEBUG_OFFSETS_READ];
        if (peek(p, p->runtime, table, sizeof table))
            return "its _Py_DebugOffsets cannot be read";
        return ct_py_debug_offsets_apply(table, version, &p->layout);
    }
    if (ct_py_frames_are_objects(known) && !p->frame_type)
        return "it exports no PyFrame_Type";
    return known->runtime_interpreters < 0
               ? "its thread states and line tables are not laid out here (3.9 to 3.13 are read)"
               : NULL;
}

/* The version of a Python without Py_Version, as Py_Version would say it
 * (a release's serial left 0); 0 before 3.9. */
static unsigned long version_before_3_11(const uint64_t *at)
{
    return at[SYM_NEW_REF] ? 0x030a0000ul : at[SYM_FRAME_GET_CODE] ? 0x03090000ul : 0;
}

/* Reads the version the runtime says it is, or tells it from the symbols
 * before 3.11, and takes its layout. */
static int take_version(struct process *p, uintptr_t bias, const uint64_t *at)
{
    unsigned long version = version_before_3_11(at);
    if (at[SYM_VERSION] && peek(p, bias + at[SYM_VERSION], &version, sizeof version))
        return p->state == REFUSED ? REFUSED : ABSENT;
    if (!version) {
        say_once("Python before 3.9 is not read from outside: its thread states and frames are "
                 "laid out otherwise");
        return UNSUPPORTED;
    }
    const char *why = at[SYM_DEBUG] ? "a debug build, laid out otherwise" : take_layout(p, version);
    if (p->state == REFUSED)
        return REFUSED;
    if (why) {
        say_once("Python %lu.%lu is not read from outside: %s", version >> 24, version >> 16 & 0xff,
                 why);
        return UNSUPPORTED;
    }
    return READY;
}

/* Finds the runtime in the files the process maps: READY, ABSENT (looked
 * for again later), UNSUPPORTED or REFUSED (for good). */
static int locate(struct process *p)
{
    char path[64], file[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)p->pid);
    FILE *maps = fopen(path, "re");
    if (!maps) {
        if (errno == EACCES || errno == EPERM) {
            say_once("cannot read the process's maps: %s", strerror(errno));
            return REFUSED;
        }
        return ABSENT;
    }
    uintptr_t start;
    int state = ABSENT;
    while (state == ABSENT && next_python(maps, file, sizeof file, &start)) {
        struct ct_elf elf;
        uint64_t at[SYMBOLS];
        if (ct_elf_open(file, &elf))
            continue;
        ct_elf_find_symbols(&elf, symbol_names, SYMBOLS, at);
        uintptr_t bias = load_bias(&elf, start);
        ct_elf_close(&elf);
        if (!at[SYM_RUNTIME] || !at[SYM_CODE_TYPE] || !at[SYM_UNICODE_TYPE])
            continue;
        p->runtime = bias + at[SYM_RUNTIME];
        p->code_type = bias + at[SYM_CODE_TYPE];
        p->unicode_type = bias + at[SYM_UNICODE_TYPE];
        p->frame_type = at[SYM_FRAME_TYPE] ? bias + at[SYM_FRAME_TYPE] : 0;
        state = take_version(p, bias, at);
    }
    fclose(maps);
    return state;
}

static struct process *process_of(int32_t pid)
{
    uint64_t *place = ct_u64_map_find(&py.by_pid, (uint64_t)(uint32_t)pid + 1);
    if (place)
        return &py.processes[*place - 1];
    if (py.process_count == PROCESSES_MAX)
        return NULL;
    py.processes = ct_array_grow(py.processes, py.process_count, sizeof *py.processes);
    struct process *p = &py.processes[py.process_count++];
    *p = (struct process){.pid = pid};
    ct_u64_map_put(&py.by_pid, (uint64_t)(uint32_t)pid + 1, py.process_count);
    return p;
}

/* Whether the process can be read now, looking for Python when due. */
static int ready(struct process *p)
{
    if (p->state == UNSEEN || (p->state == ABSENT && ++p->rounds % RETRY_ROUNDS == 0))
        p->state = locate(p);
    return p->state == READY;
}

/* The thread states of one round, with the thread id each holds. */
struct held_ids {
    size_t count;
    uintptr_t tstate[THREAD_STATES_MAX];
    unsigned long id[THREAD_STATES_MAX];
};

static void read_held_ids(struct process *p, struct held_ids *out)
{
    const struct ct_py_layout *l = &p->layout;
    uintptr_t interp = peek_ptr(p, p->runtime + (uintptr_t)l->runtime_interpreters);
    out->count = 0;
    for (int i = 0; interp && i < INTERPRETERS_MAX; i++) {
        unsigned char state[CT_PY_STATE_READ]; /* its next pointer and thread id, in one copy */
        size_t span =
            (size_t)(l->tstate_native_id > l->tstate_next ? l->tstate_native_id : l->tstate_next) +
            8;
        uintptr_t t = peek_ptr(p, interp + (uintptr_t)l->interp_threads);
        for (; aligned(t) && span <= sizeof state && out->count < THREAD_STATES_MAX &&
               peek(p, t, state, span) == 0;
             t = ct_py_load_ptr(state, l->tstate_next)) {
            out->tstate[out->count] = t;
            memcpy(&out->id[out->count++], state + l->tstate_native_id, sizeof *out->id);
        }
        interp = peek_ptr(p, interp + (uintptr_t)l->interp_next);
    }
}

/* Whether `tid` is a live thread of the process other than its main one. */
static int is_task_of(const struct process *p, int32_t tid)
{
    char path[64];
    if (tid <= 0 || tid == p->pid)
        return 0;
    snprintf(path, sizeof path, "/proc/%d/task/%d", (int)p->pid, (int)tid);
    return access(path, F_OK) == 0;
}

/* Of the offsets at which exactly one of the `n` copied structs holds the
 * pid (the main thread's tid is the pid), the one at which the most of the
 * others hold another live thread of the process; 0 when none. Reading a
 * pid field (old glibc has one beside the tid) every struct holds the pid. */
static int32_t best_tid_offset(const struct process *p, int32_t (*words)[PTHREAD_SCAN / 4],
                               size_t n)
{
    int32_t best = 0;
    size_t best_peers = 0;
    for (size_t k = 1; k < PTHREAD_SCAN / 4; k++) {
        size_t holders = 0, peers = 0;
        for (size_t i = 0; i < n; i++)
            holders += words[i][k] == p->pid;
        for (size_t i = 0; holders == 1 && i < n; i++)
            peers += is_task_of(p, words[i][k]);
        if (holders == 1 && (!best || peers > best_peers)) {
            best = (int32_t)(4 * k);
            best_peers = peers;
        }
    }
    return best;
}

/* Where glibc's struct pthread (what a pthread_t points at) holds the
 * kernel's thread id, found in the process itself rather than assumed of
 * a glibc version; 0 while not found. */
static int32_t find_tid_in_pthread(struct process *p, const struct held_ids *held)
{
    static int32_t words[PTHREAD_PEERS][PTHREAD_SCAN / 4];
    size_t n = 0;
    for (size_t i = 0; i < held->count && n < PTHREAD_PEERS; i++)
        n += aligned(held->id[i]) && peek(p, held->id[i], words[n], sizeof words[n]) == 0;
    return best_tid_offset(p, words, n);
}

/* The kernel's thread id of the thread whose pthread_t is `id`; 0 when
 * it cannot be read. */
static int32_t tid_of_pthread(struct process *p, unsigned long id)
{
    int32_t tid = 0;
    return aligned(id) && peek(p, id + (uintptr_t)p->tid_in_pthread, &tid, sizeof tid) == 0 ? tid
                                                                                            : 0;
}

/* Whether the thread ids the states hold can be mapped to the kernel's:
 * always for native ids; for pthread_t ids once the tid's place in their
 * struct pthread is found, and never once PTHREAD_TRIES rounds of thread
 * states found none. */
static int can_map(struct process *p, const struct held_ids *held)
{
    if (!ct_py_thread_id_is_pthread(&p->layout) || p->tid_in_pthread)
        return 1;
    if (!held->count)
        return 0;
    p->tid_in_pthread = find_tid_in_pthread(p, held);
    if (!p->tid_in_pthread && ++p->pthread_tries == PTHREAD_TRIES) {
        p->state = UNSUPPORTED;
        say_once("Python 3.%d is not read from outside: no struct pthread its thread states "
                 "name holds the pid (the main thread's tid) in its first %d bytes",
                 p->layout.minor, PTHREAD_SCAN);
    }
    return p->tid_in_pthread != 0;
}

static void read_thread_states(struct process *p)
{
    static struct held_ids held;
    read_held_ids(p, &held);
    if (!can_map(p, &held))
        return;
    int pthreads = ct_py_thread_id_is_pthread(&p->layout);
    for (size_t i = 0; i < held.count; i++) {
        unsigned long tid = pthreads ? (unsigned long)tid_of_pthread(p, held.id[i]) : held.id[i];
        if (tid && tid < INT32_MAX)
            ct_u64_map_put(&p->tstates, tid + 1, held.tstate[i]);
    }
}

void ct_py_stacks_round(int32_t pid)
{
    struct process *p = process_of(pid);
    if (!p || !ready(p))
        return;
    ct_u64_map_free(&p->tstates);
    read_thread_states(p);
}

/* A str's text, malloc'd and NUL-terminated; "?" where it cannot be read. */
static char *read_text(struct process *p, uintptr_t str)
{
    unsigned char head[64];
    uintptr_t text;
    size_t len;
    char *out = NULL;
    if (aligned(str) && peek(p, str, head, sizeof head) == 0 &&
        ct_py_load_ptr(head, CT_PY_OB_TYPE) == p->unicode_type &&
        ct_py_str_text(&p->layout, head, str, &text, &len) == 0 && len < TEXT_MAX) {
        if (!(out = malloc(len + 1)))
            abort();
        out[len] = '\0';
        if (peek(p, text, out, len) == 0 && !memchr(out, '\0', len))
            return out;
    }
    free(out);
    if (!(out = strdup("?")))
        abort();
    return out;
}

/* A bytes object's data, malloc'd, in *size; NULL when it cannot be read. */
static uint8_t *read_bytes(struct process *p, uintptr_t bytes, size_t *size)
{
    unsigned char head[CT_PY_BYTES_DATA];
    long n;
    if (!aligned(bytes) || peek(p, bytes, head, sizeof head))
        return NULL;
    memcpy(&n, head + CT_PY_OB_SIZE, sizeof n);
    uint8_t *data = n > 0 && n < (long)LINES_MAX ? malloc((size_t)n) : NULL;
    if (data && peek(p, bytes + CT_PY_BYTES_DATA, data, (size_t)n)) {
        free(data);
        return NULL;
    }
    *size = data ? (size_t)n : 0;
    return data;
}

/* Whether a cached entry is the code object just copied: one freed and
 * its address taken again has other strings and another table. */
static int same_code(const struct ct_py_code *c, const struct ct_py_layout *l, const void *copy)
{
    return c->filename == ct_py_load_ptr(copy, l->code_filename) &&
           c->name == ct_py_load_ptr(copy, l->code_name) &&
           c->linetable == ct_py_load_ptr(copy, l->code_linetable) &&
           c->first_line == ct_py_load_i32(copy, l->code_firstlineno);
}

/* The entry of the code object copied from `addr`, made when new; NULL
 * when the cache is full. Entries are never changed or freed before the
 * end, since events the writer has yet to write point at them. */
static const struct ct_py_code *code_entry(struct process *p, uintptr_t addr, const void *copy)
{
    const struct ct_py_layout *l = &p->layout;
    uint64_t *place = ct_u64_map_find(&py.by_addr, addr);
    if (place && same_code(py.codes[*place - 1], l, copy))
        return py.codes[*place - 1];
    if (py.code_count == CODES_MAX)
        return NULL;
    struct ct_py_code *c = malloc(sizeof *c);
    if (!c)
        abort();
    *c = (struct ct_py_code){
        .addr = addr,
        .filename = ct_py_load_ptr(copy, l->code_filename),
        .name = ct_py_load_ptr(copy, l->code_name),
        .linetable = ct_py_load_ptr(copy, l->code_linetable),
        .first_line = ct_py_load_i32(copy, l->code_firstlineno),
    };
    c->file = read_text(p, c->filename);
    c->function = read_text(p, c->name);
    c->lines = read_bytes(p, c->linetable, &c->lines_size);
    py.codes = ct_array_grow(py.codes, py.code_count, sizeof *py.codes);
    py.codes[py.code_count++] = c;
    ct_u64_map_put(&py.by_addr, addr, py.code_count);
    return c;
}

/* The innermost frame, its code object and the thread the state is of,
 * read before the walk and after it: a frame popped and another pushed in
 * its place has, nearly always, another code object. (The instruction is
 * left out: a running thread's moves between any two reads.) The thread is
 * the id the state holds and the kernel's tid: the same number, or (3.9,
 * 3.10) a pthread_t and the tid its struct pthread holds, which tells a
 * struct taken over by a new thread from the one that left it. */
struct anchor {
    uintptr_t cframe, frame, code;
    unsigned long held, tid;
};

/* How much of a thread state the anchor reads: its frame pointer and its
 * thread id, in one copy. */
static size_t state_span(const struct ct_py_layout *l)
{
    int16_t end = l->tstate_native_id > l->tstate_frame ? l->tstate_native_id : l->tstate_frame;
    return (size_t)end + 8;
}

static void anchor_from_state(const struct ct_py_layout *l, const unsigned char *state,
                              struct anchor *a)
{
    a->cframe = ct_py_load_ptr(state, l->tstate_frame);
    memcpy(&a->held, state + l->tstate_native_id, sizeof a->held);
    a->tid = a->held;
}

/* Up to three dependent reads: the thread state, where its frame pointer
 * points (3.11 and 3.12 reach the frame through a _PyCFrame; the others'
 * thread state points at it) and the frame's code; a fourth for the tid
 * a pthread_t's struct holds. */
static int read_anchor(struct process *p, uintptr_t tstate, struct anchor *a)
{
    const struct ct_py_layout *l = &p->layout;
    unsigned char state[CT_PY_STATE_READ];
    if (state_span(l) > sizeof state || peek(p, tstate, state, state_span(l)))
        return -1;
    anchor_from_state(l, state, a);
    if (ct_py_thread_id_is_pthread(l))
        a->tid = (unsigned long)tid_of_pthread(p, a->held);
    if (l->cframe_frame >= 0 && !aligned(a->cframe))
        return -1;
    a->frame =
        l->cframe_frame < 0 ? a->cframe : peek_ptr(p, a->cframe + (uintptr_t)l->cframe_frame);
    a->code = a->frame ? peek_ptr(p, a->frame + (uintptr_t)l->frame_code) : 0;
    return 0;
}

/* The second look, in one system call: the same places as the first look
 * found them, which must hold the same. */
static int same_anchor(struct process *p, uintptr_t tstate, const struct anchor *before)
{
    const struct ct_py_layout *l = &p->layout;
    unsigned char state[CT_PY_STATE_READ];
    struct anchor after = {0};
    int32_t tid = 0;
    struct iovec local[4] = {{state, state_span(l)}}, remote[4] = {{(void *)tstate, state_span(l)}};
    unsigned long count = 1;
    size_t want = state_span(l);
    if (l->cframe_frame >= 0) {
        local[count] = (struct iovec){&after.frame, sizeof after.frame};
        remote[count++] = (struct iovec){(void *)(before->cframe + (uintptr_t)l->cframe_frame), 8};
        want += 8;
    }
    if (before->frame) {
        local[count] = (struct iovec){&after.code, sizeof after.code};
        remote[count++] = (struct iovec){(void *)(before->frame + (uintptr_t)l->frame_code), 8};
        want += 8;
    }
    if (ct_py_thread_id_is_pthread(l)) {
        local[count] = (struct iovec){&tid, sizeof tid};
        remote[count++] = (struct iovec){(void *)(before->held + (uintptr_t)p->tid_in_pthread), 4};
        want += 4;
    }
    ssize_t got = process_vm_readv(p->pid, local, count, remote, count, 0);
    note_refusal(p, got);
    if (got != (ssize_t)want)
        return 0;
    anchor_from_state(l, state, &after);
    if (ct_py_thread_id_is_pthread(l))
        after.tid = (unsigned long)tid;
    if (l->cframe_frame < 0)
        after.frame = after.cframe;
    return memcmp(before, &after, sizeof after) == 0;
}

/* How much of a frame the walk reads: up to its last field used. */
static size_t frame_span(const struct ct_py_layout *l)
{
    int16_t end = l->frame_owner + 1;
    const int16_t pointers[] = {l->frame_back, l->frame_code, l->frame_instr};
    for (int i = 0; i < 3; i++)
        if (pointers[i] + 8 > end)
            end = (int16_t)(pointers[i] + 8);
    return (size_t)end;
}

/* The memory below the innermost frame, copied in one read: a thread's
 * frames are pushed upwards on its data stack, so most of the frames
 * under it lie there. Frames elsewhere (a generator's, an older chunk's)
 * are read one by one. */
struct below {
    uintptr_t base;
    size_t len;
    unsigned char bytes[WINDOW];
};

static void read_below(struct process *p, uintptr_t frame, size_t span, struct below *w)
{
    uintptr_t end = frame + span, page = frame & ~(uintptr_t)4095;
    w->len = 0;
    w->base = end > WINDOW ? end - WINDOW : 0;
    if (peek(p, w->base, w->bytes, end - w->base) == 0) {
        w->len = end - w->base;
        return;
    }
    w->base = page; /* the frame's own page, at least, is mapped */
    if (peek(p, page, w->bytes, end - page) == 0)
        w->len = end - page;
}

static int frame_copy(struct process *p, const struct below *w, uintptr_t frame, size_t span,
                      unsigned char *out)
{
    if (frame >= w->base && frame - w->base + span <= w->len) {
        memcpy(out, w->bytes + (frame - w->base), span);
        return 0;
    }
    return peek(p, frame, out, span);
}

/* How much of a code object the walk reads: up to its bytecode where the
 * frame points into it (3.11+), else up to its last field used. */
static size_t code_span(const struct ct_py_layout *l)
{
    if (l->code_bytecode > 0)
        return (size_t)l->code_bytecode;
    int16_t end = (int16_t)(l->code_firstlineno + 4);
    const int16_t pointers[] = {l->code_filename, l->code_name, l->code_linetable};
    for (int i = 0; i < 3; i++)
        if (pointers[i] + 8 > end)
            end = (int16_t)(pointers[i] + 8);
    return (size_t)end;
}

/* The code objects of the frames that are not shims (whose executable, in
 * 3.13, is not even a code object), each copied whole, in one system call;
 * -1 when any of them cannot be read. */
static int read_codes(struct process *p, unsigned char (*frames)[CT_PY_FRAME_READ],
                      const uintptr_t *addrs, int n, unsigned char (*codes)[CT_PY_CODE_READ])
{
    struct iovec local[WALK_MAX], remote[WALK_MAX];
    size_t len = code_span(&p->layout);
    unsigned long count = 0;
    for (int i = 0; i < n; i++)
        if (!ct_py_frame_is_shim(&p->layout, frames[i])) {
            local[count] = (struct iovec){codes[i], len};
            remote[count++] = (struct iovec){(void *)addrs[i], len};
        }
    ssize_t got = count ? process_vm_readv(p->pid, local, count, remote, count, 0) : 0;
    note_refusal(p, got);
    return got == (ssize_t)(len * count) ? 0 : -1;
}

/* Adds the frame to the stack if Python would show it; -1 when the frame
 * is no frame of a live code object. */
static int add_frame(struct process *p, const void *frame, uintptr_t addr, const void *code,
                     struct ct_py_stack *out)
{
    const struct ct_py_layout *l = &p->layout;
    if (ct_py_frame_is_shim(l, frame))
        return 0;
    if (ct_py_load_ptr(code, CT_PY_OB_TYPE) != p->code_type)
        return -1;
    if (!ct_py_frame_complete(l, frame, code, addr))
        return 0;
    const struct ct_py_code *c = code_entry(p, addr, code);
    if (!c)
        return -1;
    long offset = ct_py_instr_offset(l, frame, code, addr);
    int line = offset >= 0 && c->lines ? ct_py_line_at(ct_py_line_format_of(l->minor), c->lines,
                                                       c->lines_size, c->first_line, offset)
                                       : -1;
    out->frames[out->depth].code = c;
    out->frames[out->depth++].line = line >= 0 ? line : c->first_line;
    return 0;
}

/* Copies up to WALK_MAX frames from the innermost (deeper ones are not
 * kept anyway), then their code objects, then keeps those Python would
 * show. A few system calls whatever the depth. */
static int walk(struct process *p, uintptr_t frame, struct ct_py_stack *out)
{
    static struct below below;
    static unsigned char frames[WALK_MAX][CT_PY_FRAME_READ], codes[WALK_MAX][CT_PY_CODE_READ];
    const struct ct_py_layout *l = &p->layout;
    size_t span = frame_span(l);
    uintptr_t addrs[WALK_MAX];
    int n = 0;
    out->depth = 0;
    if (!frame)
        return 0;
    below.len = 0; /* frames that are objects lie wherever they were allocated */
    if (!ct_py_frames_are_objects(l))
        read_below(p, frame, span, &below);
    for (; frame && n < WALK_MAX; frame = ct_py_load_ptr(frames[n - 1], l->frame_back)) {
        if (!aligned(frame) || frame_copy(p, &below, frame, span, frames[n]))
            return -1;
        if (ct_py_frames_are_objects(l) &&
            ct_py_load_ptr(frames[n], CT_PY_OB_TYPE) != p->frame_type)
            return -1;
        addrs[n] = ct_py_load_ptr(frames[n], l->frame_code);
        if (!aligned(addrs[n++]))
            return -1;
    }
    if (read_codes(p, frames, addrs, n, codes))
        return -1;
    for (int i = 0; i < n && out->depth < CT_PY_STACK_MAX; i++)
        if (add_frame(p, frames[i], addrs[i], codes[i], out))
            return -1;
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int ct_py_stacks_read(int32_t pid, int32_t tid, struct ct_py_stack *out)
{
    struct process *p = process_of(pid);
    uint64_t *tstate =
        p && p->state == READY ? ct_u64_map_find(&p->tstates, (uint64_t)(uint32_t)tid + 1) : NULL;
    if (!tstate)
        return -1;
    uint64_t start = now_ns();
    struct anchor before;
    int bad = read_anchor(p, *tstate, &before) || before.tid != (unsigned long)tid ||
              walk(p, before.frame, out) || !same_anchor(p, *tstate, &before);
    py.status.read_ns += now_ns() - start;
    if (bad)
        out->depth = 0;
    if (bad && p->state == READY)
        py.status.raced++;
    else if (!bad && out->depth) /* a thread in no Python frame has no stack */
        py.status.stacks++;
    return bad ? -1 : 0;
}

void ct_py_stacks_forget(int32_t pid)
{
    uint64_t place;
    if (!ct_u64_map_remove(&py.by_pid, (uint64_t)(uint32_t)pid + 1, &place))
        return;
    struct process *gone = &py.processes[place - 1];
    ct_u64_map_free(&gone->tstates);
    *gone = py.processes[--py.process_count];
    if (place - 1 < py.process_count)
        ct_u64_map_put(&py.by_pid, (uint64_t)(uint32_t)gone->pid + 1, place);
}

void ct_py_stacks_status(struct ct_py_stacks_status *out)
{
    *out = py.status;
}

void ct_py_stacks_free(void)
{
    for (size_t i = 0; i < py.process_count; i++)
        ct_u64_map_free(&py.processes[i].tstates);
    for (size_t i = 0; i < py.code_count; i++) {
        free(py.codes[i]->file);
        free(py.codes[i]->function);
        free(py.codes[i]->lines);
        free(py.codes[i]);
    }
    free(py.processes);
    free(py.codes);
    ct_u64_map_free(&py.by_pid);
    ct_u64_map_free(&py.by_addr);
    memset(&py, 0, sizeof py);
}

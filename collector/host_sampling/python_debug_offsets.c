/*
 * 3.13's _Py_DebugOffsets as Include/internal/pycore_runtime.h of v3.13
 * declares it: every field a uint64_t, grouped per structure, each group
 * led by the structure's size. Written here field for field, since the
 * reader must skip the groups it does not use to reach the ones it does.
 * What the layout takes from it: the runtime's interpreters head, the
 * interpreter's next and threads head, the thread state's next,
 * current_frame and native_thread_id, the frame's previous, executable,
 * instr_ptr and owner, the code object's filename, qualname, linetable,
 * firstlineno and co_code_adaptive, and the compact ASCII str's header
 * size. The rest (the owner values, _co_firsttraceable, the utf8 pointer)
 * stays the table's.
 */
#include "collector/host_sampling/python_debug_offsets.h"

#include <stdint.h>
#include <string.h>

#define COOKIE "xdebugpy"

struct debug_offsets_3_13 {
    char cookie[8];
    uint64_t version, free_threaded;
    struct {
        uint64_t size, finalizing, interpreters_head;
    } runtime_state;
    struct {
        uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
            gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
            gil_runtime_state_holder;
    } interpreter_state;
    struct {
        uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
            datastack_chunk, status;
    } thread_state;
    struct {
        uint64_t size, previous, executable, instr_ptr, localsplus, owner;
    } interpreter_frame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
            localspluskinds, co_code_adaptive;
    } code_object;
    struct {
        uint64_t size, ob_type;
    } pyobject;
    struct {
        uint64_t size, tp_name, tp_repr, tp_flags;
    } type_object;
    struct {
        uint64_t size, ob_item, ob_size;
    } tuple_object, list_object;
    struct {
        uint64_t size, ma_keys, ma_values;
    } dict_object;
    struct {
        uint64_t size, ob_fval;
    } float_object;
    struct {
        uint64_t size, lv_tag, ob_digit;
    } long_object;
    struct {
        uint64_t size, ob_size, ob_sval;
    } bytes_object;
    struct {
        uint64_t size, state, length, asciiobject_size;
    } unicode_object;
    struct {
        uint64_t size, collecting;
    } gc;
};

_Static_assert(sizeof(struct debug_offsets_3_13) == CT_PY_DEBUG_OFFSETS_READ,
               "the copy holds the whole table");

/* Whether every offset leaves room for the 8 bytes read there in a copy
 * of `copied` bytes. */
static int fit(const uint64_t *offsets, int count, uint64_t copied)
{
    for (int i = 0; i < count; i++)
        if (offsets[i] + 8 > copied)
            return 0;
    return 1;
}

/* Whether the offsets fit the reader's copies of a thread state, frame
 * and code object, and the int16 fields of the layout. */
static int fits_copies(const struct debug_offsets_3_13 *d, const struct ct_py_layout *l)
{
    const uint64_t state[] = {d->thread_state.next, d->thread_state.current_frame,
                              d->thread_state.native_thread_id};
    const uint64_t frame[] = {d->interpreter_frame.previous, d->interpreter_frame.executable,
                              d->interpreter_frame.instr_ptr, d->interpreter_frame.owner};
    const uint64_t code[] = {d->code_object.filename, d->code_object.qualname,
                             d->code_object.linetable, d->code_object.firstlineno,
                             (uint64_t)l->code_firsttraceable};
    const uint64_t anywhere[] = {d->runtime_state.interpreters_head, d->interpreter_state.next,
                                 d->interpreter_state.threads_head,
                                 d->unicode_object.asciiobject_size};
    uint64_t bytecode = d->code_object.co_code_adaptive;
    return fit(state, 3, CT_PY_STATE_READ) && fit(frame, 4, CT_PY_FRAME_READ) &&
           bytecode <= CT_PY_CODE_READ && fit(code, 5, bytecode) && fit(anywhere, 4, INT16_MAX);
}

/* Whether the object headers the reader assumes in every version are
 * where the table says. */
static int same_headers(const struct debug_offsets_3_13 *d)
{
    return d->pyobject.ob_type == CT_PY_OB_TYPE && d->bytes_object.ob_size == CT_PY_OB_SIZE &&
           d->bytes_object.ob_sval == CT_PY_BYTES_DATA &&
           d->unicode_object.length == CT_PY_STR_LENGTH &&
           d->unicode_object.state == CT_PY_STR_STATE;
}

static void take(const struct debug_offsets_3_13 *d, struct ct_py_layout *l)
{
    l->runtime_interpreters = (int16_t)d->runtime_state.interpreters_head;
    l->interp_next = (int16_t)d->interpreter_state.next;
    l->interp_threads = (int16_t)d->interpreter_state.threads_head;
    l->tstate_next = (int16_t)d->thread_state.next;
    l->tstate_frame = (int16_t)d->thread_state.current_frame;
    l->cframe_frame = -1;
    l->tstate_native_id = (int16_t)d->thread_state.native_thread_id;
    l->frame_back = (int16_t)d->interpreter_frame.previous;
    l->frame_code = (int16_t)d->interpreter_frame.executable;
    l->frame_instr = (int16_t)d->interpreter_frame.instr_ptr;
    l->frame_owner = (int16_t)d->interpreter_frame.owner;
    l->code_filename = (int16_t)d->code_object.filename;
    l->code_name = (int16_t)d->code_object.qualname;
    l->code_linetable = (int16_t)d->code_object.linetable;
    l->code_firstlineno = (int16_t)d->code_object.firstlineno;
    l->code_bytecode = (int16_t)d->code_object.co_code_adaptive;
    l->str_ascii_data = (int16_t)d->unicode_object.asciiobject_size;
}

const char *ct_py_debug_offsets_apply(const unsigned char *table, unsigned long py_version,
                                      struct ct_py_layout *l)
{
    struct debug_offsets_3_13 d;
    memcpy(&d, table, sizeof d);
    if (memcmp(d.cookie, COOKIE, sizeof d.cookie) != 0)
        return "_PyRuntime does not start with the \"" COOKIE "\" debug offsets";
    if (d.version >> 16 != py_version >> 16)
        return "its debug offsets are of another version than its Py_Version";
    if (d.free_threaded)
        return "a free-threaded build";
    if (!same_headers(&d))
        return "its debug offsets place the object headers elsewhere";
    if (!fits_copies(&d, l))
        return "its debug offsets reach past what this reader copies";
    take(&d, l);
    return NULL;
}

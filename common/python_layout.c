/*
 * The per-version table of CPython's layouts and the arithmetic on copied
 * frames, code objects and strings that both Python readers share (see
 * python_layout.h). 3.9 to 3.12 are read from outside with the runtime,
 * interpreter and thread-state offsets written here from their headers;
 * 3.13 with its entry as the defaults, overridden by the offsets its own
 * _PyRuntime.debug_offsets (_Py_DebugOffsets) says
 * (collector/host_sampling/python_stacks.c). 3.9 and 3.10 keep their lines
 * in other formats (co_lnotab, the 3.10 linetable: python_lines.c), have no
 * Py_Version (the reader tells them apart by the functions each added),
 * and their thread states hold only thread_id, a pthread_t, which the
 * reader maps to the kernel's thread id through glibc's struct pthread.
 * 3.9, 3.10, 3.12 and 3.13 were checked against a double laid out from
 * their headers (tests/programs/python_double.c), not against a running
 * interpreter.
 */
#include "common/python_layout.h"

#include <string.h>

/* 3.9 and 3.10, outside: _PyRuntimeState.interpreters.head 32 (four ints,
 * _finalizing, the mutex); PyInterpreterState.next 0 and .tstate_head 8;
 * PyThreadState.next 8 and .thread_id 176 (after the frame 24, four ints,
 * 3.9's use_tracing or 3.10's cframe 48, the four tracing fields, the three
 * curexc ones, a four-pointer exc_state 112, exc_info, dict,
 * gilstate_counter, async_exc); PyCodeObject.co_lnotab (3.9) or
 * co_linetable (3.10) 120, after co_name 112. */
#define OUTSIDE_3_9 32, 0, 8, 8, 176, 120

static const struct ct_py_layout layouts[] = {
    {9, 24, -1, 24, 32, 104, -1, CT_PY_LASTI_BYTES, -1, -1, 104, 112, 40, -1, -1, 48, 56,
     OUTSIDE_3_9},
    {10, 24, -1, 24, 32, 96, -1, CT_PY_LASTI_UNITS, -1, -1, 104, 112, 40, -1, -1, 48, 56,
     OUTSIDE_3_9},
    {11, 56, 8, 48, 32, 56,  69, CT_PY_INSTR_POINTER, 1, -1, 112, 128, 72, 168, 184, 48,
     56, 40, 0, 16, 8,  160, 136},
    /* 3.12, outside: _PyRuntimeState.interpreters.head 40 (five ints, the
     * _finalizing address, the mutex); PyInterpreterState.next 0 and
     * .threads.head 72 (after id, id_refcount, requires_idref, id_mutex,
     * _initialized, finalizing, monitoring_version, last_restart_version,
     * threads.next_unique_id); PyThreadState.next 8 and .native_thread_id
     * 144 (cframe 56, then four tracing fields, current_exception,
     * exc_info, dict, gilstate_counter, async_exc, thread_id);
     * PyCodeObject.co_linetable 136 (after co_qualname 128). */
    {12, 56, 0, 8,  0, 56,  70, CT_PY_INSTR_POINTER, 1, 3, 112, 128, 68, 176, 192, 40,
     48, 40, 0, 72, 8, 144, 136},
    /* 3.13, outside: the offsets come from the target's own
     * _Py_DebugOffsets, which also replace the frame, code and str ones
     * above where it gives them; co_linetable 136 (after co_qualname 128,
     * as in 3.12) is for the preload's line memo. */
    {13, 72, -1, 8, 0, 56, 70, CT_PY_INSTR_POINTER, 1, 3, 112, 128, 68, 184, 200, 40, 48, -1, -1,
     -1, -1, -1, 136},
};

const struct ct_py_layout *ct_py_layout_for(int minor)
{
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].minor == minor)
            return &layouts[i];
    return NULL;
}

int ct_py_thread_id_is_pthread(const struct ct_py_layout *l)
{
    return l->minor < 11;
}

int ct_py_frames_are_objects(const struct ct_py_layout *l)
{
    return l->instr_mode != CT_PY_INSTR_POINTER;
}

int ct_py_version_minor(const char *version)
{
    if (version == NULL || version[0] != '3' || version[1] != '.')
        return -1;
    int minor = 0;
    const char *p = version + 2;
    for (; *p >= '0' && *p <= '9'; p++)
        minor = minor * 10 + (*p - '0');
    while (*p != '\0' && *p != ' ')
        p++;
    return p[0] == ' ' && p[1] == '(' ? minor : -1;
}

uintptr_t ct_py_load_ptr(const void *base, int16_t off)
{
    uintptr_t p;
    memcpy(&p, (const char *)base + off, sizeof p);
    return p;
}

int32_t ct_py_load_i32(const void *base, int16_t off)
{
    int32_t v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

long ct_py_instr_offset(const struct ct_py_layout *l, const void *frame, const void *code,
                        uintptr_t code_addr)
{
    if (l->instr_mode == CT_PY_INSTR_POINTER) {
        intptr_t units = ((intptr_t)ct_py_load_ptr(frame, l->frame_instr) -
                          (intptr_t)(code_addr + (uintptr_t)l->code_bytecode)) /
                         2;
        long size;
        memcpy(&size, (const char *)code + CT_PY_OB_SIZE, sizeof size);
        return units >= 0 && units < size ? units * 2 : -1;
    }
    long offset = ct_py_load_i32(frame, l->frame_instr);
    if (l->instr_mode == CT_PY_LASTI_UNITS && offset >= 0)
        offset *= 2;
    return offset;
}

int ct_py_frame_is_shim(const struct ct_py_layout *l, const void *frame)
{
    return l->frame_owner >= 0 && l->owner_cstack >= 0 &&
           ((const int8_t *)frame)[l->frame_owner] == l->owner_cstack;
}

int ct_py_frame_complete(const struct ct_py_layout *l, const void *frame, const void *code,
                         uintptr_t code_addr)
{
    if (l->frame_owner < 0)
        return 1;
    int8_t owner = ((const int8_t *)frame)[l->frame_owner];
    if (ct_py_frame_is_shim(l, frame))
        return 0;
    uintptr_t first = code_addr + (uintptr_t)l->code_bytecode +
                      2 * (uintptr_t)ct_py_load_i32(code, l->code_firsttraceable);
    return owner == l->owner_generator || ct_py_load_ptr(frame, l->frame_instr) >= first;
}

int ct_py_str_text(const struct ct_py_layout *l, const void *str, uintptr_t str_addr,
                   uintptr_t *text, size_t *len)
{
    uint32_t state = (uint32_t)ct_py_load_i32(str, CT_PY_STR_STATE);
    if ((state & (CT_PY_STR_COMPACT | CT_PY_STR_ASCII)) == (CT_PY_STR_COMPACT | CT_PY_STR_ASCII)) {
        *text = str_addr + (uintptr_t)l->str_ascii_data;
        memcpy(len, (const char *)str + CT_PY_STR_LENGTH, sizeof *len);
        return 0;
    }
    *text = ct_py_load_ptr(str, l->str_utf8);
    memcpy(len, (const char *)str + l->str_utf8 - 8, sizeof *len); /* utf8_length precedes utf8 */
    return *text ? 0 : -1;
}

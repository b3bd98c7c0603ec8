/*
 * CPython's structures as a reader of its frames sees them, on x86_64 release
 * builds with a GIL: one entry per minor version, written down from
 * offsetof() against each version's own headers (the internal ones, with
 * Py_BUILD_CORE). Two readers use it: the preload, which walks the calling
 * thread's frames in its own memory (preload/sites/python_frames.c), and the
 * collector, which walks any thread's from outside with process_vm_readv
 * (collector/host_sampling/python_stacks.c) and so also needs the way from
 * _PyRuntime to the thread states and the code object's line table. The
 * helpers here work on a copy of a frame or code object and the address it
 * was copied from, so both readers share them.
 */
#ifndef CT_COMMON_PYTHON_LAYOUT_H
#define CT_COMMON_PYTHON_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* How the frame says which instruction it is at. */
enum ct_py_instr_mode {
    CT_PY_LASTI_BYTES,  /* 3.9: int f_lasti, a byte offset */
    CT_PY_LASTI_UNITS,  /* 3.10: int f_lasti, in 2-byte code units */
    CT_PY_INSTR_POINTER /* 3.11+: a pointer into the code object's bytecode */
};

struct ct_py_layout {
    int minor;
    /* tstate → the innermost frame, or → a _PyCFrame when cframe_frame >= 0. */
    int16_t tstate_frame, cframe_frame;
    int16_t frame_back, frame_code, frame_instr, frame_owner;
    int8_t instr_mode, owner_generator, owner_cstack; /* owner_cstack < 0: none */
    /* code_name is co_qualname where the version has it. */
    int16_t code_filename, code_name, code_firstlineno, code_firsttraceable, code_bytecode;
    /* sizeof(PyASCIIObject), offsetof(PyCompactUnicodeObject, utf8) */
    int16_t str_ascii_data, str_utf8;
    /* For the outside reader (-1: not in the table; 3.13 takes them from
     * its _Py_DebugOffsets): _PyRuntime.interpreters.head,
     * PyInterpreterState.next and .threads.head (3.9/3.10: tstate_head),
     * PyThreadState.next and .native_thread_id (3.9/3.10: thread_id, a
     * pthread_t, see ct_py_thread_id_is_pthread), and co_linetable (3.9:
     * co_lnotab), a bytes object in the version's line-table format, which
     * the preload's line memo reads too: every version's, 3.13's included,
     * is in the table. */
    int16_t runtime_interpreters, interp_next, interp_threads;
    int16_t tstate_next, tstate_native_id, code_linetable;
};

/* The same in every supported version: PyObject/PyVarObject, the
 * PyASCIIObject length and state bit-field, and PyBytesObject's data. */
#define CT_PY_OB_TYPE 8
#define CT_PY_OB_SIZE 16
#define CT_PY_STR_LENGTH 16
#define CT_PY_STR_STATE 32
#define CT_PY_STR_COMPACT 0x20u
#define CT_PY_STR_ASCII 0x40u
#define CT_PY_BYTES_DATA 32
/* The most of a thread state, frame or code object any layout reads: a
 * copy this long holds every field. */
#define CT_PY_STATE_READ 256
#define CT_PY_FRAME_READ 112
#define CT_PY_CODE_READ 208

/* Whether the thread state's id is a pthread_t (3.9, 3.10) rather than the
 * kernel's thread id. */
int ct_py_thread_id_is_pthread(const struct ct_py_layout *l);
/* Whether frames are Python objects (3.9, 3.10: PyFrameObject, whose type
 * can be checked) rather than the interpreter's own records. */
int ct_py_frames_are_objects(const struct ct_py_layout *l);

/* The layout of 3.`minor`, or NULL for a version not in the table. */
const struct ct_py_layout *ct_py_layout_for(int minor);
/* The minor version from Py_GetVersion()'s "3.X.Y (": -1 for anything else,
 * such as a free-threaded build's "3.13.0 experimental free-threading build (". */
int ct_py_version_minor(const char *version);

/* Loads a pointer or an int32 at `off` of a copied structure. */
uintptr_t ct_py_load_ptr(const void *base, int16_t off);
int32_t ct_py_load_i32(const void *base, int16_t off);

/* The byte offset of the instruction the frame (copied in `frame`) is at
 * into the code object (copied in `code`, from address `code_addr`): -1
 * when unknown or out of range. */
long ct_py_instr_offset(const struct ct_py_layout *l, const void *frame, const void *code,
                        uintptr_t code_addr);
/* Whether the frame is an entry frame the C stack pushed (3.12+), whose
 * executable is no code of the program's (3.13: not even a code object). */
int ct_py_frame_is_shim(const struct ct_py_layout *l, const void *frame);
/* Whether the interpreter frame is one Python itself would show: not a
 * shim the C stack pushed, and past its set-up instructions. */
int ct_py_frame_complete(const struct ct_py_layout *l, const void *frame, const void *code,
                         uintptr_t code_addr);

/* Where a str's UTF-8 text lives, from its copied header (`str`, from
 * `str_addr`): a compact ASCII string's characters follow the header; any
 * other has UTF-8 only if someone asked for it. 0 with the text's address
 * and length, or -1 when it has none. */
int ct_py_str_text(const struct ct_py_layout *l, const void *str, uintptr_t str_addr,
                   uintptr_t *text, size_t *len);

#endif

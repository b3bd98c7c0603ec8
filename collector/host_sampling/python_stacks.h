/*
 * The Python stacks of the traced process's threads and of its workers,
 * read from outside with process_vm_readv: no signal, no ptrace stop, no
 * code on the program's threads. From /proc/PID/maps and the ELF symbols of
 * the python executable or libpython it maps: _PyRuntime → interpreters →
 * thread states (each matched to its thread by its native thread id, or on
 * 3.9 and 3.10 by the tid the struct pthread its pthread_t points at holds)
 * → frames → code objects, whose file, function and line table are kept
 * per code object, so a sample costs a few reads. CPython 3.9 to 3.13, 3.13
 * through the offsets its own _Py_DebugOffsets give (see
 * common/python_layout.c). Everything here runs on the sampler's
 * thread; the code objects it hands out stay valid until ct_py_stacks_free.
 */
#ifndef CT_COLLECTOR_HOST_PYTHON_STACKS_H
#define CT_COLLECTOR_HOST_PYTHON_STACKS_H

#include <stddef.h>
#include <stdint.h>

#define CT_PY_STACK_MAX 24 /* frames kept, innermost first */

/* One code object as first read; never changed once made. */
struct ct_py_code {
    uintptr_t addr, filename, name, linetable;
    int32_t first_line;
    char *file, *function;
    uint8_t *lines;
    size_t lines_size;
};

struct ct_py_stack {
    uint32_t depth;
    struct {
        const struct ct_py_code *code;
        int32_t line;
    } frames[CT_PY_STACK_MAX];
};

/* Reads process `pid`'s list of thread states afresh: once per round of
 * its threads, before reading their stacks. */
void ct_py_stacks_round(int32_t pid);
/* Thread `tid`'s stack, innermost first; 0, or -1 when it has none to read
 * (no Python, not a Python thread, refused, or changed under the read). */
int ct_py_stacks_read(int32_t pid, int32_t tid, struct ct_py_stack *out);
/* Forgets a worker that has gone. */
void ct_py_stacks_forget(int32_t pid);

struct ct_py_stacks_status {
    char reason[192]; /* "" when read; else why not, said once */
    uint64_t stacks;  /* read, with one frame or more */
    uint64_t raced;   /* dropped: changed under the read, or a check failed */
    uint64_t read_ns;
};
void ct_py_stacks_status(struct ct_py_stacks_status *out);
void ct_py_stacks_free(void);

#endif

/*
 * The calling thread's Python stack, read without the GIL.
 */
#ifndef CT_PRELOAD_PYTHON_FRAMES_H
#define CT_PRELOAD_PYTHON_FRAMES_H

#include <stddef.h>

struct ct_py_frame {
    const char *file; /* co_filename, UTF-8, not necessarily NUL-terminated */
    size_t file_len;
    const char *function; /* co_qualname where the version has it, else co_name */
    size_t function_len;
    int line; /* the line being executed, or the def line, or 0 */
};

/* Fills up to `max` frames of the calling thread's Python stack, innermost
 * first, and returns how many; 0 when the process has no Python, the thread has
 * no Python thread state, or the version is not one we read. The strings point
 * into live code objects: copy them before returning to the program. */
size_t ct_python_frames(struct ct_py_frame *out, size_t max);

#endif

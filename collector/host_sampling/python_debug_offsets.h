/*
 * CPython 3.13's _Py_DebugOffsets, the table at the start of _PyRuntime that
 * the interpreter fills with its own structures' offsets for readers
 * outside the process: turned into the outside reader's layout, after
 * checking that it is one (its cookie, its version) and that every offset
 * it gives fits the copies the reader makes.
 */
#ifndef CT_COLLECTOR_HOST_PYTHON_DEBUG_OFFSETS_H
#define CT_COLLECTOR_HOST_PYTHON_DEBUG_OFFSETS_H

#include <stddef.h>

#include "common/python_layout.h"

/* The bytes copied from _PyRuntime's start: all of 3.13's table. */
#define CT_PY_DEBUG_OFFSETS_READ 584

/* Overrides `l` (the version's table entry) with what the copied table
 * says; NULL, or why the process cannot be read (said to the user as
 * "Python 3.X is not read from outside: WHY"). `py_version` is the
 * process's Py_Version, whose major and minor the table must repeat. */
const char *ct_py_debug_offsets_apply(const unsigned char *table, unsigned long py_version,
                                      struct ct_py_layout *l);

#endif

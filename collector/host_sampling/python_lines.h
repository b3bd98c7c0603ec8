/*
 * The line an instruction of a Python 3.11+ code object is on, decoded from
 * its co_linetable (the location table, CPython's Objects/locations.md): the
 * collector reads the table's bytes out of the traced process once per code
 * object and decodes lines from its copy, so a sample costs no call into
 * the program.
 */
#ifndef CT_COLLECTOR_HOST_PYTHON_LINES_H
#define CT_COLLECTOR_HOST_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction `byte_offset` bytes into the code, whose def
 * line is `first_line`; -1 when the table gives it none or ends (or breaks)
 * before it. */
int ct_py_line_at(const uint8_t *table, size_t size, int first_line, long byte_offset);

#endif

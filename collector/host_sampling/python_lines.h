/*
 * The line an instruction of a Python code object is on, decoded from the
 * line table it carries: 3.9's co_lnotab, 3.10's co_linetable, or 3.11's
 * and later co_linetable (the location table, CPython's
 * Objects/locations.md). The collector reads the table's bytes out of the
 * traced process once per code object and decodes lines from its copy, so
 * a sample costs no call into the program.
 */
#ifndef CT_COLLECTOR_HOST_PYTHON_LINES_H
#define CT_COLLECTOR_HOST_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

enum ct_py_line_format {
    CT_PY_LNOTAB,         /* 3.9: (byte delta, signed line delta) pairs */
    CT_PY_LINETABLE_3_10, /* 3.10: the same pairs, -128 for no line, deltas after the range */
    CT_PY_LOCATIONS       /* 3.11+: the location table */
};

/* The format the code objects of CPython 3.`minor` keep their lines in. */
enum ct_py_line_format ct_py_line_format_of(int minor);

/* The line of the instruction `byte_offset` bytes into the code, whose def
 * line is `first_line`; -1 when the table gives it none or ends (or breaks)
 * before it. */
int ct_py_line_at(enum ct_py_line_format format, const uint8_t *table, size_t size, int first_line,
                  long byte_offset);

#endif

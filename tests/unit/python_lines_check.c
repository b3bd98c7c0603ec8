/*
 * Checks of the Python 3.11 location-table decoder
 * (collector/host_sampling/python_lines.c) on its own: a table CPython 3.11
 * wrote for a known function, against the line co_positions() gave for each
 * of its code units; the forms that function lacks (no location, no
 * columns) in a table made by hand; and damaged tables (every truncation of
 * the real one, an entry without its top bit, a varint that never ends),
 * which can only give -1 or the true line, never a crash or a hang.
 */
#include <stddef.h>
#include <stdint.h>

#include "collector/host_sampling/python_lines.h"
#include "tests/unit/check.h"

/* def f(xs):                 (line 2 of its file)
 *     total = 0
 *     for x in xs:
 *         if x > 3:
 *             total += (x *
 *                       2)
 *         else:
 *             total -= 1
 *     return total */
static const uint8_t table[] = {
    0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xd8, 0x0d, 0x0f, 0xf0, 0x00, 0x05, 0x05, 0x17,
    0xf0, 0x00, 0x05, 0x05, 0x17, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x8a, 0x35, 0x88,
    0x35, 0xd8, 0x0c, 0x11, 0x90, 0x61, 0xd8, 0x16, 0x17, 0xf1, 0x03, 0x01, 0x17, 0x18, 0xf1,
    0x00, 0x01, 0x0d, 0x19, 0x88, 0x45, 0x88, 0x45, 0xf0, 0x06, 0x00, 0x0d, 0x12, 0x90, 0x51,
    0x89, 0x4a, 0x88, 0x45, 0x88, 0x45, 0xd8, 0x0b, 0x10, 0x80, 0x4c,
};
static const int lines[] = {2, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 6,  6,
                            7, 6, 6, 6, 6, 6, 6, 9, 9, 9, 9, 9, 9, 10, 10};
#define UNITS (int)(sizeof lines / sizeof lines[0])

static void check_real_table(void)
{
    for (int unit = 0; unit < UNITS; unit++)
        ct_check_u64((uint64_t)ct_py_line_at(table, sizeof table, 2, 2L * unit),
                     (uint64_t)lines[unit], "unit %d", unit);
    ct_check(ct_py_line_at(table, sizeof table, 2, 2L * UNITS) == -1, "past the end");
}

static void check_other_forms(void)
{
    /* one unit with no location; one with no columns, 3 lines on (svarint 6) */
    static const uint8_t made[] = {0xf8, 0xe8, 0x06};
    ct_check(ct_py_line_at(made, sizeof made, 10, 0) == -1, "no location");
    ct_check_u64((uint64_t)ct_py_line_at(made, sizeof made, 10, 2), 13, "no columns");
    ct_check(ct_py_line_at(made, sizeof made, 10, 4) == -1, "after the made table");
}

static void check_damage(void)
{
    for (size_t size = 0; size < sizeof table; size++)
        for (int unit = 0; unit < UNITS; unit++) {
            int line = ct_py_line_at(table, size, 2, 2L * unit);
            ct_check(line == -1 || line == lines[unit], "cut at %zu, unit %d: %d", size, unit,
                     line);
        }
    static const uint8_t no_top_bit[] = {0x08, 0x00};
    ct_check(ct_py_line_at(no_top_bit, sizeof no_top_bit, 1, 0) == -1, "no top bit");
    uint8_t endless[64] = {0xe8};
    for (size_t i = 1; i < sizeof endless; i++)
        endless[i] = 0x7f;
    ct_check(ct_py_line_at(endless, sizeof endless, 1, 0) == -1, "endless varint");
}

int main(void)
{
    check_real_table();
    check_other_forms();
    check_damage();
    return ct_check_finish();
}

/*
 * Checks of the Python line-table decoders
 * (collector/host_sampling/python_lines.c) on their own. 3.11's location
 * table: a table CPython 3.11
 * wrote for a known function, against the line co_positions() gave for each
 * of its code units; the forms that function lacks (no location, no
 * columns) in a table made by hand; and damaged tables (every truncation of
 * the real one, an entry without its top bit, a varint that never ends),
 * which can only give -1 or the true line, never a crash or a hang. 3.9's
 * co_lnotab and 3.10's co_linetable: tables made by hand from the walks in
 * their codeobject.c, with a negative line delta, a pair that only moves
 * the line (3.9's two-pair jumps, 3.10's empty ranges), 3.10's range with
 * no line, and every truncation.
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
        ct_check_u64((uint64_t)ct_py_line_at(CT_PY_LOCATIONS, table, sizeof table, 2, 2L * unit),
                     (uint64_t)lines[unit], "unit %d", unit);
    ct_check(ct_py_line_at(CT_PY_LOCATIONS, table, sizeof table, 2, 2L * UNITS) == -1,
             "past the end");
}

static void check_other_forms(void)
{
    /* one unit with no location; one with no columns, 3 lines on (svarint 6) */
    static const uint8_t made[] = {0xf8, 0xe8, 0x06};
    ct_check(ct_py_line_at(CT_PY_LOCATIONS, made, sizeof made, 10, 0) == -1, "no location");
    ct_check_u64((uint64_t)ct_py_line_at(CT_PY_LOCATIONS, made, sizeof made, 10, 2), 13,
                 "no columns");
    ct_check(ct_py_line_at(CT_PY_LOCATIONS, made, sizeof made, 10, 4) == -1,
             "after the made table");
}

static void check_damage(void)
{
    for (size_t size = 0; size < sizeof table; size++)
        for (int unit = 0; unit < UNITS; unit++) {
            int line = ct_py_line_at(CT_PY_LOCATIONS, table, size, 2, 2L * unit);
            ct_check(line == -1 || line == lines[unit], "cut at %zu, unit %d: %d", size, unit,
                     line);
        }
    static const uint8_t no_top_bit[] = {0x08, 0x00};
    ct_check(ct_py_line_at(CT_PY_LOCATIONS, no_top_bit, sizeof no_top_bit, 1, 0) == -1,
             "no top bit");
    uint8_t endless[64] = {0xe8};
    for (size_t i = 1; i < sizeof endless; i++)
        endless[i] = 0x7f;
    ct_check(ct_py_line_at(CT_PY_LOCATIONS, endless, sizeof endless, 1, 0) == -1, "endless varint");
}

/* First line 10. Bytes 0-5: 11; 6-13: 12; 14-17: 14; 18 on: 11. */
static const uint8_t lnotab[] = {0, 1, 6, 1, 8, 2, 4, 0xfd};
static const int lnotab_lines[] = {11, 12, 14, 11};
static const long lnotab_starts[] = {0, 6, 14, 18};

/* First line 10. Bytes 0-5: 11; an empty range taking the line to 12;
 * 6-13: no line; 14-17: 14; 18-19: 13; 20 on: past the end. */
static const uint8_t linetable[] = {6, 1, 0, 1, 8, 0x80, 4, 2, 2, 0xff};
static const int linetable_lines[] = {11, -1, 14, 13, -1};
static const long linetable_starts[] = {0, 6, 14, 18, 20};

static void check_pairs(enum ct_py_line_format format, const uint8_t *t, size_t size,
                        const long *starts, const int *want, int ranges)
{
    for (int r = 0; r < ranges; r++)
        for (long b = starts[r]; b < (r + 1 < ranges ? starts[r + 1] : starts[r] + 4); b++)
            ct_check(ct_py_line_at(format, t, size, 10, b) == want[r], "format %d byte %ld: %d",
                     (int)format, b, ct_py_line_at(format, t, size, 10, b));
    ct_check(ct_py_line_at(format, t, size, 10, -1) == -1, "format %d before the start",
             (int)format);
}

static void check_pairs_damage(enum ct_py_line_format format, const uint8_t *t, size_t size)
{
    for (size_t cut = 0; cut < size; cut++)
        for (long b = 0; b < 24; b++) {
            int line = ct_py_line_at(format, t, cut, 10, b);
            ct_check(line == -1 || (line >= 10 && line <= 14), "format %d cut at %zu: %d",
                     (int)format, cut, line);
        }
}

static void check_older_formats(void)
{
    check_pairs(CT_PY_LNOTAB, lnotab, sizeof lnotab, lnotab_starts, lnotab_lines, 4);
    check_pairs(CT_PY_LINETABLE_3_10, linetable, sizeof linetable, linetable_starts,
                linetable_lines, 5);
    check_pairs_damage(CT_PY_LNOTAB, lnotab, sizeof lnotab);
    check_pairs_damage(CT_PY_LINETABLE_3_10, linetable, sizeof linetable);
    ct_check(ct_py_line_at(CT_PY_LNOTAB, lnotab, 0, 10, 4) == 10, "3.9, no pairs: the def line");
    ct_check(ct_py_line_format_of(9) == CT_PY_LNOTAB &&
                 ct_py_line_format_of(10) == CT_PY_LINETABLE_3_10 &&
                 ct_py_line_format_of(13) == CT_PY_LOCATIONS,
             "formats per version");
}

int main(void)
{
    check_older_formats();
    check_real_table();
    check_other_forms();
    check_damage();
    return ct_check_finish();
}

/*
 * The three line-table decoders. 3.11's location table: each entry covers
 * 1 to 8 code units; its first byte has the top bit set, a 4-bit form and
 * the length less one. Forms 0-9 (short) and 10-12 (one line) carry column
 * bytes and a line delta of 0 and form - 10; 13 (no columns) and 14 (long)
 * start with a signed varint delta, 14 then three more varints; 15 has no
 * location. Varints are 6-bit chunks, least significant first, 0x40
 * meaning more. 3.9's co_lnotab and 3.10's co_linetable are byte pairs, an
 * unsigned bytecode delta in bytes and a signed line delta; they differ in
 * which bytes a line delta belongs to (3.9: those from the offset the
 * pair's byte delta reaches on, as its PyCode_Addr2Line walks them; 3.10:
 * those its byte delta covers, -128 meaning no line, as its
 * PyLineTable_NextAddressRange walks them).
 */
#include "collector/host_sampling/python_lines.h"

enum { FORM_ONE_LINE = 10, FORM_NO_COLUMNS = 13, FORM_LONG = 14, FORM_NONE = 15 };

struct cursor {
    const uint8_t *at, *end;
};

/* -1 when the table ends inside it. */
static long varint(struct cursor *c)
{
    unsigned long value = 0;
    for (unsigned shift = 0; c->at < c->end && shift < 60; shift += 6) {
        uint8_t b = *c->at++;
        value |= (unsigned long)(b & 0x3f) << shift;
        if (!(b & 0x40))
            return (long)value;
    }
    return -1;
}

static int signed_varint(struct cursor *c, long *out)
{
    long v = varint(c);
    *out = v & 1 ? -(v >> 1) : v >> 1;
    return v < 0 ? -1 : 0;
}

/* The entry's line delta; -1 when the entry does not decode. */
static int entry_delta(struct cursor *c, int form, long *delta)
{
    *delta = 0;
    if (form == FORM_NONE)
        return 0;
    if (form == FORM_NO_COLUMNS)
        return signed_varint(c, delta);
    if (form == FORM_LONG) {
        int bad = signed_varint(c, delta);
        for (int i = 0; i < 3; i++)
            bad |= varint(c) < 0;
        return bad ? -1 : 0;
    }
    long columns = form >= FORM_ONE_LINE ? 2 : 1;
    if (form >= FORM_ONE_LINE)
        *delta = form - FORM_ONE_LINE;
    if (c->end - c->at < columns)
        return -1;
    c->at += columns;
    return 0;
}

static int location_line(const uint8_t *table, size_t size, int first_line, long byte_offset)
{
    struct cursor c = {table, table + size};
    long line = first_line, unit = byte_offset / 2, start = 0;
    while (c.at < c.end) {
        uint8_t head = *c.at++;
        long delta, length = (head & 7) + 1;
        int form = (head >> 3) & 15;
        if (!(head & 0x80) || entry_delta(&c, form, &delta))
            return -1;
        line += delta;
        if (unit < start + length)
            return form == FORM_NONE || line < 0 || line > INT32_MAX ? -1 : (int)line;
        start += length;
    }
    return -1;
}

static int lnotab_line(const uint8_t *table, size_t size, int first_line, long byte_offset)
{
    long line = first_line, offset = 0;
    for (size_t i = 0; i + 1 < size; i += 2) {
        offset += table[i];
        if (offset > byte_offset)
            break;
        line += (int8_t)table[i + 1];
    }
    return line < 0 || line > INT32_MAX ? -1 : (int)line;
}

#define NO_LINE_3_10 (-128)

static int linetable_3_10_line(const uint8_t *table, size_t size, int first_line, long byte_offset)
{
    long line = first_line, end = 0;
    for (size_t i = 0; i + 1 < size; i += 2) {
        int delta = (int8_t)table[i + 1];
        end += table[i];
        if (delta != NO_LINE_3_10)
            line += delta;
        if (byte_offset < end) /* only a range of one byte or more ends past it */
            return delta == NO_LINE_3_10 || line < 0 || line > INT32_MAX ? -1 : (int)line;
    }
    return -1;
}

enum ct_py_line_format ct_py_line_format_of(int minor)
{
    return minor <= 9 ? CT_PY_LNOTAB : minor == 10 ? CT_PY_LINETABLE_3_10 : CT_PY_LOCATIONS;
}

int ct_py_line_at(enum ct_py_line_format format, const uint8_t *table, size_t size, int first_line,
                  long byte_offset)
{
    if (byte_offset < 0)
        return -1;
    if (format == CT_PY_LNOTAB)
        return lnotab_line(table, size, first_line, byte_offset);
    if (format == CT_PY_LINETABLE_3_10)
        return linetable_3_10_line(table, size, first_line, byte_offset);
    return location_line(table, size, first_line, byte_offset);
}

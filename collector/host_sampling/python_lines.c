/*
 * The location table's decoder. Each entry covers 1 to 8 code units; its
 * first byte has the top bit set, a 4-bit form and the length less one.
 * Forms 0-9 (short) and 10-12 (one line) carry column bytes and a line
 * delta of 0 and form - 10; 13 (no columns) and 14 (long) start with a
 * signed varint delta, 14 then three more varints; 15 has no location.
 * Varints are 6-bit chunks, least significant first, 0x40 meaning more.
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

int ct_py_line_at(const uint8_t *table, size_t size, int first_line, long byte_offset)
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

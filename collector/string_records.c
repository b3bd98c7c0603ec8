/*
 * A string travels as consecutive chunk records on one ring, each saying its
 * offset and the total length, so a chunk lost to a full ring (the preload
 * sends all or none, but a ring can be reset under it) shows as a gap and
 * the string is dropped rather than misassembled.
 */
#include "collector/string_records.h"

#include <stdlib.h>
#include <string.h>

#include "common/string_table.h"

struct pending_string {
    uint64_t key;
    uint16_t kind;
    uint32_t len;
    char text[CT_STRING_MAX];
};

static struct pending_string *pending; /* one per ring */

void ct_string_records_start(uint32_t rings)
{
    pending = calloc(rings, sizeof *pending);
    if (!pending)
        abort();
}

int ct_string_records_add(uint32_t index, const struct ct_record *r, struct ct_string_done *done)
{
    struct pending_string *s = &pending[index];
    struct ct_halves span = ct_unpack_halves(r->end);
    uint32_t offset = span.low, total = span.high;
    uint32_t chunk = (uint32_t)r->result;
    if (offset == 0) {
        s->key = r->begin;
        s->kind = r->func;
        s->len = 0;
    }
    if (s->key != r->begin || s->len != offset || total > CT_STRING_MAX ||
        chunk > CT_STRING_CHUNK || offset + chunk > total)
        return 0;
    memcpy(s->text + offset, r->text, chunk);
    s->len = offset + chunk;
    if (s->len != total)
        return 0;
    *done = (struct ct_string_done){s->kind, s->key, ct_strings_intern(s->text, s->len)};
    return 1;
}

void ct_string_records_reset(uint32_t index)
{
    pending[index].len = 0;
}

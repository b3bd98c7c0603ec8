/*
 * An append-only string table with an open-addressing index. Ids start at 1
 * because Perfetto reserves interning id 0 for "none".
 */
#include "common/string_table.h"

#include <stdlib.h>
#include <string.h>

struct entry {
    char *text;
    size_t len;
    uint64_t hash;
};

static struct entry *entries; /* entries[0] unused */
static uint32_t entry_count = 1, entry_capacity;
static uint32_t *index_slots; /* entry ids, 0 = empty */
static uint32_t index_capacity;

static uint64_t hash_bytes(const char *text, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
    return h;
}

static void index_insert(uint32_t id)
{
    uint32_t mask = index_capacity - 1;
    uint32_t at = (uint32_t)entries[id].hash & mask;
    while (index_slots[at])
        at = (at + 1) & mask;
    index_slots[at] = id;
}

static void grow(void)
{
    if (entry_count + 1 >= entry_capacity) {
        entry_capacity = entry_capacity ? entry_capacity * 2 : 256;
        entries = realloc(entries, entry_capacity * sizeof *entries);
        if (!entries)
            abort();
    }
    if (2 * (entry_count + 1) >= index_capacity) {
        free(index_slots);
        index_capacity = index_capacity ? index_capacity * 2 : 512;
        index_slots = calloc(index_capacity, sizeof *index_slots);
        if (!index_slots)
            abort();
        for (uint32_t id = 1; id < entry_count; id++)
            index_insert(id);
    }
}

uint32_t ct_strings_intern(const char *text, size_t len)
{
    uint64_t h = hash_bytes(text, len);
    if (index_capacity) {
        uint32_t mask = index_capacity - 1;
        for (uint32_t at = (uint32_t)h & mask; index_slots[at]; at = (at + 1) & mask) {
            struct entry *e = &entries[index_slots[at]];
            if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0)
                return index_slots[at];
        }
    }
    grow();
    char *copy = malloc(len + 1);
    if (!copy)
        abort();
    memcpy(copy, text, len);
    copy[len] = '\0';
    uint32_t id = entry_count++;
    entries[id] = (struct entry){copy, len, h};
    index_insert(id);
    return id;
}

uint32_t ct_strings_intern_cstr(const char *text)
{
    return ct_strings_intern(text, strlen(text));
}

const char *ct_strings_get(uint32_t id)
{
    return id > 0 && id < entry_count ? entries[id].text : "";
}

size_t ct_strings_len(uint32_t id)
{
    return id > 0 && id < entry_count ? entries[id].len : 0;
}

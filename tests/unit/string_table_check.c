/*
 * Checks of the string table (common/string_table.c) on its own: ids count
 * from 1 in the order strings are first seen, a string seen again gets its
 * id back, a string is its bytes and its length (embedded NULs, prefixes),
 * and all of that holds past the table's growth. The table is one per
 * process, so the checks run in order on one table and know every id it
 * has given.
 */
#include <stdio.h>
#include <string.h>

#include "common/string_table.h"
#include "tests/unit/check.h"

#define MANY 20000 /* well past the first 256 entries and 512 index slots */

/* Whether `id` holds exactly the `len` bytes at `text`, NUL-terminated. */
static int holds(uint32_t id, const char *text, size_t len)
{
    const char *got = ct_strings_get(id);
    return ct_strings_len(id) == len && memcmp(got, text, len) == 0 && got[len] == '\0';
}

static void check_first_ids(void)
{
    ct_check_u64(ct_strings_intern_cstr("alpha"), 1, "the first string gets id 1");
    ct_check_u64(ct_strings_intern_cstr("beta"), 2, "the second string gets id 2");
    ct_check_u64(ct_strings_intern_cstr("alpha"), 1, "a string seen again gets its id back");
    ct_check_u64(ct_strings_intern("alpha", 5), 1, "by length, the same string gets the same id");
    ct_check(holds(1, "alpha", 5), "ct_strings_get(1) is \"alpha\", 5 bytes");
    ct_check(holds(2, "beta", 4), "ct_strings_get(2) is \"beta\", 4 bytes");
    ct_check(holds(0, "", 0), "id 0 is the empty string");
    ct_check(holds(3, "", 0), "an id not given yet is the empty string");
}

static void check_lengths(void)
{
    ct_check_u64(ct_strings_intern("alphabet", 5), 1,
                 "the first 5 bytes of \"alphabet\" are \"alpha\"");
    ct_check_u64(ct_strings_intern("alphabet", 8), 3, "all of \"alphabet\" is a string of its own");
    ct_check_u64(ct_strings_intern("a\0b", 3), 4, "a string with a NUL inside is a new string");
    ct_check(holds(4, "a\0b", 3), "the NUL inside is kept, with the length");
    ct_check_u64(ct_strings_intern("a\0c", 3), 5, "bytes after an embedded NUL tell strings apart");
    ct_check_u64(ct_strings_intern_cstr("a\0b"), 6, "intern_cstr stops at the first NUL: \"a\"");
    ct_check_u64(ct_strings_intern("a\0b", 3), 4,
                 "the string with the NUL inside gets its id back");
    ct_check_u64(ct_strings_intern("", 0), 7, "the empty string gets an id like any other");
    ct_check_u64(ct_strings_intern_cstr(""), 7, "the empty string gets its id back");
    ct_check(holds(7, "", 0), "the empty string's id holds no bytes");
}

static void check_copies(void)
{
    char buffer[] = "mutable";
    uint32_t id = ct_strings_intern_cstr(buffer);
    buffer[0] = 'M';
    ct_check(holds(id, "mutable", 7), "the table keeps a copy, not the caller's buffer");
    ct_check_u64(ct_strings_intern_cstr("mutable"), id, "the copy is what later lookups match");
}

static void check_growth(void)
{
    char text[32];
    uint32_t first = ct_strings_intern_cstr("many 0");
    size_t wrong_id = 0, wrong_again = 0, wrong_text = 0;
    for (unsigned i = 1; i < MANY; i++) {
        snprintf(text, sizeof text, "many %u", i);
        if (!wrong_id && ct_strings_intern_cstr(text) != first + i)
            wrong_id = i;
    }
    for (unsigned i = 0; i < MANY; i++) {
        snprintf(text, sizeof text, "many %u", i);
        if (!wrong_again && ct_strings_intern_cstr(text) != first + i)
            wrong_again = i + 1;
        if (!wrong_text && !holds(first + i, text, strlen(text)))
            wrong_text = i + 1;
    }
    ct_check_u64(wrong_id, 0, "%d new strings get consecutive ids (first wrong index)", MANY);
    ct_check_u64(wrong_again, 0, "after growth each gets its id back (first wrong index + 1)");
    ct_check_u64(wrong_text, 0, "after growth each id holds its text (first wrong index + 1)");
    ct_check(holds(1, "alpha", 5) && holds(4, "a\0b", 3), "the first ids survive the growth");
    ct_check_u64(ct_strings_intern_cstr("after"), first + MANY, "the id after growth is the next");
}

int main(void)
{
    check_first_ids();
    check_lengths();
    check_copies();
    check_growth();
    return ct_check_finish();
}

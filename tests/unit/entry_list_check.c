/*
 * Checks of the separated lists (common/entry_list.c) on their own: walking
 * a list gives each entry once, empty ones too, with either separator, and
 * cuts one that does not fit; adding keeps each entry once and never writes
 * past the list's size.
 */
#include <string.h>

#include "common/entry_list.h"
#include "tests/unit/check.h"

static void walking(void)
{
    const char *at = "/usr/lib::/opt/a";
    char out[64], joined[128] = "";
    int count = 0;
    while (ct_list_next(&at, ':', out, sizeof out)) {
        strcat(joined, "[");
        strcat(joined, out);
        strcat(joined, "]");
        count++;
    }
    ct_check_u64((uint64_t)count, 3, "three entries, the empty one among them");
    ct_check(strcmp(joined, "[/usr/lib][][/opt/a]") == 0, "in order: %s", joined);
    at = "sm_80,sm_90";
    ct_check(ct_list_next(&at, ',', out, sizeof out) && strcmp(out, "sm_80") == 0 &&
                 strcmp(at, "sm_90") == 0,
             "another separator");
    at = "/a/long/directory";
    ct_check(ct_list_next(&at, ':', out, 5) && strcmp(out, "/a/l") == 0 && !*at,
             "an entry cut to fit, and the walk past it");
    ct_check(!ct_list_next(&at, ':', out, sizeof out), "nothing at the end");
}

static void adding(void)
{
    char list[16] = "";
    ct_list_add_distinct(list, sizeof list, ':', "/a");
    ct_list_add_distinct(list, sizeof list, ':', "/b");
    ct_list_add_distinct(list, sizeof list, ':', "/a");
    ct_check(strcmp(list, "/a:/b") == 0, "each entry once: %s", list);
    ct_list_add_distinct(list, sizeof list, ':', "/a/b");
    ct_check(strcmp(list, "/a:/b:/a/b") == 0, "a longer entry is not the shorter: %s", list);
    ct_list_add_distinct(list, sizeof list, ':', "/too-long");
    ct_check(strcmp(list, "/a:/b:/a/b") == 0, "one that would not fit whole is left out");
}

int main(void)
{
    walking();
    adding();
    return ct_check_finish();
}

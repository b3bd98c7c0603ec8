/*
 * Separated lists in one string (entry_list.h): walking them entry by
 * entry, and adding an entry once.
 */
#include "common/entry_list.h"

#include <stdio.h>
#include <string.h>

/* The length of the entry at `at`. */
static size_t entry_length(const char *at, char separator)
{
    const char set[2] = {separator, '\0'};
    return strcspn(at, set);
}

int ct_list_next(const char **at, char separator, char *out, size_t size)
{
    if (!**at)
        return 0;
    size_t len = entry_length(*at, separator);
    snprintf(out, size, "%.*s", (int)len, *at);
    *at += len + ((*at)[len] == separator);
    return 1;
}

void ct_list_add_distinct(char *list, size_t size, char separator, const char *entry)
{
    size_t len = strlen(entry), used = strlen(list);
    for (const char *at = list; *at;) {
        size_t n = entry_length(at, separator);
        if (n == len && strncmp(at, entry, len) == 0)
            return;
        at += n + (at[n] == separator);
    }
    if (used + len + 2 > size)
        return;
    if (used)
        list[used++] = separator;
    snprintf(list + used, size - used, "%s", entry);
}

/*
 * Lists of entries kept in one string, each entry ended by a separator
 * character: ':' for directories and files, as PATH, LD_LIBRARY_PATH and
 * RUNPATH write them (and as the trace carries its lists of them), ','
 * for a library's GPU architectures. The collector builds them; it and the
 * report read them.
 */
#ifndef CT_COMMON_ENTRY_LIST_H
#define CT_COMMON_ENTRY_LIST_H

#include <stddef.h>

/* Copies the entry `*at` points to into `out` (cut to fit) and moves `*at`
 * past it and its separator; 0, with nothing copied, at the list's end. */
int ct_list_next(const char **at, char separator, char *out, size_t size);

/* Adds `entry` to the end of `list` unless it is there already (or would
 * not fit whole). */
void ct_list_add_distinct(char *list, size_t size, char separator, const char *entry);

#endif

/*
 * Every dependency of a library that cannot be found, not only the first
 * one ld.so stopped at, and the other majors of them this machine has
 * (missing_set.c).
 */
#ifndef CT_COLLECTOR_MISSING_SET_H
#define CT_COLLECTOR_MISSING_SET_H

#include <stddef.h>

#include "collector/libraries/ld_search.h"

/* When `name` is a DT_NEEDED entry of the object at `requester` that could
 * not be loaded: 1, with in `missing` every name of that object's
 * dependencies that no search finds (`name` first, ':'-separated) and in
 * `other_majors` the files of those libraries under another soname major
 * ("libcudart.so.13" for "libcudart.so.12") in the directories searched or
 * in the lib directory of the toolkit at `toolkit_home` (':'-separated,
 * possibly ""). 0, with neither written, when it is no such entry. */
int ct_missing_set(const struct ct_ld_process *process, const char *name, const char *requester,
                   const char *toolkit_home, char *missing, size_t missing_size, char *other_majors,
                   size_t other_size);

#endif

/*
 * Where a library's requester expected its libraries (own_dirs.c).
 */
#ifndef CT_COLLECTOR_LIBRARIES_OWN_DIRS_H
#define CT_COLLECTOR_LIBRARIES_OWN_DIRS_H

#include <stddef.h>

#include "collector/libraries/ld_search.h"

/* The directories `requester`'s own DT_RUNPATH (else DT_RPATH) names,
 * expanded and normalised, ':'-separated; with `meant_only`, only those that
 * look meant for the libraries it needs: written relative to $ORIGIN, or
 * inside a pip nvidia/ or a conda tree. */
void ct_ld_own_dirs(const struct ct_ld_process *process, const char *requester, int meant_only,
                    char *out, size_t size);

#endif

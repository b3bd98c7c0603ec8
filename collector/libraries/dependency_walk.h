/*
 * ld.so's breadth-first walk of an object's dependencies, replayed from the
 * files (dependency_walk.c), for a load that failed on one of them: which
 * objects it had mapped when it met the failing name (and unmapped again),
 * which object named that name, and every name it would not have found.
 */
#ifndef CT_COLLECTOR_DEPENDENCY_WALK_H
#define CT_COLLECTOR_DEPENDENCY_WALK_H

#include <limits.h>

#include "collector/libraries/ld_search.h"

/* Bounds that keep a huge dependency tree from slowing the collector: the
 * objects followed, and the DT_NEEDED entries read from each. */
#define CT_WALK_MAX_OBJECTS 48
#define CT_WALK_MAX_NEEDED 64

struct ct_walked_object {
    char path[PATH_MAX];    /* the file the search found */
    char requested_as[256]; /* the DT_NEEDED name; "" for the walk's root */
    int requester;          /* index of the object that named it; -1 for the root */
    enum ct_ld_list found_in;
};

struct ct_dependency_walk {
    struct ct_walked_object objects[CT_WALK_MAX_OBJECTS]; /* in the order ld.so maps them */
    int count;
    /* The object whose DT_NEEDED named the failing name, and how many
     * objects ld.so had mapped when it stopped there; -1 and 0 when the walk
     * never met it. */
    int needing, mapped;
    /* The failing name, then each other name no search finds, ':'-separated,
     * in the order ld.so would meet them; and where they were looked for. */
    char missing[4096];
    char searched[8192];
};

/* Walks the dependencies of the object at `root` as ld.so maps them, until
 * the bounds, for a load that failed on `failing`. A name met before it that
 * no search finds was found by ld.so some other way (an object already
 * loaded under that name) and is passed over, as ld.so got past it. */
void ct_dependency_walk(const struct ct_ld_process *process, const char *root, const char *failing,
                        struct ct_dependency_walk *w);

#endif

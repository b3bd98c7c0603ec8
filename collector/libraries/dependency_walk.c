/*
 * Replays, from the files, the order in which ld.so maps the dependencies of
 * an object it loads (_dl_map_object_deps): breadth first, each object's
 * DT_NEEDED entries in the file's order, each searched for as ld.so searches
 * (ld_search.c) on behalf of the object that names it, a file already in the
 * walk not mapped twice. ld.so stops at the first name it cannot find and
 * unmaps everything it had mapped for that load; the walk goes on past it to
 * find every other name that would fail as well. It is bounded (objects
 * followed, entries read from each), so a huge tree costs a bounded number
 * of searches. Approximation: names ld.so matches to objects the process
 * had loaded before are searched for like any other.
 */
#include "collector/libraries/dependency_walk.h"

#include <stdio.h>
#include <string.h>

#include "collector/elf/elf_file.h"
#include "common/entry_list.h"

/* The walk in progress: the object whose DT_NEEDED entries are being read. */
struct visit {
    const struct ct_ld_process *process;
    const char *failing;
    struct ct_dependency_walk *w;
    int current, needed;
    struct ct_ld_result result;
};

static int known(const struct ct_dependency_walk *w, const char *path)
{
    for (int i = 0; i < w->count; i++)
        if (strcmp(w->objects[i].path, path) == 0)
            return 1;
    return 0;
}

static void note_missing(struct ct_dependency_walk *w, const char *name, const char *searched)
{
    ct_list_add_distinct(w->missing, sizeof w->missing, ':', name);
    char dir[4096];
    for (const char *at = searched; ct_list_next(&at, ':', dir, sizeof dir);)
        ct_list_add_distinct(w->searched, sizeof w->searched, ':', dir);
}

static void add_object(struct ct_dependency_walk *w, const struct visit *v, const char *name)
{
    struct ct_walked_object *o = &w->objects[w->count++];
    snprintf(o->path, sizeof o->path, "%s", v->result.path);
    snprintf(o->requested_as, sizeof o->requested_as, "%s", name);
    o->requester = v->current;
    o->found_in = v->result.found_in;
}

static int visit_needed(const char *name, void *ctx)
{
    struct visit *v = ctx;
    struct ct_dependency_walk *w = v->w;
    if (v->needed++ == CT_WALK_MAX_NEEDED)
        return 1;
    ct_ld_search(v->process, name, w->objects[v->current].path, &v->result);
    if (v->result.found_in != CT_LD_NOT_FOUND) {
        if (w->count < CT_WALK_MAX_OBJECTS && !known(w, v->result.path))
            add_object(w, v, name);
        return 0;
    }
    if (w->needing < 0 && strcmp(name, v->failing) == 0) {
        w->needing = v->current;
        w->mapped = w->count;
    }
    if (w->needing >= 0)
        note_missing(w, name, v->result.searched);
    return 0;
}

void ct_dependency_walk(const struct ct_ld_process *process, const char *root, const char *failing,
                        struct ct_dependency_walk *w)
{
    static struct visit v;
    v = (struct visit){.process = process, .failing = failing, .w = w};
    w->objects[0] = (struct ct_walked_object){.requester = -1, .found_in = CT_LD_ABSOLUTE};
    snprintf(w->objects[0].path, sizeof w->objects[0].path, "%s", root);
    w->count = 1;
    w->needing = -1;
    w->mapped = 0;
    w->missing[0] = w->searched[0] = '\0';
    for (v.current = 0; v.current < w->count; v.current++) {
        struct ct_elf elf;
        if (ct_elf_open(w->objects[v.current].path, &elf))
            continue;
        v.needed = 0;
        ct_elf_each_dynamic_string(&elf, DT_NEEDED, visit_needed, &v);
        ct_elf_close(&elf);
    }
}

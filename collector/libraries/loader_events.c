/*
 * The preload's account of CUDA-stack library loads under a bare
 * LD_PRELOAD (preload/loader/loader_view.c): CT_REC_LIBRARY records on the
 * loader ring, each preceded by its strings. The preload knows what was
 * asked for, by whom, what got mapped, which dlopens were RTLD_NOLOAD
 * queries (only it sees the mode: to the audit module a query of a name not
 * loaded looks like a failed search) and what dlerror() said; how the
 * loader found each file and where a failed one was looked for are worked
 * out here from the files, as ld.so searches (ld_search.c), and so are the
 * objects a dlopen that failed on a dependency had mapped and undid (the
 * preload only sees the link map after dlopen returns), so that the traced
 * process pays nothing for it. The results are the same loader events the
 * audit module's log gives, marked as the preload's.
 */
#include "collector/libraries/loader_events.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "collector/perfetto/clock_map.h"
#include "collector/elf/elf_file.h"
#include "collector/libraries/dependency_walk.h"
#include "collector/libraries/ld_search.h"
#include "common/library_family.h"
#include "collector/libraries/inventory.h"
#include "collector/tracks/library_track.h"
#include "collector/perfetto/process_tracks.h"
#include "common/string_table.h"

/* The strings of the event being received (the ring is written in order,
 * so one event's strings and record are never interleaved with another's). */
struct event_strings {
    uint64_t key;
    uint32_t text[CT_STR_LIB_PYTHON - CT_STR_LIB_NAME + 1];
};

static struct event_strings current;

static const char *text_of(enum ct_string_kind kind)
{
    uint32_t id = current.text[kind - CT_STR_LIB_NAME];
    return id ? ct_strings_get(id) : "";
}

int ct_loader_events_string(uint16_t kind, uint64_t key, uint32_t id)
{
    if (kind < CT_STR_LIB_NAME || kind > CT_STR_LIB_PYTHON)
        return 0;
    if (key != current.key)
        current = (struct event_strings){.key = key};
    current.text[kind - CT_STR_LIB_NAME] = id;
    return 1;
}

static const char *how_name(uint64_t how)
{
    static const char *const names[] = {
        [CT_LIB_BY_DLOPEN] = ct_value_how_dlopen,    [CT_LIB_BY_NEEDED] = ct_value_how_needed,
        [CT_LIB_AT_START] = ct_value_how_start,      [CT_LIB_ALREADY] = ct_value_via_already_loaded,
        [CT_LIB_INHERITED] = ct_value_how_inherited,
    };
    return how < sizeof names / sizeof names[0] && names[how] ? names[how] : ct_value_via_unknown;
}

static void loaded(const struct ct_record *r, uint64_t requested_ns, uint64_t seen_ns)
{
    const char *name = text_of(CT_STR_LIB_NAME), *requester = text_of(CT_STR_LIB_REQUESTER);
    const char *path = text_of(CT_STR_LIB_PATH);
    struct ct_ld_process p = ct_process_loader_view();
    const char *via = r->arg[2] == CT_LIB_ALREADY ? ct_value_via_already_loaded
                      : *name && *requester
                          ? ct_ld_list_name(ct_ld_found_via(&p, name, requester, path))
                          : ct_value_via_unknown; /* LD_PRELOAD'ed, or inherited */
    struct ct_loader_event e = {.requested_as = name,
                                .requested_by = requester,
                                .requested_from = text_of(CT_STR_LIB_PYTHON),
                                .found_via = via,
                                .path = path,
                                .loaded_ns = requested_ns,
                                .seen_by = ct_value_seen_by_preload,
                                .how = how_name(r->arg[2]),
                                .requested_ns = requested_ns};
    ct_library_track_note_file(path, requested_ns);
    ct_library_track_loader(&e, seen_ns);
}

/* A load the dlopen of `via` made before it failed on a dependency, and
 * that it undid: written as a load and an unload, the unload saying which
 * name failed. */
static void rolled_back(const struct ct_loader_event *load, const char *failing,
                        uint64_t requested_ns, uint64_t seen_ns)
{
    ct_library_track_note_file(load->path, requested_ns);
    ct_library_track_loader(load, seen_ns);
    ct_library_track_unload(load->path, seen_ns, failing);
}

/* The CUDA-stack objects ld.so had mapped for the dlopen when it stopped
 * at the failing name (the first the walk found, whose search is `root`);
 * one the process had mapped already was not mapped by this dlopen. */
static void roll_back(const struct ct_dependency_walk *w, const struct ct_ld_result *root,
                      const char *via, const char *caller, const char *failing,
                      uint64_t requested_ns, uint64_t seen_ns)
{
    char family[64];
    for (int i = 0; i < w->mapped; i++) {
        const struct ct_walked_object *o = &w->objects[i];
        if (!ct_library_family(o->path, family, sizeof family) || ct_library_described(o->path))
            continue;
        struct ct_loader_event load = {.requested_as = i ? o->requested_as : via,
                                       .requested_by = i ? w->objects[o->requester].path : caller,
                                       .found_via =
                                           ct_ld_list_name(i ? o->found_in : root->found_in),
                                       .path = o->path,
                                       .loaded_ns = requested_ns,
                                       .seen_by = ct_value_seen_by_preload,
                                       .how = how_name(i ? CT_LIB_BY_NEEDED : CT_LIB_BY_DLOPEN),
                                       .requested_ns = requested_ns};
        rolled_back(&load, failing, requested_ns, seen_ns);
    }
}

/* A dependency `name` that could not be opened while `via` was being
 * dlopen'ed by `caller`: the object that named it was unmapped again with
 * the failed dlopen, so it is found from the files, the way ld.so went (the
 * caller's search for `via`, then DT_NEEDED entries breadth first), and so
 * are the objects that went with it. */
static void failed_dependency(const char *name, const char *via, const char *caller, char *needing,
                              size_t size, uint64_t requested_ns, uint64_t seen_ns)
{
    static struct ct_ld_result root;
    struct ct_ld_process p = ct_process_loader_view();
    ct_ld_search(&p, via, caller, &root);
    snprintf(needing, size, "%s", root.found_in != CT_LD_NOT_FOUND ? root.path : via);
    if (root.found_in == CT_LD_NOT_FOUND)
        return;
    struct ct_dependency_walk *w = malloc(sizeof *w);
    if (!w)
        abort();
    ct_dependency_walk(&p, root.path, name, w);
    if (w->needing >= 0)
        snprintf(needing, size, "%s", w->objects[w->needing].path);
    roll_back(w, &root, via, caller, name, requested_ns, seen_ns);
    free(w);
}

static void failed(const struct ct_record *r, uint64_t requested_ns, uint64_t seen_ns)
{
    const char *name = text_of(CT_STR_LIB_NAME), *requester = text_of(CT_STR_LIB_REQUESTER);
    const char *via = text_of(CT_STR_LIB_VIA), *error = text_of(CT_STR_LIB_ERROR);
    static char needing[PATH_MAX];
    if (*via) {
        failed_dependency(name, via, requester, needing, sizeof needing, requested_ns, seen_ns);
        requester = needing;
    }
    struct ct_ld_process p = ct_process_loader_view();
    struct ct_ld_result *search = malloc(sizeof *search);
    if (!search)
        abort();
    ct_ld_search(&p, name, requester, search);
    if (!*error && search->found_in != CT_LD_NOT_FOUND && ct_library_described(search->path)) {
        /* No error reached the program, and the file the loader would find
         * is one the process has mapped under another name: glibc matches
         * by file identity too, so this dlopen got that object. */
        struct ct_loader_event e = {.requested_as = name,
                                    .requested_by = requester,
                                    .requested_from = text_of(CT_STR_LIB_PYTHON),
                                    .found_via = ct_value_via_already_loaded,
                                    .path = search->path,
                                    .loaded_ns = requested_ns,
                                    .seen_by = ct_value_seen_by_preload,
                                    .how = how_name(CT_LIB_ALREADY),
                                    .requested_ns = requested_ns};
        ct_library_track_loader(&e, seen_ns);
        free(search);
        return;
    }
    char reason[4200];
    if (!*error) {
        if (*search->unloadable)
            snprintf(reason, sizeof reason,
                     "%s exists but could not be loaded (another architecture, or one of its "
                     "own dependencies is missing)",
                     search->unloadable);
        else
            snprintf(reason, sizeof reason, "not found in the directories searched");
        error = reason;
    }
    struct ct_loader_event e = {.failed = 1,
                                .requested_as = name,
                                .requested_by = requester,
                                .requested_from = text_of(CT_STR_LIB_PYTHON),
                                .error = error,
                                .searched = search->searched,
                                .seen_by = ct_value_seen_by_preload,
                                .how = how_name(r->arg[2]),
                                .requested_ns = requested_ns,
                                .attempts = r->arg[4]};
    ct_library_track_loader(&e, seen_ns);
    free(search);
}

/* Written as it was asked: a query loads nothing, so it has no search or
 * error to work out. */
static void queried(const struct ct_record *r, uint64_t requested_ns, uint64_t seen_ns)
{
    struct ct_loader_event e = {.queried = 1,
                                .requested_as = text_of(CT_STR_LIB_NAME),
                                .requested_by = text_of(CT_STR_LIB_REQUESTER),
                                .requested_from = text_of(CT_STR_LIB_PYTHON),
                                .seen_by = ct_value_seen_by_preload,
                                .how = how_name(r->arg[2]),
                                .requested_ns = requested_ns,
                                .attempts = r->arg[4]};
    ct_library_track_loader(&e, seen_ns);
}

void ct_loader_events_record(const struct ct_record *r)
{
    if (r->arg[0] != current.key)
        current = (struct event_strings){.key = r->arg[0]}; /* its strings were lost */
    uint64_t seen_ns = ct_clock_map_ns(r->end);
    uint64_t requested_ns = r->begin ? ct_clock_map_ns(r->begin) : seen_ns;
    if (requested_ns > seen_ns)
        requested_ns = seen_ns;
    switch (r->func) {
    case CT_LIB_LOADED:
        loaded(r, requested_ns, seen_ns);
        break;
    case CT_LIB_FAILED:
        failed(r, requested_ns, seen_ns);
        break;
    case CT_LIB_QUERIED:
        queried(r, requested_ns, seen_ns);
        break;
    case CT_LIB_UNLOADED:
        ct_library_track_unload(text_of(CT_STR_LIB_PATH), seen_ns, NULL);
        break;
    default:
        break;
    }
}

/*
 * The CUDA libraries of a process from the trace's library instants
 * (libraries.h). The inventory ("cuda.library") and the loader's accounts
 * ("cuda.library.load") come from different scans, so each account is
 * attached to the library it mapped once the whole trace is read, as are
 * the versions the libraries' own APIs reported and the unloads. Where the
 * audit module ran, its account is the loader's own and the preload's
 * reconstruction is left out (the tests compare the two). A failed name is
 * a failure only when its requester got that library by no name: the
 * others are probes, kept with the library they found. RTLD_NOLOAD queries
 * ("cuda.library.query", the preload's) are no failures either; the audit
 * module sees each as a failed search, taken back here.
 */
#include "viewer-export/model/libraries.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "common/array.h"
#include "common/library_family.h"
#include "common/string_table.h"

static void add_library(struct ct_library_view *l, const struct ct_event *e)
{
    l->mapped = ct_array_grow(l->mapped, l->mapped_count, sizeof *l->mapped);
    l->mapped[l->mapped_count++] =
        (struct ct_library_entry){.path = ct_event_text(e, ct_key_path),
                                  .realpath = ct_event_text(e, ct_key_realpath),
                                  .family = ct_event_text(e, ct_key_family),
                                  .soname = ct_event_text(e, ct_key_soname),
                                  .version = ct_event_text(e, ct_key_version),
                                  .version_from = ct_event_text(e, ct_key_version_from),
                                  .build_id = ct_event_text(e, ct_key_build_id),
                                  .size = (uint64_t)ct_event_int(e, ct_key_size, 0),
                                  .built_for_cuda = ct_event_int(e, ct_key_built_for_cuda, 0)};
}

/* Traces from before the preload had a loader view carry no "seen_by":
 * their accounts were all the audit module's. */
static const char *seen_by(const struct ct_event *e)
{
    const char *who = ct_event_text(e, ct_key_seen_by);
    return *who ? who : ct_value_seen_by_audit;
}

/* The loader's account of a load; attached to the library it mapped once the
 * whole trace is read (the two come from different scans). */
static void add_load(struct ct_library_view *l, const struct ct_event *e)
{
    l->loads = ct_array_grow(l->loads, l->load_count, sizeof *l->loads);
    l->loads[l->load_count++] =
        (struct ct_library_entry){.path = ct_event_text(e, ct_key_path),
                                  .realpath = ct_event_text(e, ct_key_realpath),
                                  .requested_as = ct_event_text(e, ct_key_requested_as),
                                  .requested_by = ct_event_text(e, ct_key_requested_by),
                                  .requested_from = ct_event_text(e, ct_key_requested_from),
                                  .found_via = ct_event_text(e, ct_key_found_via),
                                  .runpath_copy = ct_event_text(e, ct_key_runpath_copy),
                                  .expected_dirs = ct_event_text(e, ct_key_expected_dirs),
                                  .expected_version = ct_event_text(e, ct_key_expected_version),
                                  .expected_package = ct_event_text(e, ct_key_expected_package),
                                  .expected_by = ct_event_text(e, ct_key_expected_by),
                                  .seen_by = seen_by(e),
                                  .loaded_ns = e->ts};
}

static void add_unload(struct ct_library_view *l, const struct ct_event *e)
{
    l->unloads = ct_array_grow(l->unloads, l->unload_count, sizeof *l->unloads);
    l->unloads[l->unload_count++] =
        (struct ct_library_entry){.realpath = ct_event_text(e, ct_key_realpath),
                                  .rolled_back_by = ct_event_text(e, ct_key_rolled_back_by),
                                  .loaded_ns = e->ts};
}

/* A library's own version as its API reports it: the runtime's 12040 is
 * "12.4"; cuBLAS's and NCCL's major * 10000 + minor * 100 + patch, "2.28.9". */
static const char *format_api_version(const char *family, uint64_t v)
{
    char text[32];
    if (strcmp(family, "cudart") == 0)
        snprintf(text, sizeof text, "%llu.%llu", (unsigned long long)v / 1000,
                 (unsigned long long)(v % 1000) / 10);
    else
        snprintf(text, sizeof text, "%llu.%llu.%llu", (unsigned long long)v / 10000,
                 (unsigned long long)(v % 10000) / 100, (unsigned long long)v % 100);
    return ct_strings_get(ct_strings_intern_cstr(text));
}

/* Where the audit module ran, its account is the loader's own and the
 * preload's reconstruction is left out (tests compare the two). */
static const char *chosen_view(const struct ct_library_view *l)
{
    for (size_t i = 0; i < l->load_count; i++)
        if (strcmp(l->loads[i].seen_by, ct_value_seen_by_audit) == 0)
            return ct_value_seen_by_audit;
    for (size_t i = 0; i < l->failed_count; i++)
        if (strcmp(l->failed[i].seen_by, ct_value_seen_by_audit) == 0)
            return ct_value_seen_by_audit;
    return ct_value_seen_by_preload;
}

/* The Python line the preload saw ask for a failure the audit module also
 * saw (by the same name and requester), or "". */
static const char *python_line_of(const struct ct_library_view *l, const struct ct_failed_load *f)
{
    for (size_t i = 0; i < l->failed_count; i++)
        if (*l->failed[i].requested_from &&
            strcmp(l->failed[i].requested_as, f->requested_as) == 0 &&
            strcmp(l->failed[i].requested_by, f->requested_by) == 0)
            return l->failed[i].requested_from;
    return "";
}

static void keep_failed_loads_of(struct ct_library_view *l, const char *view)
{
    for (size_t i = 0; i < l->failed_count; i++)
        if (!*l->failed[i].requested_from)
            l->failed[i].requested_from = python_line_of(l, &l->failed[i]);
    size_t kept = 0;
    for (size_t i = 0; i < l->failed_count; i++)
        if (strcmp(l->failed[i].seen_by, view) == 0)
            l->failed[kept++] = l->failed[i];
    l->failed_count = kept;
}

static void attach_unloads(struct ct_library_view *l)
{
    for (size_t i = 0; i < l->unload_count; i++)
        for (size_t k = 0; k < l->mapped_count; k++)
            if (strcmp(l->mapped[k].realpath, l->unloads[i].realpath) == 0 &&
                l->unloads[i].loaded_ns >= l->mapped[k].loaded_ns) {
                l->mapped[k].unloaded_ns = l->unloads[i].loaded_ns;
                l->mapped[k].rolled_back_by = l->unloads[i].rolled_back_by;
            }
}

/* Each failed load's list of the libraries it rolled back, from theirs. */
static void attach_rolled_back(struct ct_library_view *l)
{
    for (size_t i = 0; i < l->failed_count; i++) {
        char list[8192] = "";
        for (size_t k = 0; k < l->mapped_count; k++) {
            const struct ct_library_entry *lib = &l->mapped[k];
            size_t used = strlen(list);
            if (lib->rolled_back_by && strcmp(lib->rolled_back_by, l->failed[i].requested_as) == 0)
                snprintf(list + used, sizeof list - used, "%s%s", used ? ":" : "", lib->realpath);
        }
        l->failed[i].rolled_back = ct_strings_get(ct_strings_intern_cstr(list));
    }
}

const char *ct_failed_load_searched(const struct ct_failed_load *load)
{
    if (strchr(load->requested_as, '/') && !*load->searched)
        return "absolute path, not searched";
    char text[8192];
    snprintf(text, sizeof text, "searched %s", *load->searched ? load->searched : "no directory");
    return ct_strings_get(ct_strings_intern_cstr(text));
}

const char *ct_requester_text(const char *requested_by, const char *requested_from)
{
    if (!requested_from || !*requested_from)
        return requested_by;
    char text[8192];
    snprintf(text, sizeof text, "%s (through %s)", requested_from, requested_by);
    return ct_strings_get(ct_strings_intern_cstr(text));
}

/* Only the preload sees which Python line asked; where the audit module's
 * account is the one kept, the line is taken from the preload's (for failed
 * loads in keep_failed_loads_of). */
static void take_python_requesters(struct ct_library_view *l)
{
    for (size_t i = 0; i < l->load_count; i++)
        for (size_t k = 0; *l->loads[i].requested_from && k < l->mapped_count; k++) {
            struct ct_library_entry *lib = &l->mapped[k];
            if ((!lib->requested_from || !*lib->requested_from) &&
                strcmp(lib->realpath, l->loads[i].realpath) == 0)
                lib->requested_from = l->loads[i].requested_from;
        }
}

/* The audit module cannot tell an RTLD_NOLOAD query from a load: each
 * query the preload saw is one failed search of its name in the audit
 * module's account, by the same requester. */
static void take_back_queried_searches(struct ct_library_view *l)
{
    for (size_t i = 0; i < l->query_count; i++) {
        uint64_t left = l->queries[i].attempts;
        for (size_t k = 0; k < l->failed_count && left; k++) {
            struct ct_failed_load *f = &l->failed[k];
            if (strcmp(f->seen_by, ct_value_seen_by_audit) != 0 ||
                strcmp(f->requested_as, l->queries[i].requested_as) != 0 ||
                strcmp(f->requested_by, l->queries[i].requested_by) != 0)
                continue;
            uint64_t taken = f->attempts < left ? f->attempts : left;
            f->attempts -= taken;
            left -= taken;
        }
    }
    size_t kept = 0;
    for (size_t k = 0; k < l->failed_count; k++)
        if (l->failed[k].attempts)
            l->failed[kept++] = l->failed[k];
    l->failed_count = kept;
}

/* The account (of either view: the audit module writes none for a name
 * found already loaded) by which `requested_by` got a file of `family`
 * that stayed mapped, with that file's entry in `library`; NULL when it
 * got none. */
static const struct ct_library_entry *load_that_got(const struct ct_library_view *l,
                                                    const char *family, const char *requested_by,
                                                    size_t *library)
{
    for (size_t i = 0; i < l->load_count; i++) {
        if (strcmp(l->loads[i].requested_by, requested_by) != 0)
            continue;
        for (size_t k = 0; k < l->mapped_count; k++) {
            const struct ct_library_entry *lib = &l->mapped[k];
            if (strcmp(lib->realpath, l->loads[i].realpath) == 0 &&
                strcmp(lib->family, family) == 0 &&
                !(lib->rolled_back_by && *lib->rolled_back_by)) {
                *library = k;
                return &l->loads[i];
            }
        }
    }
    return NULL;
}

/* The probes, each library's together in `mapped` order, and each
 * library's share of them. */
static void group_probes(struct ct_library_view *l, const struct ct_probe *found, size_t count)
{
    if (!count)
        return;
    l->probes = malloc(count * sizeof *l->probes);
    if (!l->probes)
        abort();
    for (size_t k = 0; k < l->mapped_count; k++) {
        l->mapped[k].probes = l->probes + l->probe_count;
        for (size_t i = 0; i < count; i++)
            if (found[i].library == k)
                l->probes[l->probe_count++] = found[i];
        l->mapped[k].probe_count = (size_t)(l->probes + l->probe_count - l->mapped[k].probes);
    }
}

/* A failed name is a probe when its requester got the same library (its
 * family) by another name; only a library it got by no name failed. */
static void separate_probes(struct ct_library_view *l)
{
    struct ct_probe *found = NULL;
    size_t count = 0, kept = 0;
    for (size_t i = 0; i < l->failed_count; i++) {
        const struct ct_failed_load *f = &l->failed[i];
        char family[64];
        size_t library = 0;
        const struct ct_library_entry *load =
            ct_library_family(f->requested_as, family, sizeof family)
                ? load_that_got(l, family, f->requested_by, &library)
                : NULL;
        if (!load) {
            l->failed[kept++] = *f;
            continue;
        }
        found = ct_array_grow(found, count, sizeof *found);
        found[count++] = (struct ct_probe){f->requested_as, f->requested_by, f->requested_from,
                                           f->seen_by,      f->attempts,     load->requested_as,
                                           library};
    }
    l->failed_count = kept;
    group_probes(l, found, count);
    free(found);
}

void ct_libraries_attach(struct ct_library_view *l)
{
    const char *view = chosen_view(l);
    keep_failed_loads_of(l, view);
    take_back_queried_searches(l);
    for (size_t i = 0; i < l->version_count; i++)
        for (size_t k = 0; k < l->mapped_count; k++)
            if (strcmp(l->mapped[k].realpath, l->versions[i].realpath) == 0) {
                l->mapped[k].version =
                    format_api_version(l->mapped[k].family, l->versions[i].api_version);
                l->mapped[k].version_from = "api"; /* the report's word: not in the trace */
            }
    for (size_t i = 0; i < l->load_count; i++) {
        for (size_t k = 0; k < l->mapped_count; k++) {
            struct ct_library_entry *lib = &l->mapped[k];
            if (strcmp(lib->realpath, l->loads[i].realpath) == 0 && !lib->requested_as &&
                strcmp(l->loads[i].seen_by, view) == 0) {
                lib->requested_as = l->loads[i].requested_as;
                lib->requested_by = l->loads[i].requested_by;
                lib->requested_from = l->loads[i].requested_from;
                lib->found_via = l->loads[i].found_via;
                lib->runpath_copy = l->loads[i].runpath_copy;
                lib->expected_dirs = l->loads[i].expected_dirs;
                lib->expected_version = l->loads[i].expected_version;
                lib->expected_package = l->loads[i].expected_package;
                lib->expected_by = l->loads[i].expected_by;
                lib->seen_by = l->loads[i].seen_by;
                lib->loaded_ns = l->loads[i].loaded_ns;
                break;
            }
        }
    }
    take_python_requesters(l);
    attach_unloads(l);
    separate_probes(l);
    attach_rolled_back(l);
}

static int same_failure(const struct ct_failed_load *a, const struct ct_failed_load *b)
{
    return strcmp(a->requested_as, b->requested_as) == 0 &&
           strcmp(a->requested_by, b->requested_by) == 0 && strcmp(a->searched, b->searched) == 0 &&
           strcmp(a->error, b->error) == 0 && strcmp(a->seen_by, b->seen_by) == 0;
}

/* A load retried in a loop fails the same way each time: one entry, counted. */
static void add_failed_load(struct ct_library_view *l, const struct ct_event *e)
{
    struct ct_failed_load load = {ct_event_text(e, ct_key_requested_as),
                                  ct_event_text(e, ct_key_requested_by),
                                  ct_event_text(e, ct_key_searched),
                                  ct_event_text(e, ct_key_error),
                                  seen_by(e),
                                  (uint64_t)ct_event_int(e, ct_key_attempts, 1),
                                  ct_event_text(e, ct_key_missing),
                                  ct_event_text(e, ct_key_other_majors),
                                  "",
                                  ct_event_text(e, ct_key_requested_from)};
    for (size_t i = 0; i < l->failed_count; i++)
        if (same_failure(&l->failed[i], &load)) {
            l->failed[i].attempts += load.attempts;
            return;
        }
    l->failed = ct_array_grow(l->failed, l->failed_count, sizeof *l->failed);
    l->failed[l->failed_count++] = load;
}

/* A query repeated (each step of a loop asking again) is one, counted. */
static void add_query(struct ct_library_view *l, const struct ct_event *e)
{
    struct ct_probe query = {.requested_as = ct_event_text(e, ct_key_requested_as),
                             .requested_by = ct_event_text(e, ct_key_requested_by),
                             .requested_from = ct_event_text(e, ct_key_requested_from),
                             .seen_by = seen_by(e),
                             .attempts = (uint64_t)ct_event_int(e, ct_key_attempts, 1)};
    for (size_t i = 0; i < l->query_count; i++)
        if (strcmp(l->queries[i].requested_as, query.requested_as) == 0 &&
            strcmp(l->queries[i].requested_by, query.requested_by) == 0) {
            l->queries[i].attempts += query.attempts;
            return;
        }
    l->queries = ct_array_grow(l->queries, l->query_count, sizeof *l->queries);
    l->queries[l->query_count++] = query;
}

static void add_missing_image(struct ct_library_view *l, const struct ct_event *e)
{
    l->missing_images =
        ct_array_grow(l->missing_images, l->missing_image_count, sizeof *l->missing_images);
    l->missing_images[l->missing_image_count++] =
        (struct ct_missing_image){ct_event_text(e, ct_key_kernel), ct_event_text(e, ct_key_library),
                                  ct_event_text(e, ct_key_archs)};
}

static void add_version(struct ct_library_view *l, const struct ct_event *e)
{
    l->versions = ct_array_grow(l->versions, l->version_count, sizeof *l->versions);
    l->versions[l->version_count++] =
        (struct ct_library_entry){.realpath = ct_event_text(e, ct_key_realpath),
                                  .api_version = (uint64_t)ct_event_int(e, ct_key_api_version, 0)};
}

int ct_libraries_instant(struct ct_library_view *l, const struct ct_event *e)
{
    if (strcmp(e->name, ct_event_no_kernel_image) == 0) {
        add_missing_image(l, e);
    } else if (strcmp(e->name, ct_event_library) == 0) {
        add_library(l, e);
    } else if (strcmp(e->name, ct_event_toolkit) == 0) {
        l->toolkit_root = ct_event_text(e, ct_key_root);
        l->toolkit_version = ct_event_text(e, ct_key_version);
    } else if (strcmp(e->name, ct_event_library_version) == 0) {
        add_version(l, e);
    } else if (strcmp(e->name, ct_event_library_load) == 0) {
        add_load(l, e);
    } else if (strcmp(e->name, ct_event_library_failed) == 0) {
        add_failed_load(l, e);
    } else if (strcmp(e->name, ct_event_library_query) == 0) {
        add_query(l, e);
    } else if (strcmp(e->name, ct_event_library_unload) == 0) {
        add_unload(l, e);
    } else {
        return 0;
    }
    return 1;
}

void ct_libraries_free(struct ct_library_view *l)
{
    free(l->mapped);
    free(l->failed);
    free(l->probes);
    free(l->queries);
    free(l->loads);
    free(l->versions);
    free(l->unloads);
    free(l->missing_images);
    memset(l, 0, sizeof *l);
}

/*
 * Writes what is known about the CUDA-stack libraries as instants on the
 * libraries track: one "cuda.library" per file mapped (described from the
 * file), one "cuda.library.load", "cuda.library.failed" or
 * "cuda.library.query" (an RTLD_NOLOAD dlopen of a name not loaded, which
 * loads nothing) per account the loader gave (who asked, by which name,
 * through which search list; for a dependency that failed, every other one
 * missing with it and the other majors of them installed), the unloads
 * (marked when a failed load undid them), the versions the libraries' own
 * APIs report, the toolkit the environment points at, and the whole
 * inventory again at the end.
 */
#include "collector/tracks/library_track.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudatrace/trace_names.h"
#include "collector/libraries/own_dirs.h"
#include "collector/perfetto/clock_map.h"
#include "common/library_family.h"
#include "collector/libraries/inventory.h"
#include "collector/libraries/loader_log.h"
#include "collector/libraries/missing_set.h"
#include "collector/perfetto/process_tracks.h"
#include "collector/libraries/wheel_metadata.h"

/* A file named `name` in one of the ':'-separated `dirs`, other than the
 * file `other` (any, when NULL): 1, with its path in `out`. */
static int copy_in(const char *dirs, const char *name, const char *other, char *out, size_t size)
{
    char other_real[PATH_MAX], real[PATH_MAX];
    if (other && !realpath(other, other_real))
        return 0;
    for (const char *at = dirs; *at;) {
        size_t len = strcspn(at, ":");
        char candidate[8192];
        snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, at, name);
        if (realpath(candidate, real) && (!other || strcmp(real, other_real) != 0)) {
            snprintf(out, size, "%s", candidate);
            return 1;
        }
        at += len + (at[len] == ':');
    }
    return 0;
}

/* Every library's real path, in the order seen, for the closing inventory. */
static char *inventory;
static size_t inventory_len;
static uint64_t inventory_count;

static void note_in_inventory(const char *path)
{
    size_t len = strlen(path);
    char *grown = realloc(inventory, inventory_len + len + 2);
    if (!grown)
        abort();
    inventory = grown;
    memcpy(inventory + inventory_len, path, len);
    inventory_len += len;
    inventory[inventory_len++] = '\n';
    inventory[inventory_len] = '\0';
    inventory_count++;
}

static void library_instant(const struct ct_library *lib, void *ctx)
{
    static uint64_t order;
    uint64_t ts = *(const uint64_t *)ctx;
    note_in_inventory(lib->realpath);
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_path, lib->path),
        CT_TEXT_ARG(ct_key_realpath, lib->realpath),
        CT_TEXT_ARG(ct_key_family, lib->family),
        CT_TEXT_ARG(ct_key_soname, lib->soname),
        CT_TEXT_ARG(ct_key_version, lib->version),
        CT_TEXT_ARG(ct_key_version_from, lib->version_from),
        CT_TEXT_ARG(ct_key_build_id, lib->build_id),
        CT_UINT_ARG(ct_key_size, lib->size),
        CT_UINT_ARG(ct_key_order, order++),
        CT_UINT_ARG(ct_key_built_for_cuda, lib->built_for_cuda),
    };
    size_t nargs = sizeof args / sizeof args[0] - (lib->built_for_cuda == 0);
    ct_process_instant(CT_TRACK_LIBRARIES, ts, ct_event_library, args, (int)nargs);
}

/* Found outside the requester's own search path, though that path names
 * directories meant for its libraries (a pip nvidia/ tree, $ORIGIN) and no
 * copy is there: the directories it expected, and the version its wheel
 * pins, when it came from one. */
static int expected_elsewhere(const struct ct_loader_event *e, const struct ct_ld_process *process,
                              struct ct_arg *args)
{
    static const char *const fallbacks[] = {ct_value_via_cache, ct_value_via_default,
                                            ct_value_via_library_path};
    int fell_back = 0;
    for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++)
        fell_back |= strcmp(e->found_via, fallbacks[i]) == 0;
    char dirs[8192], family[64], copy[8192];
    if (!fell_back)
        return 0;
    ct_ld_own_dirs(process, e->requested_by, 1, dirs, sizeof dirs);
    if (!*dirs || copy_in(dirs, e->requested_as, NULL, copy, sizeof copy))
        return 0;
    int n = 0;
    args[n++] = CT_TEXT_ARG(ct_key_expected_dirs, dirs);
    struct ct_wheel_requirement pin;
    if (ct_library_family(e->path, family, sizeof family) &&
        ct_wheel_requirement(e->requested_by, family, &pin) == 0) {
        args[n++] = CT_TEXT_ARG(ct_key_expected_version, pin.version);
        args[n++] = CT_TEXT_ARG(ct_key_expected_package, pin.package);
        args[n++] = CT_TEXT_ARG(ct_key_expected_by, pin.distribution);
    }
    return n;
}

/* What the requester's own RUNPATH (else RPATH) says of the file the
 * loader took: another copy there, which it was shadowed by (runpath_copy),
 * or none where it expected one (expected_dirs). */
static int requesters_own_copy(const struct ct_loader_event *e, struct ct_arg *args)
{
    static char dirs[8192], copy[8192];
    if (strchr(e->requested_as, '/'))
        return 0;
    struct ct_ld_process process = ct_process_loader_view();
    ct_ld_own_dirs(&process, e->requested_by, 0, dirs, sizeof dirs);
    if (copy_in(dirs, e->requested_as, e->path, copy, sizeof copy)) {
        args[0] = CT_TEXT_ARG(ct_key_runpath_copy, copy);
        return 1;
    }
    return expected_elsewhere(e, &process, args);
}

/* A dependency that could not be loaded: every other one of the requester
 * that cannot be found either, and the other majors of them installed. */
static int missing_dependencies(const struct ct_loader_event *e, struct ct_arg *args)
{
    static char missing[4096], other_majors[8192];
    struct ct_ld_process process = ct_process_loader_view();
    if (!ct_missing_set(&process, e->requested_as, e->requested_by, ct_process_toolkit_home(),
                        missing, sizeof missing, other_majors, sizeof other_majors))
        return 0;
    args[0] = CT_TEXT_ARG(ct_key_missing, missing);
    args[1] = CT_TEXT_ARG(ct_key_other_majors, other_majors);
    return 2;
}

void ct_library_track_loader(const struct ct_loader_event *e, uint64_t ts)
{
    char real[4096];
    struct ct_arg args[14];
    int n = 0;
    args[n++] = CT_TEXT_ARG(ct_key_requested_as, e->requested_as);
    args[n++] = CT_TEXT_ARG(ct_key_requested_by, e->requested_by);
    args[n++] = CT_TEXT_ARG(ct_key_seen_by, e->seen_by);
    if (e->requested_from && *e->requested_from)
        args[n++] = CT_TEXT_ARG(ct_key_requested_from, e->requested_from);
    if (e->how)
        args[n++] = CT_TEXT_ARG(ct_key_how, e->how);
    if (e->requested_ns)
        args[n++] = CT_UINT_ARG(ct_key_requested_ns, e->requested_ns);
    if (e->attempts > 1)
        args[n++] = CT_UINT_ARG(ct_key_attempts, e->attempts);
    const char *event = ct_event_library_load;
    if (e->queried) {
        event = ct_event_library_query;
    } else if (e->failed) {
        event = ct_event_library_failed;
        args[n++] = CT_TEXT_ARG(ct_key_searched, e->searched);
        args[n++] = CT_TEXT_ARG(ct_key_error, e->error);
        n += missing_dependencies(e, args + n);
    } else {
        args[n++] = CT_TEXT_ARG(ct_key_found_via, e->found_via);
        args[n++] = CT_TEXT_ARG(ct_key_path, e->path);
        args[n++] = CT_TEXT_ARG(ct_key_realpath, realpath(e->path, real) ? real : e->path);
        n += requesters_own_copy(e, args + n);
    }
    /* A load is placed when the loader opened the file; a failure or a
     * query when seen. */
    ct_process_instant(CT_TRACK_LIBRARIES, e->loaded_ns ? e->loaded_ns : ts, event, args, n);
}

/* An unload the audit log reports is one a failed load rolled back: the
 * file is described now, as no scan may have seen it mapped. */
static void audit_event(const struct ct_loader_event *e, void *ctx)
{
    if (!e->unloaded) {
        ct_library_track_loader(e, *(const uint64_t *)ctx);
        return;
    }
    ct_library_track_note_file(e->path, e->loaded_ns);
    ct_library_track_unload(e->path, e->loaded_ns, e->rolled_back_by);
}

void ct_library_track_note_file(const char *path, uint64_t ts)
{
    ct_library_describe_new(path, library_instant, &ts);
}

void ct_library_track_unload(const char *path, uint64_t ts, const char *rolled_back_by)
{
    char real[4096];
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_path, path),
        CT_TEXT_ARG(ct_key_realpath, realpath(path, real) ? real : path),
        CT_TEXT_ARG(ct_key_rolled_back_by, rolled_back_by ? rolled_back_by : ""),
    };
    ct_process_instant(CT_TRACK_LIBRARIES, ts, ct_event_library_unload, args,
                       rolled_back_by ? 3 : 2);
}

int ct_library_track_scan(int process_ended)
{
    uint64_t now = ct_clock_map_now_ns();
    ct_loader_log_read(ct_process.pid, audit_event, &now);
    if (!process_ended)
        return ct_library_scan(ct_process.pid, library_instant, &now);
    ct_loader_log_finish(audit_event, &now);
    return 1;
}

/* The toolkit the process's environment points at: $CUDA_HOME, else
 * /usr/local/cuda; its version from the directory name (cuda-13.0). */
static void toolkit_instant(void)
{
    char root[4096] = "", version[64] = "";
    const char *home = ct_process_toolkit_home();
    if (!realpath(home, root))
        return;
    const char *dash = strstr(root, "/cuda-");
    if (dash)
        snprintf(version, sizeof version, "%.*s", (int)strcspn(dash + 6, "/"), dash + 6);
    struct ct_arg args[] = {
        CT_TEXT_ARG(ct_key_home, home),
        CT_TEXT_ARG(ct_key_root, root),
        CT_TEXT_ARG(ct_key_version, version),
    };
    ct_process_instant(CT_TRACK_LIBRARIES, ct_process.start_ns, ct_event_toolkit, args, 3);
}

void ct_library_track_start(void)
{
    toolkit_instant();
}

void ct_library_track_version(uint64_t version, uint32_t path)
{
    char real[4096];
    const char *name = ct_strings_get(path);
    struct ct_arg args[] = {
        {ct_strings_intern_cstr(ct_key_path), CT_ARG_STRING, path},
        CT_TEXT_ARG(ct_key_realpath, realpath(name, real) ? real : name),
        CT_UINT_ARG(ct_key_api_version, version),
    };
    ct_process_instant(CT_TRACK_LIBRARIES, ct_process.start_ns, ct_event_library_version, args, 3);
}

void ct_library_track_finish(uint64_t end_ns)
{
    struct ct_arg args[] = {
        CT_UINT_ARG(ct_key_count, inventory_count),
        {ct_strings_intern_cstr(ct_key_libraries), CT_ARG_STRING,
         ct_strings_intern(inventory ? inventory : "", inventory_len)},
    };
    ct_process_instant(CT_TRACK_LIBRARIES, end_ns, ct_event_library_inventory, args, 2);
}

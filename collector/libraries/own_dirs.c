/*
 * The directories an object's own search path names, and which of them its
 * packager meant its libraries to come from: written relative to $ORIGIN,
 * or inside a pip nvidia/ or a conda tree (a system directory on it is not
 * that). The library track asks, of a library the loader found elsewhere,
 * whether its requester expected a copy of its own there.
 */
#include "collector/libraries/own_dirs.h"
#include "common/entry_list.h"

#include <stdio.h>
#include <string.h>

/* Whether a search-path entry (`entry` as written, `dir` expanded) is where
 * the object's packager meant its libraries to come from: relative to the
 * object itself, or inside a pip nvidia/ or a conda tree. A system
 * directory on it is not that. */
static int meant_for_its_libraries(const char *entry, const char *dir)
{
    return strstr(entry, "$ORIGIN") || strstr(entry, "${ORIGIN}") || strstr(dir, "/nvidia/") ||
           strstr(dir, "conda");
}

/* Removes "." and "dir/.." from an absolute path, in place, without asking
 * the file system (the directory may well not exist: that is the point). */
static void normalise(char *path)
{
    char *out = path;
    for (const char *at = path; *at;) {
        while (*at == '/')
            at++;
        size_t len = strcspn(at, "/");
        if (len == 2 && strncmp(at, "..", 2) == 0) {
            while (out > path && *--out != '/')
                ;
        } else if (len && !(len == 1 && *at == '.')) {
            *out++ = '/';
            memmove(out, at, len);
            out += len;
        }
        at += len;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
}

void ct_ld_own_dirs(const struct ct_ld_process *process, const char *requester, int meant_only,
                    char *out, size_t size)
{
    struct ct_ld_object o;
    out[0] = '\0';
    ct_ld_read_object(process, requester, &o);
    const char *paths = o.has_runpath ? o.runpath : o.rpath;
    for (const char *at = paths; *at;) {
        size_t len = strcspn(at, ":");
        char entry[4096], dir[4096];
        if (len < sizeof entry) {
            snprintf(entry, sizeof entry, "%.*s", (int)len, at);
            if (ct_ld_entry_dir(process, entry, o.origin, dir, sizeof dir) == 0 &&
                (!meant_only || meant_for_its_libraries(entry, dir))) {
                normalise(dir);
                ct_list_add_distinct(out, size, ':', dir);
            }
        }
        at += len + (at[len] == ':');
    }
}

/*
 * What else a library needs that is not there (missing_set.h): the names
 * come from replaying ld.so's walk of the requester's dependencies
 * (dependency_walk.c), the other majors from looking, for each missing
 * libNAME.so.N, for libNAME.so.M beside it: in the directories its search
 * tried and in the toolkit's lib directory, where a machine with another
 * CUDA release keeps its libraries. Majors are tried up to a few past the
 * wanted one, so the look is a bounded number of access() calls.
 */
#include "collector/libraries/missing_set.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/elf/elf_file.h"
#include "collector/libraries/dependency_walk.h"
#include "common/entry_list.h"

/* How many majors past the one wanted are looked for (CUDA 12 -> 13 is one). */
#define MAJORS_AHEAD 8

struct needed_name {
    const char *name;
    int found;
};

static int names_it(const char *needed, void *ctx)
{
    struct needed_name *n = ctx;
    n->found = strcmp(needed, n->name) == 0;
    return n->found;
}

static int needs(const char *requester, const char *name)
{
    struct needed_name n = {name, 0};
    struct ct_elf elf;
    if (ct_elf_open(requester, &elf) == 0) {
        ct_elf_each_dynamic_string(&elf, DT_NEEDED, names_it, &n);
        ct_elf_close(&elf);
    }
    return n.found;
}

/* The toolkit's lib directory, symlinks resolved ("" when there is none). */
static void toolkit_lib(const char *home, char *out)
{
    static const char *const subdirs[] = {"lib64", "lib"};
    out[0] = '\0';
    for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0] && !out[0]; i++) {
        char dir[PATH_MAX + 8];
        snprintf(dir, sizeof dir, "%s/%s", home, subdirs[i]);
        if (!realpath(dir, out))
            out[0] = '\0';
    }
}

/* libNAME.so.N: N, with the length of "libNAME.so."; -1 for another form. */
static long soname_major(const char *name, size_t *prefix)
{
    const char *so = strstr(name, ".so.");
    if (!so)
        return -1;
    char *end;
    long major = strtol(so + 4, &end, 10);
    if (end == so + 4 || *end)
        return -1;
    *prefix = (size_t)(so + 4 - name);
    return major;
}

static void add_other_majors(const char *name, const char *dir, char *out, size_t size)
{
    size_t prefix;
    long major = soname_major(name, &prefix);
    for (long m = 0; major >= 0 && m <= major + MAJORS_AHEAD; m++) {
        char candidate[PATH_MAX * 2];
        snprintf(candidate, sizeof candidate, "%s/%.*s%ld", dir, (int)prefix, name, m);
        if (m != major && access(candidate, F_OK) == 0)
            ct_list_add_distinct(out, size, ':', candidate);
    }
}

/* Each directory once, however it is spelt (/usr/local/cuda/lib64 is the
 * toolkit's lib directory through two symlinks). */
static void real_dirs(const char *searched, const char *toolkit_home, char *out, size_t size)
{
    char dir[PATH_MAX], real[PATH_MAX];
    out[0] = '\0';
    for (const char *at = searched; ct_list_next(&at, ':', dir, sizeof dir);)
        if (realpath(dir, real))
            ct_list_add_distinct(out, size, ':', real);
    toolkit_lib(toolkit_home, real);
    if (*real)
        ct_list_add_distinct(out, size, ':', real);
}

static void other_majors_of(const char *missing, const char *dirs, char *out, size_t size)
{
    char name[256], dir[PATH_MAX];
    out[0] = '\0';
    for (const char *n = missing; ct_list_next(&n, ':', name, sizeof name);)
        for (const char *at = dirs; ct_list_next(&at, ':', dir, sizeof dir);)
            add_other_majors(name, dir, out, size);
}

int ct_missing_set(const struct ct_ld_process *process, const char *name, const char *requester,
                   const char *toolkit_home, char *missing, size_t missing_size, char *other_majors,
                   size_t other_size)
{
    if (strchr(name, '/') || !needs(requester, name))
        return 0;
    struct ct_dependency_walk *w = malloc(sizeof *w);
    if (!w)
        abort();
    ct_dependency_walk(process, requester, name, w);
    int found = w->needing == 0;
    if (found) {
        static char dirs[8192];
        snprintf(missing, missing_size, "%s", w->missing);
        real_dirs(w->searched, toolkit_home, dirs, sizeof dirs);
        other_majors_of(w->missing, dirs, other_majors, other_size);
    }
    free(w);
    return found;
}

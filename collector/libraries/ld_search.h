/*
 * How glibc's dynamic linker searches for a library by name, reconstructed
 * from the files alone (outside the traced process): which directories it
 * tries, in which order, from which search list, and which file it takes.
 * The bare-preload loader view uses it to say how a library was found and
 * where a failed load was looked for, as the rtld-audit module reports them.
 */
#ifndef CT_COLLECTOR_LD_SEARCH_H
#define CT_COLLECTOR_LD_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* The search lists, in the order ld.so consults them. */
enum ct_ld_list {
    CT_LD_ABSOLUTE,     /* the name has a '/': no search          */
    CT_LD_RPATH,        /* DT_RPATH of the requester, then of the main program */
    CT_LD_LIBRARY_PATH, /* LD_LIBRARY_PATH                        */
    CT_LD_RUNPATH,      /* DT_RUNPATH of the requester            */
    CT_LD_CACHE,        /* /etc/ld.so.cache                       */
    CT_LD_DEFAULT,      /* the default directories                */
    CT_LD_NOT_FOUND,
};

/* What the process the search happens in looks like to the loader. */
struct ct_ld_process {
    const char *main_program;    /* path of the executable (DT_RPATH applies to all) */
    const char *ld_library_path; /* LD_LIBRARY_PATH at process start, or NULL */
    /* The process's working directory, against which ld.so resolves empty
     * and relative search-path entries (a leading ':' in LD_LIBRARY_PATH);
     * NULL leaves such entries out. */
    const char *cwd;
};

struct ct_ld_result {
    enum ct_ld_list found_in; /* CT_LD_NOT_FOUND when no list held a loadable file */
    char path[4096];          /* the file ld.so would open, or "" */
    /* Distinct directories tried, in order, ':'-separated (for ld.so.cache,
     * the directory of the file it gave), without the glibc-hwcaps and legacy
     * platform subdirectories. */
    char searched[8192];
    /* A candidate that exists but that ld.so cannot load, or "": the file
     * that ended the search when ld.so refuses one (not an ELF shared object,
     * or too short: the load then fails, found_in is CT_LD_NOT_FOUND and
     * searched ends with its directory), else the first one it skipped
     * (another ELF class or machine) before going on. */
    char unloadable[4096];
};

/* Searches for `name` as ld.so does when `requester` (the object whose
 * DT_NEEDED names it, or the dlopen caller) asks for it. */
void ct_ld_search(const struct ct_ld_process *process, const char *name, const char *requester,
                  struct ct_ld_result *out);

/* The list through which `loaded` (a path the process really mapped) was
 * found when `requester` asked for `name`: the first candidate in search
 * order that is the same file (device and inode). CT_LD_NOT_FOUND when no
 * candidate is. */
enum ct_ld_list ct_ld_found_via(const struct ct_ld_process *process, const char *name,
                                const char *requester, const char *loaded);

/* "absolute path", "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache",
 * "default directories", "unknown". */
const char *ct_ld_list_name(enum ct_ld_list list);

/* The search paths one object brings to a search. */
struct ct_ld_object {
    char rpath[4096]; /* "" when it has a DT_RUNPATH: ld.so ignores DT_RPATH then */
    char runpath[4096];
    int has_runpath;
    uint64_t flags_1;
    char origin[4096]; /* what $ORIGIN stands for; "" when unknown */
};

/* Reads the object at `path` (NULL: none) as the process's loader would. */
void ct_ld_read_object(const struct ct_ld_process *process, const char *path,
                       struct ct_ld_object *o);
/* The directory a search-path entry names, as an absolute path without a
 * trailing '/': ld.so takes an empty entry for the working directory and
 * drops one that expands to nothing. -1 when it is dropped, or relative
 * with no working directory known. */
int ct_ld_entry_dir(const struct ct_ld_process *process, const char *entry, const char *origin,
                    char *dir, size_t size);

#endif

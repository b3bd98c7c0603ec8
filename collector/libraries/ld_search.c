/*
 * Reconstructs, from the files alone, how glibc 2.36's dynamic linker on
 * x86-64 Debian 12 searches for a library asked for by name: the lists in
 * ld.so's order (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache,
 * the default directories), $ORIGIN/$LIB/$PLATFORM expansion, the
 * capability subdirectories it tries first in each directory (hwcaps.c),
 * the cache's answer (ld_cache.c) and its test of which files it can load.
 * Approximations: ld.so walks DT_RPATH up the
 * whole chain of loaders, this uses the requester's and then the main
 * program's; the process's GLIBC_TUNABLES/LD_HWCAP_MASK, secure-execution
 * rules, --inhibit-cache and --inhibit-rpath are not modelled; directories
 * ld.so already found missing are skipped by it in later searches, here
 * every directory is listed; names ld.so finds already loaded (by SONAME)
 * are never searched, which is the caller's to know; $LIB is Debian's
 * "lib/x86_64-linux-gnu"; the ELF ABI version of ELFOSABI_GNU objects and
 * the pre-glibc-2.2 ld.so.cache format are not checked or read.
 */
#include "collector/libraries/ld_search.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cudatrace/trace_names.h"
#include "collector/elf/elf_file.h"
#include "collector/libraries/hwcaps.h"
#include "collector/libraries/ld_cache.h"
#include "common/entry_list.h"

/* glibc's SYSTEM_DIRS on Debian 12 (`ld.so --help` lists them). */
static const char *const default_dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                           "/lib", "/usr/lib"};
/* What Debian's ld.so substitutes for $LIB (checked with LD_DEBUG=libs). */
static const char dst_lib[] = "lib/x86_64-linux-gnu";

enum verdict { ABSENT, LOADABLE, SKIPPED, REFUSED };

/* One search in progress: ct_ld_search and ct_ld_found_via walk the same
 * candidates in the same order, and differ in what a candidate means. */
struct walk {
    const struct ct_ld_process *process;
    const char *name;
    int (*visit)(struct walk *w, const char *candidate, enum ct_ld_list list); /* 1: stop */
    struct ct_ld_result *result; /* ct_ld_search's answer, or NULL */
    struct stat loaded;          /* ct_ld_found_via's file */
    enum ct_ld_list via;
};

/* ---- candidates ---- */

/* Whether e_ident is one ld.so accepts once it knows the class is right. */
static int ident_valid(const unsigned char *id)
{
    for (int i = EI_PAD; i < EI_NIDENT; i++)
        if (id[i])
            return 0;
    return id[EI_DATA] == ELFDATA2LSB && id[EI_VERSION] == EV_CURRENT &&
           (id[EI_OSABI] == ELFOSABI_GNU ||
            (id[EI_OSABI] == ELFOSABI_SYSV && id[EI_ABIVERSION] == 0));
}

/* What ld.so's open_verify makes of a candidate: one it cannot open is
 * passed over, an ELF file of another class or machine is skipped, and any
 * other file it cannot use (not ELF, too short, not a shared object) ends
 * the load with an error: "invalid ELF header", "file too short". */
static enum verdict check_candidate(const char *path)
{
    Elf64_Ehdr eh;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ABSENT;
    int short_read = ct_elf_read_at(fd, &eh, sizeof eh, 0);
    close(fd);
    if (short_read || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        return REFUSED;
    if (eh.e_ident[EI_CLASS] != ELFCLASS64)
        return SKIPPED;
    if (!ident_valid(eh.e_ident) || eh.e_version != EV_CURRENT)
        return REFUSED;
    if (eh.e_machine != EM_X86_64)
        return SKIPPED;
    if ((eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || eh.e_phentsize != sizeof(Elf64_Phdr))
        return REFUSED;
    return LOADABLE;
}

static void note_searched(struct walk *w, const char *dir)
{
    if (w->result)
        ct_list_add_distinct(w->result->searched, sizeof w->result->searched, ':', dir);
}

static int visit_search(struct walk *w, const char *candidate, enum ct_ld_list list)
{
    struct ct_ld_result *r = w->result;
    enum verdict verdict = check_candidate(candidate);
    if (verdict == LOADABLE) {
        r->found_in = list;
        snprintf(r->path, sizeof r->path, "%s", candidate);
    } else if (verdict == REFUSED || (verdict == SKIPPED && !r->unloadable[0])) {
        snprintf(r->unloadable, sizeof r->unloadable, "%s", candidate);
    }
    return verdict == LOADABLE || verdict == REFUSED;
}

static int visit_same_file(struct walk *w, const char *candidate, enum ct_ld_list list)
{
    struct stat st;
    if (stat(candidate, &st) != 0 || st.st_dev != w->loaded.st_dev || st.st_ino != w->loaded.st_ino)
        return 0;
    w->via = list;
    return 1;
}

/* ---- search paths ---- */

/* Length of the token `token` at `at` (just after a '$'), as $TOKEN (not
 * followed by an identifier character) or ${TOKEN}; 0 when it is not there. */
static size_t token_length(const char *at, const char *token)
{
    int braced = at[0] == '{';
    size_t len = strlen(token);
    const char *rest = at + braced;
    if (strncmp(rest, token, len) != 0)
        return 0;
    char next = rest[len];
    if (braced)
        return next == '}' ? len + 2 : 0;
    if ((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z') ||
        (next >= '0' && next <= '9') || next == '_')
        return 0;
    return len;
}

/* Expands $ORIGIN, $PLATFORM and $LIB; -1 when ld.so drops the entry (a
 * token it has no value for) or it does not fit. */
static int expand_tokens(const char *in, const char *origin, char *out, size_t size)
{
    size_t used = 0;
    while (*in) {
        const char *value = NULL;
        size_t len = 0;
        if (*in == '$' && (len = token_length(in + 1, "ORIGIN")))
            value = origin;
        else if (*in == '$' && (len = token_length(in + 1, "PLATFORM")))
            value = ct_ld_cpu()->platform;
        else if (*in == '$' && (len = token_length(in + 1, "LIB")))
            value = dst_lib;
        if (len && !value[0])
            return -1;
        size_t n = len ? strlen(value) : 1;
        if (used + n >= size)
            return -1;
        memcpy(out + used, len ? value : in, n);
        used += n;
        in += len ? len + 1 : 1;
    }
    out[used] = '\0';
    return 0;
}

int ct_ld_entry_dir(const struct ct_ld_process *process, const char *entry, const char *origin,
                    char *dir, size_t size)
{
    char expanded[4096] = "";
    if (*entry && (expand_tokens(entry, origin, expanded, sizeof expanded) || !expanded[0]))
        return -1;
    size_t len = strlen(expanded);
    while (len > 1 && expanded[len - 1] == '/')
        expanded[--len] = '\0';
    const char *cwd = process->cwd;
    if (expanded[0] != '/' && !cwd)
        return -1;
    int n = expanded[0] == '/' ? snprintf(dir, size, "%s", expanded)
                               : snprintf(dir, size, "%s%s%s", cwd, len ? "/" : "", expanded);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* Tries the name in `dir`: in each capability subdirectory, then in it. */
static int walk_dir(struct walk *w, const char *dir, enum ct_ld_list list)
{
    const struct ct_ld_cpu *cpu = ct_ld_cpu();
    note_searched(w, dir);
    for (int i = 0; i < cpu->count; i++) {
        char candidate[8192];
        snprintf(candidate, sizeof candidate, "%s%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
                 cpu->subdirs[i], w->name);
        if (w->visit(w, candidate, list))
            return 1;
    }
    return 0;
}

/* Tries each entry of `paths` in turn; 1 when the walk is over. */
static int walk_paths(struct walk *w, const char *paths, const char *separators, const char *origin,
                      enum ct_ld_list list)
{
    if (!paths || !*paths)
        return 0;
    for (const char *at = paths;; at++) {
        size_t len = strcspn(at, separators);
        char entry[4096], dir[4096];
        if (len < sizeof entry) {
            memcpy(entry, at, len);
            entry[len] = '\0';
            if (ct_ld_entry_dir(w->process, entry, origin, dir, sizeof dir) == 0 &&
                walk_dir(w, dir, list))
                return 1;
        }
        at += len;
        if (!*at)
            return 0;
    }
}

static int in_default_dir(const char *path)
{
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++) {
        size_t len = strlen(default_dirs[i]);
        if (strncmp(path, default_dirs[i], len) == 0 && path[len] == '/')
            return 1;
    }
    return 0;
}

/* The cache entry, unless the requester has DF_1_NODEFLIB and the entry
 * lies in a default directory. */
static int walk_cache(struct walk *w, const struct ct_ld_object *requester)
{
    const char *path = ct_ld_cache_lookup(w->name);
    if (!path || ((requester->flags_1 & DF_1_NODEFLIB) && in_default_dir(path)))
        return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0'; /* a file at the root keeps "/" */
    note_searched(w, dir);
    return w->visit(w, path, CT_LD_CACHE);
}

static void walk_defaults(struct walk *w, const struct ct_ld_object *requester)
{
    if (requester->flags_1 & DF_1_NODEFLIB)
        return;
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++)
        if (walk_dir(w, default_dirs[i], CT_LD_DEFAULT))
            return;
}

/* What $ORIGIN stands for in an object's paths: the directory of the path
 * it was opened as (ld.so keeps the name it opened), or of the main
 * program's real path (ld.so reads /proc/self/exe). "" when unknown. */
static void object_origin(const char *path, const char *cwd, int is_main, char *out, size_t size)
{
    char real[PATH_MAX];
    out[0] = '\0';
    if (!path)
        return;
    if (is_main && realpath(path, real))
        path = real;
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(out, size, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else if (cwd)
        snprintf(out, size, "%s", cwd);
}

static void read_object(const char *path, const char *cwd, int is_main, struct ct_ld_object *o)
{
    struct ct_elf elf;
    uint64_t ignored;
    o->rpath[0] = o->runpath[0] = '\0';
    o->has_runpath = 0;
    o->flags_1 = 0;
    object_origin(path, cwd, is_main, o->origin, sizeof o->origin);
    if (!path || ct_elf_open(path, &elf))
        return;
    o->has_runpath = ct_elf_dynamic_value(&elf, DT_RUNPATH, &ignored) == 0;
    if (o->has_runpath)
        ct_elf_dynamic_string(&elf, DT_RUNPATH, o->runpath, sizeof o->runpath);
    else
        ct_elf_dynamic_string(&elf, DT_RPATH, o->rpath, sizeof o->rpath);
    if (ct_elf_dynamic_value(&elf, DT_FLAGS_1, &o->flags_1))
        o->flags_1 = 0;
    ct_elf_close(&elf);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

void ct_ld_read_object(const struct ct_ld_process *process, const char *path,
                       struct ct_ld_object *o)
{
    read_object(path, process->cwd, same_file(path, process->main_program), o);
}

/* The lists in ld.so's order (_dl_map_object). */
static void walk(struct walk *w, const char *requester)
{
    const struct ct_ld_process *p = w->process;
    struct ct_ld_object req, program;
    int requester_is_main = same_file(requester, p->main_program);
    read_object(requester, p->cwd, requester_is_main, &req);
    read_object(p->main_program, p->cwd, 1, &program);
    if (!req.has_runpath &&
        (walk_paths(w, req.rpath, ":", req.origin, CT_LD_RPATH) ||
         (!requester_is_main && walk_paths(w, program.rpath, ":", program.origin, CT_LD_RPATH))))
        return;
    if (walk_paths(w, p->ld_library_path, ":;", program.origin, CT_LD_LIBRARY_PATH) ||
        walk_paths(w, req.runpath, ":", req.origin, CT_LD_RUNPATH) || walk_cache(w, &req))
        return;
    walk_defaults(w, &req);
}

/* A name with a '/' is opened as it is, after token expansion. */
static void search_path_name(struct walk *w, const char *requester)
{
    char origin[4096], expanded[4096];
    const char *cwd = w->process->cwd;
    object_origin(requester, cwd, same_file(requester, w->process->main_program), origin,
                  sizeof origin);
    if (expand_tokens(w->name, origin, expanded, sizeof expanded) || (expanded[0] != '/' && !cwd))
        return;
    char path[8192];
    snprintf(path, sizeof path, "%s%s%s", expanded[0] == '/' ? "" : cwd,
             expanded[0] == '/' ? "" : "/", expanded);
    w->visit(w, path, CT_LD_ABSOLUTE);
}

void ct_ld_search(const struct ct_ld_process *process, const char *name, const char *requester,
                  struct ct_ld_result *out)
{
    struct walk w = {.process = process, .name = name, .visit = visit_search, .result = out};
    out->found_in = CT_LD_NOT_FOUND;
    out->path[0] = out->searched[0] = out->unloadable[0] = '\0';
    if (strchr(name, '/'))
        search_path_name(&w, requester);
    else
        walk(&w, requester);
}

enum ct_ld_list ct_ld_found_via(const struct ct_ld_process *process, const char *name,
                                const char *requester, const char *loaded)
{
    struct walk w = {.process = process, .name = name, .visit = visit_same_file};
    if (strchr(name, '/'))
        return CT_LD_ABSOLUTE;
    if (stat(loaded, &w.loaded) != 0)
        return CT_LD_NOT_FOUND;
    w.via = CT_LD_NOT_FOUND;
    walk(&w, requester);
    return w.via;
}

const char *ct_ld_list_name(enum ct_ld_list list)
{
    switch (list) {
    case CT_LD_ABSOLUTE:
        return ct_value_via_absolute;
    case CT_LD_RPATH:
        return ct_value_via_rpath;
    case CT_LD_LIBRARY_PATH:
        return ct_value_via_library_path;
    case CT_LD_RUNPATH:
        return ct_value_via_runpath;
    case CT_LD_CACHE:
        return ct_value_via_cache;
    case CT_LD_DEFAULT:
        return ct_value_via_default;
    default:
        return ct_value_via_unknown;
    }
}

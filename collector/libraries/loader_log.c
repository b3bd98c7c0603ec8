/*
 * Follows the text log that preload/audit/audit.c writes into a memfd inside the
 * traced process. The collector finds that memfd among /proc/PID/fd and keeps
 * its own descriptor, so the log stays readable after the process is gone.
 * Each load is a run of lines: "S 1 REQUESTER\tNAME" (the name asked for),
 * "S FLAG REQUESTER\tCANDIDATE" per path tried, then "O NS PATH" when a file
 * was opened. A run that ends without "O" (at the next "S 1", at "U", at "C",
 * or at the end) is a failed load; its candidates give the directories
 * searched. "U NS PATH" is an unload: one of an object opened since the last
 * "C", after a failed load, is ld.so undoing the dlopen that failed; other
 * unloads (dlclose) are the preload's and the scans' to report.
 */
#include "collector/libraries/loader_log.h"

#include "cudatrace/trace_names.h"
#include "collector/elf/elf_file.h"
#include "collector/libraries/hwcaps.h"

#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINE 12288

static int log_fd = -1;
static uint64_t log_offset;
static char partial[MAX_LINE];
static size_t partial_len;

static struct {
    int open; /* a search has begun */
    char name[4096], requester[4096];
    char searched[8192];  /* distinct directories, ':'-separated */
    char last_path[4096]; /* the path tried most recently, and from which list */
    unsigned int last_flag;
    int tried_library_path; /* an LD_LIBRARY_PATH candidate came before */
    char existing[4096];    /* a candidate that exists on disk, yet was not loaded */
} search;

/* The objects opened since the link map was last consistent (the current
 * dlopen's), and the name the first failed load among them failed on. */
#define MAX_OPENED 32
static struct {
    char paths[MAX_OPENED][4096];
    int count;
    char failed_on[4096];
} opened;

static int opened_now(const char *path)
{
    for (int i = 0; i < opened.count; i++)
        if (strcmp(opened.paths[i], path) == 0)
            return 1;
    return 0;
}

/* LA_SER_RUNPATH stands for both lists: DT_RPATH is searched before
 * LD_LIBRARY_PATH and only when the requester has no DT_RUNPATH. */
static const char *run_or_rpath(void)
{
    if (search.tried_library_path)
        return ct_value_via_runpath;
    struct ct_elf elf;
    char runpath[16];
    runpath[0] = '\0';
    if (ct_elf_open(search.requester, &elf) == 0) {
        ct_elf_dynamic_string(&elf, DT_RUNPATH, runpath, sizeof runpath);
        ct_elf_close(&elf);
    }
    return *runpath ? ct_value_via_runpath : ct_value_via_rpath;
}

static const char *search_list_name(unsigned int flag, const char *name)
{
    switch (flag) {
    case LA_SER_ORIG:
        return strchr(name, '/') ? ct_value_via_absolute : ct_value_via_name;
    case LA_SER_LIBPATH:
        return ct_value_via_library_path;
    case LA_SER_RUNPATH:
        return run_or_rpath();
    case LA_SER_CONFIG:
        return ct_value_via_cache;
    case LA_SER_DEFAULT:
        return ct_value_via_default;
    default:
        return ct_value_via_unknown;
    }
}

static int find_log(int32_t pid)
{
    char dir_path[64], link_path[512], target[256];
    snprintf(dir_path, sizeof dir_path, "/proc/%d/fd", (int)pid);
    DIR *dir = opendir(dir_path);
    if (!dir)
        return -1;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        snprintf(link_path, sizeof link_path, "%s/%s", dir_path, entry->d_name);
        ssize_t n = readlink(link_path, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strncmp(target, "/memfd:cudatrace-audit", 22) == 0) {
            log_fd = open(link_path, O_RDONLY | O_CLOEXEC);
            break;
        }
    }
    closedir(dir);
    return log_fd;
}

/* glibc also tries hardware-capability subdirectories of each directory
 * (those hwcaps.c works out for this CPU: haswell/avx512_1 on an AVX-512
 * Intel, x86_64 and tls ones elsewhere); the searched list names the
 * directories a person would recognise. */
static int is_capability_subdir(const char *dir)
{
    const struct ct_ld_cpu *cpu = ct_ld_cpu();
    size_t len = strlen(dir);
    for (int i = 0; i < cpu->count; i++) {
        size_t sub = strlen(cpu->subdirs[i]); /* with its trailing '/' */
        if (sub > 1 && len > sub && dir[len - sub] == '/' &&
            strncmp(dir + len - sub + 1, cpu->subdirs[i], sub - 1) == 0)
            return 1;
    }
    return 0;
}

static int list_contains(const char *list, const char *dir)
{
    size_t len = strlen(dir);
    for (const char *at = list; (at = strstr(at, dir)) != NULL; at += len)
        if ((at == list || at[-1] == ':') && (at[len] == ':' || at[len] == '\0'))
            return 1;
    return 0;
}

static void note_searched(const char *candidate)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", candidate);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    if (is_capability_subdir(dir) || list_contains(search.searched, dir))
        return;
    size_t used = strlen(search.searched);
    snprintf(search.searched + used, sizeof search.searched - used, "%s%s", used ? ":" : "", dir);
}

static void end_search(void (*report)(const struct ct_loader_event *, void *), void *ctx)
{
    if (search.open) {
        char error[4200];
        if (*search.existing)
            snprintf(error, sizeof error,
                     "%s exists but could not be loaded (another architecture, or one of its "
                     "own dependencies is missing)",
                     search.existing);
        else
            snprintf(error, sizeof error, "not found in the directories searched");
        struct ct_loader_event e = {.failed = 1,
                                    .requested_as = search.name,
                                    .requested_by = search.requester,
                                    .error = error,
                                    .searched = search.searched,
                                    .seen_by = ct_value_seen_by_audit};
        report(&e, ctx);
        if (!*opened.failed_on)
            snprintf(opened.failed_on, sizeof opened.failed_on, "%s", search.name);
    }
    search.open = 0;
}

static void opened_file(const char *path)
{
    if (opened.count < MAX_OPENED)
        snprintf(opened.paths[opened.count++], sizeof opened.paths[0], "%s", path);
}

/* "U NS PATH": reported when the failed load it follows undid it. */
static void unloaded(const char *text, void (*report)(const struct ct_loader_event *, void *),
                     void *ctx)
{
    char *path;
    uint64_t ns = strtoull(text, &path, 10);
    end_search(report, ctx);
    if (*path++ != ' ' || !*opened.failed_on || !opened_now(path))
        return;
    struct ct_loader_event e = {.unloaded = 1,
                                .path = path,
                                .loaded_ns = ns,
                                .rolled_back_by = opened.failed_on,
                                .seen_by = ct_value_seen_by_audit};
    report(&e, ctx);
}

static void handle_line(char *line, void (*report)(const struct ct_loader_event *, void *),
                        void *ctx)
{
    unsigned int flag;
    int at = 0;
    if (line[0] == 'S' && sscanf(line, "S %u %n", &flag, &at) == 1 && at > 0) {
        char *requester = line + at, *tab = strchr(requester, '\t');
        if (!tab)
            return;
        *tab = '\0';
        const char *name = tab + 1;
        if (flag == LA_SER_ORIG) {
            end_search(report, ctx);
            search.open = 1;
            snprintf(search.name, sizeof search.name, "%s", name);
            snprintf(search.requester, sizeof search.requester, "%s", requester);
            search.searched[0] = '\0';
            search.existing[0] = '\0';
            search.tried_library_path = 0;
        } else {
            search.tried_library_path |= flag == LA_SER_LIBPATH;
            note_searched(name);
            if (!*search.existing && access(name, F_OK) == 0)
                snprintf(search.existing, sizeof search.existing, "%s", name);
        }
        snprintf(search.last_path, sizeof search.last_path, "%s", name);
        search.last_flag = flag;
    } else if (line[0] == 'O' && line[1] == ' ' && search.open) {
        char *path;
        uint64_t loaded_ns = strtoull(line + 2, &path, 10);
        if (*path++ != ' ')
            return;
        const char *via = strcmp(search.last_path, path) == 0
                              ? search_list_name(search.last_flag, search.name)
                              : "unknown";
        struct ct_loader_event e = {.requested_as = search.name,
                                    .requested_by = search.requester,
                                    .found_via = via,
                                    .path = path,
                                    .loaded_ns = loaded_ns,
                                    .seen_by = ct_value_seen_by_audit};
        report(&e, ctx);
        search.open = 0;
        opened_file(path);
    } else if (line[0] == 'U' && line[1] == ' ') {
        unloaded(line + 2, report, ctx);
    } else if (line[0] == 'C') {
        end_search(report, ctx);
        opened.count = 0;
        opened.failed_on[0] = '\0';
    }
}

void ct_loader_log_read(int32_t pid, void (*report)(const struct ct_loader_event *, void *),
                        void *ctx)
{
    if (log_fd < 0 && find_log(pid) < 0)
        return;
    for (;;) {
        ssize_t n = pread(log_fd, partial + partial_len, sizeof partial - partial_len - 1,
                          (off_t)log_offset);
        if (n <= 0)
            return;
        log_offset += (uint64_t)n;
        partial_len += (size_t)n;
        partial[partial_len] = '\0';
        char *start = partial, *newline;
        while ((newline = strchr(start, '\n'))) {
            *newline = '\0';
            handle_line(start, report, ctx);
            start = newline + 1;
        }
        partial_len = strlen(start);
        if (partial_len == sizeof partial - 1)
            partial_len = 0; /* a line longer than any we write: drop it */
        memmove(partial, start, partial_len);
    }
}

void ct_loader_log_finish(void (*report)(const struct ct_loader_event *, void *), void *ctx)
{
    end_search(report, ctx);
}

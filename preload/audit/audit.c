/*
 * libcudatrace-audit.so: an rtld-audit module (LD_AUDIT, set by `cudatrace
 * run`) that records how the dynamic linker finds each CUDA-stack library:
 * the name asked for, the object that asked (the dlopen caller or the object
 * whose DT_NEEDED it is, which is whose RUNPATH applies), every directory
 * tried and which search list it came from, and whether a file was opened.
 * It observes only: la_objsearch hands every name back unchanged, so the
 * loader resolves exactly as it would without us. It runs inside the loader,
 * in its own namespace, so it allocates nothing and takes no lock; it writes
 * one text line per event into a memfd that the collector reads through
 * /proc/PID/fd. The memfd is created at the first CUDA-stack search, so
 * processes that never look for one get nothing at all.
 *
 * Lines: "S <flag> <requester>\t<name>" per search step (flag LA_SER_ORIG
 * first, with the name asked for; then one per candidate path), "O <ns>
 * <path>" when the object is opened (ns: CLOCK_BOOTTIME, the trace's clock),
 * "C" when the link map is consistent again (the end of one dlopen or of
 * start-up: a search with no "O" before it failed), "U <ns> <path>" when a
 * CUDA-stack object is unmapped (a dlclose, or a failed dlopen undoing the
 * objects it had mapped).
 */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/library_family.h"
#include "preload/core/descriptors.h"
#include "preload/core/export.h"
#include "preload/loader/main_program.h"

/* Never on 0-2, and written only while it is still the memfd: a program
 * that closed it and reused the number must not find our lines in its
 * file. A lost log stays lost (the collector may already hold it). */
static struct ct_fd log_fd = CT_NO_FD;
static int log_made;       /* once: a lost log is not made again */
static int search_pending; /* a CUDA-stack search has begun and not ended */

static void log_line(const char *kind, unsigned int flag, const char *requester, const char *text)
{
    char line[3 * 4096];
    int n;
    if (requester)
        n = snprintf(line, sizeof line, "%s %u %s\t%s\n", kind, flag, requester, text);
    else
        n = snprintf(line, sizeof line, "%s %s\n", kind, text);
    if (n > 0 && (size_t)n < sizeof line && ct_fd_is_ours(&log_fd)) {
        ssize_t ignored = write(log_fd.fd, line, (size_t)n);
        (void)ignored;
    }
}

/* The trace's clock. */
static uint64_t boot_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

static const char *requester_name(uintptr_t *cookie)
{
    struct link_map *map = cookie ? (struct link_map *)*cookie : NULL;
    if (map && map->l_name && *map->l_name)
        return map->l_name;
    return ct_main_program();
}

CT_EXPORT unsigned int la_version(unsigned int version)
{
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

CT_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)lmid;
    *cookie = (uintptr_t)map;
    if (search_pending && map->l_name && *map->l_name) {
        char line[4096 + 32];
        snprintf(line, sizeof line, "%llu %s", (unsigned long long)boot_ns(), map->l_name);
        log_line("O", 0, NULL, line);
        search_pending = 0;
    }
    return 0; /* no symbol binding audit: the program's calls stay as fast */
}

CT_EXPORT unsigned int la_objclose(uintptr_t *cookie)
{
    struct link_map *map = cookie ? (struct link_map *)*cookie : NULL;
    char family[64], line[4096 + 32];
    if (log_fd.fd >= 0 && map && map->l_name &&
        ct_library_family(map->l_name, family, sizeof family)) {
        snprintf(line, sizeof line, "%llu %s", (unsigned long long)boot_ns(), map->l_name);
        log_line("U", 0, NULL, line);
    }
    return 0;
}

CT_EXPORT char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    char family[64];
    if (flag == LA_SER_ORIG) {
        search_pending = ct_library_family(name, family, sizeof family);
        if (search_pending && !log_made) {
            int fd = ct_fd_above_stdio(memfd_create("cudatrace-audit", MFD_CLOEXEC));
            if (fd >= 0)
                fcntl(fd, F_SETFL, O_APPEND);
            log_fd = ct_fd_keep(fd);
            log_made = 1;
        }
    }
    if (search_pending)
        log_line("S", flag, requester_name(cookie), name);
    return (char *)name;
}

CT_EXPORT void la_activity(uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    if (flag == LA_ACT_CONSISTENT && log_fd.fd >= 0) {
        log_line("C", 0, NULL, "");
        search_pending = 0;
    }
}

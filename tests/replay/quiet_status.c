/*
 * Preloaded into both builds' replays by tools/compare_builds.sh. The
 * collector reads its own peak memory from /proc/self/status, which in a
 * replay is the replaying process's and changes from run to run (and from
 * build to build, as a restructuring moves memory about); here that file
 * reads as absent, so the figure falls back to getrusage, which the replay
 * makes read zero (replay.c), and two builds that write the same trace
 * write the same bytes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

FILE *fopen(const char *path, const char *mode)
{
    static FILE *(*real)(const char *, const char *);
    if (strcmp(path, "/proc/self/status") == 0) {
        errno = ENOENT;
        return NULL;
    }
    if (!real)
        real = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
    return real(path, mode);
}

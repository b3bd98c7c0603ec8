/*
 * Where the command's companions live: libcudatrace.so and
 * cudatrace-collector are installed beside the cudatrace binary, so they are
 * found from /proc/self/exe rather than from PATH or the working directory.
 */
#include "viewer-export/commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ct_companion_path(const char *name, char *out, size_t size)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if ((size_t)snprintf(out, size, "%s/%s", exe, name) >= size)
        return -1;
    if (access(out, R_OK)) {
        fprintf(stderr, "cudatrace: %s: %s\n", out, strerror(errno));
        return -1;
    }
    return 0;
}

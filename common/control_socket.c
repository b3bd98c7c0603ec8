/*
 * The control socket's directory: chosen, made 0700 when asked, and checked
 * to be a directory of ours that nobody else may enter before any path in
 * it is used.
 */
#include "common/control_socket.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void folder(char *out, size_t size)
{
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (runtime && runtime[0] == '/')
        snprintf(out, size, "%s/cudatrace", runtime);
    else
        snprintf(out, size, "/tmp/cudatrace-%u", (unsigned)geteuid());
}

/* Whether `dir` is a directory (not a link) of ours with no access for others. */
static int folder_is_private(const char *dir, char *why, size_t why_size)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, why_size, "%s: %s", dir, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(why, why_size,
                 "refusing %s: it must be a directory owned by uid %u with mode 0700 (it is %s, "
                 "owned by uid %u, mode %04o)",
                 dir, (unsigned)geteuid(), S_ISDIR(st.st_mode) ? "a directory" : "not a directory",
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return 0;
    }
    return 1;
}

int ct_control_socket_path(int32_t pid, int create, char *out, size_t size, char *why,
                           size_t why_size)
{
    char dir[sizeof((struct sockaddr_un *)0)->sun_path];
    folder(dir, sizeof dir);
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(why, why_size, "cannot make %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!folder_is_private(dir, why, why_size))
        return -1;
    int n = snprintf(out, size, "%s/%d.sock", dir, (int)pid);
    if (n < 0 || (size_t)n >= size || (size_t)n >= sizeof dir) {
        snprintf(why, why_size, "the socket path in %s is too long", dir);
        return -1;
    }
    return 0;
}

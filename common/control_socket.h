/*
 * Where a traced process's control socket lives, for its collector (which
 * listens there) and `cudatrace ctl` (which connects): in a directory only
 * its owner may open, $XDG_RUNTIME_DIR/cudatrace or else /tmp/cudatrace-UID,
 * named by the traced pid. A directory that is not ours alone is refused,
 * never used: anyone who could write into it could stand in for a collector.
 */
#ifndef CT_COMMON_CONTROL_SOCKET_H
#define CT_COMMON_CONTROL_SOCKET_H

#include <stddef.h>
#include <stdint.h>

/* The longest command line either side sends or takes. */
#define CT_CONTROL_LINE_MAX 128

/* The socket's path for `pid` in `out` (room for a sockaddr_un path), the
 * directory made first when `create`; 0, or -1 with why in `why`. */
int ct_control_socket_path(int32_t pid, int create, char *out, size_t size, char *why,
                           size_t why_size);

#endif

/*
 * The collector's control socket (listener.c, struct ct_control, which the
 * builder holds): listened on from the start, served a little each drain
 * cycle without ever blocking it, closed and removed at the end. Commands
 * are in commands.c.
 */
#ifndef CT_COLLECTOR_CONTROL_LISTENER_H
#define CT_COLLECTOR_CONTROL_LISTENER_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "collector/control/commands.h"
#include "common/control_socket.h"

#define CT_CONTROL_CLIENTS 4

struct ct_control_client {
    int fd; /* -1: the slot is free */
    uint64_t deadline_ns;
    size_t len;
    char line[CT_CONTROL_LINE_MAX];
};

struct ct_control {
    struct ct_control_parts parts;
    int listen_fd;
    char socket_path[sizeof((struct sockaddr_un *)0)->sun_path];
    /* The socket file we made: after an exec the next session's collector may
     * have put its own at the same path (the pid is the same), not ours to remove. */
    ino_t socket_inode;
    struct ct_control_client clients[CT_CONTROL_CLIENTS];
};

/* Listens for the process whose header is parts->shm, with `parts` for the
 * commands; without a socket (no private directory, say) the session runs
 * uncontrolled. */
void ct_control_listen(struct ct_control *c, const struct ct_control_parts *parts);
/* Accepts, reads and answers what is ready now; never waits. */
void ct_control_serve(struct ct_control *c, uint64_t now_ns);
void ct_control_close(struct ct_control *c);

#endif

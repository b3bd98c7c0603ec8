/*
 * Serves `cudatrace ctl` without stalling the drain loop: the socket and
 * every connection are non-blocking, and each cycle takes what is there. A
 * connection is from our own uid (SO_PEERCRED) or refused; it has a second
 * to send one line of at most CT_CONTROL_LINE_MAX bytes, then gets one reply
 * and is closed. A line too long, a peer that sends nothing or goes away,
 * bytes that are not a command: each gets an error reply at most, and the
 * program never notices. Only a few connections are held at once; one more
 * is told the collector is busy.
 */
#include "collector/control/listener.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define ACCEPTS_PER_CYCLE 8
#define LINE_WAIT_NS 1000000000ull
#define REPLY_MAX 16384

/* The socket is bound as PID.new beside its path (PID.sock, one character
 * longer, so the name fits) and renamed into place once it listens: a file
 * at the pid's path always takes connections. Bound there directly, a `ctl`
 * between the bind and the listen (a busy machine's scheduler can put
 * milliseconds there) met a socket that refused it. The rename also
 * replaces what a pid's earlier process left: that one is gone. */
static int listen_at_path(const char *socket_path, int fd)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    size_t stem = strlen(socket_path) - strlen(".sock");
    memcpy(address.sun_path, socket_path, stem);
    memcpy(address.sun_path + stem, ".new", sizeof ".new");
    unlink(address.sun_path);
    if (bind(fd, (struct sockaddr *)&address, sizeof address) == 0 &&
        listen(fd, CT_CONTROL_CLIENTS) == 0 && rename(address.sun_path, socket_path) == 0)
        return 0;
    unlink(address.sun_path);
    return -1;
}

void ct_control_listen(struct ct_control *c, const struct ct_control_parts *parts)
{
    char why[256];
    *c = (struct ct_control){.parts = *parts, .listen_fd = -1};
    for (int i = 0; i < CT_CONTROL_CLIENTS; i++)
        c->clients[i].fd = -1;
    if (ct_control_socket_path(parts->shm->pid, 1, c->socket_path, sizeof c->socket_path, why,
                               sizeof why))
        return;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    struct stat st;
    if (listen_at_path(c->socket_path, fd) != 0 || stat(c->socket_path, &st) != 0) {
        close(fd);
        return;
    }
    c->socket_inode = st.st_ino;
    c->listen_fd = fd;
}

/* Closing with unread bytes would reset the connection, and the peer might
 * read the reset before the reply: what is waiting is read first. */
static void reply_and_close(struct ct_control_client *c, const char *text, size_t len)
{
    ssize_t sent = send(c->fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)sent; /* a peer that cannot take it has only itself to blame */
    char unread[4096];
    for (int i = 0; i < 16 && recv(c->fd, unread, sizeof unread, MSG_DONTWAIT) > 0; i++)
        ;
    close(c->fd);
    c->fd = -1;
}

static void refuse(struct ct_control_client *c, const char *text)
{
    reply_and_close(c, text, strlen(text));
}

static int from_our_uid(int fd)
{
    struct ucred peer;
    socklen_t len = sizeof peer;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.uid == geteuid();
}

/* Whether a connection waits. accept4 on an empty backlog is no cheap
 * "nothing": Linux makes and frees a socket, inode and file first, which
 * was 40% of an idle collector's time at a cycle a millisecond. */
static int connection_waits(int listen_fd)
{
    struct pollfd p = {.fd = listen_fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

/* A few a cycle at most: a flood of connections waits in the backlog
 * rather than holding up the drain. */
static void accept_new(struct ct_control *control, uint64_t now_ns)
{
    int fd;
    if (!connection_waits(control->listen_fd))
        return;
    for (int i = 0; i < ACCEPTS_PER_CYCLE && (fd = accept4(control->listen_fd, NULL, NULL,
                                                           SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;
         i++) {
        struct ct_control_client *slot = NULL;
        for (int i = 0; i < CT_CONTROL_CLIENTS && !slot; i++)
            if (control->clients[i].fd < 0)
                slot = &control->clients[i];
        struct ct_control_client c = {.fd = fd, .deadline_ns = now_ns + LINE_WAIT_NS};
        if (!from_our_uid(fd))
            refuse(&c, "error: refused: not the owner of the traced process\n");
        else if (!slot)
            refuse(&c, "error: busy: try again\n");
        else
            *slot = c;
    }
}

/* Reads what the peer sent; the command once its line is whole. */
static void read_line(const struct ct_control *control, struct ct_control_client *c,
                      uint64_t now_ns)
{
    ssize_t n = read(c->fd, c->line + c->len, sizeof c->line - c->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (now_ns > c->deadline_ns)
            refuse(c, "error: no command came within a second\n");
        return;
    }
    if (n <= 0) {
        refuse(c, "error: the connection ended before a whole line\n");
        return;
    }
    c->len += (size_t)n;
    char *end = memchr(c->line, '\n', c->len);
    if (!end) {
        if (c->len == sizeof c->line)
            refuse(c, "error: the command is too long\n");
        return;
    }
    *end = 0;
    if (strlen(c->line) != (size_t)(end - c->line)) {
        refuse(c, "error: the command holds a NUL byte\n");
        return;
    }
    char text[REPLY_MAX];
    struct ct_reply reply = {text, sizeof text, 0};
    ct_control_run(&control->parts, c->line, now_ns, &reply);
    reply_and_close(c, text, reply.len);
}

void ct_control_serve(struct ct_control *c, uint64_t now_ns)
{
    if (c->listen_fd < 0)
        return;
    accept_new(c, now_ns);
    for (int i = 0; i < CT_CONTROL_CLIENTS; i++)
        if (c->clients[i].fd >= 0)
            read_line(c, &c->clients[i], now_ns);
}

void ct_control_close(struct ct_control *c)
{
    if (c->listen_fd < 0)
        return;
    for (int i = 0; i < CT_CONTROL_CLIENTS; i++)
        if (c->clients[i].fd >= 0)
            refuse(&c->clients[i], "error: the traced process has ended\n");
    close(c->listen_fd);
    c->listen_fd = -1;
    struct stat st;
    if (stat(c->socket_path, &st) == 0 && st.st_ino == c->socket_inode)
        unlink(c->socket_path);
}

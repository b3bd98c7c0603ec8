/*
 * The HTTP server of `cudatrace open` (http_server.h): plain HTTP/1.1 over
 * IPv4 loopback, for one file. It answers the Perfetto UI's CORS preflight
 * and GET the way the UI expects, gives the file only at its secret path
 * (every user on the machine can reach the port), only to the UI's origins
 * and only to requests that name this machine's loopback address (so a page
 * that reached the port through a DNS name of its own gets nothing). One
 * poll loop serves every connection, waiting on none: a client has 5 s from
 * connecting to send its whole request head, and with 16 connections open a
 * new one closes the one nearest its deadline, so neither slow clients nor
 * idle ones (a browser's preconnect, another user's sockets) can hold up the
 * request that matters.
 */
#include "viewer-export/cmd/http_server.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/write_all.h"
#include "viewer-export/commands.h"

/* A client has this long from connecting to send its whole request head (the
 * UI's comes at once, even through an ssh tunnel), this long per stall while
 * it takes the file, and this long to close after its reply; past that it is
 * closed without a word: one that is slow, stuck or idle must not keep the UI
 * waiting, nor us running. */
#define REQUEST_TIMEOUT_MS 5000
#define SEND_STALL_MS 60000
#define CLOSE_TIMEOUT_MS 1000
/* Connections open at once. It bounds our memory; idle connections cannot
 * shut the UI out, since a new one takes the place of the one nearest its
 * deadline. */
#define MAX_CONNECTIONS 16
/* A burst of connections beyond MAX_CONNECTIONS waits in the kernel until we
 * take it, rather than in the client's retries of its connect. */
#define LISTEN_BACKLOG 64
#define HEAD_MAX 16384

struct request {
    char method[16], path[PATH_MAX], host[256], origin[256], ask_headers[1024], ask_private[16];
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* A socket listening on 127.0.0.1:*port (0: any free one, stored back);
 * non-blocking, so that a peer gone before we accept it cannot stall us. */
int ct_http_listen_loopback(int *port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)*port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* SO_REUSEADDR lets a second `open` follow the first at once (its closed
     * connections linger in TIME_WAIT); a live listener still makes bind fail. */
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(fd, LISTEN_BACKLOG) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0) {
        *port = ntohs(addr.sin_port);
        return fd;
    }
    if (errno == EADDRINUSE)
        fprintf(stderr, "cudatrace: open: port %d on 127.0.0.1 is in use by another program\n",
                *port);
    else
        fprintf(stderr, "cudatrace: open: cannot listen on 127.0.0.1:%d: %s\n", *port,
                strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

/* The value of header `name` in `head`, spaces trimmed; "" when absent. */
static void header_value(const char *head, const char *name, char *out, size_t size)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (const char *eol = strstr(head, "\r\n"); eol && eol[2] != '\r';
         eol = strstr(eol + 2, "\r\n")) {
        const char *line = eol + 2;
        if (strncasecmp(line, name, n) != 0 || line[n] != ':')
            continue;
        const char *value = line + n + 1 + strspn(line + n + 1, " \t");
        int len = (int)strcspn(value, "\r");
        while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
            len--;
        snprintf(out, size, "%.*s", len, value);
        return;
    }
}

static int parse_request(const char *head, struct request *r)
{
    char format[32];
    snprintf(format, sizeof format, "%%%zus %%%zus HTTP/", sizeof r->method - 1,
             sizeof r->path - 1);
    if (sscanf(head, format, r->method, r->path) != 2)
        return -1;
    r->path[strcspn(r->path, "?#")] = '\0';
    header_value(head, "Host", r->host, sizeof r->host);
    header_value(head, "Origin", r->origin, sizeof r->origin);
    header_value(head, "Access-Control-Request-Headers", r->ask_headers, sizeof r->ask_headers);
    header_value(head, "Access-Control-Request-Private-Network", r->ask_private,
                 sizeof r->ask_private);
    return 0;
}

/* Whether `text` is 127.0.0.1 or localhost, then ":port" (with port < 0:
 * any port or none). */
static int is_loopback_authority(const char *text, int port)
{
    static const char *const names[] = {"127.0.0.1", "localhost"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncasecmp(text, names[i], n) != 0)
            continue;
        const char *rest = text + n;
        if (port >= 0)
            return rest[0] == ':' && ct_parse_count(rest + 1, port, port) == port;
        return rest[0] == '\0' || (rest[0] == ':' && ct_parse_count(rest + 1, 1, 65535) > 0);
    }
    return 0;
}

/* ui.perfetto.dev, the --ui one, and a UI served on this machine (offline). */
static int origin_allowed(const char *origin, const char *ui)
{
    size_t ui_len = ct_origin_length(ui);
    if (strcmp(origin, CT_PERFETTO_UI) == 0 ||
        (strlen(origin) == ui_len && strncasecmp(origin, ui, ui_len) == 0))
        return 1;
    return strncmp(origin, "http://", 7) == 0 && is_loopback_authority(origin + 7, -1);
}

/* Whether `path` is the served one, compared in a time that does not tell how
 * much of its secret a guess got right. */
static int is_served_path(const char *path, const char *served)
{
    size_t n = strlen(served);
    if (strlen(path) != n)
        return 0; /* its length is no secret */
    unsigned char differ = 0;
    for (size_t i = 0; i < n; i++)
        differ |= (unsigned char)(path[i] ^ served[i]);
    return differ == 0;
}

/* The status line and headers; the CORS header when `origin` is not "". */
static int send_head(int fd, const char *status, const char *origin, const char *extra,
                     unsigned long long length)
{
    char head[4096];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\n%s%s%s%sContent-Length: %llu\r\n"
                     "Cache-Control: no-cache\r\nConnection: close\r\n\r\n",
                     status, *origin ? "Access-Control-Allow-Origin: " : "", origin,
                     *origin ? "\r\nVary: Origin\r\n" : "", extra, length);
    if (n <= 0 || (size_t)n >= sizeof head)
        return -1;
    return ct_write_all(fd, head, (size_t)n) == (size_t)n ? 0 : -1;
}

/* An error answer: the status line again as a plain-text body, for curl users. */
static void send_error(int fd, const char *status, const char *origin, const char *extra)
{
    char body[64];
    int n = snprintf(body, sizeof body, "%s\n", status);
    if (send_head(fd, status, origin, extra, (unsigned long long)n) == 0)
        ct_write_all(fd, body, (size_t)n);
}

/* The answer to a CORS preflight: GET, with whatever headers the UI asks for. */
static void send_preflight(int fd, const struct request *r)
{
    char extra[2048];
    snprintf(extra, sizeof extra, "Access-Control-Allow-Methods: GET\r\n%s%s%s%s",
             *r->ask_headers ? "Access-Control-Allow-Headers: " : "", r->ask_headers,
             *r->ask_headers ? "\r\n" : "",
             strncasecmp(r->ask_private, "true", 5) == 0
                 ? "Access-Control-Allow-Private-Network: true\r\n"
                 : "");
    send_head(fd, "204 No Content", r->origin, extra, 0);
}

/* Where a connection is: its request head coming in, the file going out, or
 * its reply sent and the client yet to close. Each stage has its deadline. */
enum stage { READING, SENDING, CLOSING };

struct connection {
    int fd; /* -1: a free slot */
    enum stage stage;
    long long deadline;
    off_t offset, size; /* SENDING: the file's bytes sent, and in all */
    size_t length;      /* READING: the head's bytes so far */
    char head[HEAD_MAX];
};

/* Whether a call on a non-blocking socket failed only for now: poll will
 * say when to try again. */
static int again(ssize_t n)
{
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

/* Closing with unread input makes the kernel reset the connection, which can
 * destroy a reply the client has not read yet: say we are done, and close
 * once the client has (drain), or its time is up. */
static void start_closing(struct connection *c)
{
    shutdown(c->fd, SHUT_WR);
    c->stage = CLOSING;
    c->deadline = now_ms() + CLOSE_TIMEOUT_MS;
}

/* The reply's head; the file follows as the client takes it (send_more). */
static void start_sending(struct connection *c, int file, const char *origin)
{
    struct stat st;
    if (fstat(file, &st) ||
        send_head(c->fd, "200 OK", origin, "Content-Type: application/octet-stream\r\n",
                  (unsigned long long)st.st_size)) {
        start_closing(c);
        return;
    }
    c->stage = SENDING;
    c->offset = 0;
    c->size = st.st_size;
    c->deadline = now_ms() + SEND_STALL_MS;
}

/* Answers a request head: a refusal, the preflight's answer or the file. */
static void answer(struct connection *c, const struct ct_http_server *s)
{
    int fd = c->fd;
    struct request r;
    /* A head without its end filled the buffer. */
    if (!strstr(c->head, "\r\n\r\n") || parse_request(c->head, &r))
        send_error(fd, "400 Bad Request", "", "");
    /* Another site's page, or one that reached us through a DNS name of its
     * own (rebinding), gets nothing, and no CORS header to read the refusal. */
    else if ((*r.origin && !origin_allowed(r.origin, s->ui)) ||
             !is_loopback_authority(r.host, s->port))
        send_error(fd, "403 Forbidden", "", "");
    else if (!is_served_path(r.path, s->path))
        send_error(fd, "404 Not Found", r.origin, "");
    else if (strcmp(r.method, "OPTIONS") == 0)
        send_preflight(fd, &r);
    else if (strcmp(r.method, "GET") == 0) {
        start_sending(c, s->file, r.origin);
        return;
    } else
        send_error(fd, "405 Method Not Allowed", r.origin, "Allow: GET, OPTIONS\r\n");
    start_closing(c);
}

/* Takes what came of the request head, and answers it once it is whole (or
 * fills the buffer); -1 when the client left. */
static int read_more(struct connection *c, const struct ct_http_server *s)
{
    ssize_t n = recv(c->fd, c->head + c->length, sizeof c->head - 1 - c->length, 0);
    if (again(n))
        return 0;
    if (n <= 0)
        return -1;
    /* Only the new bytes, and the three before them, can complete the end. */
    size_t from = c->length < 3 ? 0 : c->length - 3;
    c->length += (size_t)n;
    c->head[c->length] = '\0';
    if (strstr(c->head + from, "\r\n\r\n") || c->length + 1 == sizeof c->head)
        answer(c, s);
    return 0;
}

/* Sends what the client's socket takes of the file; 1 once all of it is out,
 * -1 when the client left or the file shrank. */
static int send_more(struct connection *c, int file)
{
    ssize_t n =
        c->offset < c->size ? sendfile(c->fd, file, &c->offset, (size_t)(c->size - c->offset)) : 0;
    if (again(n))
        return 0;
    if (n < 0 || (n == 0 && c->offset < c->size))
        return -1;
    c->deadline = now_ms() + SEND_STALL_MS;
    if (c->offset < c->size)
        return 0;
    start_closing(c);
    return 1;
}

/* Reads and drops what the client still sends; -1 once it closed. */
static int drain(struct connection *c)
{
    char sink[4096];
    ssize_t n = recv(c->fd, sink, sizeof sink, 0);
    return n > 0 || again(n) ? 0 : -1;
}

/* Moves a connection on by what poll saw: 1 when that finished sending the
 * file, -1 when the connection is done with. */
static int step(struct connection *c, const struct ct_http_server *s)
{
    switch (c->stage) {
    case READING:
        return read_more(c, s);
    case SENDING:
        return send_more(c, s->file);
    case CLOSING:
        return drain(c);
    }
    return -1;
}

static void close_slot(struct connection *c)
{
    close(c->fd);
    c->fd = -1;
}

/* Takes one connection from the listener (one a round, so that a flood of
 * them cannot push out, unread, one that came before); when every slot is
 * taken, the one nearest its deadline makes room. */
static void admit(int listener, struct connection *at)
{
    int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int slot = 0;
    for (int i = 1; i < MAX_CONNECTIONS && at[slot].fd >= 0; i++)
        if (at[i].fd < 0 || at[i].deadline < at[slot].deadline)
            slot = i;
    if (at[slot].fd >= 0)
        close_slot(&at[slot]);
    struct connection *c = &at[slot];
    c->fd = fd;
    c->stage = READING;
    c->deadline = now_ms() + REQUEST_TIMEOUT_MS;
    c->length = 0;
}

/* Fills `polled` with the connections, then the listener (none when -1);
 * returns how long poll may wait: until the nearest connection's deadline, or
 * `deadline` when that comes first. */
static int watch(const struct connection *at, int listener, long long deadline,
                 struct pollfd *polled)
{
    for (int i = 0; i < MAX_CONNECTIONS; i++) {
        short events = at[i].stage == SENDING ? POLLOUT : POLLIN;
        polled[i] = (struct pollfd){.fd = at[i].fd, .events = events};
        if (at[i].fd >= 0 && at[i].deadline < deadline)
            deadline = at[i].deadline;
    }
    polled[MAX_CONNECTIONS] = (struct pollfd){.fd = listener, .events = POLLIN};
    long long left = deadline - now_ms();
    return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Moves on the connections poll found ready and closes those past their
 * deadline; 1 when one of them finished taking the file. */
static int serve_ready(const struct ct_http_server *s, struct connection *at,
                       const struct pollfd *polled)
{
    int fetched = 0;
    long long now = now_ms();
    for (int i = 0; i < MAX_CONNECTIONS; i++) {
        if (at[i].fd < 0)
            continue;
        int moved = polled[i].revents ? step(&at[i], s) : now >= at[i].deadline ? -1 : 0;
        if (moved < 0)
            close_slot(&at[i]);
        fetched |= moved > 0;
    }
    return fetched;
}

/* Closes the connections, all or all but those closing; 1 when one is left. */
static int close_connections(struct connection *at, int but_closing)
{
    int left = 0;
    for (int i = 0; i < MAX_CONNECTIONS; i++)
        if (at[i].fd >= 0 && but_closing && at[i].stage == CLOSING)
            left = 1;
        else if (at[i].fd >= 0)
            close_slot(&at[i]);
    return left;
}

int ct_http_serve(const struct ct_http_server *s, int timeout_s)
{
    long long deadline = now_ms() + timeout_s * 1000LL;
    struct connection at[MAX_CONNECTIONS];
    for (int i = 0; i < MAX_CONNECTIONS; i++) {
        at[i].fd = -1;
        at[i].stage = READING;
    }
    /* Once the file went out, only its reply's close is waited for. */
    int fetched = 0, closing = 0;
    while (fetched ? closing : now_ms() < deadline) {
        struct pollfd polled[MAX_CONNECTIONS + 1];
        int wait = watch(at, fetched ? -1 : s->listener, fetched ? LLONG_MAX : deadline, polled);
        if (poll(polled, MAX_CONNECTIONS + 1, wait) < 0 && errno != EINTR)
            break;
        fetched |= serve_ready(s, at, polled);
        if (fetched)
            closing = close_connections(at, 1);
        else if (polled[MAX_CONNECTIONS].revents)
            admit(s->listener, at);
    }
    close_connections(at, 0);
    if (fetched)
        fprintf(stderr, "cudatrace: open: %s was fetched; done\n", s->trace);
    else
        fprintf(stderr,
                "cudatrace: open: %s was not fetched within %d s; giving up (see --timeout)\n",
                s->trace, timeout_s);
    return !fetched;
}

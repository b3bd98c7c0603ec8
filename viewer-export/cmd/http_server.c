/*
 * The HTTP server of `cudatrace open` (http_server.h): plain HTTP/1.1 over
 * IPv4 loopback, for one file. It answers the Perfetto UI's CORS preflight
 * and GET the way the UI expects, gives the file only at its secret path
 * (every user on the machine can reach the port), only to the UI's origins
 * and only to requests that name this machine's loopback address (so a page
 * that reached the port through a DNS name of its own gets nothing), and
 * answers whichever waiting connection speaks first, so an idle one a
 * browser opened ahead of need cannot hold up the request that matters.
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

/* A client has this long to send its request once connected, this long per
 * stall while it takes the file, and this long to close after the reply:
 * one that is stuck must not keep the UI waiting, nor us running. */
#define REQUEST_TIMEOUT_MS 10000
#define SEND_TIMEOUT_S 60
#define CLOSE_TIMEOUT_MS 1000
#define MAX_WAITING 16
/* How often idle connections are looked at, to close those past their time. */
#define POLL_MS 1000

struct request {
    char method[16], path[PATH_MAX], host[256], origin[256], ask_headers[1024], ask_private[16];
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* 1 when fd has input (or a peer waiting to be accepted) before `deadline`. */
static int wait_readable(int fd, long long deadline)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return 0;
        int ready = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (ready > 0)
            return 1;
        if (ready < 0 && errno != EINTR)
            return 0;
    }
}

/* A socket listening on 127.0.0.1:*port (0: any free one, stored back). */
int ct_http_listen_loopback(int *port)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)*port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    /* SO_REUSEADDR lets a second `open` follow the first at once (its closed
     * connections linger in TIME_WAIT); a live listener still makes bind fail. */
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(fd, 16) == 0 &&
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

/* Reads the request head, up to its blank line, before `deadline`. */
static int read_head(int fd, char *head, size_t size, long long deadline)
{
    size_t len = 0;
    while (len + 1 < size && wait_readable(fd, deadline)) {
        ssize_t n = recv(fd, head + len, size - 1 - len, 0);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        head[len] = '\0';
        if (strstr(head, "\r\n\r\n"))
            return 0;
    }
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

/* 0 once the whole file went out. */
static int send_trace(int fd, int file, const char *origin)
{
    struct stat st;
    if (fstat(file, &st) ||
        send_head(fd, "200 OK", origin, "Content-Type: application/octet-stream\r\n",
                  (unsigned long long)st.st_size))
        return -1;
    off_t offset = 0;
    while (offset < st.st_size) {
        ssize_t n = sendfile(fd, file, &offset, (size_t)(st.st_size - offset));
        if (n <= 0 && !(n < 0 && errno == EINTR))
            return -1; /* the client left, stalled past SO_SNDTIMEO, or the file shrank */
    }
    return 0;
}

/* Answers one request; 1 when it was the GET that took the whole trace. */
static int answer(int fd, const struct ct_http_server *s)
{
    char head[16384];
    struct request r;
    if (read_head(fd, head, sizeof head, now_ms() + REQUEST_TIMEOUT_MS) ||
        parse_request(head, &r)) {
        send_error(fd, "400 Bad Request", "", "");
        return 0;
    }
    /* Another site's page, or one that reached us through a DNS name of its
     * own (rebinding), gets nothing, and no CORS header to read the refusal. */
    if ((*r.origin && !origin_allowed(r.origin, s->ui)) || !is_loopback_authority(r.host, s->port))
        send_error(fd, "403 Forbidden", "", "");
    else if (!is_served_path(r.path, s->path))
        send_error(fd, "404 Not Found", r.origin, "");
    else if (strcmp(r.method, "OPTIONS") == 0)
        send_preflight(fd, &r);
    else if (strcmp(r.method, "GET") == 0)
        return send_trace(fd, s->file, r.origin) == 0;
    else
        send_error(fd, "405 Method Not Allowed", r.origin, "Allow: GET, OPTIONS\r\n");
    return 0;
}

/* Closing with unread input makes the kernel reset the connection, which can
 * destroy a reply the client has not read yet: say we are done, then wait
 * (briefly) for the client to close first. */
static void finish_connection(int fd)
{
    char sink[4096];
    shutdown(fd, SHUT_WR);
    long long deadline = now_ms() + CLOSE_TIMEOUT_MS;
    while (wait_readable(fd, deadline) && recv(fd, sink, sizeof sink, 0) > 0)
        continue;
    close(fd);
}

/* Connections accepted and not yet answered. A browser may open one ahead of
 * need (preconnect) and leave it idle; answering whichever speaks first keeps
 * such a one from holding up the request that matters. */
struct waiting {
    int fd[MAX_WAITING], count;
    long long since[MAX_WAITING];
};

static void accept_waiting(int listener, struct waiting *w)
{
    struct timeval stall = {.tv_sec = SEND_TIMEOUT_S};
    int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (w->count == MAX_WAITING) {
        close(fd);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof stall);
    w->fd[w->count] = fd;
    w->since[w->count++] = now_ms();
}

/* Answers the waiting connections that spoke, closes those idle too long;
 * 1 when one of them took the whole trace. */
static int answer_waiting(const struct ct_http_server *s, struct waiting *w,
                          const struct pollfd *polled)
{
    int sent = 0;
    for (int i = w->count - 1; i >= 0; i--) {
        int fd = w->fd[i], spoke = polled[i].revents != 0;
        if (!spoke && now_ms() - w->since[i] < REQUEST_TIMEOUT_MS)
            continue;
        w->fd[i] = w->fd[--w->count];
        w->since[i] = w->since[w->count];
        if (spoke && !sent) {
            sent = answer(fd, s);
            finish_connection(fd);
        } else {
            close(fd);
        }
    }
    return sent;
}

int ct_http_serve(const struct ct_http_server *s, int timeout_s)
{
    long long deadline = now_ms() + timeout_s * 1000LL, left;
    struct waiting w = {.count = 0};
    int sent = 0;
    while (!sent && (left = deadline - now_ms()) > 0) {
        struct pollfd polled[MAX_WAITING + 1] = {{.fd = s->listener, .events = POLLIN}};
        for (int i = 0; i < w.count; i++)
            polled[i + 1] = (struct pollfd){.fd = w.fd[i], .events = POLLIN};
        if (poll(polled, (nfds_t)w.count + 1, (int)(left < POLL_MS ? left : POLL_MS)) < 0 &&
            errno != EINTR)
            break;
        sent = answer_waiting(s, &w, polled + 1);
        if (polled[0].revents)
            accept_waiting(s->listener, &w);
    }
    while (w.count > 0)
        close(w.fd[--w.count]);
    if (sent)
        fprintf(stderr, "cudatrace: open: %s was fetched; done\n", s->trace);
    else
        fprintf(stderr,
                "cudatrace: open: %s was not fetched within %d s; giving up (see --timeout)\n",
                s->trace, timeout_s);
    return !sent;
}

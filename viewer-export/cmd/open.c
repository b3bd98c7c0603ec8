/*
 * `cudatrace open TRACE`: hands a trace to the Perfetto UI in a browser. The
 * UI cannot read a local path, but it fetches a `url=` from a trace server on
 * 127.0.0.1:9001, the one local address its content security policy lets it
 * reach; so this serves TRACE there (plain HTTP/1.1 over IPv4 loopback, one
 * request at a time), prints the link and, where there is a desktop, opens
 * it. It answers the UI's CORS preflight and GET the way the UI expects,
 * gives the file only to the UI's origins, and exits once the whole file was
 * sent, or with an error once --timeout passed without that.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "viewer-export/commands.h"
#include "common/write_all.h"

extern char **environ;

#define DEFAULT_UI "https://ui.perfetto.dev"
#define DEFAULT_PORT 9001
#define DEFAULT_TIMEOUT_S 300
/* A client has this long to send its request once connected, this long per
 * stall while it takes the file, and this long to close after the reply:
 * one that is stuck must not keep the UI waiting, nor us running. */
#define REQUEST_TIMEOUT_MS 10000
#define SEND_TIMEOUT_S 60
#define CLOSE_TIMEOUT_MS 1000
#define MAX_WAITING 16
/* How often idle connections are looked at, to close those past their time. */
#define POLL_MS 1000

static const char help[] =
    "usage: cudatrace open [--port N] [--timeout SECONDS] [--ui URL] [--no-browser]\n"
    "                      TRACE\n"
    "\n"
    "Shows TRACE in the Perfetto UI: serves the file on 127.0.0.1 (and nowhere else),\n"
    "prints the link that makes the UI fetch it and, where there is a desktop\n"
    "(xdg-open, and DISPLAY or WAYLAND_DISPLAY set), opens the link in the browser.\n"
    "Exits 0 once the UI has fetched the trace; 1 when the port is taken or the\n"
    "timeout passes first.\n"
    "\n"
    "options:\n"
    "  --port N           port on 127.0.0.1 (default 9001, the one port the Perfetto\n"
    "                     UI fetches from; 0 picks a free one, for scripts)\n"
    "  --timeout SECONDS  give up when the trace was not fetched by then\n"
    "                     (default 300)\n"
    "  --ui URL           the Perfetto UI to link to, e.g. one served locally for\n"
    "                     offline use (default https://ui.perfetto.dev)\n"
    "  --no-browser       only print the link\n"
    "  --help             this text\n"
    "\n"
    "examples:\n"
    "  cudatrace open cudatrace-1234.pftrace.zst\n"
    "  cudatrace open --no-browser --timeout 60 cudatrace-1234.pftrace.zst\n"
    "  cudatrace open --ui http://127.0.0.1:10000 trace.pftrace.zst    # offline\n"
    "\n"
    "On a remote machine, forward the port first (ssh -L 9001:127.0.0.1:9001 HOST)\n"
    "and open the printed link in your local browser.\n";

struct options {
    const char *trace, *ui;
    int port, timeout_s, browser;
};

struct server {
    int listener, file, port;
    const char *trace, *ui;
    char path[PATH_MAX]; /* "/NAME", the one path served */
};

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

/* Whether the first n characters of a and b differ only in case: strncasecmp,
 * which <strings.h> cannot declare here (common/strings.h shadows it). */
static int equal_nocase(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return 0;
        if (!a[i])
            break;
    }
    return 1;
}

/* A whole number from min to max; -1 when `text` is not one. */
static long parse_count(const char *text, long min, long max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < min || value > max)
        return -1;
    return value;
}

/* The length of the scheme://host[:port] that begins `url`; 0 when none does. */
static size_t origin_length(const char *url)
{
    size_t scheme = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7 : 0;
    size_t host = scheme ? strcspn(url + scheme, "/?#") : 0;
    return host ? scheme + host : 0;
}

/* Stores the value of --port, --timeout or --ui; -1 when it is good, else
 * the usage error's status. */
static int set_option(struct options *o, const char *flag, const char *value)
{
    if (strcmp(flag, "--ui") == 0) {
        o->ui = value;
        return origin_length(value) ? -1 : ct_usage_error("open: --ui wants an http(s) URL");
    }
    int port = strcmp(flag, "--port") == 0;
    long min = port ? 0 : 1, max = port ? 65535 : 86400, n = parse_count(value, min, max);
    if (n < 0)
        return ct_usage_error("open: %s wants a number from %ld to %ld, not %s", flag, min, max,
                              value);
    *(port ? &o->port : &o->timeout_s) = (int)n;
    return -1;
}

/* -1 when the command goes on, else its exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){
        .ui = DEFAULT_UI, .port = DEFAULT_PORT, .timeout_s = DEFAULT_TIMEOUT_S, .browser = 1};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int status = -1;
        if (strcmp(arg, "--help") == 0)
            return fputs(help, stdout) == EOF;
        if (strcmp(arg, "--no-browser") == 0)
            o->browser = 0;
        else if (arg[0] != '-' && !o->trace)
            o->trace = arg;
        else if (arg[0] != '-')
            return ct_usage_error("open: one trace at a time");
        else if (strcmp(arg, "--port") && strcmp(arg, "--timeout") && strcmp(arg, "--ui"))
            return ct_usage_error("open: unknown option %s", arg);
        else if (i + 1 >= argc)
            return ct_usage_error("open: %s needs a value", arg);
        else
            status = set_option(o, arg, argv[++i]);
        if (status >= 0)
            return status;
    }
    return o->trace ? -1 : ct_usage_error("open: no trace file given");
}

/* "/NAME": the trace's file name, with every character a URL might need to
 * escape made '_', so that the link needs no escaping at any level. */
static void served_path(const char *trace, char *out, size_t size)
{
    const char *slash = strrchr(trace, '/');
    snprintf(out, size, "/%s", slash ? slash + 1 : trace);
    for (char *c = out + 1; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("._-", *c))
            *c = '_';
}

static int open_trace(const char *trace)
{
    struct stat st;
    int fd = open(trace, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fprintf(stderr, "cudatrace: %s: cannot open: %s\n", trace, strerror(errno));
    else if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "cudatrace: %s: not a regular file\n", trace);
        close(fd);
        fd = -1;
    }
    return fd;
}

/* A socket listening on 127.0.0.1:*port (0: any free one, stored back). */
static int listen_loopback(int *port)
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

static int is_set(const char *variable)
{
    const char *value = getenv(variable);
    return value && *value;
}

/* Best effort: without xdg-open the printed link is all there is. */
static void open_browser(const char *url)
{
    if (!is_set("DISPLAY") && !is_set("WAYLAND_DISPLAY"))
        return;
    /* The browser's chatter would mix with our output; and nothing here
     * waits for it, so let the kernel reap it. */
    signal(SIGCHLD, SIG_IGN);
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&quiet, STDOUT_FILENO, STDERR_FILENO);
    char *argv[] = {"xdg-open", (char *)url, NULL};
    pid_t pid;
    posix_spawnp(&pid, "xdg-open", &quiet, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&quiet);
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
        if (!equal_nocase(line, name, n) || line[n] != ':')
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
        if (!equal_nocase(text, names[i], n))
            continue;
        const char *rest = text + n;
        if (port >= 0)
            return rest[0] == ':' && parse_count(rest + 1, port, port) == port;
        return rest[0] == '\0' || (rest[0] == ':' && parse_count(rest + 1, 1, 65535) > 0);
    }
    return 0;
}

/* ui.perfetto.dev, the --ui one, and a UI served on this machine (offline). */
static int origin_allowed(const char *origin, const char *ui)
{
    size_t ui_len = origin_length(ui);
    if (strcmp(origin, DEFAULT_UI) == 0 ||
        (strlen(origin) == ui_len && equal_nocase(origin, ui, ui_len)))
        return 1;
    return strncmp(origin, "http://", 7) == 0 && is_loopback_authority(origin + 7, -1);
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
             equal_nocase(r->ask_private, "true", 5)
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
static int answer(int fd, const struct server *s)
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
    else if (strcmp(r.path, s->path) != 0)
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
static int answer_waiting(const struct server *s, struct waiting *w, const struct pollfd *polled)
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

static int serve(const struct server *s, int timeout_s)
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

/* The UI's link that makes it fetch the trace from us. */
static void link_to(const struct server *s, char *url, size_t size)
{
    int ui_len = (int)strlen(s->ui);
    while (ui_len > 0 && s->ui[ui_len - 1] == '/')
        ui_len--;
    snprintf(url, size, "%.*s/#!/?url=http://127.0.0.1:%d%s", ui_len, s->ui, s->port, s->path);
}

int ct_cmd_open(int argc, char **argv)
{
    struct options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    struct server s = {.port = o.port, .trace = o.trace, .ui = o.ui};
    served_path(o.trace, s.path, sizeof s.path);
    if ((s.file = open_trace(o.trace)) < 0)
        return 1;
    if ((s.listener = listen_loopback(&s.port)) < 0) {
        close(s.file);
        return 1;
    }
    /* A client that leaves mid-reply must not kill us with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    char url[2 * PATH_MAX];
    link_to(&s, url, sizeof url);
    printf("%s\n", url);
    fflush(stdout);
    fprintf(stderr, "cudatrace: open: serving %s on 127.0.0.1:%d until the UI fetches it\n",
            o.trace, s.port);
    if (o.browser)
        open_browser(url);
    status = serve(&s, o.timeout_s);
    close(s.listener);
    close(s.file);
    return status;
}

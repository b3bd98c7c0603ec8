/*
 * `cudatrace open TRACE`: hands a trace to the Perfetto UI in a browser. The
 * UI cannot read a local path, but it fetches a `url=` from a trace server on
 * 127.0.0.1:9001, the one local address its content security policy lets it
 * reach; so this serves TRACE there (http_server.c) at a path with a random
 * token, which no other user on the machine can guess, prints the link
 * and, where there is a desktop, opens it. It exits once the whole file was
 * sent, or with an error once --timeout passed without that.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "viewer-export/cmd/http_server.h"
#include "viewer-export/commands.h"

extern char **environ;

#define DEFAULT_PORT 9001
#define DEFAULT_TIMEOUT_S 300
/* The link's secret: 128 bits, too many to find by trying. */
#define TOKEN_BYTES 16

static const char help[] =
    "usage: cudatrace open [--port N] [--timeout SECONDS] [--ui URL] [--no-browser]\n"
    "                      TRACE\n"
    "\n"
    "Shows TRACE in the Perfetto UI: serves the file on 127.0.0.1 (and nowhere else)\n"
    "at a random path that only the printed link holds, so that other users on this\n"
    "machine cannot fetch it; prints the link and, where there is a desktop\n"
    "(xdg-open, and DISPLAY or WAYLAND_DISPLAY set), opens it in the browser.\n"
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

size_t ct_origin_length(const char *url)
{
    size_t scheme = strncmp(url, "https://", 8) == 0 ? 8 : strncmp(url, "http://", 7) == 0 ? 7 : 0;
    size_t host = scheme ? strcspn(url + scheme, "/?#") : 0;
    return host ? scheme + host : 0;
}

enum { OPT_PORT = 256, OPT_TIMEOUT, OPT_UI, OPT_NO_BROWSER, OPT_HELP };

/* Stores the value of --port, --timeout or --ui (`option`); -1 when it is
 * good, else the usage error's status. */
static int set_option(struct options *o, int option, const char *value)
{
    if (option == OPT_UI) {
        o->ui = value;
        return ct_origin_length(value) ? -1 : ct_usage_error("open: --ui wants an http(s) URL");
    }
    int port = option == OPT_PORT;
    const char *flag = port ? "--port" : "--timeout";
    long min = port ? 0 : 1, max = port ? 65535 : 86400, n = ct_parse_count(value, min, max);
    if (n < 0)
        return ct_usage_error("open: %s wants a number from %ld to %ld, not %s", flag, min, max,
                              value);
    *(port ? &o->port : &o->timeout_s) = (int)n;
    return -1;
}

static const struct option long_options[] = {
    {"port", required_argument, NULL, OPT_PORT}, {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"ui", required_argument, NULL, OPT_UI},     {"no-browser", no_argument, NULL, OPT_NO_BROWSER},
    {"help", no_argument, NULL, OPT_HELP},       {NULL, 0, NULL, 0},
};

/* -1 when the command goes on, else its exit status. getopt_long takes the
 * options wherever they stand, up to a `--`. */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){
        .ui = CT_PERFETTO_UI, .port = DEFAULT_PORT, .timeout_s = DEFAULT_TIMEOUT_S, .browser = 1};
    opterr = 0;
    for (int c, status; (c = getopt_long(argc, argv, ":", long_options, NULL)) != -1;) {
        if (c == OPT_HELP)
            return fputs(help, stdout) == EOF;
        if (c == OPT_NO_BROWSER)
            o->browser = 0;
        else if (c == '?' || c == ':')
            return ct_option_error(c, argv, help);
        else if ((status = set_option(o, c, optarg)) >= 0)
            return status;
    }
    if (optind + 1 < argc)
        return ct_usage_error("open: one trace at a time");
    o->trace = optind < argc ? argv[optind] : NULL;
    return o->trace ? -1 : ct_usage_error("open: no trace file given");
}

/* "/TOKEN/NAME", the one path served. Any user on this machine can reach the
 * port, so the path is what keeps the trace to whoever was given the link:
 * TOKEN is TOKEN_BYTES from getrandom(2), in hex. NAME, the trace's file name,
 * keeps the link saying which trace it is; every character a URL might need to
 * escape is made '_', so that the link needs no escaping at any level. */
static int served_path(const char *trace, char *out, size_t size)
{
    unsigned char token[TOKEN_BYTES];
    if (getrandom(token, sizeof token, 0) != (ssize_t)sizeof token) {
        fprintf(stderr, "cudatrace: open: no random token for the link: %s\n", strerror(errno));
        return -1;
    }
    size_t len = 1;
    out[0] = '/';
    for (size_t i = 0; i < sizeof token; i++)
        len += (size_t)snprintf(out + len, size - len, "%02x", token[i]);
    const char *slash = strrchr(trace, '/');
    snprintf(out + len, size - len, "/%s", slash ? slash + 1 : trace);
    for (char *c = out + len + 1; *c; c++)
        if (!isalnum((unsigned char)*c) && !strchr("._-", *c))
            *c = '_';
    return 0;
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

/* The UI's link that makes it fetch the trace from us. */
static void link_to(const struct ct_http_server *s, char *url, size_t size)
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
    struct ct_http_server s = {.port = o.port, .trace = o.trace, .ui = o.ui};
    if (served_path(o.trace, s.path, sizeof s.path) || (s.file = open_trace(o.trace)) < 0)
        return 1;
    if ((s.listener = ct_http_listen_loopback(&s.port)) < 0) {
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
    status = ct_http_serve(&s, o.timeout_s);
    close(s.listener);
    close(s.file);
    return status;
}

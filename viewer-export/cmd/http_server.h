/*
 * The one-file HTTP server `cudatrace open` hands a trace to the Perfetto UI
 * with (http_server.c).
 */
#ifndef CT_VIEWER_CMD_HTTP_SERVER_H
#define CT_VIEWER_CMD_HTTP_SERVER_H

#include <limits.h>
#include <stddef.h>

#define CT_PERFETTO_UI "https://ui.perfetto.dev"

struct ct_http_server {
    int listener, file, port;
    const char *trace;   /* the file's name, for messages */
    const char *ui;      /* the UI's URL; its origin, ui.perfetto.dev's and loopback's may fetch */
    char path[PATH_MAX]; /* the one path served; its secret keeps other local users out */
};

/* A socket listening on 127.0.0.1:*port (0: any free one, stored back); -1
 * with one line on stderr when there is none. */
int ct_http_listen_loopback(int *port);
/* Serves the file until one GET took all of it (0) or `timeout_s` passed
 * (1), saying which on stderr. */
int ct_http_serve(const struct ct_http_server *s, int timeout_s);

/* The length of the scheme://host[:port] that begins `url`; 0 when none does. */
size_t ct_origin_length(const char *url);

#endif

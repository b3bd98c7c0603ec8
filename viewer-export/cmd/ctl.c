/*
 * `cudatrace ctl PID COMMAND`: asks the collector of a live traced process
 * over its control socket (common/control_socket.h), prints its reply and
 * exits 0, or says in one line why not and exits 1. It sends the program
 * nothing: no signal, no ptrace, only a line to the collector, which owns
 * the list of commands (collector/control/commands.c; `help` prints it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/control_socket.h"
#include "viewer-export/commands.h"

#define REPLY_MAX 65536
#define REPLY_WAIT_S 5

static const char help[] =
    "usage: cudatrace ctl PID COMMAND\n"
    "\n"
    "Asks the collector tracing process PID, over a socket in a directory only\n"
    "you can open ($XDG_RUNTIME_DIR/cudatrace, else /tmp/cudatrace-UID):\n"
    "  status   calls per function so far, live device memory, records, trace\n"
    "           bytes, and whether a capture window is open\n"
    "  start    open a capture window: record detail from now\n"
    "  stop     close it: from now on only the whole-run totals, and the\n"
    "           allocations and frees, which every memory figure stands on\n"
    "  snapshot write the trace so far, with each thread's state, beside the\n"
    "           trace (NAME.snapshot-N.pftrace.zst), and print its path\n"
    "  help     the commands that collector knows\n"
    "The program is never signalled or stopped.\n"
    "\n"
    "examples:\n"
    "  cudatrace ctl 1234 status\n"
    "  CUDATRACE_CAPTURE=profiler cudatrace run -- python train.py &  cudatrace ctl $! start\n";

static int fail(long pid, const char *why)
{
    fprintf(stderr, "cudatrace: ctl: pid %ld: %s\n", pid, why);
    return 1;
}

/* Connects to the collector of `pid`; -1 with why in `why`. */
static int connect_to(long pid, char *why, size_t why_size)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (ct_control_socket_path((int32_t)pid, 0, address.sun_path, sizeof address.sun_path, why,
                               why_size))
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval wait = {REPLY_WAIT_S, 0};
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait) == 0 &&
        connect(fd, (struct sockaddr *)&address, sizeof address) == 0)
        return fd;
    if (errno == ENOENT || errno == ECONNREFUSED)
        snprintf(why, why_size, "no cudatrace collector is listening (%s: %s)", address.sun_path,
                 strerror(errno));
    else
        snprintf(why, why_size, "cannot connect to %s: %s", address.sun_path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Sends the command and reads the whole reply into `reply`; its length or -1. */
static ssize_t ask(int fd, const char *command, char *reply, size_t size)
{
    char line[CT_CONTROL_LINE_MAX];
    int n = snprintf(line, sizeof line, "%s\n", command);
    if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n)
        return -1;
    size_t len = 0;
    ssize_t got;
    while (len < size - 1 && (got = read(fd, reply + len, size - 1 - len)) > 0)
        len += (size_t)got;
    reply[len] = 0;
    return got < 0 && len == 0 ? -1 : (ssize_t)len;
}

int ct_cmd_ctl(int argc, char **argv)
{
    int status = ct_help_only_options(&argc, &argv, help);
    if (status >= 0)
        return status;
    if (argc != 3)
        return ct_usage_error("ctl: expected a PID and a command (cudatrace ctl PID status)");
    long pid = ct_parse_count(argv[1], 1, 0x7fffffff);
    if (pid < 0)
        return ct_usage_error("ctl: %s is not a process id", argv[1]);
    const char *command = argv[2];
    if (!*command || strlen(command) + 2 > CT_CONTROL_LINE_MAX || strpbrk(command, "\n\r"))
        return ct_usage_error("ctl: a command is one short word (see cudatrace ctl --help)");
    char why[512];
    int fd = connect_to(pid, why, sizeof why);
    if (fd < 0)
        return fail(pid, why);
    static char reply[REPLY_MAX];
    ssize_t len = ask(fd, command, reply, sizeof reply);
    close(fd);
    if (len < 0)
        return fail(pid, "the collector did not answer");
    if (strncmp(reply, "ok\n", 3) == 0)
        return fputs(reply + 3, stdout) == EOF;
    if (strncmp(reply, "error: ", 7) == 0) {
        reply[strcspn(reply, "\n")] = 0;
        return fail(pid, reply + 7);
    }
    return fail(pid, len ? "the collector's reply is not one it would give" : "no reply came");
}

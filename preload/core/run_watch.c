/*
 * Under `cudatrace run`, says so when nothing in the run touched CUDA: the
 * user asked for a trace, and silence would read as a tracer that failed.
 * run execs the program in its own place (so the program keeps its pid) and
 * names that pid in CUDATRACE_RUN_WATCH; the preload in that process, the
 * run's top, binds a datagram socket in the abstract namespace (nothing on
 * disk, gone with the process) and every process of the run that starts a
 * session, or at its exit has PyTorch mapped without ever touching CUDA,
 * sends it one datagram; environment variables reach the processes that
 * subprocess starts with their descriptors closed. At its exit the top
 * prints one line when neither it nor any datagram touched CUDA, with what
 * can be told from outside: a PyTorch without its CUDA part (a CPU-only
 * build) and a CUDA_VISIBLE_DEVICES that hides every GPU; from our
 * destructor, or from _exit for a top that ends by it and so runs none
 * (dash does). A bare preload never sets the variable and pays one getenv.
 */
#include "preload/core/run_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "preload/core/config.h"
#include "preload/core/export.h"
#include "preload/core/init.h"
#include "preload/core/descriptors.h"
#include "preload/loader/loaded_objects.h"

#define TOUCHED_CUDA 'c'
#define CPU_TORCH 't'
#define CPU_TORCH_LIBRARY "libtorch_cpu.so"

static struct ct_fd watch = CT_NO_FD;
static int touched, finished;
static char torch_path[256];

/* The run's address: a leading NUL puts it in the abstract namespace. */
static socklen_t run_address(struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n =
        snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "cudatrace-run-%s", ct_config.run_watch);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int is_top(void)
{
    return ct_config.run_watch && strtol(ct_config.run_watch, NULL, 10) == (long)getpid();
}

void ct_run_watch_start(void)
{
    if (!is_top())
        return;
    struct sockaddr_un a;
    socklen_t length = run_address(&a);
    int fd = ct_fd_above_stdio(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, length) == 0)
        watch = ct_fd_keep(fd);
    else if (fd >= 0)
        close(fd);
}

static void tell_top(char kind, const char *detail)
{
    char message[sizeof torch_path + 1];
    struct sockaddr_un a;
    socklen_t length = run_address(&a);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    int n = snprintf(message, sizeof message, "%c%s", kind, detail);
    sendto(fd, message, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&a, length);
    close(fd);
}

void ct_run_watch_touched(void)
{
    if (!ct_config.run_watch || touched)
        return;
    touched = 1;
    if (!is_top())
        tell_top(TOUCHED_CUDA, "");
}

/* What the datagrams say: CUDA touched somewhere, or where a PyTorch
 * without CUDA was. */
static void read_datagrams(void)
{
    char message[sizeof torch_path + 1];
    ssize_t n;
    while (ct_fd_is_ours(&watch) && (n = recv(watch.fd, message, sizeof message - 1, 0)) > 0) {
        message[n] = '\0';
        if (message[0] == TOUCHED_CUDA)
            touched = 1;
        else if (message[0] == CPU_TORCH && !torch_path[0])
            ct_copy_truncated(torch_path, sizeof torch_path, message + 1);
    }
    ct_fd_release(&watch);
}

static void say_nothing_touched(void)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char torch[sizeof torch_path + 128] = "", devices[128] = "";
    if (torch_path[0])
        snprintf(torch, sizeof torch,
                 "; PyTorch was loaded without its CUDA part (%s): a CPU-only build, as "
                 "torch.version.cuda being None shows",
                 torch_path);
    if (visible && (!visible[0] || strcmp(visible, "-1") == 0))
        snprintf(devices, sizeof devices, "; CUDA_VISIBLE_DEVICES=%s hides every GPU", visible);
    ct_warn("no trace: nothing in this run loaded a CUDA library or called CUDA%s%s", torch,
            devices);
}

void ct_run_watch_finish(void)
{
    if (!ct_tracing_allowed || !ct_config.run_watch || touched || finished)
        return;
    finished = 1;
    char path[sizeof torch_path];
    if (ct_loaded_path_of(CPU_TORCH_LIBRARY, path, sizeof path) && !torch_path[0])
        ct_copy_truncated(torch_path, sizeof torch_path, path);
    if (!is_top()) {
        if (torch_path[0])
            tell_top(CPU_TORCH, torch_path);
        return;
    }
    read_datagrams();
    if (!touched && !ct_config.quiet)
        say_nothing_touched();
}

/* Only the top acts here: a vfork child of it shares its memory and runs
 * _exit when its exec fails. exit_group is what glibc's _exit makes. */
CT_EXPORT void _exit(int status)
{
    if (is_top())
        ct_run_watch_finish();
    for (;;)
        syscall(SYS_exit_group, status);
}

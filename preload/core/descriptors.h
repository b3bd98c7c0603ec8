/*
 * The tracer's own descriptors in the program's table. None may take 0-2:
 * a program started with those closed opens them next and takes them for
 * its stdin, stdout and stderr. And the program may close any descriptor it
 * did not open (daemons and subprocess's children close them all) and reuse
 * the number, so each is kept with the identity of what it was opened on,
 * and touched (polled, closed) only while that identity holds. A header,
 * because the preload and the audit module are separate objects.
 */
#ifndef CT_PRELOAD_CORE_DESCRIPTORS_H
#define CT_PRELOAD_CORE_DESCRIPTORS_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* `fd`, moved to 3 or above when it landed on 0-2 (-1 when that fails). */
static inline int ct_fd_above_stdio(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3), saved = errno;
    close(fd);
    errno = saved;
    return moved;
}

struct ct_fd {
    int fd; /* -1: none */
    dev_t dev;
    ino_t ino;
};

#define CT_NO_FD ((struct ct_fd){-1, 0, 0})

static inline struct ct_fd ct_fd_keep(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return CT_NO_FD;
    return (struct ct_fd){fd, st.st_dev, st.st_ino};
}

/* Whether the number still holds what it was kept on. The program's errno
 * is its own. */
static inline int ct_fd_is_ours(const struct ct_fd *f)
{
    struct stat st;
    int saved = errno;
    int ours = f->fd >= 0 && fstat(f->fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
    errno = saved;
    return ours;
}

/* Closes it if it is still ours, and forgets it either way. */
static inline void ct_fd_release(struct ct_fd *f)
{
    int saved = errno;
    if (ct_fd_is_ours(f))
        close(f->fd);
    *f = CT_NO_FD;
    errno = saved;
}

#endif

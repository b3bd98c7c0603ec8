/*
 * Writing a whole buffer to a descriptor (a file or a socket), through short
 * writes and interrupted ones: the trace file, `recover`'s output and
 * `open`'s HTTP answers all need exactly this.
 */
#ifndef CT_WRITE_ALL_H
#define CT_WRITE_ALL_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Returns the bytes written: `size`, or fewer with errno saying why (EIO
 * when the descriptor took nothing). */
static inline size_t ct_write_all(int fd, const void *data, size_t size)
{
    const char *p = data;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, p + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            break;
        }
        done += (size_t)n;
    }
    return done;
}

#endif

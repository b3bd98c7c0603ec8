/*
 * Times dlopen of a library that is already loaded (what a framework does
 * each time it asks for a handle it has), for `make bench`: N dlopens of
 * NAME, timed together, then as many dlcloses (not timed). Prints
 * "dlopen_loop: N dlopens, X ns per dlopen". Usage: dlopen_loop N NAME.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = strtol(argv[1], NULL, 10);
    void **handles = calloc((size_t)n, sizeof *handles);
    if (!handles || !dlopen(argv[2], RTLD_NOW))
        return 1;
    double start = now_ns();
    for (long i = 0; i < n; i++)
        handles[i] = dlopen(argv[2], RTLD_NOW);
    double elapsed = now_ns() - start;
    for (long i = 0; i < n; i++)
        dlclose(handles[i]);
    printf("dlopen_loop: %ld dlopens, %.1f ns per dlopen\n", n, elapsed / (double)n);
    return 0;
}

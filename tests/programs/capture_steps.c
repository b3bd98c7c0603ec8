/*
 * A program the capture-window and `cudatrace ctl` tests steer step by step,
 * so they know what it did before and after each window: a number N makes N
 * cudaLaunchKernel calls, "start" and "stop" call cudaProfilerStart and
 * cudaProfilerStop, "malloc" allocates 1 MiB it never frees, "oom" asks for
 * 2^62 bytes, which must fail out of memory, "sleep:MS" sleeps. The steps are its arguments, or
 * else the lines of its stdin, each answered "ok" on stdout once done (flushed, so a test can wait
 * for it) until end of input. Status 0 unless a step went otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void capture_step_kernel(void) {}

static int launches(long n)
{
    dim3 one = {1, 1, 1};
    int failed = 0;
    for (long i = 0; i < n; i++)
        failed |= cudaLaunchKernel((const void *)capture_step_kernel, one, one, NULL, 0, NULL) !=
                  cudaSuccess;
    return failed;
}

static int step(const char *line)
{
    void *block;
    if (strcmp(line, "start") == 0)
        return cudaProfilerStart() != cudaSuccess;
    if (strcmp(line, "stop") == 0)
        return cudaProfilerStop() != cudaSuccess;
    if (strcmp(line, "malloc") == 0)
        return cudaMalloc(&block, 1 << 20) != cudaSuccess;
    if (strcmp(line, "oom") == 0)
        return cudaMalloc(&block, (size_t)1 << 62) != cudaErrorMemoryAllocation;
    if (strncmp(line, "sleep:", 6) == 0) {
        long ms = strtol(line + 6, NULL, 10);
        struct timespec pause = {ms / 1000, ms % 1000 * 1000000};
        nanosleep(&pause, NULL);
        return 0;
    }
    return launches(strtol(line, NULL, 10));
}

int main(int argc, char **argv)
{
    char line[64];
    int failed = 0;
    for (int i = 1; i < argc; i++)
        failed |= step(argv[i]);
    while (argc == 1 && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        failed |= step(line);
        printf("ok\n");
        fflush(stdout);
    }
    return failed;
}

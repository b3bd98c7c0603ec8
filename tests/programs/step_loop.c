/*
 * A training loop whose steps are known exactly, for the step tests: each step launches three
 * kernels, synchronises, then waits --wait-ms (default 10) for its next input. --steps N
 * (default 20); --warmup-ms W: the first step waits W more (warm-up); --slow-every K --slow-ms S:
 * every Kth step waits S more; --drift-us D: step N waits (N - 1) * D us more (steps slowing
 * over the run); --nvtx: each step is an NVTX range named "train_step" (as a
 * loop that marks its steps). Prints each step's own wall time, "step N NS", measured around
 * the whole step with CLOCK_MONOTONIC. Status 0 when every call succeeded.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

/* Exported (the build links with -rdynamic) so a tracer can resolve its name. */
void step_kernel(void) {}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_us(long us)
{
    struct timespec pause = {us / 1000000, us % 1000000 * 1000};
    nanosleep(&pause, NULL);
}

static int step(long wait_us)
{
    dim3 one = {1, 1, 1};
    int failed = 0;
    for (int i = 0; i < 3; i++)
        failed |=
            cudaLaunchKernel((const void *)step_kernel, one, one, NULL, 0, NULL) != cudaSuccess;
    failed |= cudaDeviceSynchronize() != cudaSuccess;
    sleep_us(wait_us);
    return failed;
}

int main(int argc, char **argv)
{
    long steps = 20, wait_ms = 10, warmup_ms = 0, slow_every = 0, slow_ms = 0, drift_us = 0;
    int nvtx = 0, option, failed = 0;
    static const struct option options[] = {
        {"steps", required_argument, NULL, 'n'},     {"wait-ms", required_argument, NULL, 'w'},
        {"warmup-ms", required_argument, NULL, 'u'}, {"slow-every", required_argument, NULL, 'k'},
        {"slow-ms", required_argument, NULL, 's'},   {"nvtx", no_argument, NULL, 'v'},
        {"drift-us", required_argument, NULL, 'd'},  {NULL, 0, NULL, 0}};
    while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
        long value = optarg ? strtol(optarg, NULL, 10) : 0;
        switch (option) {
        case 'n':
            steps = value;
            break;
        case 'w':
            wait_ms = value;
            break;
        case 'u':
            warmup_ms = value;
            break;
        case 'k':
            slow_every = value;
            break;
        case 's':
            slow_ms = value;
            break;
        case 'v':
            nvtx = 1;
            break;
        case 'd':
            drift_us = value;
            break;
        default:
            return 2;
        }
    }
    for (long n = 1; n <= steps; n++) {
        long wait_us = 1000 * (wait_ms + (n == 1 ? warmup_ms : 0) +
                               (slow_every && n % slow_every == 0 ? slow_ms : 0)) +
                       drift_us * (n - 1);
        long long begun = now_ns();
        if (nvtx)
            nvtxRangePushA("train_step");
        failed |= step(wait_us);
        if (nvtx)
            nvtxRangePop();
        printf("step %ld %lld\n", n, now_ns() - begun);
    }
    return failed;
}

/*
 * A training loop whose steps are known exactly, for the step tests. It allocates its model
 * (cudaMalloc) once, then each step waits --wait-ms (default 10) for its input, launches three
 * kernels and synchronises. --steps N (default 20); --warmup-ms W: the first step waits W more
 * and --warmup-kernels K launches K more kernels (warm-up, autotuning); --slow-every K
 * --slow-ms S: every Kth step waits S more; --drift-us D: step N waits (N - 1) * D us more
 * (steps slowing over the run); --extra-every K: every Kth step launches one kernel more (steps
 * that differ a little); --graph: the three kernels are captured once into a CUDA graph and each
 * step launches it; --threads 2: a second thread launches three "backward" kernels in each step
 * after the first three, as PyTorch's autograd thread does; --setup-ms S and --teardown-ms T:
 * host work before the loop, after the allocation, and after it, before the free (start-up and
 * shutdown, such as loading a dataset or an interpreter tearing down); --nvtx: each step is an
 * NVTX range named "train_step" (as a loop that marks its steps); --nvtx-mark: each step begins
 * with an NVTX mark named "step" instead; --profiler: each step's work (its launches and
 * synchronisation, not its input wait) is a cudaProfilerStart/Stop window; --extra-sync: each
 * step also synchronises its stream after its launches, at a line of its own (a synchronising
 * call added to the loop); --model-mb M: the model is M MiB (default 1), held through the loop.
 * Prints each step's own wall time, "step N NS", measured around the whole step with
 * CLOCK_MONOTONIC. Status 0 when every call succeeded.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

/* Exported (the build links with -rdynamic) so a tracer can resolve their names. */
void step_kernel(void) {}
void backward_kernel(void) {}

struct loop {
    long steps, wait_ms, warmup_ms, warmup_kernels, slow_every, slow_ms, drift_us, extra_every;
    long setup_ms, teardown_ms, model_mb;
    int nvtx, nvtx_mark, profiler, graph, threads, extra_sync;
};

/* The backward thread's turn: the main thread hands it each step's second half. */
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static long backward_step; /* the step the backward thread is to run; -1: stop */
static int backward_done, backward_failed;

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

static int launch(void (*kernel)(void), int times)
{
    dim3 one = {1, 1, 1};
    int failed = 0;
    for (int i = 0; i < times; i++)
        failed |= cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, NULL) != cudaSuccess;
    return failed;
}

static void *backward(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&turn_lock);
    for (long done = 0;;) {
        while (backward_step == done)
            pthread_cond_wait(&turn_changed, &turn_lock);
        if (backward_step < 0)
            break;
        done = backward_step;
        pthread_mutex_unlock(&turn_lock);
        int failed = launch(backward_kernel, 3);
        pthread_mutex_lock(&turn_lock);
        backward_failed |= failed;
        backward_done = 1;
        pthread_cond_broadcast(&turn_changed);
    }
    pthread_mutex_unlock(&turn_lock);
    return NULL;
}

/* Step `n`'s backward half, on the backward thread, waited for; -1 stops it. */
static void hand_backward(long n)
{
    pthread_mutex_lock(&turn_lock);
    backward_step = n;
    backward_done = 0;
    pthread_cond_broadcast(&turn_changed);
    while (n > 0 && !backward_done)
        pthread_cond_wait(&turn_changed, &turn_lock);
    pthread_mutex_unlock(&turn_lock);
}

/* The three kernels as one CUDA graph, captured from a stream. */
static cudaGraphExec_t capture(cudaStream_t stream)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess)
        return NULL;
    dim3 one = {1, 1, 1};
    for (int i = 0; i < 3; i++)
        cudaLaunchKernel((const void *)step_kernel, one, one, NULL, 0, stream);
    if (cudaStreamEndCapture(stream, &graph) != cudaSuccess ||
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
        return NULL;
    return exec;
}

static int step(const struct loop *l, long n, cudaGraphExec_t exec, cudaStream_t stream)
{
    long wait_us = 1000 * (l->wait_ms + (n == 1 ? l->warmup_ms : 0) +
                           (l->slow_every && n % l->slow_every == 0 ? l->slow_ms : 0)) +
                   l->drift_us * (n - 1);
    sleep_us(wait_us);
    if (l->profiler)
        cudaProfilerStart();
    int failed = exec ? cudaGraphLaunch(exec, stream) != cudaSuccess : launch(step_kernel, 3);
    failed |= launch(step_kernel, (int)((n == 1 ? l->warmup_kernels : 0) +
                                        (l->extra_every && n % l->extra_every == 0)));
    if (l->extra_sync)
        failed |= cudaStreamSynchronize(stream) != cudaSuccess;
    if (l->threads > 1)
        hand_backward(n);
    failed |= cudaDeviceSynchronize() != cudaSuccess;
    if (l->profiler)
        cudaProfilerStop();
    return failed;
}

static int parse(int argc, char **argv, struct loop *l)
{
    static const struct option options[] = {{"steps", required_argument, NULL, 'n'},
                                            {"wait-ms", required_argument, NULL, 'w'},
                                            {"warmup-ms", required_argument, NULL, 'u'},
                                            {"slow-every", required_argument, NULL, 'k'},
                                            {"slow-ms", required_argument, NULL, 's'},
                                            {"nvtx", no_argument, NULL, 'v'},
                                            {"drift-us", required_argument, NULL, 'd'},
                                            {"extra-every", required_argument, NULL, 'x'},
                                            {"graph", no_argument, NULL, 'g'},
                                            {"threads", required_argument, NULL, 't'},
                                            {"warmup-kernels", required_argument, NULL, 'K'},
                                            {"setup-ms", required_argument, NULL, 'S'},
                                            {"teardown-ms", required_argument, NULL, 'T'},
                                            {"nvtx-mark", no_argument, NULL, 'm'},
                                            {"profiler", no_argument, NULL, 'p'},
                                            {"extra-sync", no_argument, NULL, 'y'},
                                            {"model-mb", required_argument, NULL, 'M'},
                                            {NULL, 0, NULL, 0}};
    for (int option; (option = getopt_long(argc, argv, "", options, NULL)) != -1;) {
        long value = optarg ? strtol(optarg, NULL, 10) : 0;
        long *field = option == 'n'   ? &l->steps
                      : option == 'w' ? &l->wait_ms
                      : option == 'u' ? &l->warmup_ms
                      : option == 'k' ? &l->slow_every
                      : option == 's' ? &l->slow_ms
                      : option == 'd' ? &l->drift_us
                      : option == 'x' ? &l->extra_every
                      : option == 'K' ? &l->warmup_kernels
                      : option == 'S' ? &l->setup_ms
                      : option == 'T' ? &l->teardown_ms
                      : option == 'M' ? &l->model_mb
                                      : NULL;
        if (field)
            *field = value;
        else if (option == 'v')
            l->nvtx = 1;
        else if (option == 'm')
            l->nvtx_mark = 1;
        else if (option == 'p')
            l->profiler = 1;
        else if (option == 'g')
            l->graph = 1;
        else if (option == 'y')
            l->extra_sync = 1;
        else if (option == 't')
            l->threads = (int)value;
        else
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct loop l = {.steps = 20, .wait_ms = 10, .threads = 1, .model_mb = 1};
    if (parse(argc, argv, &l))
        return 2;
    void *model = NULL;
    cudaStream_t stream = NULL;
    int failed = cudaMalloc(&model, (size_t)l.model_mb << 20) != cudaSuccess;
    cudaGraphExec_t exec = NULL;
    if (l.graph) {
        failed |= cudaStreamCreate(&stream) != cudaSuccess;
        failed |= !(exec = capture(stream));
    }
    sleep_us(1000 * l.setup_ms);
    pthread_t thread;
    if (l.threads > 1 && pthread_create(&thread, NULL, backward, NULL) != 0)
        return 1;
    for (long n = 1; n <= l.steps; n++) {
        long long begun = now_ns();
        if (l.nvtx)
            nvtxRangePushA("train_step");
        if (l.nvtx_mark)
            nvtxMarkA("step");
        failed |= step(&l, n, exec, stream);
        if (l.nvtx)
            nvtxRangePop();
        printf("step %ld %lld\n", n, now_ns() - begun);
    }
    if (l.threads > 1) {
        hand_backward(-1);
        pthread_join(thread, NULL);
        failed |= backward_failed;
    }
    sleep_us(1000 * l.teardown_ms);
    return failed | (cudaFree(model) != cudaSuccess);
}

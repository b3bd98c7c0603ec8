/*
 * A CUDA graph captured and replayed, for the tracer's and the doubles' graph tests. Captures on
 * stream S (mode --mode global|thread|relaxed, default global): cudaMallocAsync of 4 MiB (site
 * M), 20 launches of graph_step_a (site A), 15 of graph_step_b (site B), 5 of graph_step_c (site
 * C), a cudaMemsetAsync of the 4 MiB (site S) and its cudaFreeAsync (site F); instantiates it
 * (site I) and launches it --replays N times (default 1000; site L), synchronising S every 100
 * launches and at the end. --pause-at K --pause-ms M: after the Kth launch it synchronises,
 * prints "paused" and sleeps M ms. --rebuild R: R more captures of 10 graph_step_d launches (site
 * D), each instantiated (site R), launched once and destroyed. --explicit: a graph of three
 * cudaGraphAddKernelNode (site K) and a memset node, launched 10 times. --fail: in a capture of
 * its own, a launch of 0 threads (site X) that must fail, then cudaStreamSynchronize (site Y,
 * refused) and cudaStreamEndCapture (invalidated), each return code's name printed on a line of its
 * own. The captures begin at site P (the first) and site Q (the rebuilt ones). --alloc-after BYTES:
 * at the end, a cudaMalloc of BYTES (site O), its result's name printed. --to-graph: the first
 * capture goes into a graph made beforehand, with cudaStreamBeginCaptureToGraph (site G). Status 0
 * when every call went as documented.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#define BUFFER_BYTES (4u << 20)
#define SYNC_EVERY 100

/* Exported (the build links with -rdynamic) so a tracer can resolve their names. */
void graph_step_a(void) {}
void graph_step_b(void) {}
void graph_step_c(void) {}
void graph_step_d(void) {}

static int failures;

static void expect(cudaError_t rc, cudaError_t wanted, const char *what)
{
    if (rc != wanted) {
        fprintf(stderr, "graph_steps: %s returned %s\n", what, cudaGetErrorName(rc));
        failures++;
    }
}

/* A launch's result, counted as a failure unless it succeeded. */
static void launched(cudaError_t rc)
{
    expect(rc, cudaSuccess, "cudaLaunchKernel");
}

static void added(cudaError_t rc)
{
    expect(rc, cudaSuccess, "cudaGraphAddKernelNode");
}

static void sleep_ms(long ms)
{
    struct timespec pause = {ms / 1000, ms % 1000 * 1000000};
    nanosleep(&pause, NULL);
}

#define K(kernel) ((const void *)(kernel))

/* Begins capturing on `s`: into a graph of its own, or with --to-graph into one made first. */
static void begin_capture(cudaStream_t s, enum cudaStreamCaptureMode mode, int to_graph)
{
    cudaGraph_t into = NULL;
    if (!to_graph) {
        expect(cudaStreamBeginCapture(s, mode), cudaSuccess, "begin"); /* site P */
        return;
    }
    expect(cudaGraphCreate(&into, 0), cudaSuccess, "cudaGraphCreate");
    cudaError_t rc = cudaStreamBeginCaptureToGraph(s, into, NULL, NULL, 0, mode); /* site G */
    expect(rc, cudaSuccess, "begin to graph");
}

static cudaGraph_t capture_main(cudaStream_t s, enum cudaStreamCaptureMode mode, int to_graph)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    void *buf = NULL;
    cudaGraph_t graph = NULL;
    begin_capture(s, mode, to_graph);
    expect(cudaMallocAsync(&buf, BUFFER_BYTES, s), cudaSuccess, "malloc"); /* site M */
    for (int i = 0; i < 20; i++)
        launched(cudaLaunchKernel(K(graph_step_a), g, b, NULL, 0, s)); /* site A */
    for (int i = 0; i < 15; i++)
        launched(cudaLaunchKernel(K(graph_step_b), g, b, NULL, 0, s)); /* site B */
    for (int i = 0; i < 5; i++)
        launched(cudaLaunchKernel(K(graph_step_c), g, b, NULL, 0, s));       /* site C */
    expect(cudaMemsetAsync(buf, 0, BUFFER_BYTES, s), cudaSuccess, "memset"); /* site S */
    expect(cudaFreeAsync(buf, s), cudaSuccess, "free");                      /* site F */
    expect(cudaStreamEndCapture(s, &graph), cudaSuccess, "cudaStreamEndCapture");
    return graph;
}

static void replay(cudaGraphExec_t exec, cudaStream_t s, long replays, long pause_at, long pause_ms)
{
    for (long i = 1; i <= replays; i++) {
        expect(cudaGraphLaunch(exec, s), cudaSuccess, "cudaGraphLaunch"); /* site L */
        if (i % SYNC_EVERY == 0)
            expect(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
        if (i == pause_at) {
            expect(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
            printf("paused\n");
            fflush(stdout);
            sleep_ms(pause_ms);
        }
    }
    expect(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
}

static void rebuild(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    expect(cudaStreamBeginCapture(s, mode), cudaSuccess, "begin"); /* site Q */
    for (int i = 0; i < 10; i++)
        launched(cudaLaunchKernel(K(graph_step_d), g, b, NULL, 0, s)); /* site D */
    expect(cudaStreamEndCapture(s, &graph), cudaSuccess, "cudaStreamEndCapture");
    expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "instantiate"); /* site R */
    expect(cudaGraphLaunch(exec, s), cudaSuccess, "cudaGraphLaunch");
    expect(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
    expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy");
    expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");
}

static void explicit_graph(cudaStream_t s, void *target)
{
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaGraphNode_t n;
    struct cudaKernelNodeParams kernel = {
        (void *)graph_step_a, {1, 1, 1}, {32, 1, 1}, 0, NULL, NULL};
    struct cudaMemsetParams set = {target, 0, 0, 1, 4096, 1};
    expect(cudaGraphCreate(&graph, 0), cudaSuccess, "cudaGraphCreate");
    for (int i = 0; i < 3; i++)
        added(cudaGraphAddKernelNode(&n, graph, NULL, 0, &kernel)); /* site K */
    expect(cudaGraphAddMemsetNode(&n, graph, NULL, 0, &set), cudaSuccess, "memset node");
    expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "cudaGraphInstantiate");
    for (int i = 0; i < 10; i++)
        expect(cudaGraphLaunch(exec, s), cudaSuccess, "cudaGraphLaunch");
    expect(cudaStreamSynchronize(s), cudaSuccess, "cudaStreamSynchronize");
    expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy");
    expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");
}

/* cudaErrorInvalidConfiguration, cudaErrorStreamCaptureUnsupported and
 * cudaErrorStreamCaptureInvalidated, printed as they come. */
static void failing_capture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    dim3 none = {0, 1, 1}, one = {1, 1, 1};
    cudaGraph_t graph = NULL;
    expect(cudaStreamBeginCapture(s, mode), cudaSuccess, "cudaStreamBeginCapture");
    cudaError_t rc = cudaLaunchKernel(K(graph_step_a), one, none, NULL, 0, s); /* site X */
    printf("%s\n", cudaGetErrorName(rc));
    expect(rc, cudaErrorInvalidConfiguration, "invalid launch");
    rc = cudaStreamSynchronize(s); /* site Y */
    printf("%s\n", cudaGetErrorName(rc));
    expect(rc, cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize in capture");
    rc = cudaStreamEndCapture(s, &graph);
    printf("%s\n", cudaGetErrorName(rc));
    expect(rc, cudaErrorStreamCaptureInvalidated, "cudaStreamEndCapture");
    expect(graph == NULL ? cudaSuccess : cudaErrorUnknown, cudaSuccess, "invalidated graph");
    cudaGetLastError();
}

static enum cudaStreamCaptureMode mode_named(const char *name)
{
    if (strcmp(name, "thread") == 0)
        return cudaStreamCaptureModeThreadLocal;
    return strcmp(name, "relaxed") == 0 ? cudaStreamCaptureModeRelaxed
                                        : cudaStreamCaptureModeGlobal;
}

int main(int argc, char **argv)
{
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    long replays = 1000, pause_at = 0, pause_ms = 0, rebuilds = 0, alloc_after = 0;
    int explicit = 0, fail = 0, to_graph = 0, option;
    static const struct option options[] = {
        {"mode", required_argument, NULL, 'm'},     {"replays", required_argument, NULL, 'n'},
        {"pause-at", required_argument, NULL, 'p'}, {"pause-ms", required_argument, NULL, 'w'},
        {"rebuild", required_argument, NULL, 'r'},  {"explicit", no_argument, NULL, 'e'},
        {"fail", no_argument, NULL, 'f'},           {"alloc-after", required_argument, NULL, 'a'},
        {"to-graph", no_argument, NULL, 'g'},       {NULL, 0, NULL, 0}};
    while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (option) {
        case 'm':
            mode = mode_named(optarg);
            break;
        case 'n':
            replays = strtol(optarg, NULL, 10);
            break;
        case 'p':
            pause_at = strtol(optarg, NULL, 10);
            break;
        case 'w':
            pause_ms = strtol(optarg, NULL, 10);
            break;
        case 'r':
            rebuilds = strtol(optarg, NULL, 10);
            break;
        case 'e':
            explicit = 1;
            break;
        case 'f':
            fail = 1;
            break;
        case 'a':
            alloc_after = strtol(optarg, NULL, 10);
            break;
        case 'g':
            to_graph = 1;
            break;
        default:
            return 2;
        }
    }
    cudaStream_t s;
    void *target = NULL;
    cudaGraphExec_t exec = NULL;
    expect(cudaStreamCreate(&s), cudaSuccess, "cudaStreamCreate");
    expect(cudaMalloc(&target, 4096), cudaSuccess, "cudaMalloc");
    cudaGraph_t graph = capture_main(s, mode, to_graph);
    expect(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess, "instantiate"); /* site I */
    replay(exec, s, replays, pause_at, pause_ms);
    for (long i = 0; i < rebuilds; i++)
        rebuild(s, mode);
    if (explicit)
        explicit_graph(s, target);
    if (fail)
        failing_capture(s, mode);
    void *after = NULL;
    if (alloc_after) /* may fail: the tests set the double's memory limit */
        printf("%s\n", cudaGetErrorName(cudaMalloc(&after, (size_t)alloc_after))); /* site O */
    expect(cudaGraphExecDestroy(exec), cudaSuccess, "cudaGraphExecDestroy");
    expect(cudaGraphDestroy(graph), cudaSuccess, "cudaGraphDestroy");
    expect(cudaFree(target), cudaSuccess, "cudaFree");
    expect(cudaStreamDestroy(s), cudaSuccess, "cudaStreamDestroy");
    return failures != 0;
}

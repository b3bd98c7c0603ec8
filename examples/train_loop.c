/*
 * A SIMULATED training loop: the demo workload for cudatrace, meant to run on the CPU double of
 * the CUDA runtime (tests/doubles/runtime), where kernels are accepted but never executed. It has
 * the shape of a real training step, which is what a trace shows: a host-to-device batch copy,
 * about 200 small launches of six differently named kernels (forward, loss, backward, optimizer),
 * a device-to-host copy of the scalar loss (an implicit sync), a cudaDeviceSynchronize, and one
 * small allocation per step that is never freed (slow memory growth). The printed loss is made
 * up on the CPU, deterministically; nothing is learned. Usage: train_loop [steps=100].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define LAYERS 40
#define LAYER_PARAM_BYTES ((size_t)64 << 10)
#define BATCH_BYTES ((size_t)256 << 10)
#define KEPT_BYTES_PER_STEP ((size_t)16 << 10)
#define REPORT_EVERY 20
#define DEFAULT_STEPS 100

/*
 * Stand-ins for __global__ kernels. They are exported (the build links with -rdynamic) because
 * a kernel's name is looked up by its host address, and only exported symbols can be found.
 */
void matmul_forward(void) {}
void gelu_forward(void) {}
void softmax_xent_loss(void) {}
void matmul_backward(void) {}
void gelu_backward(void) {}
void adamw_update(void) {}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t rc_ = (call);                                                                  \
        if (rc_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "train_loop: %s failed: %s\n", #call, cudaGetErrorString(rc_));        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

struct model {
    char *params, *grads, *adam_m, *adam_v;
    float *loss;
    char *batch;
};

static unsigned long long launches;

static void launch(void (*kernel)(void), unsigned int blocks, void *a, void *b)
{
    dim3 grid = {blocks, 1, 1};
    dim3 block = {256, 1, 1};
    void *args[] = {&a, &b};
    CHECK(cudaLaunchKernel((const void *)kernel, grid, block, args, 0, NULL));
    launches++;
}

static void *layer(char *base, int index)
{
    return base + (size_t)index * LAYER_PARAM_BYTES;
}

static void train_step(const struct model *m)
{
    for (int l = 0; l < LAYERS; l++) {
        launch(matmul_forward, 128, layer(m->params, l), m->batch);
        launch(gelu_forward, 64, m->batch, NULL);
    }
    launch(softmax_xent_loss, 16, m->batch, m->loss);
    for (int l = LAYERS - 1; l >= 0; l--) {
        launch(gelu_backward, 64, m->batch, NULL);
        launch(matmul_backward, 128, layer(m->grads, l), m->batch);
    }
    for (int l = 0; l < LAYERS; l++)
        launch(adamw_update, 32, layer(m->params, l), layer(m->adam_m, l));
}

/* A noisy exponential decay towards a floor, from a fixed-seed generator: same run, same text. */
static double simulated_loss(double previous, unsigned int *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    double jitter = (double)((*seed >> 16) % 1000) / 1000.0 - 0.5;
    return 0.1 + (previous - 0.1) * 0.97 + jitter * 0.01;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long steps = argc > 1 ? strtol(argv[1], &end, 10) : DEFAULT_STEPS;
    if (argc > 1 && (*argv[1] == '\0' || *end != '\0' || steps < 0)) {
        fprintf(stderr, "usage: %s [steps]\n", argv[0]);
        return 2;
    }

    struct model m;
    size_t model_bytes = LAYERS * LAYER_PARAM_BYTES;
    CHECK(cudaMalloc((void **)&m.params, model_bytes));
    CHECK(cudaMalloc((void **)&m.grads, model_bytes));
    CHECK(cudaMalloc((void **)&m.adam_m, model_bytes));
    CHECK(cudaMalloc((void **)&m.adam_v, model_bytes));
    CHECK(cudaMalloc((void **)&m.batch, BATCH_BYTES));
    CHECK(cudaMalloc((void **)&m.loss, sizeof(float)));
    CHECK(cudaMemset(m.params, 0, model_bytes));

    unsigned char *host_batch = malloc(BATCH_BYTES);
    if (!host_batch) {
        perror("train_loop");
        return 1;
    }
    double loss = 2.3;
    unsigned int seed = 42;
    for (long step = 1; step <= steps; step++) {
        memset(host_batch, (int)(step & 0xff), BATCH_BYTES);
        CHECK(cudaMemcpy(m.batch, host_batch, BATCH_BYTES, cudaMemcpyHostToDevice));
        train_step(&m);
        /* The copied value is meaningless (no kernel ran); the copy is here for its sync. */
        float device_loss;
        CHECK(cudaMemcpy(&device_loss, m.loss, sizeof device_loss, cudaMemcpyDeviceToHost));
        void *kept = NULL;
        CHECK(cudaMalloc(&kept, KEPT_BYTES_PER_STEP));
        CHECK(cudaDeviceSynchronize());
        loss = simulated_loss(loss, &seed);
        if (step % REPORT_EVERY == 0)
            printf("step %ld loss %.2f\n", step, loss);
    }

    free(host_batch);
    CHECK(cudaFree(m.params));
    CHECK(cudaFree(m.grads));
    CHECK(cudaFree(m.adam_m));
    CHECK(cudaFree(m.adam_v));
    CHECK(cudaFree(m.batch));
    CHECK(cudaFree(m.loss));
    printf("train_loop: simulated %ld steps, %llu kernel launches, %zu bytes never freed\n", steps,
           launches, (size_t)steps * KEPT_BYTES_PER_STEP);
    return 0;
}

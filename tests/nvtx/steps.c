/*
 * A training step with NVTX ranges around its CUDA calls, for the NVTX tests
 * (tests/test_preload_nvtx.py): per step a "step" range holding a "forward" range
 * (two launches) and a "backward" range (one launch), a "loss" mark and a
 * cudaDeviceSynchronize; optionally all inside one "run" range (for the
 * bounded-trace test). Built into a program (whose NVTX finds the tool
 * through NVTX_INJECTION64_PATH, or the preload's answer to its look-up of
 * it) and into a shared library (where a bare LD_PRELOAD is found through
 * NVTX's static-injection pointer).
 */
#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime_api.h>

void nvtx_step_kernel(void) {}

static void launch(void)
{
    dim3 one = {1, 1, 1};
    cudaLaunchKernel((const void *)nvtx_step_kernel, one, one, NULL, 0, NULL);
}

/* A range left open: the program ends inside it. */
void leave_open(void)
{
    nvtxRangePushA("never closed");
}

void run_steps(int steps)
{
    for (int s = 0; s < steps; s++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        launch();
        launch();
        nvtxRangePop();
        nvtxEventAttributes_t backward = {0};
        backward.version = NVTX_VERSION;
        backward.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        backward.messageType = NVTX_MESSAGE_TYPE_ASCII;
        backward.message.ascii = "backward";
        nvtxRangePushEx(&backward);
        launch();
        nvtxRangePop();
        nvtxMarkA("loss");
        cudaDeviceSynchronize();
        nvtxRangePop();
    }
}

/* The steps inside one "run" range, open all the while. */
void run_steps_inside(int steps)
{
    nvtxRangePushA("run");
    run_steps(steps);
    nvtxRangePop();
}

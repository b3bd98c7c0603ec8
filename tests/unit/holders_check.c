/*
 * Checks of the holder of an allocation (viewer-export/model/holders.c) on
 * its own: the innermost frame outside the runtime, the driver, CUPTI and
 * the tracer names it, in both forms a frame is written in, and the live and
 * peak bytes each library holds follow its blocks.
 */
#include <string.h>

#include "tests/unit/check.h"
#include "viewer-export/model/holders.h"

static void names(const char *stack, const char *want)
{
    const char *got = ct_allocating_library(stack);
    ct_check(want ? got && strcmp(got, want) == 0 : got == NULL, "%s -> %s (got %s)", stack,
             want ? want : "none", got ? got : "none");
}

static void holders_follow_blocks(void)
{
    struct ct_holders h = {0};
    const char *nccl = ct_allocating_library("a (libnccl.so.2)");
    ct_holders_add(&h, nccl, 100);
    ct_holders_add(&h, nccl, 50);
    ct_holders_remove(&h, nccl, 100);
    ct_holders_add(&h, NULL, 1000);
    ct_check_u64((uint64_t)h.count, 1, "one holder; the program's bytes are no library's");
    ct_check_u64(h.items[0].peak, 150, "its peak");
    ct_check_u64(h.items[0].live, 50, "what it still holds");
    ct_holders_remove(&h, nccl, 500);
    ct_check_u64(h.items[0].live, 0, "never below nothing");
}

int main(void)
{
    names("ncclAllocBuffers (libnccl.so.2)\nmain (train)", "nccl");
    names("libcudatrace.so+0x1200\nlibcuda.so.1+0x99\nlibcupti.so.13+0x42\n"
          "cublasCreate_v2 (libcublas.so.12)",
          "cublas");
    names("cudaMalloc (libcudart.so.13)\ntrain.py:3 in step (libc10_cuda.so)", NULL);
    names("train_loop.c:99 in main (train_loop)\nlibc.so.6+0x27249", NULL);
    names("libcudart-d0da41ae.so.11.0+0x10\nlibcudnn_ops.so.9+0x20", "cudnn_ops");
    names("", NULL);
    names(NULL, NULL);
    holders_follow_blocks();
    return ct_check_finish();
}

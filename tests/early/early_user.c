/*
 * The program around libearly.so (see early.c): N launches in main, with the
 * library's CUDA calls before and after. Usage: early_user [launches=100].
 */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "tests/programs/program_args.h"

void early_kernel(void) {}

int main(int argc, char **argv)
{
    unsigned long long n = arg_or(argc, argv, 1, 100);
    dim3 grid = {1, 1, 1}, block = {1, 1, 1};
    for (unsigned long long i = 0; i < n; i++)
        cudaLaunchKernel((const void *)early_kernel, grid, block, NULL, 0, NULL);
    printf("early_user: %llu launches\n", n);
    return 0;
}

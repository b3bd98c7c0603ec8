/*
 * Loads each library named on the command line with dlopen (as a framework
 * loads its CUDA libraries), then makes one cudaMalloc/cudaFree pair through
 * the runtime it is linked against, which starts the tracer's session. For
 * the library-inventory tests: real toolkit libraries beside the runtime in
 * use make the broken setups (a second runtime, the stub driver). Prints
 * each load's outcome, the two return codes, and every libcu* and libnccl*
 * file mapped at the end, so runs with and without the tracer can be compared.
 * Usage: load_libs PATH...
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "mapped_libraries.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        printf("load_libs: %s %s\n", argv[i],
               dlopen(argv[i], RTLD_NOW | RTLD_LOCAL) ? "loaded" : dlerror());
    void *p = NULL;
    int m = cudaMalloc(&p, 4096);
    int f = cudaFree(p);
    printf("load_libs: cudaMalloc -> %d, cudaFree -> %d\n", m, f);
    print_mapped_libraries("load_libs");
    return 0;
}

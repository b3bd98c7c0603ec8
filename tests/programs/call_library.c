/*
 * Initialises CUDA (cudaFree(NULL), as frameworks do), then loads the library
 * named first and calls its `int FUNCTION(void)` named second, printing what
 * it returned: for libraries built by the tests themselves (an nvcc-compiled
 * kernel library). Usage: call_library LIBRARY FUNCTION.
 */
#include <dlfcn.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    cudaFree(NULL);
    void *lib = dlopen(argv[1], RTLD_NOW);
    int (*function)(void) = lib ? (int (*)(void))dlsym(lib, argv[2]) : NULL;
    if (!function) {
        fprintf(stderr, "call_library: %s\n", dlerror());
        return 1;
    }
    printf("call_library: %s -> %d\n", argv[2], function());
    return 0;
}

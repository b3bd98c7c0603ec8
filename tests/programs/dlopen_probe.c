/*
 * Loads a library with dlopen and calls cudaMalloc and cudaFree through it,
 * for the tests of a tracer that is dlopen'ed rather than preloaded (its
 * hooks then run only when called through the handle, as here) and of
 * secure-execution (setuid) processes, where it must stay inert. Prints the
 * two return codes. Usage: dlopen_probe LIBRARY.
 */
#include <dlfcn.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    /* Linked against the runtime, so the hook's real function is there. */
    int version = 0;
    cudaRuntimeGetVersion(&version);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen_probe: %s\n", dlerror());
        return 1;
    }
    cudaError_t (*do_malloc)(void **, size_t) = (cudaError_t(*)(void **, size_t))dlsym(lib, "cudaMalloc");
    cudaError_t (*do_free)(void *) = (cudaError_t(*)(void *))dlsym(lib, "cudaFree");
    if (!do_malloc || !do_free)
        return 1;
    void *p = NULL;
    int m = do_malloc(&p, 4096);
    int f = do_free(p);
    printf("dlopen_probe: cudaMalloc -> %d, cudaFree -> %d\n", m, f);
    return 0;
}

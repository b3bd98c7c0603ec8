/*
 * cudatrace-probe: the child `cudatrace doctor` runs under the tracer. It
 * loads the CUDA stack the way a framework does (dlopen by soname, the driver
 * first; of each group the first name that loads wins), prints one line per
 * group, "NAME\tPATH" or "NAME\t\tERROR", then calls cudaFree(NULL), the usual
 * way to initialise CUDA, through the global scope, where the tracer's hook
 * is. A binary of its own, built like the preload, so that a sanitizer build
 * of the command never runs instrumented under LD_PRELOAD and LD_AUDIT.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

static const char *const probe_groups[][4] = {
    {"libcuda.so.1"},
    {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"},
    {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"},
    {"libcudnn.so.9", "libcudnn.so.8"},
};

int main(void)
{
    for (size_t g = 0; g < sizeof probe_groups / sizeof probe_groups[0]; g++) {
        const char *error = "";
        for (size_t k = 0; k < 4 && probe_groups[g][k]; k++) {
            void *lib = dlopen(probe_groups[g][k], RTLD_NOW | RTLD_GLOBAL);
            struct link_map *map = NULL;
            if (lib && dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map) {
                printf("%s\t%s\n", probe_groups[g][k], map->l_name);
                error = NULL;
                break;
            }
            error = dlerror();
        }
        if (error)
            printf("%s\t\t%s\n", probe_groups[g][0], error);
    }
    fflush(stdout);
    int (*cuda_free)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "cudaFree");
    if (cuda_free)
        cuda_free(NULL);
    return 0;
}

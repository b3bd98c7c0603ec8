/*
 * Touches the CUDA stack only by loading libraries: dlopen of each name on
 * the command line, and nothing else, for the bare-preload loader tests (it
 * is not linked against any CUDA library). Options before the names:
 * --close dlcloses each library again at once, --no-dlerror never asks
 * dlerror() why a load failed, --call SYMBOL calls `int SYMBOL(int *)`
 * through the last library loaded (cudaGetDeviceCount, cudaRuntimeGetVersion)
 * and prints what it returned, --maps lists every libcu* and libnccl* file
 * mapped at the end (to compare traced and untraced runs). Among the names,
 * --query NAME asks with RTLD_NOLOAD whether NAME is loaded, in its turn, as
 * frameworks ask before they load. Prints one line per load or query.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tests/programs/mapped_libraries.h"

/* What the program is told when a dlopen gives no handle. */
static const char *why(int ask_error)
{
    const char *error = ask_error ? dlerror() : NULL;
    return error ? error : "failed";
}

int main(int argc, char **argv)
{
    int close_again = 0, ask_error = 1, list_maps = 0, i = 1;
    const char *call = NULL;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0 && strcmp(argv[i], "--query") != 0; i++) {
        if (strcmp(argv[i], "--close") == 0)
            close_again = 1;
        else if (strcmp(argv[i], "--maps") == 0)
            list_maps = 1;
        else if (strcmp(argv[i], "--no-dlerror") == 0)
            ask_error = 0;
        else if (strcmp(argv[i], "--call") == 0 && i + 1 < argc)
            call = argv[++i];
    }
    void *last = NULL;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--query") == 0 && i + 1 < argc) {
            i++;
            void *found = dlopen(argv[i], RTLD_NOW | RTLD_NOLOAD);
            printf("dlopen_only: %s queried: %s\n", argv[i], found ? "loaded" : why(ask_error));
            continue;
        }
        void *lib = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        printf("dlopen_only: %s %s\n", argv[i], lib ? "loaded" : why(ask_error));
        if (lib && close_again)
            dlclose(lib);
        else if (lib)
            last = lib;
    }
    if (call && last) {
        int (*fn)(int *) = (int (*)(int *))dlsym(last, call);
        int value = -1;
        printf("dlopen_only: %s -> %d\n", call, fn ? fn(&value) : -1);
    }
    if (list_maps)
        print_mapped_libraries("dlopen_only");
    return 0;
}

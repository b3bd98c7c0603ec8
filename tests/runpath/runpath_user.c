/*
 * A library shipped with its own copy of a CUDA library next to it, found
 * through its RUNPATH $ORIGIN, the way cuDNN 9 and PyTorch's wheels find
 * theirs. Its constructor dlopens $RUNPATH_USER_LOADS (default libcudnn.so.9)
 * by bare name, so glibc searches with this library's RUNPATH, and
 * LD_LIBRARY_PATH, which comes first, can shadow its copy.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void load_own_copy(void)
{
    const char *name = getenv("RUNPATH_USER_LOADS");
    if (!dlopen(name ? name : "libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL))
        fprintf(stderr, "runpath_user: %s\n", dlerror());
}

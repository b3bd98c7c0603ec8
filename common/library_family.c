/*
 * The CUDA-stack library families, by file name. Shared by the collector's
 * inventory and the rtld-audit module, which runs inside the loader and so
 * uses nothing but string functions.
 */
#include "common/library_family.h"

#include <string.h>

/* Library names that begin with one of these (cudnn_ops, cublasLt, ...), and
 * the driver, libcuda, by its exact name. */
static const char *const families[] = {
    "cudart", "cudnn", "cublas",    "cufft", "curand",     "cusolver", "cusparse",
    "nccl",   "nvrtc", "nvJitLink", "cupti", "nvToolsExt", "nvtx",
};

/* "libcudnn_ops.so.9.1" -> "cudnn_ops"; a hash suffix (libcudart-d0da41ae)
 * is dropped. Returns 0 if `base` is no shared library name. */
static int library_name(const char *base, char *name, size_t size)
{
    const char *so = strstr(base, ".so");
    if (strncmp(base, "lib", 3) != 0 || !so || so - base - 3 <= 0 ||
        (size_t)(so - base - 3) >= size)
        return 0;
    size_t len = (size_t)(so - base - 3);
    memcpy(name, base + 3, len);
    name[len] = '\0';
    char *dash = strrchr(name, '-');
    if (dash && strlen(dash + 1) >= 6 && strspn(dash + 1, "0123456789abcdef") == strlen(dash + 1))
        *dash = '\0';
    return 1;
}

long ct_soname_major(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *so = strstr(base ? base + 1 : path, ".so.");
    if (!so || so[4] < '0' || so[4] > '9')
        return -1;
    long major = 0;
    for (const char *d = so + 4; *d >= '0' && *d <= '9'; d++)
        major = major * 10 + (*d - '0');
    return major;
}

int ct_library_family(const char *path, char *family, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!library_name(base, family, size))
        return 0;
    if (strcmp(family, "cuda") == 0)
        return 1;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strncmp(family, families[i], strlen(families[i])) == 0)
            return 1;
    return 0;
}

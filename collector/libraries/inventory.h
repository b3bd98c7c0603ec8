/*
 * Which CUDA-stack libraries the traced process has mapped, seen from the
 * collector (from /proc/PID/maps and the files themselves).
 */
#ifndef CT_COLLECTOR_LIBRARY_INVENTORY_H
#define CT_COLLECTOR_LIBRARY_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

struct ct_library {
    char path[4096];     /* as mapped */
    char realpath[4096]; /* symlinks resolved */
    char family[64];     /* "cudart", "cuda" (the driver), "cudnn_ops", ... */
    char soname[256];
    char version[64];         /* from the file name (libcudart.so.13.0.96 -> 13.0.96) */
    const char *version_from; /* ct_value_version_from_file_name or _header */
    char build_id[65];
    uint64_t size;
    long built_for_cuda; /* cuDNN: the CUDA major its RUNPATH names (cu13), or 0 */
};

/* Reads SONAME and build-id from the ELF file at `path` (best effort). */
void ct_library_describe(struct ct_library *lib);

/* Calls `found` with the description of the CUDA-stack library at `path`
 * unless one of that real path was described before. */
void ct_library_describe_new(const char *path,
                             void (*found)(const struct ct_library *lib, void *ctx), void *ctx);

/* Whether the file at `path` was described (the process mapped it). */
int ct_library_described(const char *path);

/* Calls `found` for each CUDA-stack library mapped in `pid` that was not
 * reported before; returns 1 when the process still maps the rings, 0 when
 * it does not (it has exec'd), -1 when it is gone. */
int ct_library_scan(int32_t pid, void (*found)(const struct ct_library *lib, void *ctx), void *ctx);

#endif

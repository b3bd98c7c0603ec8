/*
 * Which shared objects belong to the CUDA stack.
 */
#ifndef CT_LIBRARY_FAMILY_H
#define CT_LIBRARY_FAMILY_H

#include <stddef.h>

/* Writes the library family of a file name or path ("cudart" for
 * libcudart.so.13 and for renamed copies such as libcudart-d0da41ae.so.11.0,
 * "cudnn_ops", "cuda" for the driver); returns 0 when the file is not part of
 * the CUDA stack. Allocates nothing: the rtld-audit module uses it too. */
int ct_library_family(const char *path, char *family, size_t size);

/* The major a shared library's file name carries after ".so." (12 for
 * libcudart.so.12 and for libcudart.so.12.4.127), or -1 when it carries
 * none. */
long ct_soname_major(const char *path);

#endif

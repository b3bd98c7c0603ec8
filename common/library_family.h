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

#endif

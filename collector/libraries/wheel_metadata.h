/*
 * The CUDA library versions a pip-installed framework declares it needs.
 */
#ifndef CT_COLLECTOR_WHEEL_METADATA_H
#define CT_COLLECTOR_WHEEL_METADATA_H

#include <stddef.h>

struct ct_wheel_requirement {
    char distribution[256]; /* "torch 2.9.0": the wheel that installed the requester */
    char package[128];      /* "nvidia-cudnn-cu13" */
    char version[64];       /* "9.26.0.51" */
};

/* What the wheel that installed `requester` (the file its RECORD lists)
 * pins for the NVIDIA package of library family `family` ("cudnn_graph",
 * "cublasLt", ...); 0 when found, -1 when the requester came from no wheel
 * or its wheel pins none. */
int ct_wheel_requirement(const char *requester, const char *family,
                         struct ct_wheel_requirement *out);

#endif

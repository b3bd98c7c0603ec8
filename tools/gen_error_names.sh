#!/bin/sh
# Writes the toolkit's cudaError_t codes as C, from its driver_types.h: an
# enum (ct_cudaErrorX = N), for the report's findings that name a code, and
# a lookup of their names, for the collector; neither links the runtime.
set -eu
header="$1"
codes=$(sed -n 's/^[[:space:]]*\(cudaError[A-Za-z0-9]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\),.*/\2 \1/p' "$header" |
    sort -n -u -k1,1)
echo "/* Generated from $header by tools/gen_error_names.sh. */"
echo "#ifndef CT_CUDA_ERROR_NAMES_H"
echo "#define CT_CUDA_ERROR_NAMES_H"
echo "enum ct_cuda_error_code {"
echo "$codes" | while read -r code name; do echo "    ct_$name = $code,"; done
echo "};"
echo "static inline const char *ct_cuda_error_name(int code)"
echo "{"
echo "    switch (code) {"
echo "$codes" | while read -r code name; do echo "    case $code: return \"$name\";"; done
echo "    default: return 0;"
echo "    }"
echo "}"
echo "#endif"

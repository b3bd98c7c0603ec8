#!/bin/sh
# Writes a C lookup of cudaError_t names from the toolkit's driver_types.h,
# so the collector can name error codes without linking the runtime.
set -eu
header="$1"
echo "/* Generated from $header by tools/gen_error_names.sh. */"
echo "#ifndef CT_CUDA_ERROR_NAMES_H"
echo "#define CT_CUDA_ERROR_NAMES_H"
echo "static inline const char *ct_cuda_error_name(int code)"
echo "{"
echo "    switch (code) {"
sed -n 's/^[[:space:]]*\(cudaError[A-Za-z0-9]*\)[[:space:]]*=[[:space:]]*\([0-9][0-9]*\),.*/\2 \1/p' "$header" |
    sort -n -u -k1,1 |
    while read -r code name; do
        echo "    case $code: return \"$name\";"
    done
echo "    default: return 0;"
echo "    }"
echo "}"
echo "#endif"

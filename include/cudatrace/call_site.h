/*
 * The bytes of a CT_STR_CALL_SITE string: where one call came from, as the
 * preload captured it and the collector symbolises it. Native frames travel
 * as raw return addresses (symbolising needs files, so it happens in the
 * collector, never on the hot path); Python frames travel as text, because
 * the code objects they were read from may be gone by the time the collector
 * looks. Layout, little-endian, packed:
 *
 *   header   struct ct_site_header
 *   native   uint64_t pc[native_count], innermost first; pc[0] is the return
 *            address into the code that called the CUDA function
 *   python   python_count times: struct ct_site_python, then file_len bytes
 *            of file name, then function_len bytes of function name;
 *            innermost first
 */
#ifndef CUDATRACE_CALL_SITE_H
#define CUDATRACE_CALL_SITE_H

#include <stdint.h>

#define CT_SITE_VERSION 1
#define CT_SITE_MAX_NATIVE 16
#define CT_SITE_MAX_PYTHON 16
/* A longer file name keeps its end (the part that names the file); a longer
 * function name its start. */
#define CT_SITE_MAX_FILE 200
#define CT_SITE_MAX_FUNCTION 120

struct ct_site_header {
    uint8_t version;
    uint8_t native_count;
    uint8_t python_count;
    uint8_t reserved;
};

struct __attribute__((packed)) ct_site_python {
    uint32_t line;
    uint16_t file_len;
    uint16_t function_len;
};

#endif

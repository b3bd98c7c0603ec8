/*
 * The collector's string table: every name, kernel and annotation value
 * that goes into the trace gets one small id, used as its interning id.
 */
#ifndef CT_COLLECTOR_STRINGS_H
#define CT_COLLECTOR_STRINGS_H

#include <stddef.h>
#include <stdint.h>

uint32_t ct_strings_intern(const char *text, size_t len);
uint32_t ct_strings_intern_cstr(const char *text);
const char *ct_strings_get(uint32_t id);
size_t ct_strings_len(uint32_t id);

#endif

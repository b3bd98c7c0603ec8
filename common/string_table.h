/*
 * A string table: every string gets one small id. The collector uses the ids
 * as Perfetto interning ids for every name, kernel and annotation value it
 * writes; the command keeps each string it reads once, so pointers compare.
 */
#ifndef CT_COMMON_STRING_TABLE_H
#define CT_COMMON_STRING_TABLE_H

#include <stddef.h>
#include <stdint.h>

uint32_t ct_strings_intern(const char *text, size_t len);
uint32_t ct_strings_intern_cstr(const char *text);
const char *ct_strings_get(uint32_t id);
size_t ct_strings_len(uint32_t id);

#endif

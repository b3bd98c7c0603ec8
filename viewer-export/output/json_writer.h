/*
 * A small streaming JSON writer: commas and escaping handled in one place.
 */
#ifndef CT_JSON_WRITER_H
#define CT_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ct_json {
    FILE *out;
    int depth;
    int need_comma[32];
};

void ct_json_begin_object(struct ct_json *j, const char *key);
void ct_json_end_object(struct ct_json *j);
void ct_json_begin_array(struct ct_json *j, const char *key);
void ct_json_end_array(struct ct_json *j);
void ct_json_string(struct ct_json *j, const char *key, const char *value);
void ct_json_uint(struct ct_json *j, const char *key, uint64_t value);
void ct_json_int(struct ct_json *j, const char *key, int64_t value);
/* The shortest form that reads back as `value`; null when it is not finite. */
void ct_json_double(struct ct_json *j, const char *key, double value);
void ct_json_null(struct ct_json *j, const char *key);
/* `value`, or null when it is negative (unknown). */
void ct_json_int_or_null(struct ct_json *j, const char *key, int64_t value);
/* A string, or null when it is NULL or empty. */
void ct_json_text_or_null(struct ct_json *j, const char *key, const char *text);
/* A value written before, as JSON text (a part of a summary carried over). */
void ct_json_raw(struct ct_json *j, const char *key, const char *text, size_t len);

#endif

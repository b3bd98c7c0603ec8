/*
 * A small JSON reader for the documents cudatrace writes itself (report
 * summaries, read back by `report --merge`): the whole text parsed into a
 * tree of values, each keeping where it stands in the text, so a part can
 * be copied on unchanged.
 */
#ifndef CT_JSON_READER_H
#define CT_JSON_READER_H

#include <stddef.h>
#include <stdint.h>

enum ct_json_type {
    CT_JSON_NULL,
    CT_JSON_FALSE,
    CT_JSON_TRUE,
    CT_JSON_NUMBER,
    CT_JSON_STRING,
    CT_JSON_ARRAY,
    CT_JSON_OBJECT
};

struct ct_json_value {
    enum ct_json_type type;
    const char *raw; /* the value's text in the document, raw_len bytes */
    size_t raw_len;
    char *key;                   /* a member's name, unescaped; NULL in arrays */
    char *text;                  /* a string, unescaped; a number as written */
    struct ct_json_value *items; /* an array's elements, an object's members */
    size_t count;
};

/* Parses text[0..len) into *root; -1 with a reason (and where) on bad input. */
int ct_json_parse(const char *text, size_t len, struct ct_json_value *root, char *error,
                  size_t error_size);
void ct_json_value_free(struct ct_json_value *root);

/* An object's member, or NULL when it has none of that name (or is no
 * object). */
const struct ct_json_value *ct_json_member(const struct ct_json_value *object, const char *key);
/* A string's text; NULL for anything else, null and a missing value included. */
const char *ct_json_text(const struct ct_json_value *v);
/* A number's value; `fallback` for anything else. */
uint64_t ct_json_u64(const struct ct_json_value *v, uint64_t fallback);
int64_t ct_json_i64(const struct ct_json_value *v, int64_t fallback);
double ct_json_f64(const struct ct_json_value *v, double fallback);

#endif

/*
 * Writes JSON as it goes. `key` is NULL inside arrays. Strings are escaped
 * per RFC 8259; bytes that are not valid in a string are written as \u
 * escapes so any kernel or path name round-trips through a JSON parser.
 */
#include "viewer-export/output/json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

static void write_escaped(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

static void start_value(struct ct_json *j, const char *key)
{
    if (j->depth > 0 && j->need_comma[j->depth])
        fputc(',', j->out);
    if (j->depth > 0)
        j->need_comma[j->depth] = 1;
    if (key) {
        write_escaped(j->out, key);
        fputc(':', j->out);
    }
}

static void open_container(struct ct_json *j, const char *key, char bracket)
{
    start_value(j, key);
    fputc(bracket, j->out);
    if (j->depth + 1 < (int)(sizeof j->need_comma / sizeof j->need_comma[0]))
        j->depth++;
    j->need_comma[j->depth] = 0;
}

static void close_container(struct ct_json *j, char bracket)
{
    fputc(bracket, j->out);
    if (j->depth > 0)
        j->depth--;
    if (j->depth == 0)
        fputc('\n', j->out);
}

void ct_json_begin_object(struct ct_json *j, const char *key)
{
    open_container(j, key, '{');
}

void ct_json_end_object(struct ct_json *j)
{
    close_container(j, '}');
}

void ct_json_begin_array(struct ct_json *j, const char *key)
{
    open_container(j, key, '[');
}

void ct_json_end_array(struct ct_json *j)
{
    close_container(j, ']');
}

void ct_json_string(struct ct_json *j, const char *key, const char *value)
{
    start_value(j, key);
    write_escaped(j->out, value);
}

void ct_json_uint(struct ct_json *j, const char *key, uint64_t value)
{
    start_value(j, key);
    fprintf(j->out, "%" PRIu64, value);
}

void ct_json_int(struct ct_json *j, const char *key, int64_t value)
{
    start_value(j, key);
    fprintf(j->out, "%" PRId64, value);
}

void ct_json_double(struct ct_json *j, const char *key, double value)
{
    if (!isfinite(value)) { /* JSON has no NaN or infinity */
        ct_json_null(j, key);
        return;
    }
    char text[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strtod(text, NULL) == value)
            break;
    }
    start_value(j, key);
    fputs(text, j->out);
}

void ct_json_null(struct ct_json *j, const char *key)
{
    start_value(j, key);
    fputs("null", j->out);
}

void ct_json_int_or_null(struct ct_json *j, const char *key, int64_t value)
{
    if (value >= 0)
        ct_json_int(j, key, value);
    else
        ct_json_null(j, key);
}

void ct_json_text_or_null(struct ct_json *j, const char *key, const char *text)
{
    if (text && *text)
        ct_json_string(j, key, text);
    else
        ct_json_null(j, key);
}

void ct_json_raw(struct ct_json *j, const char *key, const char *text, size_t len)
{
    start_value(j, key);
    fwrite(text, 1, len, j->out);
}

/*
 * Recursive descent over RFC 8259 JSON, nesting bounded so a hostile file
 * cannot exhaust the stack; strings are unescaped (\uXXXX and surrogate
 * pairs to UTF-8) into their own allocations, numbers kept as written so
 * that 64-bit counts read back exactly.
 */
#include "viewer-export/read/json_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"

#define MAX_DEPTH 64

struct parser {
    const char *text, *at, *end;
    char *error;
    size_t error_size;
    int failed;
};

static int fail(struct parser *p, const char *what)
{
    if (!p->failed)
        snprintf(p->error, p->error_size, "%s at byte %zu", what, (size_t)(p->at - p->text));
    p->failed = 1;
    return -1;
}

static void skip_space(struct parser *p)
{
    while (p->at < p->end && (*p->at == ' ' || *p->at == '\t' || *p->at == '\n' || *p->at == '\r'))
        p->at++;
}

static int literal(struct parser *p, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->at) < n || memcmp(p->at, word, n) != 0)
        return fail(p, "unexpected character");
    p->at += n;
    return 0;
}

static int hex4(struct parser *p, unsigned *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++, p->at++) {
        if (p->at >= p->end)
            return fail(p, "unfinished \\u escape");
        char c = *p->at;
        unsigned digit = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                : 16;
        if (digit == 16)
            return fail(p, "bad \\u escape");
        *out = *out << 4 | digit;
    }
    return 0;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80)
        return out[0] = (char)cp, 1;
    if (cp < 0x800)
        return out[0] = (char)(0xc0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000)
        return out[0] = (char)(0xe0 | cp >> 12), out[1] = (char)(0x80 | (cp >> 6 & 0x3f)),
               out[2] = (char)(0x80 | (cp & 0x3f)), 3;
    return out[0] = (char)(0xf0 | cp >> 18), out[1] = (char)(0x80 | (cp >> 12 & 0x3f)),
           out[2] = (char)(0x80 | (cp >> 6 & 0x3f)), out[3] = (char)(0x80 | (cp & 0x3f)), 4;
}

static int escape(struct parser *p, char *out, size_t *n)
{
    static const char plain[] = "\"\\/bfnrt", meaning[] = "\"\\/\b\f\n\r\t";
    const char *which = p->at < p->end ? strchr(plain, *p->at) : NULL;
    if (which && *which) {
        out[(*n)++] = meaning[which - plain];
        p->at++;
        return 0;
    }
    if (p->at >= p->end || *p->at != 'u')
        return fail(p, "bad escape");
    p->at++;
    unsigned cp, low;
    if (hex4(p, &cp))
        return -1;
    if (cp >= 0xd800 && cp < 0xdc00 && p->end - p->at >= 6 && p->at[0] == '\\' && p->at[1] == 'u') {
        p->at += 2;
        if (hex4(p, &low))
            return -1;
        cp = low >= 0xdc00 && low < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
                                           : 0xfffd;
    }
    *n += put_utf8(out + *n, cp);
    return 0;
}

/* A string at p->at (past its quote) into a new allocation. */
static char *string(struct parser *p)
{
    const char *start = p->at;
    while (p->at < p->end && *p->at != '"')
        p->at += *p->at == '\\' && p->at + 1 < p->end ? 2 : 1;
    size_t span = (size_t)(p->at - start);
    if (p->at >= p->end) {
        fail(p, "unfinished string");
        return NULL;
    }
    char *out = malloc(span + 1);
    if (!out)
        abort();
    size_t n = 0;
    for (p->at = start; *p->at != '"';) {
        if ((unsigned char)*p->at < 0x20) {
            free(out);
            fail(p, "control character in a string");
            return NULL;
        }
        if (*p->at != '\\') {
            out[n++] = *p->at++;
        } else if (p->at++, escape(p, out, &n)) {
            free(out);
            return NULL;
        }
    }
    p->at++;
    out[n] = '\0';
    return out;
}

static int number(struct parser *p, struct ct_json_value *v)
{
    const char *start = p->at;
    while (p->at < p->end && strchr("+-0123456789.eE", *p->at))
        p->at++;
    char *end;
    v->text = strndup(start, (size_t)(p->at - start));
    if (!v->text)
        abort();
    strtod(v->text, &end);
    if (p->at == start || *end)
        return fail(p, "bad number");
    v->type = CT_JSON_NUMBER;
    return 0;
}

static int value(struct parser *p, struct ct_json_value *v, int depth);

/* The elements of an array or the members of an object, up to `close`. */
static int items(struct parser *p, struct ct_json_value *v, char close, int depth)
{
    p->at++;
    skip_space(p);
    if (p->at < p->end && *p->at == close)
        return p->at++, 0;
    for (;;) {
        v->items = ct_array_grow(v->items, v->count, sizeof *v->items);
        struct ct_json_value *item = &v->items[v->count++];
        memset(item, 0, sizeof *item);
        skip_space(p);
        if (close == '}') {
            if (p->at >= p->end || *p->at != '"')
                return fail(p, "expected a member name");
            p->at++;
            if (!(item->key = string(p)))
                return -1;
            skip_space(p);
            if (p->at >= p->end || *p->at++ != ':')
                return fail(p, "expected ':'");
        }
        if (value(p, item, depth + 1))
            return -1;
        skip_space(p);
        if (p->at < p->end && *p->at == ',') {
            p->at++;
            continue;
        }
        if (p->at < p->end && *p->at == close)
            return p->at++, 0;
        return fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int value(struct parser *p, struct ct_json_value *v, int depth)
{
    skip_space(p);
    if (depth > MAX_DEPTH)
        return fail(p, "nested too deeply");
    if (p->at >= p->end)
        return fail(p, "unexpected end");
    v->raw = p->at;
    int r = 0;
    switch (*p->at) {
    case '{':
    case '[':
        v->type = *p->at == '{' ? CT_JSON_OBJECT : CT_JSON_ARRAY;
        r = items(p, v, *p->at == '{' ? '}' : ']', depth);
        break;
    case '"':
        p->at++;
        v->type = CT_JSON_STRING;
        r = (v->text = string(p)) ? 0 : -1;
        break;
    case 't':
        v->type = CT_JSON_TRUE;
        r = literal(p, "true");
        break;
    case 'f':
        v->type = CT_JSON_FALSE;
        r = literal(p, "false");
        break;
    case 'n':
        v->type = CT_JSON_NULL;
        r = literal(p, "null");
        break;
    default:
        r = number(p, v);
    }
    v->raw_len = (size_t)(p->at - v->raw);
    return r;
}

int ct_json_parse(const char *text, size_t len, struct ct_json_value *root, char *error,
                  size_t error_size)
{
    struct parser p = {text, text, text + len, error, error_size, 0};
    memset(root, 0, sizeof *root);
    if (value(&p, root, 0) == 0) {
        skip_space(&p);
        if (p.at != p.end)
            fail(&p, "text after the document");
    }
    if (!p.failed)
        return 0;
    ct_json_value_free(root);
    return -1;
}

void ct_json_value_free(struct ct_json_value *root)
{
    for (size_t i = 0; i < root->count; i++)
        ct_json_value_free(&root->items[i]);
    free(root->items);
    free(root->key);
    free(root->text);
    memset(root, 0, sizeof *root);
}

const struct ct_json_value *ct_json_member(const struct ct_json_value *object, const char *key)
{
    for (size_t i = 0; object && object->type == CT_JSON_OBJECT && i < object->count; i++)
        if (strcmp(object->items[i].key, key) == 0)
            return &object->items[i];
    return NULL;
}

const char *ct_json_text(const struct ct_json_value *v)
{
    return v && v->type == CT_JSON_STRING ? v->text : NULL;
}

uint64_t ct_json_u64(const struct ct_json_value *v, uint64_t fallback)
{
    return v && v->type == CT_JSON_NUMBER ? strtoull(v->text, NULL, 10) : fallback;
}

int64_t ct_json_i64(const struct ct_json_value *v, int64_t fallback)
{
    return v && v->type == CT_JSON_NUMBER ? strtoll(v->text, NULL, 10) : fallback;
}

double ct_json_f64(const struct ct_json_value *v, double fallback)
{
    return v && v->type == CT_JSON_NUMBER ? strtod(v->text, NULL) : fallback;
}

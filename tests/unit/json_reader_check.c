/*
 * Checks of the JSON reader (viewer-export/read/json_reader.c) on its own,
 * against the JSON writer it reads back: strings with every escape the
 * writer makes (and \u surrogate pairs it does not) read back byte for
 * byte, 64-bit counts exactly, doubles to the bit, each value's raw text is
 * the text it was written as, and bad input is refused with where, never
 * read past its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "viewer-export/output/json_writer.h"
#include "viewer-export/read/json_reader.h"

static char *written(size_t *len)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    struct ct_json j = {.out = out};
    ct_json_begin_object(&j, NULL);
    ct_json_string(&j, "quote\"back\\slash", "tab\there\nnew \x01 \x7f end");
    ct_json_uint(&j, "max", UINT64_MAX);
    ct_json_int(&j, "min", INT64_MIN);
    ct_json_double(&j, "third", 1.0 / 3.0);
    ct_json_null(&j, "none");
    ct_json_begin_array(&j, "list");
    ct_json_string(&j, NULL, "");
    ct_json_begin_object(&j, NULL);
    ct_json_end_object(&j);
    ct_json_end_array(&j);
    ct_json_end_object(&j);
    fclose(out);
    return text;
}

static void round_trip(void)
{
    size_t len;
    char *text = written(&len), error[128];
    struct ct_json_value root;
    if (!ct_check(ct_json_parse(text, len, &root, error, sizeof error) == 0, "parses: %s", error))
        return;
    const struct ct_json_value *s = ct_json_member(&root, "quote\"back\\slash");
    ct_check(s && strcmp(s->text, "tab\there\nnew \x01 \x7f end") == 0, "escapes read back");
    ct_check_u64(ct_json_u64(ct_json_member(&root, "max"), 0), UINT64_MAX, "2^64-1 exactly");
    ct_check_u64((uint64_t)ct_json_i64(ct_json_member(&root, "min"), 0), (uint64_t)INT64_MIN,
                 "-2^63 exactly");
    ct_check_f64(ct_json_f64(ct_json_member(&root, "third"), 0), 1.0 / 3.0, "a double's bits");
    ct_check(ct_json_member(&root, "none")->type == CT_JSON_NULL &&
                 !ct_json_text(ct_json_member(&root, "none")),
             "null is no text");
    ct_check(!ct_json_member(&root, "absent") && ct_json_u64(NULL, 7) == 7, "absent: fallback");
    const struct ct_json_value *list = ct_json_member(&root, "list");
    ct_check(list && list->count == 2 && list->items[1].type == CT_JSON_OBJECT &&
                 list->items[1].raw_len == 2 && memcmp(list->items[1].raw, "{}", 2) == 0,
             "an element's raw text");
    ct_check(root.raw == text && root.raw_len == len - 1, "the root's raw text is the document");
    ct_json_value_free(&root);
    free(text);
}

static void surrogates(void)
{
    const char *text = "[\"\\u00e9\\ud83d\\ude00\\ud800x\"]";
    char error[128];
    struct ct_json_value root;
    if (!ct_check(ct_json_parse(text, strlen(text), &root, error, sizeof error) == 0, "parses: %s",
                  error))
        return;
    ct_check(strcmp(root.items[0].text, "\xc3\xa9\xf0\x9f\x98\x80\xed\xa0\x80x") == 0,
             "two-byte, a pair as four bytes, a lone surrogate as three");
    ct_json_value_free(&root);
}

static void refused(void)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "unexpected end"},
        {"{\"a\":1,}", "expected a member name"},
        {"[1 2]", "expected ',' or ']'"},
        {"\"open", "unfinished string"},
        {"\"a\\q\"", "bad escape"},
        {"\"\\u12\"", "bad \\u escape"},
        {"\"tab\there\"", "control character"},
        {"-x", "bad number"},
        {"tru", "unexpected character"},
        {"{} {}", "text after the document"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char error[128] = "";
        struct ct_json_value root;
        /* no terminator past the length: a read past the end is ASan's to see */
        size_t len = strlen(bad[i].text);
        char *copy = malloc(len ? len : 1);
        memcpy(copy, bad[i].text, len);
        int r = ct_json_parse(copy, len, &root, error, sizeof error);
        ct_check(r == -1 && strstr(error, bad[i].says) && strstr(error, " at byte "),
                 "%s refused: %s", bad[i].text, error);
        free(copy);
    }
}

static void nesting(void)
{
    char deep[201], error[128];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    struct ct_json_value root;
    ct_check(ct_json_parse(deep, 200, &root, error, sizeof error) == -1 &&
                 strstr(error, "nested too deeply"),
             "100 levels refused: %s", error);
    memset(deep, '[', 60);
    memset(deep + 60, ']', 60);
    ct_check(ct_json_parse(deep, 120, &root, error, sizeof error) == 0, "60 levels read");
    ct_json_value_free(&root);
}

int main(void)
{
    round_trip();
    surrogates();
    refused();
    nesting();
    return ct_check_finish();
}

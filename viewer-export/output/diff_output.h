/*
 * Writing a diff (diff/compare.h): as text for a person, its headline
 * first (diff_text.c), as the cudatrace.diff/1 JSON for CI (diff_json.c,
 * docs/report-schema.md), or as an html page drawn from that JSON
 * (diff_html.c).
 */
#ifndef CT_DIFF_OUTPUT_H
#define CT_DIFF_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "viewer-export/diff/compare.h"

#define CT_DIFF_SCHEMA "cudatrace.diff/1"

/* What was compared: the operands of each side. */
struct ct_diff_operands {
    const char *before, *after;
};

/* One line: the step time's change and the first few things that moved,
 * most important first (the environment, then the GPU's work, the host's
 * calls, memory, findings); "no significant change" when nothing did. Of
 * the whole diff, or of one pair. */
void ct_diff_headline(const struct ct_diff *d, char *out, size_t size);
void ct_diff_pair_headline(const struct ct_diff_pair *p, char *out, size_t size);

void ct_diff_print_text(FILE *out, const struct ct_diff *d, const struct ct_diff_operands *what);
void ct_diff_print_json(FILE *out, const struct ct_diff *d, const struct ct_diff_operands *what);
/* Writes the page to `path`, which must not exist ("-": standard output);
 * 0, or -1 with a one-line reason in `error` and nothing left at `path`. */
int ct_diff_write_html(const char *path, const struct ct_diff *d,
                       const struct ct_diff_operands *what, char *error, size_t error_size);

#endif

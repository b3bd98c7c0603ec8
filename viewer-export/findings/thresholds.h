/*
 * The thresholds the rules read, as finding_list.h declares them: a field
 * each, at its default until `cudatrace report --threshold NAME=VALUE`
 * changes it before any trace is read (docs/findings.md says what each one
 * means, in its finding's section).
 */
#ifndef CT_THRESHOLDS_H
#define CT_THRESHOLDS_H

#include <stddef.h>

#include "viewer-export/findings/finding_list.h"

struct ct_thresholds {
#define CT_THRESHOLD_FIELD(name, finding, value, meaning) double name;
    CT_FOR_EACH_THRESHOLD(CT_THRESHOLD_FIELD)
#undef CT_THRESHOLD_FIELD
};

extern struct ct_thresholds ct_thresholds;

/* Sets one threshold from "name=value"; 0, or -1 (with the reason in
 * `error`) for an unknown name or a value that is not a number >= 0. */
int ct_thresholds_set(const char *assignment, char *error, size_t error_size);

/* Every threshold as NAME=VALUE,...: findings made under other thresholds
 * are not merged with these (job/summary.h). */
void ct_thresholds_describe(char *out, size_t size);

#endif

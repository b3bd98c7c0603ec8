/*
 * The thresholds' values, their defaults those finding_list.h gives, each
 * set by its name. The defaults are what the field reports as trouble:
 * over ~15% of host time in launches, over ~100 small copies a second,
 * milliseconds for a cudaMalloc that should take ~100 us; a GPU slowed by
 * its power cap or by heat for more than a passing moment, an SM clock a
 * fifth under its maximum; a minute inside one CUDA call, which no healthy
 * call takes and which PyTorch's collective watchdog, ten minutes by
 * default, outlasts; a training thread that waits for its input or
 * computes outside CUDA calls for a large share of the run; a CUDA graph
 * captured again at the same line and replayed a time or two before the
 * next capture, as torch.compile's CUDA graphs are when shapes keep
 * changing.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer-export/findings/thresholds.h"

struct ct_thresholds ct_thresholds = {
#define DEFAULT(name, finding, value, meaning) .name = value,
    CT_FOR_EACH_THRESHOLD(DEFAULT)
#undef DEFAULT
};

static const struct {
    const char *name;
    size_t offset;
} names[] = {
#define NAME(name, finding, value, meaning) {#name, offsetof(struct ct_thresholds, name)},
    CT_FOR_EACH_THRESHOLD(NAME)
#undef NAME
};

int ct_thresholds_set(const char *assignment, char *error, size_t error_size)
{
    const char *equals = strchr(assignment, '=');
    size_t len = equals ? (size_t)(equals - assignment) : strlen(assignment);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strlen(names[i].name) != len || strncmp(names[i].name, assignment, len) != 0)
            continue;
        char *end;
        double value = equals ? strtod(equals + 1, &end) : -1;
        if (!equals || end == equals + 1 || *end || !(value >= 0)) {
            snprintf(error, error_size, "threshold %s needs a number >= 0, as in %s=0.5",
                     names[i].name, names[i].name);
            return -1;
        }
        *(double *)((char *)&ct_thresholds + names[i].offset) = value;
        return 0;
    }
    snprintf(error, error_size, "no threshold named %.*s", (int)len, assignment);
    return -1;
}

void ct_thresholds_describe(char *out, size_t size)
{
    size_t n = 0;
    if (size)
        *out = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0] && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%s=%.17g", i ? "," : "", names[i].name,
                              *(const double *)((const char *)&ct_thresholds + names[i].offset));
}

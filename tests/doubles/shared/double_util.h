/*
 * The small helpers every CPU double (runtime, driver, CUPTI) needs alike: reading a numeric
 * CT_DOUBLE_* knob strictly, and CUPTI's clock. Header-only so each double stays one shared
 * object with no link-time dependency on the others.
 */
#ifndef CT_DOUBLE_UTIL_H
#define CT_DOUBLE_UTIL_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Digits only: a sign, blank or suffix means the user meant something we would misread. */
static inline bool parse_decimal(const char *text, unsigned long long max, unsigned long long *out)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || value > max)
        return false;
    *out = value;
    return true;
}

/* The knob `name` when it is a valid decimal of at least `min`, else `fallback`. */
static inline uint64_t knob_or(const char *name, uint64_t min, uint64_t fallback)
{
    unsigned long long value;
    return parse_decimal(getenv(name), UINT64_MAX, &value) && value >= min ? value : fallback;
}

/* CUPTI's timestamps are CLOCK_REALTIME nanoseconds, and so is the simulated GPU's timeline. */
static inline uint64_t realtime_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

#endif

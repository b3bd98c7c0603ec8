/*
 * The unit checks' tally (check.h): how many checks ran and how many of
 * them failed, for the whole program; and their fixed random sequence.
 */
#include "tests/unit/check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static unsigned checks, failures;

/* Counts one check; on failure prints its name, then `detail` (if any). */
static int tally(int ok, const char *detail, const char *format, va_list args)
{
    checks++;
    if (ok)
        return 1;
    failures++;
    printf("FAILED: ");
    vprintf(format, args);
    printf("%s\n", detail ? detail : "");
    return 0;
}

int ct_check(int ok, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    tally(ok, NULL, format, args);
    va_end(args);
    return ok;
}

int ct_check_u64(uint64_t got, uint64_t want, const char *format, ...)
{
    char detail[80];
    snprintf(detail, sizeof detail, ": got %" PRIu64 ", want %" PRIu64, got, want);
    va_list args;
    va_start(args, format);
    int ok = tally(got == want, detail, format, args);
    va_end(args);
    return ok;
}

int ct_check_f64(double got, double want, const char *format, ...)
{
    char detail[80];
    snprintf(detail, sizeof detail, ": got %.17g, want %.17g", got, want);
    va_list args;
    va_start(args, format);
    int ok = tally(got == want, detail, format, args);
    va_end(args);
    return ok;
}

int ct_check_finish(void)
{
    if (failures) {
        printf("%u of %u checks failed\n", failures, checks);
        return 1;
    }
    printf("%u checks passed\n", checks);
    return 0;
}

uint64_t ct_check_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

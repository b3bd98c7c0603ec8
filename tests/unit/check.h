/*
 * The tally the unit checks of the pure parts (tests/unit/NAME_check.c) share,
 * so that each says the same thing the same way to
 * tests/test_unit_pure_parts.py: a failed check prints one line naming it,
 * and the program's last line and exit status say how all of them went.
 * Also their source of many inputs, the same on every run, so that a
 * failure found once is found again.
 */
#ifndef CT_TESTS_UNIT_CHECK_H
#define CT_TESTS_UNIT_CHECK_H

#include <stdint.h>

/* Counts a check named by `format`, printing the name when `ok` is 0;
 * returns `ok`, for a caller whose next checks need this one to hold. */
int ct_check(int ok, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* A check that `got` is exactly `want`; a failure prints both. */
int ct_check_u64(uint64_t got, uint64_t want, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* The same for doubles, compared exactly: the expected values are chosen
 * to be exact in binary. */
int ct_check_f64(double got, double want, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Prints "N checks passed", or how many of them failed; the exit status. */
int ct_check_finish(void);

/* The next of a fixed sequence of well-mixed numbers (splitmix64) from
 * `*state`, which it advances. */
uint64_t ct_check_random(uint64_t *state);

#endif

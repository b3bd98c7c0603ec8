/*
 * Command-line size parsing shared by the test programs in this folder. Tests vary workloads
 * through argv and compare against exact expected counts, so a mistyped argument must stop the
 * program (status 2) instead of silently running a different workload.
 */
#ifndef CT_PROGRAM_ARGS_H
#define CT_PROGRAM_ARGS_H

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* argv[index] as a non-negative decimal, or fallback when the argument is absent. */
static unsigned long long arg_or(int argc, char **argv, int index, unsigned long long fallback)
{
    if (argc <= index)
        return fallback;
    const char *text = argv[index];
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || errno != 0 || *end != '\0') {
        fprintf(stderr, "%s: argument %d must be a non-negative integer, got '%s'\n", argv[0],
                index, text);
        exit(2);
    }
    return value;
}

#endif

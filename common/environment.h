/*
 * Which of the traced process's environment variables go into the trace:
 * those that change how CUDA, its libraries and the frameworks behave, and
 * never one that looks like a secret. The collector records by it, and
 * `cudatrace diff` holds what it prints to it.
 */
#ifndef CT_COMMON_ENVIRONMENT_H
#define CT_COMMON_ENVIRONMENT_H

#include <stddef.h>

/* Whether NAME=VALUE is recorded. */
int ct_environment_recorded(const char *name, size_t name_len, const char *value);

/* Writes the recorded variables of a NUL-separated environment block as
 * "NAME=value" lines into out (a newline inside a value becomes a space),
 * sorted by name so traces of one job compare line by line; returns the
 * length, stopping at whole lines before `size`. */
size_t ct_environment_lines(const char *block, size_t block_len, char *out, size_t size);

#endif

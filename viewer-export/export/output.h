/*
 * The file an export writes: created new, or standard output, plain or
 * gzip-compressed.
 */
#ifndef CT_EXPORT_OUTPUT_H
#define CT_EXPORT_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

struct ct_export_output;

/* Whether `path` stands for standard output: "-" (a file called that is
 * "./-"). */
int ct_export_output_is_stdout(const char *path);
/* Creates `path`, which must not exist (a symlink there is not followed),
 * or writes to standard output for "-"; on failure returns NULL with a
 * one-line reason in `error`. */
struct ct_export_output *ct_export_output_create(const char *path, int gzip, char *error,
                                                 size_t error_size);
/* Appends bytes; 0, or -1 on a write error. */
int ct_export_output_write(struct ct_export_output *out, const void *data, size_t size);
/* The stream to print to (plain outputs only). */
FILE *ct_export_output_stream(struct ct_export_output *out);
/* Closes the file: 0 when everything reached it, else -1 with the reason in
 * `error` and the file removed (not standard output: what reached it stays). */
int ct_export_output_finish(struct ct_export_output *out, char *error, size_t error_size);
/* Closes and removes the file (not standard output): the export failed. */
void ct_export_output_discard(struct ct_export_output *out);

#endif

/*
 * Which NVTX range names say a training step (step_names.c): the rule the
 * report finds steps by and the collector keeps a bounded trace's dropped
 * steps by, in one place.
 */
#ifndef CT_STEP_NAMES_H
#define CT_STEP_NAMES_H

#include <stddef.h>

/* The length of `name`'s step marker: up to a '#' (PyTorch's
 * "ProfilerStep#12" is the marker "ProfilerStep"); 0 when the name does
 * not say step or iteration. */
size_t ct_step_marker_length(const char *name);

#endif

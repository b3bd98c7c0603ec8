/*
 * Library events from the preload's loader view (the loader ring).
 */
#ifndef CT_COLLECTOR_LOADER_EVENTS_H
#define CT_COLLECTOR_LOADER_EVENTS_H

#include <stdint.h>

#include "cudatrace/record.h"

/* Keeps a finished string of a library event; 0 when `kind` is no such
 * string. */
int ct_loader_events_string(uint16_t kind, uint64_t key, uint32_t id);
/* A CT_REC_LIBRARY record: writes the load, failed load or unload. */
void ct_loader_events_record(const struct ct_record *r);

#endif

/*
 * The "CUDA libraries" track: the libraries the process mapped, how the
 * loader found them, the loads that failed, their versions and the toolkit
 * the environment points at.
 */
#ifndef CT_COLLECTOR_LIBRARY_TRACK_H
#define CT_COLLECTOR_LIBRARY_TRACK_H

#include <stdint.h>

#include "collector/libraries/loader_log.h"

void ct_library_track_start(void);
/* Writes the libraries mapped and the loader's accounts since the last
 * scan; returns what ct_library_scan does (1 once the process has ended). */
int ct_library_track_scan(int process_ended);
/* One account of a load or failed load (the audit log's or the preload's),
 * seen at `ts`. */
void ct_library_track_loader(const struct ct_loader_event *e, uint64_t ts);
/* A file the process mapped: described now, if it was not before, so a
 * library unloaded again before the next scan is still listed. */
void ct_library_track_note_file(const char *path, uint64_t ts);
/* `rolled_back_by`: the name whose failure made the loader unmap it again
 * with the load that mapped it, or NULL. */
void ct_library_track_unload(const char *path, uint64_t ts, const char *rolled_back_by);
/* The version a loaded library reported through its own API. */
void ct_library_track_version(uint64_t version, uint32_t path);
/* The whole inventory once more, at the end. */
void ct_library_track_finish(uint64_t end_ns);

#endif

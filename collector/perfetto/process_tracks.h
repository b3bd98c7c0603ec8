/*
 * The process's own sequence and the tracks that belong to no thread: the
 * process track, the counter tracks and the CUDA libraries track. Every part
 * of the builder that writes process-wide events goes through here, so the
 * track uuids are made in one place.
 */
#ifndef CT_COLLECTOR_PROCESS_TRACKS_H
#define CT_COLLECTOR_PROCESS_TRACKS_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"
#include "collector/libraries/ld_search.h"
#include "collector/perfetto/writer.h"
#include "common/string_table.h"

enum ct_process_track {
    CT_TRACK_PROCESS = 0,
    CT_TRACK_DEVICE_BYTES,
    CT_TRACK_PINNED_BYTES,
    CT_TRACK_VMM_BYTES,
    CT_TRACK_POOL_RESERVED,
    CT_TRACK_LAUNCH_RATE,
    CT_TRACK_DROPPED,
    CT_TRACK_LIBRARIES,
    CT_TRACK_GAP,     /* described only in a bounded trace's gap frame */
    CT_TRACK_CAPTURE, /* described with each capture window */
    CT_TRACK_GRAPH_RESERVED,
};

struct ct_process {
    struct ct_sequence seq;
    int32_t pid;
    uint64_t uuid, start_ns;
    char exe[4096]; /* the program's file */
};

extern struct ct_process ct_process;

/* The uuid of one of `p`'s own tracks. */
static inline uint64_t ct_process_track_of(const struct ct_process *p, enum ct_process_track which)
{
    return p->uuid | which;
}

/* Annotations whose names (and string values) are interned here. */
#define CT_TEXT_ARG(name, text)                                                                    \
    ((struct ct_arg){ct_strings_intern_cstr(name), CT_ARG_STRING, ct_strings_intern_cstr(text)})
#define CT_UINT_ARG(name, value)                                                                   \
    ((struct ct_arg){ct_strings_intern_cstr(name), CT_ARG_UINT, (uint64_t)(value)})
#define CT_INT_ARG(name, value)                                                                    \
    ((struct ct_arg){ct_strings_intern_cstr(name), CT_ARG_INT, (uint64_t)(value)})

/* Writes the process track and the counter and library tracks, with `w`. */
void ct_process_tracks_start(const struct ct_shm_header *shm, struct ct_writer *w);
uint64_t ct_process_track(enum ct_process_track which);
/* A variable of the environment the process started with, or NULL. */
const char *ct_process_env(const char *name);
/* That environment, NUL-separated, and its length. */
const char *ct_process_environment(size_t *len);
/* The toolkit the environment points at: $CUDA_HOME, else /usr/local/cuda. */
const char *ct_process_toolkit_home(void);
/* The process as its dynamic linker sees it, for ld_search.c. */
struct ct_ld_process ct_process_loader_view(void);
uint64_t ct_process_thread_track(int32_t tid);

void ct_process_instant(enum ct_process_track track, uint64_t ts, const char *name,
                        const struct ct_arg *args, int nargs);
/* A value of one of `p`'s counter tracks. */
static inline void ct_process_counter(struct ct_process *p, enum ct_process_track track,
                                      uint64_t ts, int64_t value)
{
    ct_write_counter(&p->seq, ct_process_track_of(p, track), ts, value);
}

/* The runtime and driver versions and the device count (CT_REC_PROCESS_INFO). */
void ct_process_versions(const struct ct_record *r);
/* One device: key is ordinal | compute capability << 32, name a string id. */
void ct_process_device(uint64_t key, uint32_t name);

#endif

/*
 * One chunk's figures, kept for each chunk of a bounded trace that may be
 * dropped until it is kept or gone (chunk_keeper.c).
 */
#ifndef CT_COLLECTOR_CHUNK_KEEPER_H
#define CT_COLLECTOR_CHUNK_KEEPER_H

#include <stddef.h>
#include <stdint.h>

#define CT_CHUNK_KEEPER_SLOTS 64 /* more than the chunks a file holds at once */

struct ct_chunk_keeper {
    size_t size;                           /* of one chunk's figures */
    void (*release)(void *figures);        /* frees what they own; NULL: nothing */
    uint32_t chunk[CT_CHUNK_KEEPER_SLOTS]; /* of each slot; 0: free */
    unsigned char *figures;                /* CT_CHUNK_KEEPER_SLOTS of `size` bytes */
};

#define CT_CHUNK_KEEPER(figures_type, release_fn)                                                  \
    {                                                                                              \
        .size = sizeof(figures_type), .release = (release_fn)                                      \
    }

/* The figures of chunk `chunk` (not 0), zeroed when it first asks. */
void *ct_chunk_keeper_of(struct ct_chunk_keeper *k, uint32_t chunk);
/* Hands the figures of each chunk before `first_kept` to `fold` with
 * `into`, then forgets them. */
void ct_chunk_keeper_fold(struct ct_chunk_keeper *k, uint32_t first_kept,
                          void (*fold)(void *figures, void *into), void *into);

#endif

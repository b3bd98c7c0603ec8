/*
 * The collector's control socket (listener.c): listened on from the start,
 * served a little each drain cycle without ever blocking it, closed and
 * removed at the end. Commands are in commands.c.
 */
#ifndef CT_COLLECTOR_CONTROL_LISTENER_H
#define CT_COLLECTOR_CONTROL_LISTENER_H

#include <stdint.h>

#include "cudatrace/shm_layout.h"

/* Listens for the process whose header is `shm`; without a socket (no
 * private directory, say) the session runs uncontrolled. */
void ct_control_listen(struct ct_shm_header *shm);
/* Accepts, reads and answers what is ready now; never waits. */
void ct_control_serve(uint64_t now_ns);
void ct_control_close(void);

#endif

/*
 * Call sites: the CT_STR_CALL_SITE strings the preload sends ahead of a
 * call's record, turned into two interned annotations of that call's slice:
 * `site`, the one frame that is the program's own code (the line a user
 * would change), and `stack`, every frame, innermost first.
 */
#ifndef CT_COLLECTOR_CALL_SITES_H
#define CT_COLLECTOR_CALL_SITES_H

#include <stdint.h>

/* String ids of a call's site and stack; 0 when the call has none. */
struct ct_call_site {
    uint32_t site, stack;
};

void ct_call_sites_start(uint32_t rings);
/* A whole site string (its id in the string table) arrived on ring `index`
 * for the call that began at `begin_ticks`. */
void ct_call_sites_arrived(uint32_t index, uint64_t begin_ticks, uint32_t blob);
/* The site of the call on ring `index` that began at `begin_ticks`, if it
 * was the one sent last on that ring. */
struct ct_call_site ct_call_sites_take(uint32_t index, uint64_t begin_ticks);
/* The same, leaving it for the call's own record to take: what a graph
 * node the call made is named by. */
struct ct_call_site ct_call_sites_peek(uint32_t index, uint64_t begin_ticks);
/* The site of a call that has not returned, from the return address its
 * hook noted on entry: one native frame, and only when it is the
 * program's own code (a library's frame would name no line worth a
 * user's time); 0 and 0 else. */
struct ct_call_site ct_call_sites_of_caller(uint64_t return_address);
/* Forgets what ring `index` held (its thread ended). */
void ct_call_sites_reset(uint32_t index);

#endif

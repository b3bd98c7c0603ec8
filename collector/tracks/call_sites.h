/*
 * Call sites: the CT_STR_CALL_SITE strings the preload sends ahead of a
 * call's record, turned into two interned annotations of that call's slice:
 * `site`, the one frame that is the program's own code (the line a user
 * would change), and `stack`, every frame, innermost first
 * (call_sites.c, struct ct_call_sites, which the builder holds).
 */
#ifndef CT_COLLECTOR_CALL_SITES_H
#define CT_COLLECTOR_CALL_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "collector/elf/symbolize.h"
#include "common/u64_map.h"

/* String ids of a call's site and stack; 0 when the call has none. */
struct ct_call_site {
    uint32_t site, stack;
};

struct ct_call_sites_pending;

struct ct_call_sites {
    int32_t pid; /* the program's, whose code addresses are symbolised */
    struct ct_symbolizer symbols;
    struct ct_call_sites_pending *pending; /* the site sent last on each ring */
    struct ct_u64_map resolved;            /* site string id -> index + 1 in sites */
    struct ct_call_site *sites;
    size_t site_count;
};

/* The sites of the calls of process `pid`, sent on `rings` rings. */
void ct_call_sites_start(struct ct_call_sites *s, int32_t pid, uint32_t rings);
/* A whole site string (its id in the string table) arrived on ring `index`
 * for the call that began at `begin_ticks`. */
void ct_call_sites_arrived(struct ct_call_sites *s, uint32_t index, uint64_t begin_ticks,
                           uint32_t blob);
/* The site of the call on ring `index` that began at `begin_ticks`, if it
 * was the one sent last on that ring. */
struct ct_call_site ct_call_sites_take(struct ct_call_sites *s, uint32_t index,
                                       uint64_t begin_ticks);
/* The same, leaving it for the call's own record to take: what a graph
 * node the call made is named by. */
struct ct_call_site ct_call_sites_peek(struct ct_call_sites *s, uint32_t index,
                                       uint64_t begin_ticks);
/* The site of a call that has not returned, from the return address its
 * hook noted on entry: one native frame, and only when it is the
 * program's own code (a library's frame would name no line worth a
 * user's time); 0 and 0 else. */
struct ct_call_site ct_call_sites_of_caller(struct ct_call_sites *s, uint64_t return_address);
/* Forgets what ring `index` held (its thread ended). */
void ct_call_sites_reset(struct ct_call_sites *s, uint32_t index);

#endif

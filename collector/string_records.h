/*
 * Strings the preload sends in chunks (CT_REC_STRING), put back together per
 * ring.
 */
#ifndef CT_COLLECTOR_STRING_RECORDS_H
#define CT_COLLECTOR_STRING_RECORDS_H

#include <stdint.h>

#include "cudatrace/record.h"

struct ct_string_done {
    uint16_t kind; /* enum ct_string_kind */
    uint64_t key;
    uint32_t id; /* the interned text */
};

void ct_string_records_start(uint32_t rings);
/* Adds a chunk read from ring `index`; returns 1 and fills *done when it
 * completed a string. */
int ct_string_records_add(uint32_t index, const struct ct_record *r, struct ct_string_done *done);
/* Forgets a half-received string of a ring whose thread ended. */
void ct_string_records_reset(uint32_t index);

#endif

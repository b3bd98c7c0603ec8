/*
 * Durations and sizes as people read them (human_units.c).
 */
#ifndef CT_HUMAN_UNITS_H
#define CT_HUMAN_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* 1234567 ns as "1.235 ms": three decimals in the unit that fits. */
const char *ct_human_time(uint64_t ns, char *buf, size_t size);
/* 1536 as "1.50 KiB". */
const char *ct_human_bytes(double bytes, char *buf, size_t size);
/* A number as its name says it is meant: bytes ("...bytes"), nanoseconds
 * ("ns", "..._ns"), or plain, whole when it is or is large (docs/findings.md
 * names them). */
const char *ct_human_number(const char *key, double value, char *buf, size_t size);

#endif

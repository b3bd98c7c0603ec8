/*
 * Protobuf base-128 varints, as the Trace framing and the packet bodies use.
 */
#ifndef CT_VARINT_H
#define CT_VARINT_H

#include <stddef.h>
#include <stdint.h>

/* Writes `v` at `out` (at most 10 bytes); returns the bytes written. */
static inline size_t ct_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* Frames a Trace.packet of `size` bytes: the field's tag (1, length-
 * delimited), then the length. Writes at most 11 bytes at `out`; returns
 * how many. */
static inline size_t ct_put_packet_header(uint8_t *out, uint64_t size)
{
    out[0] = 0x0A;
    return 1 + ct_put_varint(out + 1, size);
}

/* The bytes ct_put_varint would write for `v`. */
static inline size_t ct_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

#endif

/*
 * Growing arrays: an element at a time, the way the report and the decoder
 * collect what they find, or to a size, for the collector's large tables;
 * both double their room. Allocation failure ends the process: the command
 * has nothing useful to do without memory, and never runs inside the traced
 * program.
 */
#ifndef CT_ARRAY_H
#define CT_ARRAY_H

#include <stdlib.h>
#include <string.h>

/* The room ct_array_grow (below) keeps for `count` elements: what an array
 * made otherwise must have for ct_array_grow to go on with it. */
static inline size_t ct_array_room(size_t count)
{
    size_t room = 1;
    while (room < count)
        room *= 2;
    return room;
}

/* Returns `array` (of `count` elements of `size` bytes, made by this
 * function or with ct_array_room's room) with room for one more, that new element zeroed. Its
 * capacity is `count` rounded up to a power of two, so it is reallocated
 * only when `count` reaches one: a realloc per element copied the whole
 * array each time wherever it could not grow in place (always, under
 * TSan), which made the report quadratic in a trace's allocations. */
static inline void *ct_array_grow(void *array, size_t count, size_t size)
{
    char *grown = array;
    if ((count & (count - 1)) == 0 && !(grown = realloc(array, (count ? 2 * count : 1) * size)))
        abort();
    memset(grown + count * size, 0, size);
    return grown;
}

/* Returns `array` with room for `needed` elements of `size` bytes, doubling
 * its capacity (kept in *capacity) as often as that takes. */
static inline void *ct_array_reserve(void *array, size_t *capacity, size_t needed, size_t size)
{
    if (needed <= *capacity)
        return array;
    size_t grown = *capacity ? *capacity : 16;
    while (grown < needed)
        grown *= 2;
    array = realloc(array, grown * size);
    if (!array)
        abort();
    *capacity = grown;
    return array;
}

#endif

/*
 * Growing an array by one element, the way the report and the decoder
 * collect what they find. Allocation failure ends the process: the command
 * has nothing useful to do without memory, and never runs inside the traced
 * program.
 */
#ifndef CT_ARRAY_H
#define CT_ARRAY_H

#include <stdlib.h>
#include <string.h>

/* Returns `array` (of `count` elements of `size` bytes) with room for one
 * more, that new element zeroed. */
static inline void *ct_array_grow(void *array, size_t count, size_t size)
{
    char *grown = realloc(array, (count + 1) * size);
    if (!grown)
        abort();
    memset(grown + count * size, 0, size);
    return grown;
}

#endif

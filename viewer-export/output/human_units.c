/*
 * Durations and sizes as people read them, for the text report and the
 * findings' messages.
 */
#include "viewer-export/output/human_units.h"

#include <stdio.h>

/* 1234567 ns as "1.235 ms": three significant decimals in the unit that fits. */
const char *ct_human_time(uint64_t ns, char *buf, size_t size)
{
    if (ns >= 1000000000ull)
        snprintf(buf, size, "%.3f s", ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(buf, size, "%.3f ms", ns / 1e6);
    else if (ns >= 1000ull)
        snprintf(buf, size, "%.3f us", ns / 1e3);
    else
        snprintf(buf, size, "%llu ns", (unsigned long long)ns);
    return buf;
}

const char *ct_human_bytes(double bytes, char *buf, size_t size)
{
    if (bytes >= 1 << 30)
        snprintf(buf, size, "%.2f GiB", bytes / (1 << 30));
    else if (bytes >= 1 << 20)
        snprintf(buf, size, "%.2f MiB", bytes / (1 << 20));
    else if (bytes >= 1 << 10)
        snprintf(buf, size, "%.2f KiB", bytes / (1 << 10));
    else
        snprintf(buf, size, "%.0f B", bytes);
    return buf;
}

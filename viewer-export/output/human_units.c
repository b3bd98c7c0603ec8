/*
 * Durations and sizes as people read them, for the text report and the
 * findings' messages, and a named number in the unit its name says.
 */
#include "viewer-export/output/human_units.h"

#include <stdio.h>
#include <string.h>

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

static int ends_with(const char *key, const char *end)
{
    size_t n = strlen(key), m = strlen(end);
    return n >= m && strcmp(key + n - m, end) == 0;
}

const char *ct_human_number(const char *key, double value, char *buf, size_t size)
{
    if (ends_with(key, "bytes") && value >= 0)
        return ct_human_bytes(value, buf, size);
    /* A summary's number can be any double: past 2^64 it is no time to cast. */
    if ((strcmp(key, "ns") == 0 || ends_with(key, "_ns")) && value >= 0 && value < 0x1p64)
        return ct_human_time((uint64_t)value, buf, size);
    /* counts whole, however large: 123456 calls, not 1.235e+05 */
    int whole = value >= 1e4 || value <= -1e4 || value == (double)(int64_t)value;
    snprintf(buf, size, whole ? "%.0f" : "%.4g", value);
    return buf;
}

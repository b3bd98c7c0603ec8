/*
 * Reads the CUDATRACE_* environment into ct_config. Limits are chosen so a
 * bad value can neither exhaust memory (rings are allocated up front) nor
 * make the exit path hang for long.
 */
#include "preload/core/config.h"

#include "cudatrace/shm_layout.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ct_config ct_config;

void ct_warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    int saved = errno;
    ssize_t ignored = write(STDERR_FILENO, "cudatrace: ", 11);
    ignored = write(STDERR_FILENO, line, (size_t)n);
    (void)ignored;
    errno = saved;
}

static uint32_t env_uint(const char *name, uint32_t fallback, uint32_t min, uint32_t max)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || *end || text[0] == '-' || value < min || value > max) {
        ct_warn("ignoring %s=%s: expected an integer from %u to %u; using %u", name, text, min, max,
                fallback);
        return fallback;
    }
    return (uint32_t)value;
}

static int env_flag_default(const char *name, int fallback)
{
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    if (strcmp(text, "0") == 0 || strcmp(text, "1") == 0)
        return text[0] == '1';
    ct_warn("ignoring %s=%s: expected 0 or 1", name, text);
    return fallback;
}

static int env_flag(const char *name)
{
    return env_flag_default(name, 0);
}

static int env_clock_is_boottime(void)
{
    const char *text = getenv("CUDATRACE_CLOCK");
    if (!text || !*text || strcmp(text, "auto") == 0)
        return 0;
    if (strcmp(text, "boottime") == 0)
        return 1;
    ct_warn("ignoring CUDATRACE_CLOCK=%s: expected auto or boottime", text);
    return 0;
}

static int env_cupti_mode(void)
{
    const char *text = getenv("CUDATRACE_CUPTI");
    if (!text || !*text || strcmp(text, "auto") == 0)
        return CT_CUPTI_AUTO;
    if (strcmp(text, "0") == 0 || strcmp(text, "1") == 0)
        return text[0] == '1' ? CT_CUPTI_ON : CT_CUPTI_OFF;
    ct_warn("ignoring CUDATRACE_CUPTI=%s: expected auto, 0 or 1", text);
    return CT_CUPTI_AUTO;
}

static uint32_t round_up_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

void ct_config_load(void)
{
    ct_config.output = getenv("CUDATRACE_OUTPUT");
    ct_config.collector = getenv("CUDATRACE_COLLECTOR");
    ct_config.ring_records = round_up_pow2(env_uint("CUDATRACE_RING_RECORDS", 32768, 64, 1u << 24));
    ct_config.rings = env_uint("CUDATRACE_RINGS", 256, 1, 4096);
    ct_config.exit_timeout_ms = env_uint("CUDATRACE_EXIT_TIMEOUT_MS", 10000, 0, 600000);
    ct_config.quiet = env_flag("CUDATRACE_QUIET");
    ct_config.disabled = env_flag("CUDATRACE_DISABLE");
    ct_config.no_call_sites = !env_flag_default("CUDATRACE_CALL_SITES", 1);
    ct_config.launch_site_us = env_uint("CUDATRACE_LAUNCH_SITE_US", 1000, 0, 60000000);
    ct_config.spill_mb = env_uint("CUDATRACE_SPILL_MB", CT_SPILL_CHAIN, 0,
                                  CT_SPILL_CHAIN * CT_SPILL_SEGMENT_BYTES >> 20);
    ct_config.force_boottime_clock = env_clock_is_boottime();
    ct_config.cupti = env_cupti_mode();
    ct_config.cupti_path = getenv("CUDATRACE_CUPTI_PATH");
}

/*
 * Reads the CUDATRACE_* environment into ct_config. Limits are chosen so a
 * bad value can neither exhaust memory (the rings, resident as threads take
 * them, are bounded in all) nor make the exit path hang for long. What is
 * wrong with a setting is said when a session starts, not at load.
 */
#include "preload/core/config.h"

#include "cudatrace/shm_layout.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ct_config ct_config;

/* "cudatrace: " and the message, cut to fit, and a newline; its length. */
static size_t format_line(char *out, size_t size, const char *fmt, va_list ap)
{
    static const char prefix[] = "cudatrace: ";
    size_t len = sizeof prefix - 1;
    memcpy(out, prefix, len);
    int n = vsnprintf(out + len, size - len - 1, fmt, ap);
    if (n < 0)
        return 0;
    len += (size_t)n < size - len - 2 ? (size_t)n : size - len - 2;
    out[len++] = '\n';
    return len;
}

static void write_stderr(const char *text, size_t len)
{
    int saved = errno;
    ssize_t ignored = write(STDERR_FILENO, text, len);
    (void)ignored;
    errno = saved;
}

void ct_warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(line, sizeof line, fmt, ap);
    va_end(ap);
    write_stderr(line, len);
}

/* What the settings' warnings wait in: every process the preload is in reads
 * them, the shells and tools that inherit LD_PRELOAD too, and only one that
 * starts a session should speak. */
static char held[2048];
static size_t held_len;

__attribute__((format(printf, 1, 2))) static void hold_warning(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(line, sizeof line, fmt, ap);
    va_end(ap);
    if (len <= sizeof held - held_len) {
        memcpy(held + held_len, line, len);
        held_len += len;
    }
}

void ct_config_say_warnings(void)
{
    write_stderr(held, held_len);
    held_len = 0;
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
        hold_warning("ignoring %s=%s: expected an integer from %u to %u; using %u", name, text, min,
                     max, fallback);
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
    hold_warning("ignoring %s=%s: expected 0 or 1", name, text);
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
    hold_warning("ignoring CUDATRACE_CLOCK=%s: expected auto or boottime", text);
    return 0;
}

static int env_cupti_mode(void)
{
    const char *text = getenv("CUDATRACE_CUPTI");
    if (!text || !*text || strcmp(text, "auto") == 0)
        return CT_CUPTI_AUTO;
    if (strcmp(text, "0") == 0 || strcmp(text, "1") == 0)
        return text[0] == '1' ? CT_CUPTI_ON : CT_CUPTI_OFF;
    hold_warning("ignoring CUDATRACE_CUPTI=%s: expected auto, 0 or 1", text);
    return CT_CUPTI_AUTO;
}

/* Which of two words `name` is set to: 0 for the first (the default, also
 * when unset or empty), 1 for the second; anything else is said once and
 * read as the first. */
static int env_either(const char *name, const char *first, const char *second)
{
    const char *text = getenv(name);
    if (!text || !*text || strcmp(text, first) == 0)
        return 0;
    if (strcmp(text, second) == 0)
        return 1;
    hold_warning("ignoring %s=%s: expected %s or %s; writing %s", name, text, first, second, first);
    return 0;
}

/* Seconds, decimals allowed, from 0 to a year, as nanoseconds; -1 if not. */
static int64_t parse_seconds(const char *text, const char *stop)
{
    char *end;
    errno = 0;
    double seconds = strtod(text, &end);
    if (end == text || end != stop || errno || !(seconds >= 0 && seconds <= 31536000) ||
        !isdigit((unsigned char)text[0]))
        return -1;
    return (int64_t)(seconds * 1e9);
}

/* time:DELAY[:DURATION]; 0 when it is not that. */
static int parse_time_window(const char *spec)
{
    const char *colon = strchr(spec, ':');
    int64_t delay = parse_seconds(spec, colon ? colon : spec + strlen(spec));
    int64_t duration = colon ? parse_seconds(colon + 1, colon + 1 + strlen(colon + 1)) : 0;
    if (delay < 0 || duration < 0 || (colon && duration == 0))
        return 0;
    ct_config.capture_delay_ns = (uint64_t)delay;
    ct_config.capture_duration_ns = (uint64_t)duration;
    return 1;
}

/* CUDATRACE_CAPTURE: profiler, nvtx:NAME or time:DELAY[:DURATION]. The
 * value travels to the collector in the shared header, hence the bound. */
static int env_capture(void)
{
    const char *text = getenv("CUDATRACE_CAPTURE");
    if (!text || !*text)
        return CT_CAPTURE_ALL;
    ct_config.capture_text = text;
    if (strlen(text) < sizeof((struct ct_shm_header *)0)->capture_setting) {
        if (strcmp(text, "profiler") == 0)
            return CT_CAPTURE_PROFILER;
        if (strncmp(text, "nvtx:", 5) == 0 && text[5]) {
            ct_config.capture_nvtx = text + 5;
            return CT_CAPTURE_NVTX;
        }
        if (strncmp(text, "time:", 5) == 0 && parse_time_window(text + 5))
            return CT_CAPTURE_TIME;
    }
    ct_config.capture_text = NULL;
    hold_warning("ignoring CUDATRACE_CAPTURE=%s: expected profiler, nvtx:NAME or "
                 "time:DELAY[:DURATION] in seconds; recording everything",
                 text);
    return CT_CAPTURE_ALL;
}

static uint32_t round_up_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

/* Each ring becomes resident as a thread takes it, so each limit alone does
 * not bound the memory: the product must. The rings shrink to fit, and say so. */
static uint32_t ring_records_within_bound(uint32_t records, uint32_t rings)
{
    uint64_t ring_bytes = (uint64_t)(rings + 1) * sizeof(struct ct_record);
    uint32_t fit = records;
    while (fit > CT_RING_RECORDS_MIN && fit * ring_bytes > CT_RING_MEMORY_MAX)
        fit >>= 1;
    if (fit != records)
        hold_warning("%u rings of %u records (CUDATRACE_RINGS, CUDATRACE_RING_RECORDS) would "
                     "take %llu MiB, over the %llu MiB the rings may take; using %u records a "
                     "ring",
                     rings + 1, records, (unsigned long long)(records * ring_bytes >> 20),
                     (unsigned long long)(CT_RING_MEMORY_MAX >> 20), fit);
    return fit;
}

void ct_config_load(void)
{
    ct_config.output = getenv("CUDATRACE_OUTPUT");
    ct_config.collector = getenv("CUDATRACE_COLLECTOR");
    ct_config.ring_records =
        round_up_pow2(env_uint("CUDATRACE_RING_RECORDS", 32768, CT_RING_RECORDS_MIN, 1u << 24));
    ct_config.rings = env_uint("CUDATRACE_RINGS", 256, 1, CT_RINGS_MAX);
    ct_config.ring_records = ring_records_within_bound(ct_config.ring_records, ct_config.rings);
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
    ct_config.nvml_ms = env_uint("CUDATRACE_NVML_MS", 100, 0, 60000);
    ct_config.nvtx_lookup = env_flag_default("CUDATRACE_NVTX", 1);
    ct_config.max_mb = env_uint("CUDATRACE_MAX_MB", CT_MAX_MB_DEFAULT, 0, CT_MAX_MB_MOST);
    ct_config.sample_hz = env_uint("CUDATRACE_SAMPLE_HZ", 100, 0, 1000);
    ct_config.capture = env_capture();
    /* docs/gpu.md */
    ct_config.gpu_records = env_either("CUDATRACE_GPU_RECORDS", "typed", "tracks")
                                ? CT_GPU_RECORDS_TRACKS
                                : CT_GPU_RECORDS_TYPED;
    ct_config.graph_level = env_either("CUDATRACE_GPU_GRAPHS", "nodes", "graphs");
    ct_config.run_watch = getenv("CUDATRACE_RUN_WATCH");
}

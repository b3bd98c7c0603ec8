/*
 * Captures a call's site and sends it as one CT_STR_CALL_SITE string ahead
 * of the call's record (layout in include/cudatrace/call_site.h). The native
 * part starts at the hook's return address, which costs nothing and already
 * names the caller's line; glibc's backtrace() adds the frames above it.
 * (Not libunwind: Debian's libunwind.a is not position-independent, so it
 * cannot be linked into this library, and loading libunwind.so would add
 * libraries to every traced process. backtrace() uses libgcc's unwinder,
 * which finds unwind tables through _dl_find_object without a lock; its one
 * dlopen of libgcc_s happens at session start, see ct_call_sites_prepare.)
 * The Python part comes from python_frames.c, which reads
 * the thread's own frames without the GIL. Both only read memory, so a
 * capture cannot change what the program sees; a site that finds no room in
 * the ring is left out (its call is still recorded), except for kept calls,
 * whose site waits like their record does.
 */
#include "preload/sites/call_site.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>

#include "preload/core/clock.h"
#include "common/library_family.h"
#include "preload/core/config.h"
#include "preload/core/init.h"
#include "cudatrace/call_site.h"
#include "preload/sites/python_frames.h"
#include "preload/core/session.h"

__thread uint64_t ct_launch_site_next CT_TLS;
uint64_t ct_launch_site_ticks;
int ct_call_sites_on = 1;

/* Frames between the capture and the hook's caller: this function, the
 * hook, and the unwinder's own. */
#define UNWIND_SLACK 8

static __thread int capturing CT_TLS;

void ct_call_sites_configure(void)
{
    ct_call_sites_on = !ct_config.no_call_sites;
}

/* Clock ticks per microsecond: 1000 for CLOCK_BOOTTIME, else the TSC's rate
 * since the reading of both clocks taken at start-up (sampling needs it to a
 * few percent, no better). Only a session that starts within 200 us of the
 * process waits out the rest of that span. */
static uint64_t ticks_per_us(void)
{
    if (ct_clock_kind != CT_CLOCK_TSC)
        return 1000;
    uint64_t now_ns;
    do
        now_ns = ct_clock_boottime_ns();
    while (now_ns - ct_start_boot_ns < 200000);
    uint64_t rate = (ct_clock_now() - ct_start_ticks) * 1000 / (now_ns - ct_start_boot_ns);
    return rate ? rate : 1;
}

void ct_call_sites_prepare(void)
{
    void *frame;
    if (!ct_call_sites_on)
        return;
    backtrace(&frame, 1);
    ct_launch_site_ticks = (uint64_t)ct_config.launch_site_us * ticks_per_us();
}

struct site_buffer {
    uint8_t bytes[CT_STRING_MAX];
    size_t len;
};

static int put(struct site_buffer *b, const void *data, size_t len)
{
    if (len > sizeof b->bytes - b->len)
        return -1;
    memcpy(b->bytes + b->len, data, len);
    b->len += len;
    return 0;
}

/* Whether `pc` is in neither this library nor a CUDA-stack one (CUPTI,
 * the driver, a runtime): where a call CUPTI reported came from. */
static int outside_cuda(void *pc)
{
    struct dl_find_object found, own;
    char family[32];
    if (_dl_find_object(pc, &found) != 0 || !found.dlfo_link_map)
        return 0;
    if (_dl_find_object((void *)outside_cuda, &own) == 0 &&
        own.dlfo_map_start == found.dlfo_map_start)
        return 0;
    return !ct_library_family(found.dlfo_link_map->l_name, family, sizeof family);
}

/* The hook's caller (NULL: the first frame outside CUDA), then (unless
 * `caller_only`) what the unwinder finds above it. */
static uint8_t native_frames(uint64_t *pcs, const void *caller, int caller_only)
{
    void *found[CT_SITE_MAX_NATIVE + UNWIND_SLACK + 16];
    int n = 0, i = 0;
    if (!caller) {
        n = backtrace(found, (int)(sizeof found / sizeof found[0]));
        while (i < n && !outside_cuda(found[i]))
            i++;
        if (i == n)
            return 0;
        caller = found[i];
    }
    pcs[0] = (uintptr_t)caller;
    if (caller_only)
        return 1;
    if (!n)
        n = backtrace(found, (int)(sizeof found / sizeof found[0]));
    uint8_t count = 1;
    while (i < n && found[i] != caller)
        i++;
    for (i++; i < n && count < CT_SITE_MAX_NATIVE; i++)
        pcs[count++] = (uintptr_t)found[i];
    return count;
}

static void put_python_frame(struct site_buffer *b, const struct ct_py_frame *f)
{
    size_t file_len = f->file_len < CT_SITE_MAX_FILE ? f->file_len : CT_SITE_MAX_FILE;
    size_t function_len =
        f->function_len < CT_SITE_MAX_FUNCTION ? f->function_len : CT_SITE_MAX_FUNCTION;
    struct ct_site_python entry = {(uint32_t)(f->line > 0 ? f->line : 0), (uint16_t)file_len,
                                   (uint16_t)function_len};
    size_t start = b->len;
    if (put(b, &entry, sizeof entry) || put(b, f->file + (f->file_len - file_len), file_len) ||
        put(b, f->function, function_len))
        b->len = start;
}

static void build_site(struct site_buffer *b, const void *caller)
{
    uint64_t pcs[CT_SITE_MAX_NATIVE];
    struct ct_py_frame frames[CT_SITE_MAX_PYTHON];
    size_t python = ct_python_frames(frames, CT_SITE_MAX_PYTHON);
    /* Under Python frames the native stack is the interpreter's own, which
     * tells its author nothing and costs most of the capture: the caller
     * (the extension or library that made the call) is kept, the rest not. */
    struct ct_site_header header = {CT_SITE_VERSION, native_frames(pcs, caller, python > 0), 0, 0};
    b->len = sizeof header;
    put(b, pcs, header.native_count * sizeof pcs[0]);
    for (size_t i = 0; i < python; i++) {
        size_t before = b->len;
        put_python_frame(b, &frames[i]);
        if (b->len == before)
            break;
        header.python_count++;
    }
    memcpy(b->bytes, &header, sizeof header);
}

struct site_to_send {
    struct ct_ring *ring;
    uint64_t begin;
    const struct site_buffer *site;
};

static int sent(void *ctx)
{
    const struct site_to_send *s = ctx;
    return ct_emit_bytes(s->ring, CT_STR_CALL_SITE, s->begin, s->site->bytes, s->site->len) == 0;
}

void ct_call_site_capture(uint64_t begin, const void *caller, int kept)
{
    struct ct_ring *ring = ct_ring_current();
    if (!ring || capturing)
        return;
    capturing = 1;
    int saved_errno = errno; /* the unwinder and the Python lookups may set it */
    struct site_buffer b;
    build_site(&b, caller);
    struct site_to_send s = {ring, begin, &b};
    uint64_t chunks = (b.len + CT_STRING_CHUNK - 1) / CT_STRING_CHUNK;
    /* A site longer than a whole (tiny, CUDATRACE_RING_RECORDS) ring may
     * never fit: waiting for it would only hold the call up. */
    if (!sent(&s) && kept && chunks <= ct_ring_mask + 1)
        ct_session_wait_until(sent, &s);
    errno = saved_errno;
    capturing = 0;
}

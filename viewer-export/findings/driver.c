/*
 * The findings about the CUDA driver: stub-driver (the toolkit's link-time
 * libcuda, or calls failing with cudaErrorStubLibrary), driver-missing
 * (calls fail with cudaErrorInsufficientDriver and there is no driver, or
 * libcuda.so.1 was looked for and not found) and driver-too-old (they fail
 * so with a driver older than the runtime). A failed load of libcuda alone
 * is none of these when the runtime still reports a driver.
 */
#include "viewer-export/findings/findings.h"

#include <stdio.h>
#include <string.h>

#include "cuda_error_names.h"
#include "viewer-export/output/report_output.h"

int ct_is_driver_name(const char *name)
{
    const char *base = strrchr(name, '/');
    return strncmp(base ? base + 1 : name, "libcuda.so", 10) == 0;
}

/* The failed load of the driver library, if there was one. */
static const struct ct_failed_load *driver_load_failure(const struct ct_process_report *p)
{
    for (size_t i = 0; i < p->libraries.failed_count; i++)
        if (ct_is_driver_name(p->libraries.failed[i].requested_as))
            return &p->libraries.failed[i];
    return NULL;
}

static const struct ct_library_entry *driver_library(const struct ct_process_report *p)
{
    for (size_t i = 0; i < p->libraries.mapped_count; i++)
        if (strcmp(p->libraries.mapped[i].family, "cuda") == 0)
            return &p->libraries.mapped[i];
    return NULL;
}

/* What the hooked calls showed of the missing driver. None at all is said
 * as such: a runtime linked statically into a framework is not hooked, and
 * a count of zero would read as if its calls had succeeded. */
static void calls_seen(const struct ct_process_report *p, uint64_t driver_failures, char *out,
                       size_t size)
{
    uint64_t runtime_calls = 0;
    for (int fn = 0; fn < CT_FN_FIRST_DRIVER; fn++)
        runtime_calls += p->calls.api[fn].calls;
    if (driver_failures)
        snprintf(out, size, "%llu calls failed with cudaErrorInsufficientDriver",
                 (unsigned long long)driver_failures);
    else if (runtime_calls)
        snprintf(out, size,
                 "none of the %llu CUDA runtime calls seen failed with "
                 "cudaErrorInsufficientDriver",
                 (unsigned long long)runtime_calls);
    else
        snprintf(out, size,
                 "no call into a shared CUDA runtime was seen (a runtime linked "
                 "statically into the program or a framework is not hooked)");
}

/* The driver findings' own evidence: the failed load of libcuda, the calls
 * that failed for want of a driver and the versions on each side. */
struct driver_evidence {
    const struct ct_failed_load *load;
    uint64_t failed_calls;
    int64_t runtime_version, driver_version;
};

/* stub-driver's: the calls the stub failed. */
static void stub_json(struct ct_json *j, const void *own)
{
    const struct driver_evidence *e = own;
    if (e->failed_calls)
        ct_json_uint(j, "failed_calls", e->failed_calls);
}

/* driver-missing's and driver-too-old's: the driver's version says 0 for
 * none where calls failed. */
static void driver_json(struct ct_json *j, const void *own)
{
    const struct driver_evidence *e = own;
    if (e->load)
        ct_failed_loads_json(j, e->load);
    stub_json(j, own);
    if (e->runtime_version > 0)
        ct_json_int(j, "runtime_version", e->runtime_version);
    if (e->failed_calls)
        ct_json_int(j, "driver_version", e->driver_version > 0 ? e->driver_version : 0);
}

void ct_findings_driver(const struct ct_process_report *p, struct ct_findings *out)
{
    const struct ct_library_entry *libcuda = driver_library(p);
    uint64_t stub_failures = p->calls.calls_failed_with[ct_cudaErrorStubLibrary];
    uint64_t driver_failures = p->calls.calls_failed_with[ct_cudaErrorInsufficientDriver];
    if ((libcuda && strstr(libcuda->realpath, "/stubs/")) || stub_failures) {
        struct ct_finding *f = ct_finding_add(
            out, CT_FINDING_STUB_DRIVER, p->pid,
            "the CUDA driver library loaded is the toolkit's link-time stub%s%s, whose every "
            "call fails with cudaErrorStubLibrary (%llu so far). Remove the stubs directory "
            "from LD_LIBRARY_PATH (and any libcuda.so.1 link to it) so the real driver loads.",
            libcuda ? " " : "", libcuda ? libcuda->realpath : "",
            (unsigned long long)stub_failures);
        struct driver_evidence *own = ct_finding_own(f, sizeof *own, stub_json);
        own->failed_calls = stub_failures;
        if (libcuda)
            ct_finding_add_library(f, libcuda);
        return;
    }
    const struct ct_failed_load *driver_failed = libcuda ? NULL : driver_load_failure(p);
    int too_old = driver_failures && p->cuda.driver_version > 0 &&
                  p->cuda.driver_version < p->cuda.runtime_version;
    /* A failed load of libcuda alone is no finding when the runtime still
     * reports a driver (a library probing for it, say). */
    int missing = (driver_failures || driver_failed) && p->cuda.driver_version <= 0;
    if (!too_old && !missing)
        return;
    struct ct_finding *f;
    if (too_old) {
        f = ct_finding_add(
            out, CT_FINDING_DRIVER_TOO_OLD, p->pid,
            "the driver supports CUDA %lld.%lld but the runtime needs %lld.%lld: %llu calls "
            "failed with cudaErrorInsufficientDriver. Update the NVIDIA driver, or use a "
            "runtime (framework build) for CUDA %lld.%lld.",
            (long long)p->cuda.driver_version / 1000,
            (long long)(p->cuda.driver_version % 1000) / 10,
            (long long)p->cuda.runtime_version / 1000,
            (long long)(p->cuda.runtime_version % 1000) / 10, (unsigned long long)driver_failures,
            (long long)p->cuda.driver_version / 1000,
            (long long)(p->cuda.driver_version % 1000) / 10);
    } else {
        char where[8192] = "";
        if (driver_failed)
            snprintf(where, sizeof where, " (looked for by %s; %s)", driver_failed->requested_by,
                     ct_failed_load_searched(driver_failed));
        char seen[256];
        calls_seen(p, driver_failures, seen, sizeof seen);
        f = ct_finding_add(out, CT_FINDING_DRIVER_MISSING, p->pid,
                           "no CUDA driver: %s%s; %s. Install the NVIDIA driver, or in a "
                           "container mount its libraries (libcuda.so.1) and devices.",
                           libcuda ? "the driver library loaded but reports no driver"
                                   : "libcuda.so.1 was never loaded",
                           where, seen);
    }
    struct driver_evidence *own = ct_finding_own(f, sizeof *own, driver_json);
    /* Too old, the driver is there: where it was looked for is missing's. */
    *own = (struct driver_evidence){too_old ? NULL : driver_failed, driver_failures,
                                    p->cuda.runtime_version, p->cuda.driver_version};
    if (libcuda)
        ct_finding_add_library(f, libcuda);
}

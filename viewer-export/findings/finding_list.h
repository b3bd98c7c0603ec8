/*
 * Every finding `cudatrace report` gives and every threshold its rules
 * read, declared once, as functions.h declares the hooked functions and
 * trace_names.h the trace's names. The rules add a finding by the constant
 * this list makes, the outputs name it by the list's id, `--threshold`
 * sets the fields the threshold list makes, `cudatrace report --help`
 * prints both lists, and tests/test_findings_declared.py holds each id to
 * a rule test, a healthy twin and its section of docs/findings.md, whose
 * heading is the id (the section's anchor: docs/findings.md#ID).
 *
 * X(NAME, id, family, severity, other, host_timing, about), one line a finding,
 * grouped by family, each family in the order ct_findings_compute runs its
 * rules:
 *   NAME         makes CT_FINDING_NAME, of enum ct_finding_id;
 *   id           the stable name the report, its JSON and the trace use;
 *   family       the rules it belongs to (enum ct_finding_family), each in
 *                its file of viewer-export/findings/;
 *   severity     what it is;
 *   other        the other severity some of its cases take (the rule says
 *                which with ct_finding_set_severity), or NONE;
 *   host_timing  1 where the rule judges how long the host took in this
 *                run, which another load on the machine makes and unmakes:
 *                `cudatrace diff` says such a finding but does not count it;
 *   about        what it says, in a line.
 *
 * T(name, finding, default, meaning), one line a threshold, in the order
 * `--threshold` describes them in a summary (which a summary made by an
 * earlier build must still match): each is a double field of struct
 * ct_thresholds, set by `--threshold name=VALUE`, and belongs to the
 * finding whose rule it decides (a few are read by another rule too, as
 * its meaning says).
 */
#ifndef CT_FINDING_LIST_H
#define CT_FINDING_LIST_H

#include <stdio.h>

#include "common/call_cost.h"

#define CT_FOR_EACH_FINDING_FAMILY(F)                                                              \
    F(LIBRARIES, "libraries")   /* library.c */                                                    \
    F(DRIVER, "driver")         /* driver.c */                                                     \
    F(USAGE, "usage")           /* usage.c */                                                      \
    F(CUPTI, "cupti")           /* cupti.c: the GPU's side of the trace itself */                  \
    F(GPU_HEALTH, "gpu-health") /* gpu_health.c: the GPU's own state from NVML */                  \
    F(HANG, "hang")             /* hang.c */                                                       \
    F(HOST, "host")             /* host.c: the host sampler's view */                              \
    F(STEPS, "steps")           /* steps.c */                                                      \
    F(GRAPHS, "graphs")         /* graphs.c: CUDA graphs */                                        \
    F(JOB, "job")               /* across.c: comparing the processes of one job */

#define CT_FOR_EACH_FINDING(X)                                                                     \
    X(DUPLICATE_LIBRARY, "duplicate-library", LIBRARIES, ERROR, NONE, 0,                           \
      "two files of one library family are mapped at once")                                        \
    X(LIBRARY_LOAD_FAILED, "library-load-failed", LIBRARIES, ERROR, NONE, 0,                       \
      "an object asked for a CUDA library and got it by no name it tried")                         \
    X(SHADOWED_LIBRARY, "shadowed-library", LIBRARIES, WARNING, NONE, 0,                           \
      "LD_LIBRARY_PATH or ld.so.conf beat the copy on the asking library's own RUNPATH")           \
    X(FALLBACK_RESOLUTION, "fallback-resolution", LIBRARIES, WARNING, ERROR, 0,                    \
      "a library its requester's RPATH/RUNPATH meant to provide was found elsewhere; an error "    \
      "when its version is not the one the requester's wheel pins")                                \
    X(VERSION_MISMATCH, "version-mismatch", LIBRARIES, ERROR, NONE, 0,                             \
      "libraries of one stack come from different releases")                                       \
    X(TOOLKIT_MISMATCH, "toolkit-mismatch", LIBRARIES, WARNING, NONE, 0,                           \
      "a runtime or cuDNN was found in another toolkit than the one CUDA_HOME names")              \
    X(NO_KERNEL_IMAGE, "no-kernel-image", LIBRARIES, ERROR, NONE, 0,                               \
      "a launch found no code for this GPU in its library")                                        \
    X(STUB_DRIVER, "stub-driver", DRIVER, ERROR, NONE, 0,                                          \
      "the driver library loaded is the toolkit's link-time stub")                                 \
    X(DRIVER_MISSING, "driver-missing", DRIVER, ERROR, NONE, 0, "there is no CUDA driver")         \
    X(DRIVER_TOO_OLD, "driver-too-old", DRIVER, ERROR, NONE, 0,                                    \
      "the driver supports an older CUDA than the runtime needs")                                  \
    X(OOM, "oom", USAGE, ERROR, NONE, 0, "a device allocation failed for lack of memory")          \
    X(LAUNCH_OVERHEAD, "launch-overhead", USAGE, WARNING, NONE, 0,                                 \
      "the host spends much of the run launching kernels")                                         \
    X(SYNC_STALL, "sync-stall", USAGE, WARNING, NONE, 0,                                           \
      "a thread waits on the GPU in synchronising calls for much of the run")                      \
    X(PAGEABLE_MEMCPY, "pageable-memcpy", USAGE, WARNING, NONE, 0,                                 \
      "async copies from host memory that is not pinned block the host")                           \
    X(SMALL_COPY_STORM, "small-copy-storm", USAGE, WARNING, NONE, 0,                               \
      "many small host-device copies a second")                                                    \
    X(MEMORY_GROWTH, "memory-growth", USAGE, WARNING, NONE, 0,                                     \
      "the low points of live device memory keep rising")                                          \
    X(SLOW_ALLOC, "slow-alloc", USAGE, WARNING, NONE, 0,                                           \
      "allocations or frees far slower than the process's median")                                 \
    X(GPU_IDLE, "gpu-idle", USAGE, WARNING, NONE, 0,                                               \
      "with GPU timings: the GPU has no work for much of the run")                                 \
    X(CUPTI_UNAVAILABLE, "cupti-unavailable", CUPTI, INFO, NONE, 0,                                \
      "there was a GPU but CUPTI could not be used: no GPU timings")                               \
    X(CUPTI_YIELDED, "cupti-yielded", CUPTI, INFO, NONE, 0,                                        \
      "the program took CUPTI over: GPU timings cover the run up to then")                         \
    X(CUPTI_DROPPED, "cupti-dropped", CUPTI, WARNING, NONE, 0,                                     \
      "CUPTI dropped activity records: GPU figures undercount")                                    \
    X(CUPTI_UNTIMED, "cupti-untimed", CUPTI, WARNING, NONE, 0,                                     \
      "CUPTI handed over GPU work that gives no time: GPU figures undercount")                     \
    X(POWER_CAPPED, "power-capped", GPU_HEALTH, WARNING, NONE, 0,                                  \
      "the software power cap held the GPU's clocks while it was busy")                            \
    X(THERMAL_THROTTLE, "thermal-throttle", GPU_HEALTH, WARNING, NONE, 0,                          \
      "heat slowed the GPU while it was busy")                                                     \
    X(CLOCKS_LOW, "clocks-low", GPU_HEALTH, WARNING, NONE, 0,                                      \
      "the busy GPU's SM clock ran well under its maximum, for another reason or none")            \
    X(PCIE_DOWNGRADED, "pcie-downgraded", GPU_HEALTH, WARNING, NONE, 0,                            \
      "the PCIe link ran below its best while copies ran")                                         \
    X(GPU_SHARED, "gpu-shared", GPU_HEALTH, WARNING, NONE, 0,                                      \
      "another process used the GPU during the run")                                               \
    X(COMPUTE_MODE, "compute-mode", GPU_HEALTH, INFO, ERROR, 0,                                    \
      "the GPU is in another compute mode than the default; an error when calls failed "           \
      "because of it")                                                                             \
    X(ECC_ERRORS, "ecc-errors", GPU_HEALTH, WARNING, NONE, 0, "the GPU counted ECC errors")        \
    X(HANG, "hang", HANG, ERROR, WARNING, 0,                                                       \
      "a thread was still inside a CUDA call at the end; a warning when the call a hang "          \
      "snapshot caught returned later")                                                            \
    X(INPUT_BOUND, "input-bound", HOST, WARNING, NONE, 1,                                          \
      "the thread that launches the GPU work waits for its input, or loads it itself")             \
    X(HOST_BOUND, "host-bound", HOST, WARNING, NONE, 1,                                            \
      "the launching thread's own work between CUDA calls keeps the GPU idle")                     \
    X(SLOW_STEPS, "slow-steps", STEPS, WARNING, NONE, 1,                                           \
      "some training steps took far longer than the median step")                                  \
    X(PERIODIC_SLOWDOWN, "periodic-slowdown", STEPS, WARNING, NONE, 1,                             \
      "slow steps recur at a steady period: something outside the loop on a timer")                \
    X(STEP_DRIFT, "step-drift", STEPS, WARNING, NONE, 1, "steps got slower over the run")          \
    X(CAPTURE_FAILED, "capture-failed", GRAPHS, ERROR, NONE, 0,                                    \
      "a CUDA graph capture ended in an error and made no graph")                                  \
    X(RE_CAPTURE, "re-capture", GRAPHS, WARNING, NONE, 0,                                          \
      "CUDA graphs were captured again and again at one line, each replayed a time or two")        \
    X(INCONSISTENT_LIBRARIES, "inconsistent-libraries", JOB, WARNING, NONE, 0,                     \
      "processes of one job loaded different files or versions of a library")                      \
    X(STRAGGLER, "straggler", JOB, WARNING, NONE, 1,                                               \
      "one process of a job waits in synchronising calls far longer than the others")              \
    X(INCONSISTENT_ENVIRONMENT, "inconsistent-environment", JOB, WARNING, NONE, 0,                 \
      "processes of one job ran with different values of a variable")                              \
    X(HANG_MISSING, "hang-missing", JOB, ERROR, NONE, 0,                                           \
      "a process not stuck at the end while most of its job was: the one they wait for")

#define CT_FOR_EACH_THRESHOLD(T)                                                                   \
    T(launch_share, LAUNCH_OVERHEAD, 0.15, "the least share of the run in kernel launch calls")    \
    T(launch_rate, LAUNCH_OVERHEAD, 1000, "the fewest launches a second")                          \
    T(sync_share, SYNC_STALL, 0.20,                                                                \
      "the least share of the run one thread waits in synchronising calls")                        \
    T(sync_calls, SYNC_STALL, 10, "the fewest synchronising calls that thread made")               \
    T(pageable_copies, PAGEABLE_MEMCPY, 10, "the fewest async copies from pageable memory")        \
    T(small_copy_bytes, SMALL_COPY_STORM, CT_SMALL_COPY_BYTES,                                     \
      "a host-device copy under this many bytes is small")                                         \
    T(small_copy_rate, SMALL_COPY_STORM, 100, "more small copies a second than this")              \
    T(small_copy_count, SMALL_COPY_STORM, 100, "the fewest small copies")                          \
    T(growth_bytes, MEMORY_GROWTH, 1 << 20, "the low points rose by this many bytes at least")     \
    T(growth_share, MEMORY_GROWTH, 0.05, "the least rise as a share of the peak")                  \
    T(slow_alloc_ns, SLOW_ALLOC, 1e6, "an allocation or free this long (ns) at least is slow")     \
    T(slow_alloc_factor, SLOW_ALLOC, 10, "a slow call takes this many times the median too")       \
    T(slow_alloc_calls, SLOW_ALLOC, 3, "the fewest slow calls")                                    \
    T(gpu_idle_share, GPU_IDLE, 0.5,                                                               \
      "the least share of the time judged with no GPU work (host-bound reads it too)")             \
    T(gpu_bound_share, SYNC_STALL, 0.8, "none when GPU timings show the GPU busy this share")      \
    T(power_cap_share, POWER_CAPPED, 0.2, "the least share of busy samples at the power cap")      \
    T(thermal_share, THERMAL_THROTTLE, 0.05, "the least share of busy samples slowed by heat")     \
    T(clocks_low_ratio, CLOCKS_LOW, 0.8,                                                           \
      "the median busy SM clock under this share of its maximum (periodic-slowdown compares "      \
      "the slow steps' clock by it too)")                                                          \
    T(pcie_low_share, PCIE_DOWNGRADED, 0.25,                                                       \
      "the least share of the samples with copies running on a slower link")                       \
    T(input_wait_share, INPUT_BOUND, 0.4,                                                          \
      "the least share of its time the launching thread sleeps outside CUDA calls")                \
    T(workers_busy_share, INPUT_BOUND, 0.7,                                                        \
      "workers busy (on a CPU or waiting for one) this share at least: CPU-bound")                 \
    T(workers_idle_share, INPUT_BOUND, 0.2, "workers busy this share at most: they wait on I/O")   \
    T(host_busy_share, HOST_BOUND, 0.5,                                                            \
      "the least share of its time the launching thread is on a CPU outside CUDA calls")           \
    T(hang_ns, HANG, 60e9, "a call still running this long (ns) at the end")                       \
    T(slow_step_factor, SLOW_STEPS, 1.5, "a step over this many times the median is slow")         \
    T(slow_step_lost_ns, SLOW_STEPS, 50e6,                                                         \
      "the least time (ns) the slow steps lose over the median")                                   \
    T(step_period_spread, PERIODIC_SLOWDOWN, 0.1,                                                  \
      "the slow steps' spacings within this share of their median")                                \
    T(step_drift, STEP_DRIFT, 0.2,                                                                 \
      "the last tenth's median step over the first tenth's by this share")                         \
    T(recapture_graphs, RE_CAPTURE, 3, "the fewest graphs captured at one line")                   \
    T(recapture_launches, RE_CAPTURE, 2, "the most launches of each of those graphs")

#define CT_FINDING_FAMILY_ENUM(NAME, text) CT_FINDING_FAMILY_##NAME,
enum ct_finding_family { CT_FOR_EACH_FINDING_FAMILY(CT_FINDING_FAMILY_ENUM) CT_FINDING_FAMILIES };
#undef CT_FINDING_FAMILY_ENUM

#define CT_FINDING_ENUM(NAME, id, family, severity, other, host_timing, about) CT_FINDING_##NAME,
enum ct_finding_id { CT_FOR_EACH_FINDING(CT_FINDING_ENUM) CT_FINDING_COUNT };
#undef CT_FINDING_ENUM

/* What a finding is, in order of concern: how the report orders them. */
enum ct_severity { CT_SEVERITY_ERROR, CT_SEVERITY_WARNING, CT_SEVERITY_INFO };

const char *ct_finding_name(enum ct_finding_id id);
/* The finding an id names (one read back from a summary); -1 for none. */
int ct_finding_parse(const char *name);
enum ct_finding_family ct_finding_family(enum ct_finding_id id);
enum ct_severity ct_finding_severity(enum ct_finding_id id);
/* Whether some of its cases take `severity`: its own or its `other`. */
int ct_finding_may_be(enum ct_finding_id id, enum ct_severity severity);
int ct_finding_host_timing(enum ct_finding_id id);
const char *ct_severity_name(enum ct_severity severity);
/* Parses a severity's name; -1 when it names none. */
int ct_severity_parse(const char *name);
/* Both lists as `cudatrace report --help` gives them. */
void ct_findings_help(FILE *out);

#endif

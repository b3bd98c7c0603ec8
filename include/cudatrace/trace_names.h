/*
 * The trace vocabulary: every name cudatrace puts into a Perfetto trace and
 * reads back out of one, declared once, as record.h declares the rings. The
 * collector writes them (and `cudatrace report --annotate` the findings
 * track's), the command reads them, and both sides use the constants this
 * list makes, so a name cannot change on one side alone. CT_TRACE_FORMAT
 * versions the list: the collector states it in the first event of every
 * trace, and the command refuses a trace of another format rather than
 * misread it. Renaming an entry's text is a new format.
 *
 * X(kind, id, text, type), one line a name; each makes
 * `static const char ct_<kind>_<id>[] = text;`:
 *   track  a track's name: NAMED or COUNTER; GPU tracks carry their device,
 *          context and stream as %u, and all begin with CT_GPU_TRACK_PREFIX;
 *   event  an event's name: INSTANT or SLICE, %s standing for a part that
 *          varies; call slices are named by functions.h, GPU kernels by the
 *          kernel and NVTX ranges by their message instead;
 *   key    a debug annotation's name, with the value types it is written
 *          with (UINT, INT, POINTER, STRING, DOUBLE; more than one where the
 *          key serves events of several kinds, such as "device");
 *   value  a string value of a key whose values are all declared here (its
 *          type names the key or keys). Other keys' values are data;
 *   frame  a callstack sample's frame name (TracePacket.perf_sample's
 *          interned frames), %s and %d standing for its parts: FRAME.
 * The findings track's events carry, besides their declared keys, the
 * numbers of the finding's evidence under the names docs/findings.md gives
 * them, as DOUBLE. tests/unit/trace_names_dump.c prints the list for the
 * tests, which hold every trace the suite writes to it and every entry to a
 * writer that uses it.
 */
#ifndef CUDATRACE_TRACE_NAMES_H
#define CUDATRACE_TRACE_NAMES_H

#define CT_TRACE_FORMAT 1

#define CT_GPU_TRACK_PREFIX "GPU "
/* Typed GPU records (CUDATRACE_GPU_RECORDS=typed): a GpuRenderStageEvent's
 * event_id is its host call's flow id, or has this bit for work no host
 * call names (Perfetto imports an event only with an id). */
#define CT_GPU_EVENT_UNLINKED (1ull << 63)

#define CT_FOR_EACH_TRACE_NAME(X)                                                                  \
    /* tracks of the process */                                                                    \
    X(track, device_memory, "CUDA device memory (live bytes)", COUNTER)                            \
    X(track, pinned_memory, "CUDA pinned host memory (live bytes)", COUNTER)                       \
    X(track, vmm_memory, "CUDA device memory, virtual-memory API (physical bytes)", COUNTER)       \
    X(track, pool_reserved, "CUDA memory pools reserved (bytes, as the runtime said when asked)",  \
      COUNTER)                                                                                     \
    X(track, launch_rate, "CUDA kernel launches per second", COUNTER)                              \
    X(track, dropped, "cudatrace dropped records", COUNTER)                                        \
    X(track, libraries, "CUDA libraries", NAMED)                                                   \
    X(track, gpu_stream, CT_GPU_TRACK_PREFIX "%u stream %u", NAMED)                                \
    X(track, gpu_context_syncs, CT_GPU_TRACK_PREFIX "context %u syncs", NAMED)                     \
    X(track, gpu_stream_syncs, CT_GPU_TRACK_PREFIX "context %u stream %u syncs", NAMED)            \
    X(track, gpu_memory, CT_GPU_TRACK_PREFIX "%u memory operations", NAMED)                        \
    X(track, cupti_overhead, "CUPTI overhead", NAMED)                                              \
    X(track, findings, "cudatrace findings", NAMED)                                                \
    X(track, steps, "cudatrace steps", NAMED)                                                      \
    X(track, trace_gap, "cudatrace trace gap", NAMED)                                              \
    X(track, capture_windows, "cudatrace capture windows", NAMED)                                  \
    X(track, graph_reserved,                                                                       \
      "CUDA graphs' memory reserved (bytes, as the runtime said when asked)", COUNTER)             \
    /* the GPU's own state from NVML (collector/gpu_state/), per device */                         \
    X(track, gpu_utilization, CT_GPU_TRACK_PREFIX "%u utilization (percent)", COUNTER)             \
    X(track, gpu_memory_utilization, CT_GPU_TRACK_PREFIX "%u memory utilization (percent)",        \
      COUNTER)                                                                                     \
    X(track, gpu_sm_clock, CT_GPU_TRACK_PREFIX "%u SM clock (MHz)", COUNTER)                       \
    X(track, gpu_memory_clock, CT_GPU_TRACK_PREFIX "%u memory clock (MHz)", COUNTER)               \
    X(track, gpu_power, CT_GPU_TRACK_PREFIX "%u power (mW)", COUNTER)                              \
    X(track, gpu_power_limit, CT_GPU_TRACK_PREFIX "%u enforced power limit (mW)", COUNTER)         \
    X(track, gpu_temperature, CT_GPU_TRACK_PREFIX "%u temperature (C)", COUNTER)                   \
    X(track, gpu_power_violation, CT_GPU_TRACK_PREFIX "%u power violation (ns)", COUNTER)          \
    X(track, gpu_thermal_violation, CT_GPU_TRACK_PREFIX "%u thermal violation (ns)", COUNTER)      \
    X(track, gpu_pcie_generation, CT_GPU_TRACK_PREFIX "%u PCIe generation", COUNTER)               \
    X(track, gpu_pcie_width, CT_GPU_TRACK_PREFIX "%u PCIe width", COUNTER)                         \
    X(track, gpu_pcie_replays, CT_GPU_TRACK_PREFIX "%u PCIe replays", COUNTER)                     \
    X(track, gpu_ecc_corrected, CT_GPU_TRACK_PREFIX "%u ECC corrected errors", COUNTER)            \
    X(track, gpu_ecc_uncorrected, CT_GPU_TRACK_PREFIX "%u ECC uncorrected errors", COUNTER)        \
    X(track, gpu_compute_mode, CT_GPU_TRACK_PREFIX "%u compute mode", COUNTER)                     \
    X(track, gpu_persistence, CT_GPU_TRACK_PREFIX "%u persistence mode", COUNTER)                  \
    X(track, gpu_memory_used, CT_GPU_TRACK_PREFIX "%u memory used (bytes)", COUNTER)               \
    X(track, gpu_clock_events, CT_GPU_TRACK_PREFIX "%u clock events", NAMED)                       \
    X(track, gpu_processes, CT_GPU_TRACK_PREFIX "%u processes", NAMED)                             \
    /* the host sampler's tracks (collector/host_sampling/): per thread and per worker */          \
    X(track, host_thread_state, "thread %u %s state", NAMED)                                       \
    X(track, host_thread_cpu, "thread %u %s CPU (percent)", COUNTER)                               \
    X(track, host_thread_runnable, "thread %u %s runnable (percent)", COUNTER)                     \
    X(track, host_worker_cpu, "worker %u %s CPU (percent)", COUNTER)                               \
    X(track, host_worker_runnable, "worker %u %s runnable (percent)", COUNTER)                     \
    /* the process track's instants */                                                             \
    X(event, trace_format, "cudatrace.trace", INSTANT)                                             \
    X(event, versions, "cuda.versions", INSTANT)                                                   \
    X(event, device, "cuda.device", INSTANT)                                                       \
    X(event, identity, "cudatrace.identity", INSTANT)                                              \
    X(event, environment, "cudatrace.environment", INSTANT)                                        \
    X(event, cupti, "cudatrace.cupti", INSTANT)                                                    \
    X(event, gpu_totals, "cudatrace.gpu", INSTANT)                                                 \
    X(event, gpu_unread, "cudatrace.gpu_unread", INSTANT)                                          \
    X(event, end, "cudatrace.end", INSTANT)                                                        \
    X(event, snapshot, "cudatrace.snapshot", INSTANT)                                              \
    X(event, nvml, "cudatrace.nvml", INSTANT)                                                      \
    X(event, nvml_device, "nvml.device", INSTANT)                                                  \
    /* the NVML tracks' events: a span of clock-event reasons, processes coming and going */       \
    X(event, clock_event, "clocks %s", SLICE)                                                      \
    X(event, gpu_process_start, "gpu.process.start", INSTANT)                                      \
    X(event, gpu_process_end, "gpu.process.end", INSTANT)                                          \
    /* the host sampler's: how it fared, each thread and worker as first seen, a state span */     \
    X(event, host, "cudatrace.host", INSTANT)                                                      \
    X(event, host_thread, "host.thread", INSTANT)                                                  \
    X(event, host_worker, "host.worker", INSTANT)                                                  \
    X(event, host_running, "running", SLICE)                                                       \
    X(event, host_runnable, "runnable", SLICE)                                                     \
    X(event, host_sleeping, "sleeping", SLICE)                                                     \
    X(event, host_uninterruptible, "uninterruptible", SLICE)                                       \
    X(event, host_other_state, "other state", SLICE)                                               \
    /* a Python stack sample's frame: FUNCTION (FILE:LINE), in a mapping whose path is FILE */     \
    X(frame, python, "%s (%s:%d)", FRAME)                                                          \
    /* a thread's totals, when it ended */                                                         \
    X(event, calls, "cudatrace.calls", INSTANT)                                                    \
    /* the libraries track's instants */                                                           \
    X(event, library, "cuda.library", INSTANT)                                                     \
    X(event, library_load, "cuda.library.load", INSTANT)                                           \
    X(event, library_failed, "cuda.library.failed", INSTANT)                                       \
    X(event, library_query, "cuda.library.query", INSTANT)                                         \
    X(event, library_unload, "cuda.library.unload", INSTANT)                                       \
    X(event, library_version, "cuda.library.version", INSTANT)                                     \
    X(event, library_inventory, "cuda.library.inventory", INSTANT)                                 \
    X(event, toolkit, "cuda.toolkit", INSTANT)                                                     \
    X(event, no_kernel_image, "cuda.no_kernel_image", INSTANT)                                     \
    /* the GPU tracks' events other than kernels */                                                \
    X(event, memcpy, "memcpy %s", SLICE)                                                           \
    X(event, memset, "memset", SLICE)                                                              \
    X(event, graph, "graph %u", SLICE) /* a whole graph launch, graph-level tracing */             \
    X(event, unnamed_kernel, "(unnamed kernel)", SLICE)                                            \
    X(event, sync_unknown, "unknown synchronization", SLICE)                                       \
    X(event, sync_event, "event synchronize", SLICE)                                               \
    X(event, sync_stream_wait, "stream wait event", SLICE)                                         \
    X(event, sync_stream, "stream synchronize", SLICE)                                             \
    X(event, sync_context, "context synchronize", SLICE)                                           \
    X(event, memory_allocation, "allocation", INSTANT)                                             \
    X(event, memory_release, "release", INSTANT)                                                   \
    X(event, cupti_overhead, "CUPTI overhead", SLICE)                                              \
    /* the middle a bounded trace dropped (collector/tracks/trace_gap.c) */                        \
    X(event, trace_gap, "trace gap: middle dropped", SLICE)                                        \
    /* what the usage findings read of the dropped middle (collector/tracks/usage_tally.c) */     \
    X(event, usage_tally, "cudatrace.usage", INSTANT)                                              \
    /* the dropped middle's blocks still live after it, and its live-bytes levels */              \
    X(event, gap_memory, "cudatrace.live_memory", INSTANT)                                         \
    /* the dropped middle's GPU work, as busy blocks (collector/tracks/gap_gpu.c) */               \
    X(event, gap_gpu, "cudatrace.gap_gpu", INSTANT)                                                \
    /* what the gap marker's packets had no room for, per part (trace_gap.c) */                    \
    X(event, gap_cut, "cudatrace.gap_cut", INSTANT)                                                \
    /* CUDATRACE_CAPTURE and its windows (collector/tracks/capture_windows.c) */                   \
    X(event, capture_setting, "capture setting", INSTANT)                                          \
    X(event, capture_window, "capture window", SLICE)                                              \
    /* an NVTX range pushed without a message */                                                   \
    X(event, unnamed_range, "(nvtx)", SLICE)                                                       \
    /* a finding on the findings track: its severity and id */                                     \
    X(event, finding, "%s %s", INSTANT)                                                            \
    /* a training step on the steps track (viewer-export/model/steps.h) */                         \
    X(event, step, "step %u", SLICE)                                                               \
    /* call slices (functions.h gives their layouts) */                                            \
    X(key, ptr, "ptr", POINTER)                                                                    \
    X(key, bytes, "bytes", UINT)                                                                   \
    X(key, stream, "stream", POINTER | UINT)                                                       \
    X(key, kind, "kind", STRING)                                                                   \
    X(key, src, "src", POINTER)                                                                    \
    X(key, value, "value", UINT | INT)                                                             \
    X(key, kernel, "kernel", STRING)                                                               \
    X(key, grid, "grid", STRING)                                                                   \
    X(key, block, "block", STRING)                                                                 \
    X(key, shared_mem, "shared_mem", UINT)                                                         \
    X(key, graph, "graph", POINTER)                                                                \
    X(key, event, "event", POINTER)                                                                \
    X(key, flags, "flags", UINT | INT)                                                             \
    X(key, result, "result", INT)                                                                  \
    X(key, error, "error", STRING)                                                                 \
    X(key, pool, "pool", POINTER)                                                                  \
    X(key, device, "device", INT | UINT)                                                           \
    X(key, count, "count", INT | UINT)                                                             \
    X(key, version, "version", INT | STRING)                                                       \
    X(key, attribute, "attribute", UINT)                                                           \
    X(key, free, "free", UINT)                                                                     \
    X(key, total, "total", UINT)                                                                   \
    X(key, handle, "handle", POINTER)                                                              \
    X(key, offset, "offset", UINT)                                                                 \
    X(key, end_event, "end_event", POINTER)                                                        \
    X(key, elapsed_ns, "elapsed_ns", INT)                                                          \
    X(key, site, "site", STRING)                                                                   \
    X(key, stack, "stack", STRING)                                                                 \
    X(key, seen_by, "seen_by", STRING)                                                             \
    X(key, in_flight, "in_flight", UINT)                                                           \
    /* cudatrace.snapshot (collector/snapshot/) */                                                 \
    X(key, trigger, "trigger", STRING)                                                             \
    X(key, since_ns, "since_ns", UINT)                                                             \
    X(key, hang_ns, "hang_ns", UINT)                                                               \
    /* cudatrace.calls */                                                                          \
    X(key, function, "function", STRING)                                                           \
    X(key, calls, "calls", UINT)                                                                   \
    X(key, errors, "errors", UINT)                                                                 \
    X(key, total_ns, "total_ns", UINT)                                                             \
    /* cudatrace.trace, cuda.versions, cuda.device, cudatrace.end */                               \
    X(key, format, "format", UINT)                                                                 \
    X(key, clock, "clock", STRING)                                                                 \
    X(key, runtime_version, "runtime_version", INT)                                                \
    X(key, driver_version, "driver_version", INT)                                                  \
    X(key, device_count, "device_count", INT)                                                      \
    X(key, name, "name", STRING)                                                                   \
    X(key, compute_capability, "compute_capability", STRING)                                       \
    X(key, collector_cpu_ns, "collector_cpu_ns", UINT)                                             \
    X(key, collector_max_rss_kb, "collector_max_rss_kb", UINT)                                     \
    X(key, dropped, "dropped", UINT)                                                               \
    X(key, memory_events_late, "memory_events_late", UINT)                                         \
    X(key, process_start_ns, "process_start_ns", UINT)                                             \
    X(key, exit, "exit", STRING)                                                                   \
    /* the gap of a bounded trace, and an NVTX range said again after it */                        \
    X(key, dropped_bytes, "dropped_bytes", UINT)                                                   \
    X(key, dropped_chunks, "dropped_chunks", UINT)                                                 \
    X(key, cost, "cost", UINT)                                                                     \
    X(key, peak_device_bytes, "peak_device_bytes", UINT)                                           \
    X(key, peak_allocated_bytes, "peak_allocated_bytes", UINT)                                     \
    X(key, peak_vmm_bytes, "peak_vmm_bytes", UINT)                                                 \
    X(key, blocks, "blocks", UINT)                                                                 \
    X(key, made_ns, "made_ns", UINT)                                                               \
    X(key, freed_ns, "freed_ns", UINT)                                                             \
    X(key, low_live_bytes, "low_live_bytes", UINT)                                                 \
    X(key, low_live_ns, "low_live_ns", UINT)                                                       \
    X(key, high_live_bytes, "high_live_bytes", UINT)                                               \
    X(key, high_live_ns, "high_live_ns", UINT)                                                     \
    X(key, continued, "continued", UINT)                                                           \
    X(key, part, "part", STRING)                                                                   \
    X(key, start_ns, "start_ns", UINT)                                                             \
    X(key, end_ns, "end_ns", UINT)                                                                 \
    X(key, busy_ns, "busy_ns", UINT)                                                               \
    X(key, packets, "packets", UINT)                                                               \
    /* capture windows */                                                                          \
    X(key, capture, "capture", STRING)                                                             \
    X(key, opened_by, "opened_by", STRING)                                                         \
    /* cudatrace.identity and cudatrace.environment */                                             \
    X(key, host, "host", STRING)                                                                   \
    X(key, rank, "rank", INT)                                                                      \
    X(key, local_rank, "local_rank", INT)                                                          \
    X(key, world_size, "world_size", INT)                                                          \
    X(key, job, "job", STRING)                                                                     \
    X(key, launcher, "launcher", STRING)                                                           \
    X(key, visible_devices, "visible_devices", STRING)                                             \
    X(key, variables, "variables", STRING)                                                         \
    /* GPU work */                                                                                 \
    X(key, gpu_kind, "gpu_kind", STRING)                                                           \
    X(key, registers, "registers", UINT)                                                           \
    X(key, static_smem, "static_smem", UINT)                                                       \
    X(key, dynamic_smem, "dynamic_smem", UINT)                                                     \
    X(key, correlation, "correlation", UINT)                                                       \
    X(key, mangled, "mangled", STRING)                                                             \
    X(key, copy_kind, "copy_kind", STRING)                                                         \
    X(key, src_kind, "src_kind", STRING)                                                           \
    X(key, dst_kind, "dst_kind", STRING)                                                           \
    X(key, bandwidth, "bandwidth_mb_per_s", UINT)                                                  \
    X(key, copies, "copies", UINT) /* a batch's copies that one record stands for */               \
    X(key, type, "type", UINT)                                                                     \
    X(key, address, "address", POINTER)                                                            \
    /* CUDA graphs: a call that captured or added a node, and the work a replay ran */             \
    X(key, graph_work, "graph_work", STRING)                                                       \
    X(key, graph_id, "graph_id", UINT)                                                             \
    X(key, graph_node_id, "graph_node_id", UINT)                                                   \
    X(key, capture_site, "capture_site", STRING)                                                   \
    /* cudatrace.cupti and cudatrace.gpu */                                                        \
    X(key, state, "state", STRING)                                                                 \
    X(key, library, "library", STRING)                                                             \
    X(key, reason, "reason", STRING)                                                               \
    X(key, cupti_version, "cupti_version", UINT)                                                   \
    X(key, cupti_result, "cupti_result", INT)                                                      \
    X(key, kernels, "kernels", UINT)                                                               \
    X(key, memcpys, "memcpys", UINT)                                                               \
    X(key, memsets, "memsets", UINT)                                                               \
    X(key, syncs, "syncs", UINT)                                                                   \
    X(key, memory_operations, "memory_operations", UINT)                                           \
    X(key, cupti_dropped, "cupti_dropped", UINT)                                                   \
    X(key, unmapped, "unmapped", UINT)                                                             \
    X(key, clock_samples, "clock_samples", UINT)                                                   \
    X(key, clock_reading_error_ns, "clock_reading_error_ns", UINT)                                 \
    X(key, clock_drift_ns, "clock_drift_ns", UINT)                                                 \
    X(key, delivery_median_ns, "delivery_median_ns", UINT)                                         \
    X(key, delivery_max_ns, "delivery_max_ns", UINT)                                               \
    /* cudatrace.gpu_unread: its totals so far */                                                  \
    X(key, incomplete, "incomplete", UINT)                                                         \
    X(key, untimed, "untimed", UINT)                                                               \
    /* cudatrace.nvml, nvml.device and the NVML tracks */                                          \
    X(key, nvml_index, "nvml_index", UINT)                                                         \
    X(key, uuid, "uuid", STRING)                                                                   \
    X(key, gpu_uuid, "gpu_uuid", STRING) /* a MIG instance's GPU */                                \
    X(key, pci_bus_id, "pci_bus_id", STRING)                                                       \
    X(key, nvml_driver, "nvml_driver", STRING)                                                     \
    X(key, interval_ms, "interval_ms", UINT)                                                       \
    X(key, sm_clock_max, "sm_clock_max_mhz", UINT)                                                 \
    X(key, memory_clock_max, "memory_clock_max_mhz", UINT)                                         \
    X(key, power_default_limit, "power_default_limit_mw", UINT)                                    \
    X(key, pcie_generation_max, "pcie_generation_max", UINT)                                       \
    X(key, pcie_width_max, "pcie_width_max", UINT)                                                 \
    X(key, reasons, "reasons", UINT)                                                               \
    X(key, pid, "pid", UINT)                                                                       \
    X(key, failed_calls, "failed_calls", UINT)                                                     \
    /* cudatrace.host, host.thread, host.worker and the state spans */                             \
    X(key, tid, "tid", UINT)                                                                       \
    X(key, state_track, "state_track", UINT)                                                       \
    X(key, cpu_track, "cpu_track", UINT)                                                           \
    X(key, runnable_track, "runnable_track", UINT)                                                 \
    X(key, wchan, "wchan", STRING)                                                                 \
    X(key, in_cuda, "in_cuda", UINT)                                                               \
    X(key, sample_hz, "sample_hz", UINT)                                                           \
    X(key, rounds, "rounds", UINT)                                                                 \
    X(key, thread_samples, "thread_samples", UINT)                                                 \
    X(key, worker_samples, "worker_samples", UINT)                                                 \
    X(key, untracked, "untracked", UINT)                                                           \
    X(key, sampler_cpu_ns, "sampler_cpu_ns", UINT)                                                 \
    X(key, python_stacks, "python_stacks", STRING)                                                 \
    X(key, python_stack_count, "python_stack_count", UINT)                                         \
    X(key, python_raced, "python_raced", UINT)                                                     \
    X(key, python_read_ns, "python_read_ns", UINT)                                                 \
    /* the libraries track */                                                                      \
    X(key, path, "path", STRING)                                                                   \
    X(key, realpath, "realpath", STRING)                                                           \
    X(key, family, "family", STRING)                                                               \
    X(key, soname, "soname", STRING)                                                               \
    X(key, build_id, "build_id", STRING)                                                           \
    X(key, version_from, "version_from", STRING)                                                   \
    X(key, size, "size", UINT)                                                                     \
    X(key, order, "order", UINT)                                                                   \
    X(key, built_for_cuda, "built_for_cuda", UINT)                                                 \
    X(key, requested_as, "requested_as", STRING)                                                   \
    X(key, requested_by, "requested_by", STRING)                                                   \
    X(key, requested_from, "requested_from", STRING)                                               \
    X(key, how, "how", STRING)                                                                     \
    X(key, requested_ns, "requested_ns", UINT)                                                     \
    X(key, attempts, "attempts", UINT)                                                             \
    X(key, searched, "searched", STRING)                                                           \
    X(key, missing, "missing", STRING)                                                             \
    X(key, other_majors, "other_majors", STRING)                                                   \
    X(key, rolled_back_by, "rolled_back_by", STRING)                                               \
    X(key, found_via, "found_via", STRING)                                                         \
    X(key, runpath_copy, "runpath_copy", STRING)                                                   \
    X(key, expected_dirs, "expected_dirs", STRING)                                                 \
    X(key, expected_version, "expected_version", STRING)                                           \
    X(key, expected_package, "expected_package", STRING)                                           \
    X(key, expected_by, "expected_by", STRING)                                                     \
    X(key, home, "home", STRING)                                                                   \
    X(key, root, "root", STRING)                                                                   \
    X(key, api_version, "api_version", UINT)                                                       \
    X(key, libraries, "libraries", STRING)                                                         \
    X(key, archs, "archs", STRING)                                                                 \
    /* NVTX ranges and marks */                                                                    \
    X(key, source, "source", STRING)                                                               \
    /* the findings track */                                                                       \
    X(key, id, "id", STRING)                                                                       \
    X(key, severity, "severity", STRING)                                                           \
    X(key, message, "message", STRING)                                                             \
    X(key, top_site, "top_site_%d", STRING)                                                        \
    /* the steps track */                                                                          \
    X(key, step, "step", UINT)                                                                     \
    X(key, gpu_busy_ns, "gpu_busy_ns", UINT)                                                       \
    X(key, sync_ns, "sync_ns", UINT)                                                               \
    X(key, in_cuda_ns, "in_cuda_ns", UINT)                                                         \
    X(key, slow, "slow", UINT)                                                                     \
    /* values */                                                                                   \
    X(value, clock_tsc, "tsc", clock)                                                              \
    X(value, clock_boottime, "boottime", clock)                                                    \
    X(value, exit_normal, "normal", exit)                                                          \
    X(value, exit_lost, "lost", exit)                                                              \
    X(value, gap_part_totals, "totals", part)                                                      \
    X(value, gap_part_gpu, "gpu", part)                                                            \
    X(value, gap_part_usage, "usage", part)                                                        \
    X(value, gap_part_live_memory, "live_memory", part)                                            \
    X(value, trigger_asked, "asked", trigger)                                                      \
    X(value, trigger_error, "error", trigger)                                                      \
    X(value, trigger_oom, "oom", trigger)                                                          \
    X(value, trigger_hang, "hang", trigger)                                                        \
    X(value, seen_by_cupti, "cupti", seen_by)                                                      \
    X(value, seen_by_audit, "audit", seen_by)                                                      \
    X(value, seen_by_preload, "preload", seen_by)                                                  \
    X(value, version_from_file_name, "file name", version_from)                                    \
    X(value, version_from_header, "cudnn_version.h", version_from)                                 \
    X(value, source_nvtx, "nvtx", source)                                                          \
    X(value, gpu_kind_kernel, "kernel", gpu_kind)                                                  \
    X(value, gpu_kind_memcpy, "memcpy", gpu_kind)                                                  \
    X(value, gpu_kind_memset, "memset", gpu_kind)                                                  \
    X(value, gpu_kind_sync, "sync", gpu_kind)                                                      \
    X(value, gpu_kind_graph, "graph", gpu_kind)                                                    \
    X(value, graph_work_captured, "captured", graph_work)                                          \
    X(value, graph_work_added, "added", graph_work)                                                \
    X(value, graph_work_building, "building", graph_work)                                          \
    X(value, graph_work_replayed, "replayed", graph_work)                                          \
    X(value, cupti_active, "active", state)                                                        \
    X(value, cupti_unavailable, "unavailable", state)                                              \
    X(value, cupti_no_gpu, "no_gpu", state)                                                        \
    X(value, cupti_yielded, "yielded", state)                                                      \
    X(value, nvml_sampling, "sampling", state)                                                     \
    X(value, nvml_off, "off", state)                                                               \
    X(value, nvml_absent, "absent", state)                                                         \
    X(value, nvml_failed, "failed", state)                                                         \
    X(value, nvml_lost, "lost", state)                                                             \
    X(value, nvml_unreadable, "unreadable", state)                                                 \
    X(value, nvml_denied, "denied", state)                                                         \
    X(value, nvml_stuck, "stuck", state)                                                           \
    X(value, host_sampling, "sampling", state)                                                     \
    X(value, host_off, "off", state)                                                               \
    X(value, host_unavailable, "unavailable", state)                                               \
    X(value, copy_host_to_host, "HostToHost", kind)                                                \
    X(value, copy_host_to_device, "HostToDevice", kind)                                            \
    X(value, copy_device_to_host, "DeviceToHost", kind)                                            \
    X(value, copy_device_to_device, "DeviceToDevice", kind)                                        \
    X(value, copy_default, "Default", kind)                                                        \
    X(value, copy_peer, "Peer", kind)                                                              \
    X(value, copy_unknown, "Unknown", kind)                                                        \
    X(value, gpu_copy_unknown, "unknown", copy_kind | src_kind | dst_kind)                         \
    X(value, gpu_copy_htod, "HtoD", copy_kind)                                                     \
    X(value, gpu_copy_dtoh, "DtoH", copy_kind)                                                     \
    X(value, gpu_copy_htoa, "HtoA", copy_kind)                                                     \
    X(value, gpu_copy_atoh, "AtoH", copy_kind)                                                     \
    X(value, gpu_copy_atoa, "AtoA", copy_kind)                                                     \
    X(value, gpu_copy_atod, "AtoD", copy_kind)                                                     \
    X(value, gpu_copy_dtoa, "DtoA", copy_kind)                                                     \
    X(value, gpu_copy_dtod, "DtoD", copy_kind)                                                     \
    X(value, gpu_copy_htoh, "HtoH", copy_kind)                                                     \
    X(value, gpu_copy_ptop, "PtoP", copy_kind)                                                     \
    X(value, memory_pageable, "pageable", src_kind | dst_kind)                                     \
    X(value, memory_pinned, "pinned", src_kind | dst_kind)                                         \
    X(value, memory_device, "device", src_kind | dst_kind)                                         \
    X(value, memory_array, "array", src_kind | dst_kind)                                           \
    X(value, memory_managed, "managed", src_kind | dst_kind)                                       \
    X(value, memory_device_static, "device_static", src_kind | dst_kind)                           \
    X(value, memory_managed_static, "managed_static", src_kind | dst_kind)                         \
    X(value, via_absolute, "absolute path", found_via)                                             \
    X(value, via_name, "name", found_via)                                                          \
    X(value, via_rpath, "DT_RPATH", found_via)                                                     \
    X(value, via_library_path, "LD_LIBRARY_PATH", found_via)                                       \
    X(value, via_runpath, "DT_RUNPATH", found_via)                                                 \
    X(value, via_cache, "ld.so.cache", found_via)                                                  \
    X(value, via_default, "default directories", found_via)                                        \
    X(value, via_already_loaded, "already loaded", found_via | how)                                \
    X(value, via_unknown, "unknown", found_via | how)                                              \
    X(value, how_dlopen, "dlopen", how)                                                            \
    X(value, how_needed, "needed", how)                                                            \
    X(value, how_start, "start", how)                                                              \
    X(value, how_inherited, "inherited", how)

#define CT_DECLARE_TRACE_NAME(kind, id, text, type) static const char ct_##kind##_##id[] = text;
CT_FOR_EACH_TRACE_NAME(CT_DECLARE_TRACE_NAME)
#undef CT_DECLARE_TRACE_NAME

#endif

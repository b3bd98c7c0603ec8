"""End-to-end tests of the tracer: build/libcudatrace.so preloaded into the built test programs.

This file owns what a traced run produces, checked against ground truth:

* the trace's slices, args, counters and instants against the CPU double's own statistics
  (CT_DOUBLE_STATS) or, where the double cannot know, against the program's documented counts;
* the tracer's behaviour around the program: the stderr summary line, CUDATRACE_* settings,
  output file naming, dropped records, the real (driverless) CUDA runtime, and processes that
  never call CUDA;
* the shape of the preload itself: its dynamic dependencies and exported symbols.

Every trace produced here is decoded and checked by perfetto_check.load(), which raises on any
broken import rule (the trace_run fixture does it for the traces it names; tests that choose
their own output name load theirs the same way).

Fixtures (trace_run, build_dir, hooked_functions) are in conftest.py, section "build fixtures".
"""

import collections
import os
import re
import stat
import subprocess
import sys

import pytest

import perfetto_check
import toolkit

DEVICE_COUNTER = "CUDA device memory (live bytes)"
PINNED_COUNTER = "CUDA pinned host memory (live bytes)"
LAUNCH_RATE_COUNTER = "CUDA kernel launches per second"
DROPPED_COUNTER = "cudatrace dropped records"
LAUNCH_BUCKETS_PER_SECOND = 10  # the launch rate is counted in 100 ms buckets

SUMMARY = re.compile(r"cudatrace: trace (.+): (\d+) calls recorded, (\d+) dropped, (\d+) bytes")
CUDA_ERROR_INSUFFICIENT_DRIVER = 35
CUDA_ERROR_MEMORY_ALLOCATION = 2
MIB = 1 << 20


# --------------------------------------------------------------------------
# Helpers


def summary(stderr):
    """(path, calls, dropped, bytes) from the one summary line the preload prints at exit."""
    found = [SUMMARY.fullmatch(line) for line in stderr.splitlines()]
    found = [m for m in found if m]
    assert len(found) == 1, f"expected one summary line on stderr, got:\n{stderr}"
    path, calls, dropped, size = found[0].groups()
    return path, int(calls), int(dropped), int(size)


def the_instant(trace, name):
    """The args of the one instant called `name`."""
    found = [i for i in trace.instants if i["name"] == name]
    assert len(found) == 1, f"{len(found)} {name!r} instants in the trace"
    return found[0]["args"]


def counter_values(trace, name):
    """The values of a counter track, in time order ([] when it has none)."""
    return [value for _, value in trace.counters.get(name, [])]


def slice_counts(trace):
    return collections.Counter(s["name"] for s in trace.slices)


def in_family(hooked, *families):
    return {name for name, family in hooked.items() if family in families}


def hooked_truth(truth, hooked, key="calls"):
    """{hooked function: truth[key] for it}; 0 for one the double does not export."""
    return {name: truth[key].get(name, 0) for name in hooked}


def assert_clean_end(trace, proc, dropped=0):
    """The closing instant and the summary line agree with the slices that are there."""
    end = the_instant(trace, "cudatrace.end")
    assert end["exit"] == "normal"
    assert end["calls"] == len(trace.slices)
    assert end["dropped"] == dropped
    path, calls, summary_dropped, size = summary(proc.stderr)
    assert path == str(proc.run_dir / "trace.pftrace.zst")
    assert (calls, summary_dropped) == (len(trace.slices), dropped)
    assert size == os.path.getsize(path)


# --------------------------------------------------------------------------
# 1. One slice per call, exactly


@pytest.mark.parametrize("program, args", [
    ("api_mix", [3]),
    ("api_mix", [5]),
    ("train_loop", [5]),
])
def test_every_hooked_call_is_one_slice(trace_run, program_truth, hooked_functions, program,
                                        args):
    proc, trace, _ = trace_run(program, *args)
    assert proc.returncode == 0, proc.stderr
    truth = program_truth(program, *args)

    counts = slice_counts(trace)
    errors = collections.Counter(s["name"] for s in trace.slices if s["args"]["result"] != 0)
    assert {n: counts[n] for n in hooked_functions} == hooked_truth(truth, hooked_functions)
    assert ({n: errors[n] for n in hooked_functions}
            == hooked_truth(truth, hooked_functions, "errors"))
    # Every function the program called that the tracer hooks shows, and nothing else does.
    assert set(counts) == {n for n, calls in hooked_truth(truth, hooked_functions).items()
                           if calls > 0}
    assert_clean_end(trace, proc)


def test_get_kernel_is_passed_through_untraced(trace_run, hooked_functions):
    proc, trace, truth = trace_run("api_mix", 3)
    assert proc.returncode == 0, proc.stderr
    assert truth["calls"]["__cudaGetKernel"] == 1
    assert "__cudaGetKernel" not in hooked_functions
    assert "__cudaGetKernel" not in slice_counts(trace)
    # ... yet what it taught the tracer names the launches made through its handle.
    by_handle = [s for s in trace.slices if s["name"].startswith("__cudaLaunchKernel")]
    assert len(by_handle) == 2 * 3
    assert {s["args"]["kernel"] for s in by_handle} == {"vector_add_kernel"}


# --------------------------------------------------------------------------
# 2. Bytes and the memory counters


@pytest.mark.parametrize("program, args", [
    ("api_mix", [3]),
    ("leak_loop", [20]),
])
def test_memory_counters_follow_the_allocations(trace_run, hooked_functions, program, args):
    # Single-threaded programs only: with several threads the collector sees the rings'
    # records in drain order, not in the order the allocations really interleaved.
    proc, trace, truth = trace_run(program, *args)
    assert proc.returncode == 0, proc.stderr

    device_allocs = in_family(hooked_functions, "CT_FAMILY_ALLOC_DEVICE")
    allocated = sum(s["args"]["bytes"] for s in trace.slices
                    if s["name"] in device_allocs and s["args"]["result"] == 0)
    assert allocated == truth["alloc_bytes"]

    device = counter_values(trace, DEVICE_COUNTER)
    assert device, "no device memory counter values"
    assert max(device) == truth["peak_device_bytes"]
    assert device[-1] == truth["final_device_bytes"]
    assert max(counter_values(trace, PINNED_COUNTER), default=0) == truth["peak_pinned_bytes"]


def test_leak_shows_as_live_bytes_at_exit(trace_run):
    # leak_loop's own arithmetic: S steps leak S*L, and peak at S*L + W.
    steps, leak, work = 20, 1 * MIB, 4 * MIB
    proc, trace, truth = trace_run("leak_loop", steps, leak, work)
    assert proc.returncode == 0, proc.stderr
    device = counter_values(trace, DEVICE_COUNTER)
    assert len(device) == 3 * steps  # two allocations and one free per step
    assert device[-1] == steps * leak == truth["final_device_bytes"]
    assert max(device) == steps * leak + work == truth["peak_device_bytes"]


# --------------------------------------------------------------------------
# 3. Launch arguments and the launch rate


def test_launch_slices_carry_kernel_and_dims(trace_run, hooked_functions):
    reps = 3
    proc, trace, truth = trace_run("api_mix", reps)
    assert proc.returncode == 0, proc.stderr

    kernel_launchers = in_family(hooked_functions, "CT_FAMILY_LAUNCH")
    graph_launchers = in_family(hooked_functions, "CT_FAMILY_GRAPH")
    launches = [s for s in trace.slices if s["name"] in kernel_launchers]
    graphs = [s for s in trace.slices if s["name"] in graph_launchers]
    assert len(launches) == truth["launches"] == 8 * reps
    for s in launches:
        assert s["args"]["kernel"] == "vector_add_kernel", s
        assert s["args"]["grid"] == "4x2x1", s
        assert s["args"]["block"] == "128x1x1", s
        assert "shared_mem" not in s["args"], s  # api_mix asks for none
        assert "stream" in s["args"], s
    assert len(graphs) == 2 * reps
    assert all(s["args"]["graph"] != 0 for s in graphs)

    # Per-second rates over 100 ms buckets: each value is a bucket's count of kernel launches
    # (graph launches are not kernel launches) times ten.
    rates = counter_values(trace, LAUNCH_RATE_COUNTER)
    assert all(v % LAUNCH_BUCKETS_PER_SECOND == 0 for v in rates), rates
    assert sum(rates) == LAUNCH_BUCKETS_PER_SECOND * len(launches)


# --------------------------------------------------------------------------
# 4. Threads


def test_each_thread_gets_its_own_track(trace_run, program_truth, hooked_functions):
    threads, per_thread = 8, 2000
    proc, trace, _ = trace_run("threads", threads, per_thread)
    assert proc.returncode == 0, proc.stderr
    truth = program_truth("threads", threads, per_thread)

    # threads.c: per worker one cudaMalloc, N launches, one cudaFree; main one synchronize.
    expected_total = threads * (per_thread + 2) + 1
    assert len(trace.slices) == sum(hooked_truth(truth, hooked_functions).values())
    assert len(trace.slices) == expected_total

    assert set(trace.processes) == {proc.pid}
    tracks = list(trace.threads.values())
    assert all(t["pid"] == proc.pid for t in tracks)
    tids = {t["tid"] for t in tracks}
    assert len(tracks) == len(tids) == threads + 1  # the workers and main
    assert proc.pid in tids  # main's tid is the pid

    assert all(s["pid"] == proc.pid and s["tid"] in tids for s in trace.slices)
    by_tid = collections.defaultdict(collections.Counter)
    for s in trace.slices:
        by_tid[s["tid"]][s["name"]] += 1
    assert by_tid.pop(proc.pid) == {"cudaDeviceSynchronize": 1}
    worker = {"cudaMalloc": 1, "cudaLaunchKernel": per_thread, "cudaFree": 1}
    assert list(by_tid.values()) == [worker] * threads

    rates = counter_values(trace, LAUNCH_RATE_COUNTER)
    assert sum(rates) == LAUNCH_BUCKETS_PER_SECOND * threads * per_thread
    assert_clean_end(trace, proc)


# --------------------------------------------------------------------------
# 5. Dropped records


def test_full_ring_drops_are_counted_exactly(trace_run, program_truth, hooked_functions):
    launches = 200000
    proc, trace, _ = trace_run("launch_loop", launches,
                               env={"CUDATRACE_RING_RECORDS": 64, "CUDATRACE_SPILL_MB": 0})
    assert proc.returncode == 0, proc.stderr
    issued = sum(hooked_truth(program_truth("launch_loop", launches), hooked_functions).values())
    assert issued == launches + 1  # launch_loop ends with one cudaDeviceSynchronize

    dropped = the_instant(trace, "cudatrace.end")["dropped"]
    assert dropped > 0
    assert set(slice_counts(trace)) <= {"cudaLaunchKernel", "cudaDeviceSynchronize"}
    assert len(trace.slices) + dropped == issued
    assert counter_values(trace, DROPPED_COUNTER)[-1] == dropped
    assert_clean_end(trace, proc, dropped=dropped)


TRAIN_LOOP_KERNELS = {"matmul_forward", "gelu_forward", "softmax_xent_loss", "matmul_backward",
                      "gelu_backward", "adamw_update"}


def test_drops_keep_accounting_and_kernel_names(trace_run, program_truth, hooked_functions):
    # train_loop launches six kernels. At 10 us a call the 64-record ring fills and is drained
    # many times over, so some kernels are first launched while it is full. Whatever is lost,
    # the calls that are recorded must still add up with the drops and carry their names.
    proc, trace, _ = trace_run("train_loop", 20, env={"CUDATRACE_RING_RECORDS": 64,
                                                      "CUDATRACE_SPILL_MB": 0,
                                                      "CT_DOUBLE_CALL_NS": 10000})
    assert proc.returncode == 0, proc.stderr
    issued = sum(hooked_truth(program_truth("train_loop", 20), hooked_functions).values())
    dropped = the_instant(trace, "cudatrace.end")["dropped"]
    assert dropped > 0
    assert len(trace.slices) + dropped == issued
    launches = [s for s in trace.slices if s["name"] == "cudaLaunchKernel"]
    assert launches
    unnamed = collections.Counter(s["args"]["kernel"] for s in launches
                                  if s["args"]["kernel"] not in TRAIN_LOOP_KERNELS)
    assert not unnamed, f"launches without their kernel's name: {dict(unnamed)}"
    assert_clean_end(trace, proc, dropped=dropped)


# --------------------------------------------------------------------------
# 6. The real runtime, without a driver


def real_runtime_version():
    """cudaRuntimeGetVersion of the libcudart.so.13 that ld.so.cache gives an untraced process."""
    code = ("import ctypes; v = ctypes.c_int(); "
            "r = ctypes.CDLL('libcudart.so.13').cudaRuntimeGetVersion(ctypes.byref(v)); "
            "print(r, v.value)")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert out[0] == "0", f"cudaRuntimeGetVersion failed: {out}"
    return int(out[1])


def test_real_runtime_without_driver(trace_run):
    toolkit.no_driver()
    plain, _, _ = trace_run("driverless", double=False, preload=False)
    traced, trace, _ = trace_run("driverless", double=False)

    assert plain.returncode == traced.returncode == 3  # driverless: some call failed
    assert traced.stdout == plain.stdout
    assert f"-> {CUDA_ERROR_INSUFFICIENT_DRIVER}\n" in plain.stdout  # it really was driverless
    assert os.listdir(plain.run_dir) == ["cwd"]  # the untraced run wrote no trace

    # Every call the program made, as it printed them ("name -> code"), and nothing else:
    # not the preload's own version and device queries. All of them failed.
    printed = [line.split(" -> ") for line in plain.stdout.splitlines() if " -> " in line]
    assert [(s["name"], s["args"]["result"]) for s in trace.slices] == [
        (name, int(code)) for name, code in printed]
    for s in trace.slices:
        assert s["args"]["result"] == CUDA_ERROR_INSUFFICIENT_DRIVER, s
        assert s["args"]["error"] == "cudaErrorInsufficientDriver", s
    assert trace.slices[3]["args"]["kernel"] == "probe_kernel"

    versions = the_instant(trace, "cuda.versions")
    runtime = real_runtime_version()
    assert runtime // 1000 == 13  # the programs link against libcudart.so.13
    assert versions["runtime_version"] == runtime
    assert versions["driver_version"] == 0
    assert versions["device_count"] <= 0  # no device could be counted
    assert not [i for i in trace.instants if i["name"] == "cuda.device"]
    assert_clean_end(trace, traced)


# --------------------------------------------------------------------------
# 7. Processes that never call CUDA


def test_non_cuda_processes_start_nothing(trace_run, tmp_path):
    marker = tmp_path / "collector-started"
    fake_collector = tmp_path / "fake-collector"
    fake_collector.write_text(f"#!/bin/sh\necho \"$$\" >> '{marker}'\n")
    fake_collector.chmod(0o755)
    env = {"CUDATRACE_OUTPUT": None, "CUDATRACE_COLLECTOR": fake_collector}

    # The control: a CUDA program does start the (fake) collector, so the marker works.
    control, _, _ = trace_run("api_mix", 1, env=env)
    assert control.returncode == 0, control.stderr
    assert marker.exists(), "a CUDA program did not start CUDATRACE_COLLECTOR"
    assert "tracing is off" in control.stderr
    marker.unlink()

    script = "echo hi; ls / >/dev/null; true"
    plain, _, _ = trace_run("/bin/sh", "-c", script, env=env, double=False, preload=False)
    traced, _, _ = trace_run("/bin/sh", "-c", script, env=env, double=False)
    assert (traced.returncode, traced.stdout) == (plain.returncode, plain.stdout) == (0, "hi\n")
    assert traced.stderr == ""
    assert os.listdir(traced.run_dir / "cwd") == []
    assert not marker.exists(), "the preload started a collector in a process without CUDA"


# --------------------------------------------------------------------------
# 8. Output file names


def test_default_output_name_is_per_pid_and_private(trace_run):
    proc, _, _ = trace_run("api_mix", 1, env={"CUDATRACE_OUTPUT": None})
    assert proc.returncode == 0, proc.stderr
    name = f"cudatrace-{proc.pid}.pftrace.zst"
    cwd = proc.run_dir / "cwd"
    assert os.listdir(cwd) == [name]
    assert stat.S_IMODE(os.stat(cwd / name).st_mode) == 0o600
    trace = perfetto_check.load(cwd / name)
    assert set(trace.processes) == {proc.pid}
    assert summary(proc.stderr)[0] == name  # relative, as the pattern was


def test_existing_trace_is_never_overwritten(trace_run, tmp_path):
    fixed = tmp_path / "fixed.pftrace.zst"
    first, _, _ = trace_run("api_mix", 1, env={"CUDATRACE_OUTPUT": fixed})
    second, _, _ = trace_run("api_mix", 1, env={"CUDATRACE_OUTPUT": fixed})
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr

    taken = fixed.with_name("fixed-1.pftrace.zst")  # the extension stays last
    assert sorted(p.name for p in tmp_path.glob("fixed*")) == sorted([fixed.name, taken.name])
    assert summary(first.stderr)[0] == str(fixed)
    assert summary(second.stderr)[0] == str(taken)
    assert set(perfetto_check.load(fixed).processes) == {first.pid}
    assert set(perfetto_check.load(taken).processes) == {second.pid}


# --------------------------------------------------------------------------
# 9. The preload's own shape


GLIBC_LIBRARIES = {"libc.so.6", "libdl.so.2", "libpthread.so.0", "libm.so.6", "librt.so.1",
                   "ld-linux-x86-64.so.2"}


def test_preload_depends_only_on_glibc(build_dir):
    dynamic = subprocess.run(["readelf", "-d", os.path.join(build_dir, "libcudatrace.so")],
                             capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    assert "libc.so.6" in needed
    assert needed <= GLIBC_LIBRARIES


def test_preload_exports_exactly_the_hooks(build_dir, hooked_functions):
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", os.path.join(build_dir, "libcudatrace.so")],
        capture_output=True, text=True, check=True).stdout
    exported = collections.Counter(line.split()[-1].split("@")[0]
                                   for line in symbols.splitlines() if line.strip())
    # Plus the two untraced hooks that teach kernel names: __cudaGetKernel
    # (handle -> host stub) and __cudaRegisterFunction (stub -> device name),
    # the loader view's dlopen trampoline and dlclose/dlerror wrappers, and the dlsym
    # trampoline that answers lookups in a runtime's handle with our hooks; NVTX's entry
    # point for its tool; and CUPTI's: the driver's injection entry point, its cuInit (where
    # CUPTI starts), and the three CUPTI calls by which a program's own profiler takes CUPTI over;
    # libc's five waits, whose waits for any child pass over the collector; getenv,
    # which answers NVTX's look-up of its tool; and _exit, where a `cudatrace run` top that
    # ends by it (and so runs no destructor) says that nothing touched CUDA.
    assert exported == collections.Counter([*hooked_functions, "__cudaGetKernel",
                                            "__cudaRegisterFunction", "dlopen", "dlclose",
                                            "dlerror", "dlsym", "InitializeInjectionNvtx2",
                                            "InitializeInjection", "cuptiSubscribe",
                                            "cuptiSubscribe_v2",
                                            "cuptiActivityRegisterCallbacks", "cuInit",
                                            "wait", "waitpid", "wait3", "wait4", "waitid",
                                            "getenv", "_exit"])


# --------------------------------------------------------------------------
# 10. Error codes


def test_failed_allocations_carry_code_and_name(trace_run):
    # With a 6 MiB device, leak_loop's step (4 MiB work buffer, 1 MiB leaked, work freed)
    # fits twice; from the third step on the leaked buffer no longer fits: 3 of 5 steps fail.
    steps, leak, work, limit = 5, 1 * MIB, 4 * MIB, 6 * MIB
    proc, trace, truth = trace_run("leak_loop", steps, leak, work,
                                   env={"CT_DOUBLE_MEM_LIMIT": limit})
    assert proc.returncode == 1  # leak_loop reports the failures
    assert truth["errors"]["cudaMalloc"] == 3
    assert sum(truth["errors"].values()) == 3

    failed = [s for s in trace.slices if s["args"]["result"] != 0]
    assert len(failed) == truth["errors"]["cudaMalloc"]
    for s in failed:
        assert s["name"] == "cudaMalloc", s
        assert s["args"]["result"] == CUDA_ERROR_MEMORY_ALLOCATION, s
        assert s["args"]["error"] == "cudaErrorMemoryAllocation", s
        assert s["args"]["bytes"] == leak, s
        assert s["args"]["ptr"] == 0, s
    assert all("error" not in s["args"] for s in trace.slices if s["args"]["result"] == 0)
    # Failed allocations add nothing to the live bytes.
    assert max(counter_values(trace, DEVICE_COUNTER)) == truth["peak_device_bytes"] == limit


# --------------------------------------------------------------------------
# 11. Durations


@pytest.mark.parametrize("clock", ["auto", "boottime"])
def test_sync_slices_last_as_long_as_the_wait(trace_run, clock):
    wait_ns = 20_000_000
    # The double sleeps wait_ns inside each sync call, so no slice may be shorter. The upper
    # bound allows 15 ms for scheduling: a loaded 2-core machine can be slow to wake a sleeper.
    tolerance_ns = 15_000_000
    steps = 5
    proc, trace, _ = trace_run("leak_loop", steps, env={"CT_DOUBLE_SYNC_NS": wait_ns,
                                                        "CUDATRACE_CLOCK": clock})
    assert proc.returncode == 0, proc.stderr
    syncs = [s for s in trace.slices if s["name"] == "cudaDeviceSynchronize"]
    assert len(syncs) == steps
    for s in syncs:
        assert wait_ns <= s["dur"] <= wait_ns + tolerance_ns, s


# --------------------------------------------------------------------------
# 12. What the preload says on stderr


def test_quiet_leaves_stderr_empty(trace_run, program_truth, hooked_functions):
    proc, trace, _ = trace_run("api_mix", 1, env={"CUDATRACE_QUIET": 1})
    assert proc.returncode == 0
    assert proc.stderr == ""
    truth = program_truth("api_mix", 1)
    assert len(trace.slices) == sum(hooked_truth(truth, hooked_functions).values())


def test_bad_ring_size_warns_once_and_still_traces(trace_run, program_truth, hooked_functions):
    proc, trace, _ = trace_run("api_mix", 1, env={"CUDATRACE_RING_RECORDS": "abc"})
    truth = program_truth("api_mix", 1)
    assert proc.returncode == 0
    lines = proc.stderr.splitlines()
    warnings = [line for line in lines if "CUDATRACE_RING_RECORDS" in line]
    assert len(warnings) == 1, proc.stderr
    assert warnings[0].startswith("cudatrace: ")
    assert len(lines) == 2, proc.stderr  # the warning and the summary line
    assert len(trace.slices) == sum(hooked_truth(truth, hooked_functions).values())
    assert_clean_end(trace, proc)


def test_one_sequence_and_track_per_thread(trace_run):
    """The thread whose first call starts the session (and records the CUDA
    versions from inside it) keeps one ring: one thread descriptor, on one
    sequence, per thread."""
    completed, trace, _ = trace_run("threads", 3, 10)
    assert completed.returncode == 0
    descriptors = [(p.trusted_packet_sequence_id, p.track_descriptor.thread.tid)
                   for p in trace.packets
                   if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread")]
    tids = [tid for _, tid in descriptors]
    assert len(tids) == len(set(tids)) == 4, descriptors


def test_the_collector_reports_its_own_peak_memory_not_the_programs(trace_run, build_dir):
    """A program that holds 256 MiB when its first CUDA call starts the collector: the
    collector's peak is its own. (posix_spawn's child shares the program's address space
    until it execs, and Linux carries getrusage's ru_maxrss across exec, so that figure
    was the program's 256 MiB and more.)"""
    runtime = os.path.join(build_dir, "double", "libcudart.so.13")
    script = ("import ctypes\n"
              "held = b'x' * (256 << 20)\n"
              f"rt = ctypes.CDLL({runtime!r})\n"
              "n = ctypes.c_int(0)\n"
              "print(rt.cudaGetDeviceCount(ctypes.byref(n)), len(held))\n")
    proc, trace, _ = trace_run(sys.executable, "-c", script)
    assert proc.returncode == 0 and proc.stdout == f"0 {256 << 20}\n", proc.stderr
    peak_kb = the_instant(trace, "cudatrace.end")["collector_max_rss_kb"]
    assert 0 < peak_kb < 64 * 1024, f"collector peak {peak_kb} KiB"

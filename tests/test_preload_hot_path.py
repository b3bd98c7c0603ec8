"""The preload's per-call path allocates nothing, takes no lock and makes no
system call (a full ring's spill makes one per 1 MiB segment it moves into).

Each property is shown the same way: run launch_loop under the preload with N
and with 100 N launches (every call recorded: the ring holds them all) and
compare what the process did. Whatever the tracer does per call would grow a
hundredfold; what it does once (start the session, spawn the collector) stays
put. Heap and lock calls are counted by tests/probe/call_counter.c, preloaded
ahead of the tracer; system calls by strace (the traced process only, not the
collector it spawns).
"""
import os
import re
import subprocess

import cudatrace_cmd

SMALL, LARGE = 1000, 100000
# Large enough that no record of the LARGE run is dropped.
RING_RECORDS = 262144


def probe_counts(trace_run, build_dir, launches):
    # The report counts the slices here: the Python schema check would take
    # seconds over the large trace, and other tests check these traces' schema.
    completed, _, _ = trace_run(
        "launch_loop", launches,
        env={"LD_PRELOAD": os.path.join(build_dir, "tests", "libcall_counter.so") + ":"
             + os.path.join(build_dir, "libcudatrace.so"),
             "CT_PROBE_OUT": "probe.txt", "CUDATRACE_RING_RECORDS": RING_RECORDS,
             "CUDATRACE_OUTPUT": "trace.pftrace.zst"})
    assert completed.returncode == 0, completed.stderr
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "cwd" / "trace.pftrace.zst")
    api = report["processes"][0]["api"]
    assert api["cudaLaunchKernel"]["calls"] == launches, \
        "every call must be recorded for the comparison to mean much"
    with open(completed.run_dir / "cwd" / "probe.txt") as f:
        return dict((name, int(count)) for name, count in (line.split() for line in f))


def test_per_call_path_allocates_and_locks_nothing(trace_run, build_dir):
    small = probe_counts(trace_run, build_dir, SMALL)
    large = probe_counts(trace_run, build_dir, LARGE)
    # The probe does see the tracer: starting the session allocates (the
    # collector's environment) and takes the session lock once.
    assert small["calloc"] + small["malloc"] >= 1
    assert small["pthread_mutex_lock"] >= 1
    assert large == small


def syscall_counts(build_dir, tmp_path, launches):
    out = tmp_path / f"strace.{launches}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDATRACE_", "CT_DOUBLE"))}
    env.update(LD_LIBRARY_PATH=os.path.join(build_dir, "double"),
               CUDATRACE_OUTPUT=str(tmp_path / f"trace.{launches}.pftrace.zst"),
               CUDATRACE_RING_RECORDS=str(RING_RECORDS), CUDATRACE_QUIET="1")
    # strace itself must not run under the preload: hand LD_PRELOAD to the
    # traced program only.
    cmd = ["strace", "-c", "-o", str(out), "-E",
           "LD_PRELOAD=" + os.path.join(build_dir, "libcudatrace.so"),
           os.path.join(build_dir, "tests", "launch_loop"), str(launches)]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=60)
    # "% time seconds usecs/call calls [errors] syscall" rows, then the total.
    rows = re.findall(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$",
                      out.read_text(), re.M)
    assert rows, out.read_text()
    return {name: int(calls) for calls, name in rows}


def test_per_call_path_makes_no_system_call(build_dir, tmp_path):
    small = syscall_counts(build_dir, tmp_path, SMALL)
    large = syscall_counts(build_dir, tmp_path, LARGE)
    assert small["total"] > 0
    # Only a full ring's spill path calls the kernel: one madvise that maps
    # each 1 MiB pool segment (16384 records) as the ring moves into it.
    spill_segments = -(-LARGE // 16384)
    assert 0 <= large.pop("madvise", 0) - small.pop("madvise", 0) <= spill_segments
    large.pop("total"), small.pop("total")
    assert large == small

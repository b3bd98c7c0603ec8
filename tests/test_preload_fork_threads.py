"""The tracer across process creation and thread lifetimes.

This file owns what happens to sessions, rings and trace files when a traced program

* creates processes: fork (the child's calls go to its own session and file, never to the
  parent's), fork without CUDA in the child (no file), fork+exec / posix_spawn / vfork+exec
  (the new program is traced on its own through the inherited LD_PRELOAD), and a double-fork
  daemon that outlives its parent (the parent's trace is finished without waiting for it);
* runs many threads: 64 at once (one track each, drops counted exactly when the ring is small),
  waves of short-lived threads that outnumber the rings (rings retired and reused, threads
  without a ring counted as dropped), and threads still calling CUDA while main returns.

Workloads: tests/programs/forker.c and tests/programs/thread_churn.c, plus threads.c and
launch_loop.c. Ground truth is the double's CT_DOUBLE_STATS where one process writes it, else
the counts each program prints (or, for threads still calling at exit, keeps in a file).
Multi-process runs use CUDATRACE_OUTPUT with %p and no CT_DOUBLE_STATS (every process of the run
would write that one file). Traces over ~20k events are read with `cudatrace report --json` (and
a plain protobuf parse for thread tracks) because perfetto_check.load, which checks every
smaller one here, is slow on them.

Fixtures (trace_run, build_dir, hooked_functions) are in conftest.py, section "build fixtures".
"""

import collections
import json
import os
import re
import struct
import time

import pytest

import cudatrace_cmd
import perfetto_check

LAUNCH = "cudaLaunchKernel"
SUMMARY = re.compile(r"cudatrace: trace (.+): (\d+) calls recorded, (\d+) dropped, (\d+) bytes")
FORKER_LINE = re.compile(r"forker: (\S+) pid=(\d+)(?: launches=(\d+))?")
CHURN_LINE = re.compile(r"thread_churn: (\d+) waves x (\d+) threads x (\d+) calls"
                        r" = (\d+) calls issued")
TRACE_NAME = "t-%p.pftrace.zst"


# --------------------------------------------------------------------------
# Helpers


def per_pid_env(build_dir, out_dir, **extra):
    """Environment for a run of several processes: one trace per pid in out_dir, the double's
    runtime but not its statistics file."""
    out_dir.mkdir()
    env = {"CUDATRACE_OUTPUT": out_dir / TRACE_NAME,
           "LD_LIBRARY_PATH": os.path.join(build_dir, "double")}
    env.update(extra)
    return env


def trace_path(out_dir, pid):
    return out_dir / TRACE_NAME.replace("%p", str(pid))


def report_and_process(build_dir, path):
    """`cudatrace report --json` of one trace: (report, its one process)."""
    rep = cudatrace_cmd.report(build_dir, path)
    assert len(rep["processes"]) == 1, rep["processes"]
    return rep, rep["processes"][0]


def api_calls(process):
    return {name: entry["calls"] for name, entry in process["api"].items()}


def assert_finished(rep, process, pid):
    """The trace is whole and its process exited normally."""
    assert rep["trace"]["tail"] == "complete"
    assert rep["trace"]["unclosed_slices"] == 0
    assert process["pid"] == pid
    assert process["exit"] == "normal"


def wait_until_finished(build_dir, path, timeout_s=20):
    """A detached process's trace: poll until its collector wrote the end, return the report."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            done = cudatrace_cmd.run(build_dir, "report", "--json", path, status=None)
            if done.returncode == 0:
                rep = json.loads(done.stdout)
                if (rep["trace"]["tail"] == "complete" and rep["processes"]
                        and rep["processes"][0]["exit"] != "unknown"):
                    return rep, rep["processes"][0]
        time.sleep(0.05)
    raise AssertionError(f"{path} was not finished within {timeout_s} s")


def running(pid):
    """pid is a live process (a zombie is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def summaries(stderr):
    """{trace path: (calls, dropped)} from the summary lines on stderr."""
    found = {}
    for line in stderr.splitlines():
        m = SUMMARY.fullmatch(line)
        if m:
            assert m.group(1) not in found, f"two summaries for {m.group(1)}:\n{stderr}"
            found[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return found


def forker_roles(stdout):
    """{role: (pid, launches or None)} from forker's lines."""
    roles = {}
    for line in stdout.splitlines():
        m = FORKER_LINE.fullmatch(line)
        if m:
            assert m.group(1) not in roles, stdout
            roles[m.group(1)] = (int(m.group(2)), int(m.group(3)) if m.group(3) else None)
    return roles


def the_end(trace):
    (end,) = [i["args"] for i in trace.instants if i["name"] == "cudatrace.end"]
    return end


def assert_only_process(trace, pid):
    """Every track and slice of the trace belongs to pid, and its only thread is pid's main."""
    assert set(trace.processes) == {pid}
    assert {(t["pid"], t["tid"]) for t in trace.threads.values()} == {(pid, pid)}
    assert all(s["pid"] == pid and s["tid"] == pid for s in trace.slices)


def thread_tracks(path):
    """[(pid, tid)] of every thread track described in a trace, without perfetto_check's full
    (slow) decode: big traces here need only this."""
    with open(path, "rb") as f:
        data = perfetto_check._decompress(f.read())
    tracks = []
    for p in perfetto_check.pb.Trace.FromString(data).packet:
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("thread"):
            tracks.append((p.track_descriptor.thread.pid, p.track_descriptor.thread.tid))
    return tracks


def issued(truth, hooked):
    """Calls the program made to hooked functions, by the double's count (of an untraced run:
    see conftest's program_truth)."""
    return sum(truth["calls"].get(name, 0) for name in hooked)


def run_fork(trace_run, build_dir, tmp_path, n, m, **extra_env):
    out = tmp_path / "traces"
    proc, _, _ = trace_run("forker", "fork", n, m, double=False,
                           env=per_pid_env(build_dir, out, **extra_env))
    assert proc.returncode == 0, proc.stderr
    roles = forker_roles(proc.stdout)
    assert roles["parent"] == (proc.pid, 2 * n)
    child, child_launches = roles["child"]
    assert child_launches == m and child != proc.pid
    return proc, out, child


# --------------------------------------------------------------------------
# 1. fork


def test_fork_child_traces_into_its_own_file(trace_run, build_dir, tmp_path):
    n, m = 300, 500
    proc, out, child = run_fork(trace_run, build_dir, tmp_path, n, m)
    parent_path, child_path = trace_path(out, proc.pid), trace_path(out, child)
    assert sorted(os.listdir(out)) == sorted([parent_path.name, child_path.name])

    for path, pid, launches in ((parent_path, proc.pid, 2 * n), (child_path, child, m)):
        rep, process = report_and_process(build_dir, path)
        assert_finished(rep, process, pid)
        assert api_calls(process) == {LAUNCH: launches}
        assert process["dropped_events"] == 0
        assert process["tracer"]["calls_recorded"] == launches
    # Each process printed its own summary, for its own file.
    assert summaries(proc.stderr) == {str(parent_path): (2 * n, 0), str(child_path): (m, 0)}

    parent, kid = perfetto_check.load(parent_path), perfetto_check.load(child_path)
    assert_only_process(parent, proc.pid)
    assert_only_process(kid, child)
    for trace in (parent, kid):
        assert {s["args"]["kernel"] for s in trace.slices} == {"forker_kernel"}
    # None of the child's calls is in the parent's trace, nor the reverse: the parent's first N
    # calls all end before the child's first begins, its last N begin after the child's last.
    assert (len(parent.slices), len(kid.slices)) == (2 * n, m)
    before, after = parent.slices[:n], parent.slices[n:]
    assert max(s["ts"] + s["dur"] for s in before) <= min(s["ts"] for s in kid.slices)
    assert max(s["ts"] + s["dur"] for s in kid.slices) <= min(s["ts"] for s in after)
    assert (the_end(parent)["calls"], the_end(kid)["calls"]) == (2 * n, m)


def test_fork_child_process_starts_at_the_fork(trace_run, build_dir, tmp_path):
    # 2 ms a call: the parent lives 100 ms before it forks, far more than clock error. The
    # child's process (its track, its wall time) cannot begin before the fork that made it.
    n, m, call_ns = 50, 5, 2_000_000
    proc, out, child = run_fork(trace_run, build_dir, tmp_path, n, m,
                                CT_DOUBLE_CALL_NS=call_ns)
    parent = perfetto_check.load(trace_path(out, proc.pid))
    kid = perfetto_check.load(trace_path(out, child))
    forked_after = max(s["ts"] + s["dur"] for s in parent.slices[:n])
    parent_start, child_start = (the_end(t)["process_start_ns"] for t in (parent, kid))
    assert parent_start <= forked_after - n * call_ns
    assert child_start >= forked_after, (
        f"the fork child's process starts {(forked_after - child_start) / 1e6:.1f} ms before the "
        f"fork (at the parent's start: {child_start == parent_start})")
    _, parent_report = report_and_process(build_dir, trace_path(out, proc.pid))
    _, child_report = report_and_process(build_dir, trace_path(out, child))
    assert child_report["wall_ns"] < parent_report["wall_ns"] - n * call_ns


def test_fork_child_without_cuda_leaves_no_trace(trace_run, build_dir, tmp_path):
    n = 300
    out = tmp_path / "traces"
    proc, _, _ = trace_run("forker", "fork-nocuda", n, double=False,
                           env=per_pid_env(build_dir, out))
    assert proc.returncode == 0, proc.stderr
    roles = forker_roles(proc.stdout)
    assert roles["parent"] == (proc.pid, 2 * n)
    child, _ = roles["nocuda-child"]
    assert os.listdir(out) == [trace_path(out, proc.pid).name]
    rep, process = report_and_process(build_dir, trace_path(out, proc.pid))
    assert_finished(rep, process, proc.pid)
    assert api_calls(process) == {LAUNCH: 2 * n}
    assert summaries(proc.stderr) == {str(trace_path(out, proc.pid)): (2 * n, 0)}
    assert_only_process(perfetto_check.load(trace_path(out, proc.pid)), proc.pid)
    assert child != proc.pid


# --------------------------------------------------------------------------
# 2. exec, posix_spawn, vfork


@pytest.mark.parametrize("mode, role", [("exec", "execed"), ("spawn", "spawned"),
                                        ("vfork", "vforked")])
def test_exec_child_gets_its_own_trace(trace_run, build_dir, tmp_path, mode, role):
    n, launches = 200, 500
    out = tmp_path / "traces"
    program = os.path.join(build_dir, "tests", "launch_loop")
    proc, _, _ = trace_run("forker", mode, n, program, launches, double=False,
                           env=per_pid_env(build_dir, out))
    assert proc.returncode == 0, proc.stderr
    roles = forker_roles(proc.stdout)
    assert roles["parent"] == (proc.pid, 2 * n)
    child, _ = roles[role]
    assert f"launch_loop: {launches} launches" in proc.stdout
    parent_path, child_path = trace_path(out, proc.pid), trace_path(out, child)
    assert sorted(os.listdir(out)) == sorted([parent_path.name, child_path.name])

    rep, process = report_and_process(build_dir, parent_path)
    assert_finished(rep, process, proc.pid)
    assert api_calls(process) == {LAUNCH: 2 * n}
    rep, process = report_and_process(build_dir, child_path)
    assert_finished(rep, process, child)
    assert process["cmdline"] == [program, str(launches)]
    assert api_calls(process) == {LAUNCH: launches, "cudaDeviceSynchronize": 1}
    assert summaries(proc.stderr) == {str(parent_path): (2 * n, 0),
                                      str(child_path): (launches + 1, 0)}
    assert_only_process(perfetto_check.load(parent_path), proc.pid)
    launched = perfetto_check.load(child_path)
    assert_only_process(launched, child)
    assert {s["args"]["kernel"] for s in launched.slices if s["name"] == LAUNCH} == {"empty_kernel"}


# --------------------------------------------------------------------------
# 3. A daemon that outlives its parent


def test_daemon_outlives_parent_with_its_own_trace(trace_run, build_dir, tmp_path):
    n, m, hold_ms = 200, 400, 1000
    out = tmp_path / "traces"
    proc, _, _ = trace_run("forker", "daemon", n, m, hold_ms, double=False,
                           env=per_pid_env(build_dir, out))
    assert proc.returncode == 0, proc.stderr
    roles = forker_roles(proc.stdout)
    assert roles["parent"] == (proc.pid, 2 * n)
    daemon, daemon_launches = roles["daemon"]
    assert daemon_launches == m
    parent_path, daemon_path = trace_path(out, proc.pid), trace_path(out, daemon)

    # The parent's trace was finished at its exit while the daemon, forked from it after its
    # session began, had not even made its first call (it holds hold_ms first): the daemon holds
    # nothing (such as the lifeline) that keeps the parent's collector, or the parent's exit
    # would have waited for the daemon's, and the daemon's trace would be there by now.
    assert summaries(proc.stderr) == {str(parent_path): (2 * n, 0)}
    assert not daemon_path.exists()
    assert running(daemon)
    rep, process = report_and_process(build_dir, parent_path)
    assert_finished(rep, process, proc.pid)
    assert api_calls(process) == {LAUNCH: 2 * n}

    rep, process = wait_until_finished(build_dir, daemon_path)
    assert_finished(rep, process, daemon)
    assert api_calls(process) == {LAUNCH: m}
    assert process["dropped_events"] == 0
    # The intermediate child made no call and left no file.
    assert sorted(os.listdir(out)) == sorted([parent_path.name, daemon_path.name])
    assert_only_process(perfetto_check.load(daemon_path), daemon)


# --------------------------------------------------------------------------
# 4. Many threads at once


@pytest.mark.parametrize("ring_records", [4096, 64])
def test_64_threads_account_for_every_call(trace_run, program_truth, build_dir, hooked_functions,
                                           tmp_path, ring_records):
    threads, per_thread = 64, 2000
    path = tmp_path / "threads.pftrace.zst"
    proc, _, _ = trace_run("threads", threads, per_thread,
                           env={"CUDATRACE_OUTPUT": path, "CUDATRACE_RING_RECORDS": ring_records,
                                "CUDATRACE_SPILL_MB": 0})  # full rings drop: what is counted
    assert proc.returncode == 0, proc.stderr
    truth = program_truth("threads", threads, per_thread)
    total = issued(truth, hooked_functions)
    assert total == threads * (per_thread + 2) + 1  # threads.c's own count

    rep, process = report_and_process(build_dir, path)
    assert_finished(rep, process, proc.pid)
    # The counts are the threads' own totals: exact, whatever the rings dropped.
    assert api_calls(process) == {name: truth["calls"][name] for name in hooked_functions
                                  if truth["calls"].get(name, 0)}
    recorded, dropped = process["tracer"]["calls_recorded"], process["dropped_events"]
    assert recorded + dropped == total
    assert sum(s["dropped_slices"] for s in process["api"].values()) == dropped
    assert summaries(proc.stderr) == {str(path): (recorded, dropped)}
    if ring_records >= per_thread + 2 + 64:
        # Room for every record a thread makes (and its strings): nothing can drop.
        assert dropped == 0
    else:
        # 2000 back-to-back calls into a 64-record ring outrun a collector that polls each ms;
        # each thread's own totals still say per_thread + 2 calls, main's one.
        assert dropped > 0
        per_tid = collections.Counter()
        for i in perfetto_check.load(path).instants:
            if i["name"] == "cudatrace.calls":
                per_tid[i["tid"]] += i["args"]["calls"]
        assert sorted(per_tid.values()) == [1] + [per_thread + 2] * threads
    # One track per worker and one for main (it calls cudaDeviceSynchronize).
    tracks = thread_tracks(path)
    assert len(tracks) == len(set(tracks)) == threads + 1
    assert {pid for pid, _ in tracks} == {proc.pid}
    assert (proc.pid, proc.pid) in tracks


# --------------------------------------------------------------------------
# 5. Waves of short-lived threads: rings retired and reused


@pytest.mark.parametrize("rings", [64, 8])
def test_thread_churn_accounts_for_every_call(trace_run, program_truth, build_dir,
                                              hooked_functions, tmp_path, rings):
    waves, threads, calls = 20, 20, 50
    path = tmp_path / "churn.pftrace.zst"
    proc, _, _ = trace_run("thread_churn", waves, threads, calls,
                           env={"CUDATRACE_OUTPUT": path, "CUDATRACE_RINGS": rings})
    assert proc.returncode == 0, proc.stderr
    truth = program_truth("thread_churn", waves, threads, calls)
    total = waves * threads * calls
    assert CHURN_LINE.search(proc.stdout).groups() == tuple(map(str, (waves, threads, calls,
                                                                      total)))
    assert issued(truth, hooked_functions) == truth["calls"][LAUNCH] == total

    rep, process = report_and_process(build_dir, path)
    assert_finished(rep, process, proc.pid)
    recorded = api_calls(process).get(LAUNCH, 0)
    assert set(api_calls(process)) <= {LAUNCH}
    dropped = process["dropped_events"]
    assert summaries(proc.stderr) == {str(path): (recorded, dropped)}
    # Within a wave no thread gives its ring back before all made every call, so at most
    # `rings` threads of a wave ever hold one and at least the rest drop all their calls.
    surplus = max(0, threads - rings)
    assert dropped >= waves * surplus * calls
    assert recorded + dropped == total
    tracks = thread_tracks(path)
    assert len(tracks) <= waves * min(threads, rings)
    assert {pid for pid, _ in tracks} <= {proc.pid}
    assert (proc.pid, proc.pid) not in tracks  # main makes no CUDA call


def test_reused_rings_give_every_thread_its_own_track(trace_run, build_dir, tmp_path):
    # 16 threads a wave against 64 rings, 20 ms between waves for the collector to free the
    # last wave's rings: a free ring always waits for every thread, so nothing drops, and
    # 320 threads over 64 rings means rings are reused many times over.
    waves, threads, calls, pause_ms, rings = 20, 16, 20, 20, 64
    proc, trace, truth = trace_run("thread_churn", waves, threads, calls, pause_ms,
                                   env={"CUDATRACE_RINGS": rings})
    assert proc.returncode == 0, proc.stderr
    total = waves * threads * calls
    assert truth["calls"][LAUNCH] == total
    assert the_end(trace)["dropped"] == 0
    assert the_end(trace)["calls"] == len(trace.slices) == total

    tracks = list(trace.threads.values())
    assert len(tracks) == waves * threads > rings
    assert len({t["tid"] for t in tracks}) == waves * threads
    assert all(t["pid"] == proc.pid and t["tid"] != proc.pid for t in tracks)
    per_track = collections.Counter((s["tid"], s["name"], s["args"]["kernel"])
                                    for s in trace.slices)
    assert set(per_track.values()) == {calls}
    assert {(tid, name, kernel) for tid, name, kernel in per_track} == {
        (t["tid"], LAUNCH, "churn_kernel") for t in tracks}


# --------------------------------------------------------------------------
# 6. Threads still calling while main returns


def test_exit_while_threads_are_calling(trace_run, build_dir, tmp_path):
    # 20 us a call keeps the trace small enough for the full check.
    threads, min_calls = 4, 200
    counts = tmp_path / "counts"
    proc, trace, _ = trace_run("thread_churn", "exit-while-busy", threads, min_calls, counts,
                               env={"CT_DOUBLE_CALL_NS": 20000})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"thread_churn: {threads} threads busy at exit\n"
    path = proc.run_dir / "trace.pftrace.zst"
    (summary,) = summaries(proc.stderr).items()
    assert summary[0] == str(path)
    assert "may be incomplete" not in proc.stderr

    rep, process = report_and_process(build_dir, path)
    assert_finished(rep, process, proc.pid)
    end = the_end(trace)
    assert end["exit"] == "normal"
    # Calls the threads were inside at exit may show as in-flight slices; the rest were
    # recorded, nothing dropped.
    completed = [s for s in trace.slices if not s["args"].get("in_flight")]
    assert end["calls"] == len(completed) == summary[1][0]
    assert end["dropped"] == summary[1][1] == 0
    tracks = {(t["pid"], t["tid"]) for t in trace.threads.values()}
    assert len(tracks) == threads
    assert all(pid == proc.pid != tid for pid, tid in tracks)  # main makes no CUDA call
    # Each thread's own count: every call it finished before main returned was recorded (the
    # process was whole then), and none it had not started; some made after may be missing.
    own = {tid: (started, at_exit)
           for tid, started, _, at_exit in struct.iter_unpack("<qQQQ", counts.read_bytes())}
    assert set(own) == {tid for _, tid in tracks}
    recorded = collections.Counter(s["tid"] for s in completed)
    in_flight = collections.Counter(s["tid"] for s in trace.slices if s["args"].get("in_flight"))
    for tid, (started, at_exit) in own.items():
        assert min_calls <= at_exit <= recorded[tid] <= recorded[tid] + in_flight[tid] <= started

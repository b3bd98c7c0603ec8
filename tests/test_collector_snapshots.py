"""Snapshots (collector/snapshot/; docs/configuration.md, CUDATRACE_SNAPSHOT_ON): the collector
copies the trace as it is, plus every running thread's state, to trace.snapshot-N.pftrace.zst beside it,
by itself on a hang (the default), an out-of-memory or a CUDA error (CUDATRACE_SNAPSHOT_ON),
while the program and the trace go on unchanged.

The hang: gpu_steps on the runtime double with the driver and CUPTI doubles, whose
synchronise blocks until a file the test makes exists (CT_DOUBLE_SYNC_BLOCK_FILE), and
whose CUPTI never delivers the first kernel's record (CT_DOUBLE_CUPTI_LOSE_KERNEL=1), as
a kernel that never completes leaves none. With CUDATRACE_HANG_S=1 a snapshot appears
while the program is blocked; it opens, and its `hang` finding names the sync, the
thread, the kernel, its stream and where it was launched. Released, the program ends
as it does untraced, and the final report says the hang snapshot and that the call
returned. The twin without the block takes no snapshot and has no hang.

The triggers: usage_patterns `failing` fails cudaSetDevice three times (one code) and a
2^62-byte cudaMalloc twice (out of memory): one snapshot per code, exactly, none by default
and none for the healthy twin; the cap and `none` hold; a bad value is said in one line and changes
nothing else. A snapshot of a bounded trace that has dropped its middle opens too.
"""
import glob
import os
import subprocess
import time

import pytest

import cudatrace_cmd
import perfetto_check
from trace_vocabulary import check as check_vocabulary

from test_preload_reliability import finished_report

HANG_S = 1
STEPS_MS = 50  # gpu_steps: 5 steps of a launch and a sync


def snapshots(run_dir, name="trace"):
    return sorted(glob.glob(os.path.join(run_dir, f"{name}.snapshot-*.pftrace.zst")))


def the_process(rep):
    assert len(rep["processes"]) == 1
    return rep["processes"][0]


def findings(rep, fid):
    return [f for f in rep["findings"] if f["id"] == fid]


def line_of(repo_root, text):
    with open(os.path.join(repo_root, "tests", "programs", "gpu_steps.c")) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    raise AssertionError(f"no {text} in gpu_steps.c")


def launch_line(repo_root):
    return line_of(repo_root, "cudaLaunchKernel((const void *)step_kernel")


def sync_site(repo_root):
    """Where gpu_steps.c's loop calls cudaDeviceSynchronize: the stuck call's own line."""
    return f"gpu_steps.c:{line_of(repo_root, 'cudaDeviceSynchronize();')} in main"


def steps_env(build_dir, run_dir, **extra):
    """gpu_steps traced with the driver and CUPTI doubles, nothing else of ours set."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k not in ("LD_PRELOAD",
                                                                        "LD_LIBRARY_PATH")}
    env.update({"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver",
                "CT_DOUBLE_DRIVER": "1", "CUDATRACE_SAMPLE_HZ": "0",
                "CUDATRACE_GPU_RECORDS": "tracks",  # GPU tracks' slices, which these tests read
                "CUDATRACE_OUTPUT": str(run_dir / "trace.pftrace.zst")})
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_steps(build_dir, env, preload=True, warm=0):
    if preload:
        env = dict(env, LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"))
    return subprocess.Popen([os.path.join(build_dir, "tests", "gpu_steps"), str(STEPS_MS), "0",
                             str(warm)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def snapshot_while_stuck(build_dir, tmp_path, env, warm=0):
    """Runs gpu_steps until its first sync has been stuck long enough for a hang snapshot;
    releases it and returns the snapshot's path, the program's Popen (ended) and its stdout and
    stderr."""
    release = tmp_path / "release"
    proc = run_steps(build_dir, dict(env, CT_DOUBLE_SYNC_BLOCK_FILE=str(release)), warm=warm)
    try:
        deadline = time.time() + 30
        while not snapshots(tmp_path) and time.time() < deadline:
            time.sleep(0.05)
        found = snapshots(tmp_path)
        assert proc.poll() is None, "the program ended while its sync was blocked"
    finally:
        release.touch()
        out, err = proc.communicate(timeout=60)
    assert found == [str(tmp_path / "trace.snapshot-1.pftrace.zst")], err
    return found[0], proc, out, err


def test_hang_snapshot_names_the_kernel_never_completed(build_dir, repo_root, tmp_path,
                                                       trace_vocabulary):
    env = steps_env(build_dir, tmp_path, CT_DOUBLE_CUPTI_LOSE_KERNEL=1, CUDATRACE_HANG_S=HANG_S)
    path, proc, out, _ = snapshot_while_stuck(build_dir, tmp_path, env)

    snap = perfetto_check.load(path, allow_unclosed=True)
    check_vocabulary(snap, trace_vocabulary)
    in_flight = [s for s in snap.slices if "in_flight" in s["args"]]
    assert [(s["name"], s["args"]["site"]) for s in in_flight] == [
        ("cudaDeviceSynchronize", sync_site(repo_root))]
    totals = {i["args"]["function"]: i["args"]["calls"] for i in snap.instants
              if i["name"] == "cudatrace.calls"}
    assert totals["cudaMalloc"] == 1 and totals["cudaLaunchKernel"] == 1

    rep = cudatrace_cmd.report(build_dir, path)
    p = the_process(rep)
    assert p["snapshot"]["trigger"] == "hang" and p["snapshot"]["function"] == \
        "cudaDeviceSynchronize"
    assert p["snapshot"]["tid"] == proc.pid and p["snapshot"]["hang_ns"] == HANG_S * 10**9
    [hang] = findings(rep, "hang")
    assert hang["severity"] == "error"
    site = f"gpu_steps.c:{launch_line(repo_root)}"
    assert f"thread {proc.pid} was inside cudaDeviceSynchronize for" in hang["message"]
    assert ("when this snapshot was taken, and it had not returned: the program was waiting, most "
            "often for GPU work that never completed (a kernel, or a collective another rank "
            f"never joined). It was called at {sync_site(repo_root)}. On the GPU,") in \
        hang["message"], hang["message"]
    assert hang["evidence"]["site"] == sync_site(repo_root)
    assert ("the default stream: 1 launched and not completed; the first, step_kernel, "
            f"launched at {site}") in hang["message"], hang["message"]
    e = hang["evidence"]
    assert e["unfinished_launches"] == 1 and e["unfinished_streams"] == 1
    assert e["tid"] == proc.pid and e["threshold_ns"] == HANG_S * 10**9
    assert e["inside_ns"] >= HANG_S * 10**9

    # Released, it runs as it does untraced, and the trace says what happened.
    plain = run_steps(build_dir, steps_env(build_dir, tmp_path / "plain"), preload=False)
    plain_out, _ = plain.communicate(timeout=60)
    assert (proc.returncode, out) == (plain.returncode, plain_out) == (0, "gpu_steps: 5 steps\n")
    main = perfetto_check.load(tmp_path / "trace.pftrace.zst")
    check_vocabulary(main, trace_vocabulary)
    assert not [s for s in main.slices if "in_flight" in s["args"]]
    names = [s["name"] for s in main.slices]
    assert (names.count("cudaLaunchKernel"), names.count("cudaDeviceSynchronize")) == (5, 5)
    rep = cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")
    p = the_process(rep)
    assert p["snapshot"] is None
    assert [(s["trigger"], s["path"]) for s in p["snapshots"]] == [("hang", path)]
    [resolved] = findings(rep, "hang")
    assert resolved["severity"] == "warning" and resolved["evidence"]["resolved"] == 1
    assert f"when the hang snapshot {path} was taken, and returned later" in \
        resolved["message"]
    assert snapshots(tmp_path) == [path]
    # A directory stands for its traces, not the snapshots taken of them.
    assert [q["pid"] for q in cudatrace_cmd.report(build_dir, tmp_path)["processes"]] == [proc.pid]


@pytest.mark.parametrize("incomplete, periodic", [("invalid", "full"), ("zero", "partial")])
def test_hang_snapshot_asks_cupti_for_the_work_completed_before_it(build_dir, repo_root, tmp_path,
                                                                   incomplete, periodic):
    """50 kernels on a stream of their own complete before the default stream's kernel that
    never does; they sit in a partly filled buffer, which CUPTI's periodic flush does not hand
    back and a default flush does not either while the stuck kernel's incomplete record shares
    it (cuptiActivityFlushAll, cuptiActivityFlushPeriod). The snapshot names exactly the one
    that never completed, whether CUPTI hands the incomplete record over as an invalid kind
    or with zero timestamps, and whether its worker returns partly filled buffers or not."""
    warm = 50
    env = steps_env(build_dir, tmp_path, CT_DOUBLE_CUPTI_LOSE_KERNEL=warm + 1,
                    CUDATRACE_HANG_S=HANG_S, CT_DOUBLE_CUPTI_INCOMPLETE=incomplete,
                    CT_DOUBLE_CUPTI_PERIODIC=periodic)
    path, _, out, err = snapshot_while_stuck(build_dir, tmp_path, env, warm=warm)
    assert out == "gpu_steps: 5 steps\n", err
    snap = perfetto_check.load(path, allow_unclosed=True)
    assert [s["name"] for s in snap.slices if s["args"].get("gpu_kind") == "kernel"] == \
        ["warm_kernel"] * warm
    [hang] = findings(the_process_report := cudatrace_cmd.report(build_dir, path), "hang")
    assert ("the default stream: 1 launched and not completed; the first, step_kernel, "
            f"launched at gpu_steps.c:{launch_line(repo_root)}") in hang["message"], \
        hang["message"]
    assert (hang["evidence"]["unfinished_launches"], hang["evidence"]["unfinished_streams"]) == \
        (1, 1)
    cupti = the_process(the_process_report)["cupti"]
    assert (cupti["incomplete"], cupti["untimed"]) == ((0, 1) if incomplete == "zero" else (1, 0))
    [untimed] = findings(the_process_report, "cupti-untimed")
    assert untimed["evidence"] == {"incomplete": cupti["incomplete"], "untimed": cupti["untimed"]}


def test_a_python_thread_stuck_in_a_call_is_named_by_its_line(build_dir, repo_root, tmp_path):
    """With the host sampler on, the stuck thread's Python stack is read from outside while it
    waits: the snapshot's hang names the line that made the call (the hooks take a call's site
    only as it returns). The twin, sampling off, names no line."""
    python = "/usr/bin/python3"
    script = os.path.join(repo_root, "tests", "python", "stuck_script.py")
    with open(script) as f:
        line = next(n for n, text in enumerate(f, 1) if "site: stuck" in text)
    for hz, named in ((100, True), (0, False)):
        run_dir = tmp_path / f"hz{hz}"
        run_dir.mkdir()
        release = run_dir / "release"
        env = steps_env(build_dir, run_dir, CT_DOUBLE_SYNC_BLOCK_FILE=release,
                        CUDATRACE_HANG_S=HANG_S, CUDATRACE_SAMPLE_HZ=hz,
                        LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"))
        env.pop("CT_DOUBLE_DRIVER")
        proc = subprocess.Popen([python, script], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 30
            while not snapshots(run_dir) and time.time() < deadline:
                time.sleep(0.05)
            found = snapshots(run_dir)
        finally:
            release.touch()
            out, err = proc.communicate(timeout=60)
        assert (proc.returncode, out) == (0, "done\n") and len(found) == 1, err
        [hang] = findings(cudatrace_cmd.report(build_dir, found[0]), "hang")
        said = f". It was called at {script}:{line} in step (its Python stack, as the host " \
            "sampler last read it)"
        assert (said in hang["message"]) == named, hang["message"]
        assert hang["evidence"].get("python_line") == (line if named else None)


def test_killed_while_stuck_the_trace_names_what_it_waited_for(build_dir, repo_root, tmp_path):
    """Its launcher kills the stuck program after the snapshot: the trace, ended by the
    collector, has the same hang error (CUDATRACE_HANG_S is the threshold there too)."""
    env = steps_env(build_dir, tmp_path, CT_DOUBLE_SYNC_BLOCK_FILE=tmp_path / "never",
                    CT_DOUBLE_CUPTI_LOSE_KERNEL=1, CUDATRACE_HANG_S=HANG_S)
    proc = run_steps(build_dir, env)
    deadline = time.time() + 30
    while not snapshots(tmp_path) and time.time() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -9 and len(snapshots(tmp_path)) == 1
    rep = finished_report(build_dir, tmp_path / "trace.pftrace.zst")
    p = the_process(rep)
    assert p["exit"] == "lost" and [(c["function"], c["site"]) for c in p["in_flight"]] == [
        ("cudaDeviceSynchronize", sync_site(repo_root))]
    [hang] = findings(rep, "hang")
    assert hang["severity"] == "error" and "when the trace ended" in hang["message"]
    assert f". It was called at {sync_site(repo_root)}. On the GPU," in hang["message"]
    assert "the default stream: 1 launched and not completed; the first, step_kernel" in \
        hang["message"]
    assert hang["evidence"]["threshold_ns"] == HANG_S * 10**9


def test_no_hang_no_snapshot(build_dir, tmp_path):
    env = steps_env(build_dir, tmp_path, CT_DOUBLE_CUPTI_LOSE_KERNEL=1, CUDATRACE_HANG_S=HANG_S)
    proc = run_steps(build_dir, env)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (0, "gpu_steps: 5 steps\n"), err
    rep = cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")
    assert snapshots(tmp_path) == []
    assert the_process(rep)["snapshots"] == [] and findings(rep, "hang") == []


def run_failing(trace_run, mode="failing", **env):
    proc, trace, _ = trace_run("usage_patterns", mode, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc, trace


def taken(build_dir, proc):
    """The snapshots the trace says were taken, as (trigger, function, result)."""
    rep = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")
    marks = the_process(rep)["snapshots"]
    assert [m["path"] for m in marks] == snapshots(proc.run_dir)
    return [(m["trigger"], m["function"], m.get("result")) for m in marks]


def test_one_snapshot_per_error_code(trace_run, build_dir, trace_vocabulary):
    proc, _ = run_failing(trace_run, CUDATRACE_SNAPSHOT_ON="error,oom")
    assert taken(build_dir, proc) == [("error", "cudaSetDevice", 101),
                                      ("oom", "cudaMalloc", 2)]
    for path in snapshots(proc.run_dir):
        check_vocabulary(perfetto_check.load(path), trace_vocabulary)
        snapshot = the_process(cudatrace_cmd.report(build_dir, path))["snapshot"]
        assert snapshot["trigger"] in ("error", "oom")


def test_oom_alone_and_the_default_takes_none(trace_run, build_dir):
    proc, _ = run_failing(trace_run, CUDATRACE_SNAPSHOT_ON="oom")
    assert taken(build_dir, proc) == [("oom", "cudaMalloc", 2)]
    proc, _ = run_failing(trace_run)  # hang alone
    assert taken(build_dir, proc) == []


def test_triggers_off_and_capped(trace_run, build_dir):
    proc, _ = run_failing(trace_run, CUDATRACE_SNAPSHOT_ON="none")
    assert taken(build_dir, proc) == []
    proc, _ = run_failing(trace_run, CUDATRACE_SNAPSHOT_ON="error,oom", CUDATRACE_SNAPSHOT_MAX=1)
    assert taken(build_dir, proc) == [("error", "cudaSetDevice", 101)]


def test_healthy_twin_takes_no_snapshot(trace_run, build_dir):
    proc, _ = run_failing(trace_run, "steady", CUDATRACE_SNAPSHOT_ON="error,oom,hang")
    assert taken(build_dir, proc) == []


def test_bad_values_are_said_once_and_change_nothing(trace_run, build_dir):
    proc, _ = run_failing(trace_run, CUDATRACE_SNAPSHOT_ON="errors", CUDATRACE_HANG_S="soon",
                          CUDATRACE_SNAPSHOT_MAX="-1")
    said = [line for line in proc.stderr.splitlines() if "ignoring CUDATRACE_" in line]
    assert said == [
        "cudatrace: ignoring CUDATRACE_SNAPSHOT_ON=errors: expected none or a list of error, "
        "oom and hang",
        "cudatrace: ignoring CUDATRACE_HANG_S=soon: expected a whole number from 1 to 86400",
        "cudatrace: ignoring CUDATRACE_SNAPSHOT_MAX=-1: expected a whole number from 0 to 1000"]
    assert taken(build_dir, proc) == []  # the defaults: hang alone


def test_snapshot_of_a_bounded_trace_opens(trace_run, build_dir, trace_vocabulary):
    """api_mix's last call fails out of memory, after its middle was dropped."""
    proc, _, _ = trace_run("api_mix", 5000,
                           env={"CUDATRACE_MAX_MB": 1, "CUDATRACE_SNAPSHOT_ON": "oom"})
    assert proc.returncode == 0, proc.stderr
    [path] = snapshots(proc.run_dir)
    snap = perfetto_check.load(path)
    check_vocabulary(snap, trace_vocabulary)
    p = the_process(cudatrace_cmd.report(build_dir, path))
    assert p["gap"]["dropped_chunks"] > 0
    assert p["snapshot"]["trigger"] == "oom"
    assert [f for f in cudatrace_cmd.report(build_dir, path)["findings"] if f["id"] == "oom"]

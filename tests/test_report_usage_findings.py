"""The usage findings name the cause, the cost and the line of code.

Each workload of tests/programs/usage_patterns.c misuses CUDA in one known way
(its cost set by the double's knobs) and must get exactly that finding, with
its numbers and the file:line of the call that carries the cost; each has a
healthy twin that must get none. The Python cases reach the runtime through
ctypes and through a C extension that releases the GIL, under every CPython
the machine has, so the Python call sites are real frames read without the
GIL.
"""
import os
import re
import subprocess

import pytest

import cudatrace_cmd
import toolkit
from test_preload_python_frames import INTERPRETERS, interpreter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATTERNS = os.path.join(REPO, "tests", "programs", "usage_patterns.c")
SCRIPT = os.path.join(REPO, "tests", "python", "usage_script.py")
EXTENSION = os.path.join(REPO, "tests", "python", "cuext.c")
MIB = 1 << 20


def site_line(source, tag):
    """The line of `source` whose comment says `site: tag`."""
    with open(source) as f:
        found = [n for n, text in enumerate(f, 1) if re.search(rf"site: {re.escape(tag)}\b", text)]
    assert len(found) == 1, (source, tag, found)
    return found[0]


def site(tag, function):
    return f"usage_patterns.c:{site_line(PATTERNS, tag)} in {function}"


# Options that keep slow-alloc silent, for tests of other findings whose allocations a
# loaded machine may stall.
NOT_SLOW_ALLOC = ("--threshold", "slow_alloc_calls=1000000000")
# And slow-steps, where a loaded machine preempts the host work of some steps for a
# scheduler's time slice: slow steps truly, but the business of slow-steps' own tests.
NOT_SLOW = NOT_SLOW_ALLOC + ("--threshold", "slow_step_lost_ns=1e12")


def findings_of(build_dir, proc, *options):
    assert proc.returncode == 0, proc.stderr
    return cudatrace_cmd.report(build_dir, *options, proc.run_dir / "trace.pftrace.zst")["findings"]


def only(findings, finding_id):
    assert [f["id"] for f in findings] == [finding_id], [f["message"] for f in findings]
    return findings[0]


def run_patterns(trace_run, mode, n=None, **knobs):
    args = [mode] if n is None else [mode, n]
    proc, trace, truth = trace_run("usage_patterns", *args, env=knobs)
    assert proc.returncode == 0, proc.stderr
    return proc, trace, truth


# --------------------------------------------------------------------------
# One workload per finding, and its healthy twin


def test_launch_overhead(trace_run, build_dir):
    proc, _, truth = run_patterns(trace_run, "launch-bound", 20000, CT_DOUBLE_LAUNCH_NS=5000)
    f = only(findings_of(build_dir, proc), "launch-overhead")
    e = f["evidence"]
    assert e["launches"] == truth["calls"]["cudaLaunchKernel"] == 20000
    assert 5000 <= e["mean_launch_ns"] < 15000
    assert e["share_of_wall"] > 0.5 and e["launches_per_s"] > 1000
    # At most one launch per millisecond per thread carries its site (CUDATRACE_LAUNCH_SITE_US):
    # about 100 in the 100 ms of 20000 launches at 5 us, far fewer under a loaded machine's
    # preemption, never more than the run's milliseconds allow.
    sampled = e["sampled_launch_sites"]
    run_ms = e["launches"] / e["launches_per_s"] * 1000
    assert 10 <= sampled <= run_ms + 1, (sampled, run_ms)
    assert [(s["site"], s["calls"], s["share"]) for s in e["sites"]] == [
        (site("launch", "launch_once"), sampled, 1.0)]
    assert f"{e['launches']:.0f} kernel launch calls" in f["message"]


def test_call_sites_can_be_turned_off(trace_run, build_dir):
    proc, trace, _ = run_patterns(trace_run, "launch-bound", 2000, CT_DOUBLE_LAUNCH_NS=5000,
                                  CUDATRACE_LAUNCH_SITE_US=0)
    assert not [s for s in trace.slices if s["name"] == "cudaLaunchKernel" and "site" in s["args"]]
    f = only(findings_of(build_dir, proc), "launch-overhead")
    assert f["evidence"]["sampled_launch_sites"] == 0 and "sites" not in f["evidence"]
    proc, trace, _ = run_patterns(trace_run, "sync-storm", 5, CT_DOUBLE_SYNC_NS=1000000,
                                  CUDATRACE_CALL_SITES=0)
    assert trace.slices and not [s for s in trace.slices if "site" in s["args"]]
    f = only(findings_of(build_dir, proc), "sync-stall")
    assert "top: no call site recorded" in f["message"] and "sites" not in f["evidence"]


def test_capturing_a_site_leaves_errno_as_it_was(trace_run):
    traced, trace, _ = run_patterns(trace_run, "errno")
    plain, _, _ = trace_run("usage_patterns", "errno", preload=False)
    assert traced.stdout == plain.stdout and plain.returncode == 0
    assert "sync 4242\n" in plain.stdout
    # ... and the sites were taken: every one of those calls carries one.
    assert [s["name"] for s in trace.slices if "site" in s["args"]] == [
        "cudaDeviceSynchronize", "cudaMalloc", "cudaFree", "cudaSetDevice"]


def test_healthy_twin_few_launches_between_work(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "launch-light", 50, CT_DOUBLE_LAUNCH_NS=5000)
    assert findings_of(build_dir, proc) == []


def test_sync_stall(trace_run, build_dir):
    proc, _, truth = run_patterns(trace_run, "sync-storm", 20, CT_DOUBLE_SYNC_NS=1000000)
    f = only(findings_of(build_dir, proc), "sync-stall")
    e = f["evidence"]
    assert e["sync_calls"] == truth["calls"]["cudaDeviceSynchronize"] == 200
    assert e["sync_ns"] >= 200 * 1000000 and e["share_of_wall"] > 0.8
    (top,) = e["sites"]
    assert (top["site"], top["calls"], top["share"]) == (
        site("sync-layer", "sync_every_layer"), 200, 1.0)
    assert f"top: {top['site']}" in f["message"]


def test_sync_stall_is_a_share_of_one_thread(trace_run, build_dir):
    """Four threads wait on the GPU at once: 400% of the run summed, but each thread waited
    about all of it; the finding names one thread and its own figures."""
    proc, trace, _ = run_patterns(trace_run, "sync-threads", 4, CT_DOUBLE_SYNC_NS=1000000)
    f = only(findings_of(build_dir, proc), "sync-stall")
    e = f["evidence"]
    workers = {s["tid"] for s in trace.slices if s["name"] == "cudaStreamSynchronize"}
    assert len(workers) == 4 and proc.pid not in workers
    assert e["tid"] in workers and e["sync_calls"] == 30
    assert 0.3 < e["share_of_wall"] <= 1.0
    assert f["message"].startswith(f"thread {e['tid']:.0f} waits on the GPU ")


def test_healthy_twin_one_sync_per_step_of_work(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "sync-per-step", 10, CT_DOUBLE_SYNC_NS=200000)
    assert findings_of(build_dir, proc) == []


def test_pageable_memcpy(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "pageable", 40)
    f = only(findings_of(build_dir, proc), "pageable-memcpy")
    e = f["evidence"]
    # 40 copies in of 256 KiB and 20 out of 252 KiB through malloc'ed memory; the 80 through
    # cudaMallocHost'ed and cudaHostRegister'ed memory do not count.
    assert (e["copies"], e["bytes"]) == (60, 40 * (256 << 10) + 20 * ((256 << 10) - 4096))
    assert [(s["site"], s["calls"]) for s in e["sites"]] == [
        (site("copy-in", "copy_in"), 40), (site("copy-out", "copy_out"), 20)]


def test_healthy_twin_pinned_copies(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "pinned", 40)
    assert findings_of(build_dir, proc) == []


def test_small_copy_storm(trace_run, build_dir):
    proc, _, truth = run_patterns(trace_run, "small-copies", 500)
    f = only(findings_of(build_dir, proc), "small-copy-storm")
    e = f["evidence"]
    assert (e["copies"], e["bytes"]) == (500, 500 * 4) and truth["calls"]["cudaMemcpy"] == 500
    assert e["copies_per_s"] > 100
    assert [(s["site"], s["calls"]) for s in e["sites"]] == [(site("scalar", "read_scalar"), 500)]


def test_healthy_twin_few_large_copies(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "big-copies", 20)
    assert findings_of(build_dir, proc) == []


def test_memory_growth(trace_run, build_dir):
    # 200 steps of 0.5 ms: long enough that a scheduling stall on a loaded machine (the
    # sanitizer runs) cannot flatten two of the eight periods the finding compares.
    steps = 200
    proc, _, truth = run_patterns(trace_run, "growth", steps)
    # A loaded machine stalls some of the 400 allocations past a millisecond, and some steps
    # by a time slice: slow-alloc's and slow-steps' business (their own tests), not this one's.
    f = only(findings_of(build_dir, proc, *NOT_SLOW), "memory-growth")
    e = f["evidence"]
    assert truth["final_device_bytes"] == 8 * MIB + steps * (64 << 10)
    # The low points start at the pool and end near pool + every leaked block (where the
    # periods fall among the steps depends on the machine's timing).
    assert 8 * MIB <= e["low_first_bytes"] < 8 * MIB + steps // 2 * (64 << 10)
    assert e["low_last_bytes"] - e["low_first_bytes"] >= MIB
    assert e["low_last_bytes"] <= truth["final_device_bytes"]
    (top,) = e["sites"]  # the leaked blocks made after the first period; not the pool
    assert top["site"] == site("leak", "keep_for_later")
    assert 0.4 * steps <= top["calls"] <= steps and top["bytes"] == top["calls"] * (64 << 10)


def test_fast_leak(trace_run, build_dir):
    """The issue's case: 50 allocations of 10 MiB never freed, in a loop that takes a few
    milliseconds of a run that is mostly start-up and exit."""
    proc, _, truth = run_patterns(trace_run, "fast-leak", 50)
    f = only(findings_of(build_dir, proc, *NOT_SLOW_ALLOC), "memory-growth")
    e = f["evidence"]
    assert truth["final_device_bytes"] == e["peak_bytes"] == 50 * 10 * MIB
    assert e["low_first_bytes"] < e["low_last_bytes"] <= 50 * 10 * MIB
    assert e["low_last_bytes"] - e["low_first_bytes"] >= 100 * MIB
    (top,) = e["sites"]
    assert top["site"] == site("fast-leak", "keep_fast")
    assert 25 <= top["calls"] <= 50 and top["bytes"] == top["calls"] * 10 * MIB


def test_healthy_twin_fast_pool_up_front(trace_run, build_dir):
    """The same 50 allocations as a pool the job's 100 steps then use: flat after it is made."""
    proc, _, truth = run_patterns(trace_run, "pool-up-front", 50)
    assert truth["final_device_bytes"] == 50 * 10 * MIB
    assert findings_of(build_dir, proc, *NOT_SLOW) == []


def test_healthy_twin_pool_up_front_and_work_freed(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "steady", 100)
    assert findings_of(build_dir, proc, *NOT_SLOW) == []


def test_oom(trace_run, build_dir):
    proc, _, truth = run_patterns(trace_run, "oom", CT_DOUBLE_MEM_LIMIT=64 * MIB)
    # Three blocks made and kept before the failure can also read as memory-growth, as the
    # periods of a run of a few milliseconds fall (a slow build, under ASan, can place them so);
    # the oom is what is checked here, and memory-growth has its own tests and twins.
    findings = [f for f in findings_of(build_dir, proc) if f["id"] != "memory-growth"]
    f = only(findings, "oom")
    e = f["evidence"]
    assert f["severity"] == "error"
    assert (e["requested_bytes"], e["live_bytes"], e["peak_bytes"]) == (
        32 * MIB, 56 * MIB, truth["peak_device_bytes"])
    assert e["site"] == site("oom", "main")
    assert (e["live_allocations_bytes"], e["live_vmm_bytes"], e["by_library"]) == (
        56 * MIB, 0, [])
    block = site("block", "allocate")
    assert [(s["site"], s["bytes"]) for s in e["sites"]] == [
        (block, 32 * MIB), (block, 16 * MIB), (block, 8 * MIB)]


def test_slow_alloc(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "allocations", 50, CT_DOUBLE_SLOW_ALLOC_BYTES=4 * MIB,
                              CT_DOUBLE_SLOW_ALLOC_NS=3000000)
    # The line sits between the small calls and the 3 ms ones. A loaded machine (CI runs this
    # under TSan on two cores) can still stall a small call past it, so those are allowed, but
    # only at the small calls' own site: the four slow ones must all be found, at theirs.
    f = only(findings_of(build_dir, proc, "--threshold", "slow_alloc_ns=2000000"), "slow-alloc")
    e = f["evidence"]
    assert e["worst_ns"] >= 3000000 and e["median_ns"] < 1000000
    calls = {s["site"]: s["calls"] for s in e["sites"]}
    assert calls.pop(site("big-alloc", "allocate_big")) == 4
    assert e["slow_calls"] == 4 + sum(calls.values())
    assert all(s.endswith(" in allocations") for s in calls), calls


def test_healthy_twin_fast_allocations(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "allocations", 50)
    assert findings_of(build_dir, proc) == []


# --------------------------------------------------------------------------
# Thresholds, ordering and the CI gate


def test_thresholds_move_the_line(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "sync-per-step", 10, CT_DOUBLE_SYNC_NS=200000)
    (f,) = findings_of(build_dir, proc, "--threshold", "sync_share=0.001")
    assert f["id"] == "sync-stall" and f["evidence"]["sync_calls"] == 10
    assert findings_of(build_dir, proc, "--threshold=sync_calls=11",
                       "--threshold", "sync_share=0.001") == []


def test_fail_on_gates_by_severity(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "sync-storm", 5, CT_DOUBLE_SYNC_NS=1000000)
    path = str(proc.run_dir / "trace.pftrace.zst")
    cudatrace_cmd.run(build_dir, "report", "--fail-on=warning", path, status=3)
    cudatrace_cmd.run(build_dir, "report", "--fail-on=error", path, status=0)
    oom, _, _ = run_patterns(trace_run, "oom", CT_DOUBLE_MEM_LIMIT=64 * MIB)
    cudatrace_cmd.run(build_dir, "report", "--fail-on=error", oom.run_dir / "trace.pftrace.zst",
                      status=3)
    for bad in (["--fail-on=info", path], ["--threshold", "no_such=1", path],
                ["--threshold", "sync_share=-1", path]):
        done = cudatrace_cmd.run(build_dir, "report", *bad, status=2)
        assert len(done.stderr.strip().splitlines()) == 1, bad


def test_text_report_lists_sites_under_the_finding(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "oom", CT_DOUBLE_MEM_LIMIT=64 * MIB)
    text = cudatrace_cmd.run(build_dir, "report", proc.run_dir / "trace.pftrace.zst").stdout
    block = re.escape(site("block", "allocate"))
    assert re.search(rf"findings\s+error oom: an allocation of 32\.00 MiB failed .* at "
                     rf"{re.escape(site('oom', 'main'))} with 56\.00 MiB live", text), text
    assert re.search(rf"\n\s+at {block}: 57% \(1 call, 32\.00 MiB\)\n", text), text


# --------------------------------------------------------------------------
# Python call sites, read without the GIL

def python_facts(python):
    """(version tuple, include dir, extension suffix) of an interpreter."""
    out = subprocess.run(
        [python, "-c", "import sys, sysconfig; print(sys.version_info[0], sys.version_info[1], "
         "sysconfig.get_paths()['include'], sysconfig.get_config_var('EXT_SUFFIX'))"],
        capture_output=True, text=True, check=True, timeout=60).stdout.split()
    return (int(out[0]), int(out[1])), out[2], out[3]


def build_extension(python, build_dir, folder):
    _, include, suffix = python_facts(python)
    if not os.path.exists(os.path.join(include, "Python.h")):
        pytest.skip(f"{python} has no Python.h in {include}")
    folder.mkdir()
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", f"-I{include}",
                    f"-I{toolkit.HOME}/include", EXTENSION, "-o",
                    str(folder / f"cuext{suffix}"), f"-L{build_dir}/double", "-l:libcudart.so.13"],
                   check=True, timeout=120)
    return str(folder)


@pytest.mark.parametrize("how", ["ctypes", "extension"])
@pytest.mark.parametrize("pattern", [p for _, p in INTERPRETERS],
                         ids=[name for name, _ in INTERPRETERS])
def test_python_sites_name_the_script_line(trace_run, build_dir, tmp_path, pattern, how):
    python = interpreter(pattern)
    version, _, _ = python_facts(python)
    args = [SCRIPT, how, 30]
    if how == "extension":
        args.append(build_extension(python, build_dir, tmp_path / "ext"))
    proc, trace, truth = trace_run(python, *args, env={"CT_DOUBLE_SYNC_NS": 2000000,
                                                       "PYTHONPATH": None})
    assert proc.returncode == 0, proc.stderr
    function = "Trainer.step" if version >= (3, 11) else "step"
    where = f"{SCRIPT}:{site_line(SCRIPT, 'step')} in {function}"
    f = only(findings_of(build_dir, proc), "sync-stall")
    assert f["evidence"]["sync_calls"] == truth["calls"]["cudaDeviceSynchronize"] == 30
    assert [(s["site"], s["calls"]) for s in f["evidence"]["sites"]] == [(where, 30)]
    syncs = [s for s in trace.slices if s["name"] == "cudaDeviceSynchronize"]
    assert len(syncs) == 30
    for s in syncs:
        assert s["args"]["site"] == where
        # The whole Python stack, innermost first, then the native frames below it.
        frames = s["args"]["stack"].splitlines()
        assert frames[0] == where
        assert re.fullmatch(rf"{re.escape(SCRIPT)}:\d+ in run", frames[1]), frames
        assert re.fullmatch(rf"{re.escape(SCRIPT)}:\d+ in <module>", frames[2]), frames


# --------------------------------------------------------------------------
# Findings written back into the trace, for the Perfetto UI


@pytest.mark.parametrize("form", ["zstd", "plain", "gzip"])
def test_annotate_appends_the_findings_once(trace_run, build_dir, tmp_path, form):
    import perfetto_check

    proc, _, _ = run_patterns(trace_run, "oom", CT_DOUBLE_MEM_LIMIT=64 * MIB)
    original = proc.run_dir / "trace.pftrace.zst"
    path = tmp_path / f"trace.{form}"
    if form == "zstd":
        path.write_bytes(original.read_bytes())
    else:
        cudatrace_cmd.run(build_dir, "export", "--format",
                          "perfetto" if form == "plain" else "perfetto-gz", "-o", path, original)
    before = cudatrace_cmd.report(build_dir, path)
    cudatrace_cmd.run(build_dir, "report", "--annotate", path)

    trace = perfetto_check.load(path)  # still valid under Perfetto's schema and import rules
    (track,) = [t for t in trace.tracks.values() if t["name"] == "cudatrace findings"]
    assert track["parent_uuid"] == trace.processes[proc.pid]["uuid"]
    marks = [i for i in trace.instants if i["track_uuid"] == track["uuid"]]
    assert [(m["name"], m["args"]["message"]) for m in marks] == [
        (f"{f['severity']} {f['id']}", f["message"]) for f in before["findings"]]
    (oom,) = marks
    assert oom["args"]["requested_bytes"] == 32 * MIB and oom["args"]["site"] == site("oom", "main")
    # At the failed call itself.
    (failed,) = [s for s in trace.slices if s["name"] == "cudaMalloc" and s["args"]["result"]]
    assert oom["ts"] == failed["ts"]

    # Reading it again gives the same report; a second --annotate is refused, file unchanged.
    assert cudatrace_cmd.report(build_dir, path)["findings"] == before["findings"]
    size = path.stat().st_size
    again = cudatrace_cmd.run(build_dir, "report", "--annotate", path, status=1)
    assert "already has its" in again.stderr
    assert path.stat().st_size == size


def test_annotate_takes_one_file(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "oom", CT_DOUBLE_MEM_LIMIT=64 * MIB)
    path = str(proc.run_dir / "trace.pftrace.zst")
    for args in ([path, path], [str(proc.run_dir)]):
        done = cudatrace_cmd.run(build_dir, "report", "--annotate", *args, status=2)
        assert len(done.stderr.strip().splitlines()) == 1

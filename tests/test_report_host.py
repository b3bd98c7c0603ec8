"""What the host was doing while the GPU waited: the collector's host sampler
(collector/host_sampling/), the report's host section and the findings
input-bound and host-bound (viewer-export/findings/host.c).

tests/python/host_script.py runs a training loop on the CPU runtime double fed
in one known way: by a real multiprocessing worker that burns the CPU (the loop
waits for input, the worker is busy), by one that sleeps as a slow read does
(the loop waits, the worker is idle), by the loop itself (it computes between
its CUDA calls), or by a worker that keeps ahead of a loop whose synchronise is
the slow part (the healthy twin: neither finding). The machine is small and
shared, so shares are held to wide tolerances around values the workload
makes far from the thresholds; counts that the sampler's bookkeeping makes
exact are held exactly. The chrome-json export's Python rows are held here too,
sample for sample against the trace's callstack samples.
"""
import collections
import ctypes
import json
import os
import re
import subprocess

import pytest

import cudatrace_cmd
from test_export_html import html_of, render
from test_report_gpu_timings import append_gpu_work

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "tests", "python", "host_script.py")
PYTHON = "/usr/bin/python3"
STEPS = 40
HOST_FINDINGS = {"input-bound", "host-bound"}


def site_line(tag):
    """The line of host_script.py that carries `# site: TAG`."""
    with open(SCRIPT) as f:
        lines = [n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# site: {tag}")]
    line, = lines
    return line


TRANSFORM = site_line("transform")
READ = site_line("read")
WAIT = site_line("wait")


class _Iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def outside_reads_refused():
    """Why this machine refuses process_vm_readv of another process (a container's
    seccomp profile, Yama), or None when it allows it."""
    child = subprocess.Popen(["sleep", "10"])
    try:
        with open(f"/proc/{child.pid}/maps") as maps:
            start = int(maps.readline().split("-")[0], 16)
        buf = ctypes.create_string_buffer(8)
        local, remote = _Iovec(ctypes.addressof(buf), 8), _Iovec(start, 8)
        libc = ctypes.CDLL(None, use_errno=True)
        got = libc.process_vm_readv(child.pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        return None if got == 8 else os.strerror(ctypes.get_errno())
    finally:
        child.kill()
        child.wait()


@pytest.fixture(scope="session")
def outside_reads():
    """Skips a test that needs Python stacks where the machine refuses the reads: the
    refusal itself is tested under a filter of the test's own."""
    refused = outside_reads_refused()
    if refused:
        pytest.skip(f"process_vm_readv refused here: {refused}")


@pytest.fixture
def host_run(trace_run, build_dir):
    """host_run(mode, steps, **env) -> (completed, trace, report/1 process)."""
    if not os.path.exists(PYTHON):
        pytest.skip(f"no {PYTHON}")

    def run(mode, steps=STEPS, gpu_us=None, under=(), **env):
        env.setdefault("CUDATRACE_SAMPLE_HZ", 100)
        proc, trace, _ = trace_run(*under, PYTHON, SCRIPT, mode, steps, env=env)
        assert proc.returncode == 0, proc.stderr
        path = proc.run_dir / "trace.pftrace.zst"
        if gpu_us is not None:
            append_gpu_work(path, trace, proc.pid, gpu_after_syncs(trace, gpu_us * 1000))
        r = cudatrace_cmd.report(build_dir, path)
        process, = r["processes"]
        return proc, trace, process, r["findings"]
    return run


def gpu_after_syncs(trace, ns):
    """GPU timings, as CUPTI would add them: a kernel of `ns` after each synchronise."""
    syncs = [s for s in trace.slices if s["name"] == "cudaDeviceSynchronize"]
    return [("GPU 0 stream 0", "step_kernel", "kernel", s["ts"] + s["dur"] + 1000,
             s["ts"] + s["dur"] + 1000 + ns) for s in syncs]


def loop_truth(proc):
    """The loop's own CPU time and wall time, as the script measured them."""
    line, = [x for x in proc.stdout.splitlines() if x.startswith("loop ")]
    _, cpu, wall = line.split()
    return float(cpu), float(wall)


def launcher(process, pid):
    """The launching thread's row: the main thread, whose tid is the pid."""
    host = process["host"]
    assert host["state"] == "sampling" and host["reason"] == ""
    assert host["launching_tid"] == pid
    row, = [t for t in host["threads"] if t["tid"] == pid]
    return row


def ids(findings):
    return sorted(f["id"] for f in findings)


@pytest.mark.finding("input-bound")
def test_input_bound_with_busy_workers(host_run):
    proc, _, process, findings = host_run("workers-busy")
    assert ids(findings) == ["input-bound"], [f["message"] for f in findings]
    e = findings[0]["evidence"]
    assert e["tid"] == proc.pid and e["workers"] == 1
    # The worker burns the CPU the whole run; the loop waits for it nearly all the time.
    assert e["workers_busy_share"] >= 0.8
    assert e["waiting_outside_cuda_share"] >= 0.6 and e["in_cuda_share"] <= 0.1
    assert "CPU-bound" in findings[0]["message"]
    worker, = process["host"]["workers"]
    assert worker["cpu"] + worker["runnable"] == pytest.approx(e["workers_busy_share"])
    row = launcher(process, proc.pid)
    assert row["outside_cuda_waiting_for_input"] == pytest.approx(e["waiting_outside_cuda_share"])
    assert row["waiting_in"] and row["waiting_in"][0]["ns"] > 0


@pytest.mark.finding("input-bound")
def test_input_bound_with_idle_workers(host_run):
    proc, _, process, findings = host_run("workers-io")
    assert ids(findings) == ["input-bound"], [f["message"] for f in findings]
    e = findings[0]["evidence"]
    assert e["workers"] == 1 and e["workers_busy_share"] <= 0.2  # workers_idle_share
    assert e["waiting_outside_cuda_share"] >= 0.6
    assert "I/O" in findings[0]["message"]


@pytest.mark.finding("host-bound")
def test_host_bound_when_the_loop_transforms_its_own_input(host_run):
    # GPU timings (a 100 us kernel a step) show the GPU idle nearly all the time.
    proc, _, process, findings = host_run("in-thread", gpu_us=100)
    assert ids(findings) == ["gpu-idle", "host-bound"], [f["message"] for f in findings]
    e, = [f["evidence"] for f in findings if f["id"] == "host-bound"]
    assert e["tid"] == proc.pid and e["gpu_idle_share"] >= 0.9
    assert e["running_outside_cuda_share"] >= 0.85 and e["in_cuda_share"] <= 0.1
    # Its time on a CPU and waiting for one is all of the loop's: the script's own
    # thread_time over the loop's wall time is the part on a CPU.
    row = launcher(process, proc.pid)
    cpu, wall = loop_truth(proc)
    # (The rest is the pool's start and end, which a loaded machine stretches.)
    assert row["running"] + row["runnable"] >= 0.6
    assert row["running"] == pytest.approx(cpu / wall, abs=0.15)


def test_without_gpu_timings_a_busy_loop_is_not_host_bound(host_run):
    """The same loop with no GPU timings: it may as well be feeding a busy GPU."""
    proc, _, process, findings = host_run("in-thread")
    assert ids(findings) == []
    assert launcher(process, proc.pid)["outside_cuda_running"] >= 0.85


@pytest.mark.twin("input-bound", "host-bound")
def test_healthy_twin_has_no_host_finding(host_run):
    # The GPU is the slow part (GPU timings busy through each 30 ms synchronise) and the
    # worker keeps ahead: the loop waits inside CUDA calls, on a busy GPU: nothing to say.
    proc, _, process, findings = host_run("healthy", gpu_us=29_000,
                                          CT_DOUBLE_SYNC_NS=30_000_000)
    # sync-stall stays silent while GPU timings show the GPU busy (gpu_bound_share, 0.8);
    # on a loaded machine the pool's start may stretch the run past that.
    assert set(ids(findings)) <= {"sync-stall"}, [f["message"] for f in findings]
    row = launcher(process, proc.pid)
    assert row["in_cuda"] >= 0.6 and row["outside_cuda_waiting"] <= 0.3


def test_the_trace_holds_every_sample_on_its_tracks(host_run, trace_vocabulary):
    """Each thread's first sample starts its count, each later one is one value on its
    CPU and runnable counters: the closing instant's thread_samples add up exactly."""
    proc, trace, process, _ = host_run("workers-busy", 20)
    v = trace_vocabulary
    closing, = [e for e in trace.instants if e["name"] == v.text("event", "host")]
    args = closing["args"]
    assert (args["state"], args["sample_hz"], args["dropped"], args["untracked"]) == (
        "sampling", 100, 0, 0)
    seen = [e["args"] for e in trace.instants if e["name"] == v.text("event", "host_thread")]
    assert proc.pid in {a["tid"] for a in seen}
    values = sum(len(trace.counters_by_uuid.get(a["cpu_track"], [])) for a in seen)
    assert values + len(seen) == args["thread_samples"]
    for a in seen:
        assert len(trace.counters_by_uuid.get(a["runnable_track"], [])) == len(
            trace.counters_by_uuid.get(a["cpu_track"], []))
    workers = [e["args"] for e in trace.instants if e["name"] == v.text("event", "host_worker")]
    assert len(workers) == 1 and workers[0]["pid"] != proc.pid
    assert process["host"]["workers"][0]["pid"] == workers[0]["pid"]
    states = {s["name"] for s in trace.slices
              if s["track_uuid"] in {a["state_track"] for a in seen}}
    assert v.text("event", "host_sleeping") in states
    assert args["sampler_cpu_ns"] > 0 and args["rounds"] >= 10


def test_sampling_off_leaves_the_rest_of_the_report_as_it_was(host_run, trace_vocabulary):
    proc, trace, process, findings = host_run("workers-busy", 20, CUDATRACE_SAMPLE_HZ=0)
    closing, = [e for e in trace.instants if e["name"] == trace_vocabulary.text("event", "host")]
    assert (closing["args"]["state"], closing["args"]["thread_samples"]) == ("off", 0)
    assert process["host"]["threads"] == [] and process["host"]["workers"] == []
    assert findings == []
    on_proc, _, on_process, on_findings = host_run("workers-busy", 20)
    assert ids(on_findings) == ["input-bound"]
    calls = {fn: c["calls"] for fn, c in process["api"].items()}
    assert calls == {fn: c["calls"] for fn, c in on_process["api"].items()}
    assert calls == {"cudaDeviceSynchronize": 21}
    for key in ("launches", "sync", "libraries", "failed_loads", "in_flight", "exit"):
        assert len(process[key]) == len(on_process[key]), key


def test_threads_and_workers_that_come_and_go(host_run):
    """Hundreds of short threads and pools whose workers exit: the run and the
    collector end normally, every worker seen is a child that is gone, and the
    bookkeeping lost nothing."""
    proc, trace, process, _ = host_run("churn", 3)
    assert proc.stdout.splitlines()[-1] == "churn 60 6"
    host = process["host"]
    assert host["state"] == "sampling"
    if not outside_reads_refused():  # of threads and workers that vanish mid-read too
        assert host["python_stacks"] == "read"
    pids = [w["pid"] for w in host["workers"]]
    assert len(pids) == len(set(pids)) and proc.pid not in pids
    assert 1 <= len(pids) <= 6
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}/stat") or \
            int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]) != proc.pid
    assert process["exit"] == "normal"


def test_threshold_changes_the_verdict(host_run, build_dir):
    proc, _, _, findings = host_run("workers-io")
    assert ids(findings) == ["input-bound"]
    path = proc.run_dir / "trace.pftrace.zst"
    # Just above the share the run measured (how much of it the loop waits depends on the
    # machine's speed, a sanitizer build's too; a fast one samples the loop waiting every
    # time, 1.0), the finding goes; just below, it stays.
    share = findings[0]["evidence"]["waiting_outside_cuda_share"]
    assert 0.4 <= share <= 1
    strict = cudatrace_cmd.report(build_dir, "--threshold",
                                  f"input_wait_share={share + 0.01:.6f}", path)
    assert "input-bound" not in ids(strict["findings"])
    lenient = cudatrace_cmd.report(build_dir, "--threshold",
                                   f"input_wait_share={share - 0.01:.6f}", path)
    assert ids(lenient["findings"]) == ["input-bound"]
    bad = cudatrace_cmd.run(build_dir, "report", "--threshold", "input_wait_share=x", path,
                            status=None)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1


def test_the_html_page_shows_the_host(host_run, build_dir, tmp_path):
    proc, _, process, _ = host_run("workers-busy", 20)
    page = html_of(build_dir, proc.run_dir / "trace.pftrace.zst", tmp_path)
    shown = render(page, tmp_path)
    shown.assert_drawn()

    def pct(v):
        return f"{round(100 * v)}%"
    host = process["host"]
    assert [cells for _, cells in shown.rows("host")] == [
        [f"thread {t['tid']} {t['name']}", pct(t["running"]), pct(t["runnable"]),
         pct(t["waiting"]), pct(t["in_cuda"]), pct(t["outside_cuda_waiting"]),
         t["waiting_in"][0]["wchan"] if t["waiting_in"] else ""] for t in host["threads"][:15]
    ] + [[f"worker {w['pid']} {w['name']}", pct(w["cpu"]), pct(w["runnable"]), "", "", "", ""]
         for w in host["workers"]]
    owners = [(f"thread {t['tid']} {t['name']}", t) for t in host["threads"][:15]] + \
        [(f"worker {w['pid']} {w['name']}", w) for w in host["workers"]] + \
        [("outside its CUDA calls", host["launcher_idle"])]  # no GPU timings: that basis
    expected = [[who, f"{s['file']}:{s['line']}", s["function"], pct(s["share"])]
                for who, o in owners for s in o["python_sites"][:3]]
    if expected or not outside_reads_refused():  # the table is there when a stack was read
        assert expected and [cells for _, cells in shown.rows("host-sites")] == expected


def top_site(row):
    """A thread's or worker's top Python site as (file, line, function), and its share."""
    site = row["python_sites"][0]
    return (site["file"], site["line"], site["function"]), site["share"]


def test_host_bound_names_the_loops_top_python_site(host_run, outside_reads):
    """The loop burns the CPU on one line between its launches: the stacks read from
    outside put nearly all of its samples there, and host-bound says so."""
    proc, _, process, findings = host_run("in-thread", gpu_us=100)
    assert process["host"]["python_stacks"] == "read"
    f, = [f for f in findings if f["id"] == "host-bound"]
    assert f["evidence"]["top_site_line"] == TRANSFORM
    assert f"{SCRIPT}:{TRANSFORM} in burn" in f["message"]
    site, share = top_site(launcher(process, proc.pid))
    assert site == (SCRIPT, TRANSFORM, "burn") and share >= 0.6
    assert share == pytest.approx(f["evidence"]["top_site_share"])


def test_input_bound_names_the_workers_transform(host_run, outside_reads):
    proc, _, process, findings = host_run("workers-busy")
    f, = findings
    assert f["id"] == "input-bound"
    assert f["evidence"]["workers_top_site_line"] == TRANSFORM
    assert f"their Python is mostly at {SCRIPT}:{TRANSFORM} in burn" in f["message"]
    worker, = process["host"]["workers"]
    site, share = top_site(worker)
    assert site == (SCRIPT, TRANSFORM, "burn") and share >= 0.6
    # The loop itself waits for the pool's results, in Python's own threading code; its own
    # line is where it asks for the next batch.
    loop_site, _ = top_site(launcher(process, proc.pid))
    assert loop_site[0] != SCRIPT
    assert f["message"].endswith(f"; the loop waits for its input at {SCRIPT}:{WAIT} in run")
    assert f["evidence"]["loop_line"] == WAIT


def test_input_bound_on_io_names_the_workers_read(host_run, outside_reads):
    _, _, process, findings = host_run("workers-io")
    f, = findings
    assert f["evidence"]["workers_top_site_line"] == READ
    site, _ = top_site(process["host"]["workers"][0])
    assert site == (SCRIPT, READ, "slow_read")


def test_loading_in_the_loops_thread_is_called_input_bound(host_run, outside_reads):
    """The same transform as a dataset's, which a DataLoader with no workers runs in the thread
    that asks for the batch: the stacks show the DataLoader's frames, so the busy loop is loading
    its input, not host-bound, and both lines are named. Its twin, the transform called by the
    loop itself (no DataLoader frame), stays host-bound (test_host_bound_names_...)."""
    proc, _, process, findings = host_run("loader-in-thread", gpu_us=100)
    assert ids(findings) == ["gpu-idle", "input-bound"], [f["message"] for f in findings]
    f, = [f for f in findings if f["id"] == "input-bound"]
    e = f["evidence"]
    assert (e["tid"], e["in_thread"], e["workers"]) == (proc.pid, 1, 0)
    assert e["loader_share"] >= 0.6 and e["gpu_idle_share"] >= 0.9
    assert (e["top_site_line"], e["loop_line"]) == (TRANSFORM, WAIT)
    assert f["message"].startswith(
        f"thread {proc.pid}, which launches the GPU work, loads its input itself: ")
    assert "PyTorch's DataLoader (torch/utils/data), with no worker processes" in f["message"]
    assert f"its Python is mostly at {SCRIPT}:{TRANSFORM} in burn" in f["message"]
    assert f["message"].endswith(f"; the loop asks for each batch at {SCRIPT}:{WAIT} in run")


def test_healthy_twin_reads_stacks_and_stays_silent(host_run, outside_reads):
    proc, _, process, findings = host_run("healthy", gpu_us=29_000, CT_DOUBLE_SYNC_NS=30_000_000)
    assert not HOST_FINDINGS & set(ids(findings)), [f["message"] for f in findings]
    assert process["host"]["python_stacks"] == "read"
    # The loop is in its synchronise, the `# site: step` line, nearly all the time.
    site, share = top_site(launcher(process, proc.pid))
    assert site == (SCRIPT, site_line("step"), "run") and share >= 0.6


def test_every_stack_read_is_one_callstack_sample_on_its_thread(host_run, trace_vocabulary,
                                                                 outside_reads):
    """Each stack read is one callstack sample (perf_sample) on its thread (a worker's:
    its main thread), each frame in the mapping of its own file, and no slice besides:
    the report's Python samples are those, one for one."""
    proc, trace, process, _ = host_run("workers-busy", 20)
    v = trace_vocabulary
    closing, = [e for e in trace.instants if e["name"] == v.text("event", "host")]
    args = closing["args"]
    assert args["python_stacks"] == "read" and args["python_stack_count"] > 0
    assert args["python_read_ns"] > 0
    samples = trace.callstack_samples
    assert len(samples) == args["python_stack_count"]
    tids = {e["args"]["tid"] for e in trace.instants if e["name"] == v.text("event", "host_thread")}
    workers = {e["args"]["pid"] for e in trace.instants
               if e["name"] == v.text("event", "host_worker")}
    assert workers and {s["pid"] for s in samples} <= {proc.pid} | workers
    for sample in samples:
        assert sample["tid"] in (tids if sample["pid"] == proc.pid else {sample["pid"]})
        assert sample["mappings"] == [f.rsplit(" (", 1)[1].rsplit(":", 1)[0]
                                      for f in sample["frames"]]
    # The sampler writes no Python slice: its slices are the threads' state spans.
    states = {e["args"]["state_track"] for e in trace.instants
              if e["name"] == v.text("event", "host_thread")}
    assert not [s for s in trace.slices if s["track_uuid"] not in states and
                s["track_uuid"] not in trace.threads]
    host = process["host"]
    for t in host["threads"]:
        assert t["python_samples"] == sum(1 for s in samples
                                          if s["pid"] == proc.pid and s["tid"] == t["tid"])
    for w in host["workers"]:
        assert w["python_samples"] == sum(1 for s in samples if s["pid"] == w["pid"])


def test_the_loops_samples_end_at_its_transform_line(host_run, outside_reads):
    """The loop that burns the CPU in `burn` has most of its callstack samples end
    at that exact file:line, as the flame graph would show it."""
    proc, trace, _, _ = host_run("in-thread", gpu_us=100)
    leaves = [s["frames"][-1] for s in trace.callstack_samples if s["tid"] == proc.pid]
    assert leaves
    top = f"burn ({SCRIPT}:{TRANSFORM})"
    assert leaves.count(top) >= 0.6 * len(leaves), set(leaves)


def chrome_python(build_dir, proc, tmp_path):
    """The chrome-json export's Python rows: {(pid, sampled tid): [(ts, dur, [frame names,
    outermost first], innermost's args)]} in time order (dur: the outermost frame's), with
    the rest of the export."""
    out = tmp_path / "out.json"
    cudatrace_cmd.run(build_dir, "export", proc.run_dir / "trace.pftrace.zst", "--format",
                      "chrome-json", "-o", out, quiet=True)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    rows = {(e["pid"], e["tid"]): int(re.fullmatch(r"thread (\d+)( .*)? Python",
                                                   e["args"]["name"]).group(1))
            for e in events if e["name"] == "thread_name" and e["args"]["name"].endswith(" Python")}
    samples = collections.defaultdict(list)
    for e in events:
        if e["ph"] != "X" or e.get("cat") != "python":
            continue
        sampled = samples[(e["pid"], rows[(e["pid"], e["tid"])])]
        ts, dur = round(e["ts"] * 1000), round(e["dur"] * 1000)
        if not sampled or sampled[-1][0] != ts or sampled[-1][3]:
            sampled.append((ts, dur, [], {}))  # a new sample: the last one's innermost was seen
        # Its frames share its start, each ending 1 ns before the one around it.
        assert (ts, dur) == (sampled[-1][0], sampled[-1][1] - len(sampled[-1][2]))
        sampled[-1][2].append(e["name"])
        sampled[-1][3].update(e["args"])
    rest = [e for e in events if e.get("cat") != "python"]
    return {k: sorted(v) for k, v in samples.items()}, rest


def test_chrome_json_holds_every_python_sample_with_its_whole_stack(
        host_run, build_dir, tmp_path, outside_reads):
    """Per sampled thread (a worker: its main thread), the chrome-json export holds one
    nested "X" per frame of each callstack sample, outermost first, exactly as many samples as
    the trace has, each lasting till the thread's next (the last: one interval at 100 Hz);
    the loop's samples mostly end on the known hot line, with its file and line."""
    proc, trace, _, _ = host_run("in-thread", 20)
    exported, _ = chrome_python(build_dir, proc, tmp_path)
    truth = collections.defaultdict(list)
    for s in trace.callstack_samples:
        truth[(s["pid"], s["tid"])].append((s["ts"], s["frames"]))
    assert truth[(proc.pid, proc.pid)], "the loop's own stacks were read"
    assert {k: len(v) for k, v in exported.items()} == {k: len(v) for k, v in truth.items()}
    for key, samples in truth.items():
        samples.sort()
        got = exported[key]
        assert [(ts, frames) for ts, _, frames, _ in got] == samples
        ends = [ts for ts, _ in samples[1:]] + [samples[-1][0] + 10_000_000]
        assert [dur for _, dur, _, _ in got] == [end - ts for (ts, _), end in zip(samples, ends)]
        for _, _, frames, leaf in got:
            file, line = frames[-1].rsplit(" (", 1)[1][:-1].rsplit(":", 1)
            assert leaf == {"file": file, "line": int(line)}
    hot = f"burn ({SCRIPT}:{TRANSFORM})"
    leaves = [frames[-1] for _, _, frames, _ in exported[(proc.pid, proc.pid)]]
    assert leaves.count(hot) >= 0.6 * len(leaves), set(leaves)
    assert {"file": SCRIPT, "line": TRANSFORM} in [a for *_, a in exported[(proc.pid, proc.pid)]]


def test_chrome_json_without_sampling_has_no_python(host_run, build_dir, tmp_path):
    proc, trace, _, _ = host_run("in-thread", 10, CUDATRACE_SAMPLE_HZ=0)
    assert trace.callstack_samples == []
    exported, rest = chrome_python(build_dir, proc, tmp_path)
    assert exported == {}
    assert not [e for e in rest if e["name"] == "thread_name" and "Python" in e["args"]["name"]]
    assert [e for e in rest if e["ph"] == "X" and e["name"] == "cudaDeviceSynchronize"]


def test_refused_reads_skip_the_stacks_and_say_so_once(host_run, build_dir):
    """process_vm_readv refused with EPERM, by a seccomp filter the collector inherits
    (as a container's profile refuses it): no stacks, one line saying why, and the rest
    of the host section and the findings as they are."""
    deny = os.path.join(build_dir, "tests", "deny_vm_readv")
    proc, trace, process, findings = host_run("workers-busy", under=(deny,))
    host = process["host"]
    assert host["python_stacks"].startswith("not read: process_vm_readv refused")
    assert host["state"] == "sampling" and host["reason"] == ""
    assert ids(findings) == ["input-bound"]
    assert "Python is mostly" not in findings[0]["message"]
    assert all(t["python_sites"] == [] for t in host["threads"])
    assert all(w["python_sites"] == [] for w in host["workers"])
    text = cudatrace_cmd.run(build_dir, "report", proc.run_dir / "trace.pftrace.zst").stdout
    said = [x for x in text.splitlines() if "Python stacks: not read" in x]
    assert len(said) == 1 and "Python at" not in text


def test_a_thread_storm_reads_a_bounded_number_of_stacks_a_round(host_run, trace_vocabulary, outside_reads):
    """150 Python threads at once: each round reads the stacks of 32 of them (the rest
    keep their turn), so every thread is read in time and the sampler's cost stays bounded."""
    proc, trace, process, _ = host_run("storm", 60)
    assert proc.stdout.splitlines()[-1] == "storm 150"
    assert process["exit"] == "normal"
    closing, = [e for e in trace.instants if e["name"] == trace_vocabulary.text("event", "host")]
    args = closing["args"]
    assert args["python_stacks"] == "read" and args["untracked"] == 0
    assert args["python_stack_count"] <= 32 * args["rounds"] + args["worker_samples"]
    read = [t for t in process["host"]["threads"] if t["python_samples"] > 0]
    assert len(read) > 100, len(read)


def test_gpu_idle_names_the_line_the_loop_was_at_in_its_gaps(host_run, outside_reads):
    """The GPU waits while the loop burns the CPU in `burn`: each of gpu-idle's
    longest gaps names that exact file:line, from the samples read within it."""
    _, _, _, findings = host_run("in-thread", gpu_us=100)
    f, = [f for f in findings if f["id"] == "gpu-idle"]
    assert f["evidence"]["gap_1_python_line"] == TRANSFORM
    assert f"the launching thread mostly at {SCRIPT}:{TRANSFORM} in burn" in f["message"]


def test_without_gpu_idle_no_gap_line_is_said(host_run, outside_reads):
    _, _, _, findings = host_run("healthy", gpu_us=29_000, CT_DOUBLE_SYNC_NS=30_000_000)
    assert not [f for f in findings if f["id"] == "gpu-idle"]
    assert not any("the launching thread mostly at" in f["message"] for f in findings)


def test_the_host_says_where_the_loop_was_while_the_gpu_idled(host_run, outside_reads):
    """With GPU timings, the launching thread's samples while the GPU was idle, by
    line: the loop's burn; without them, no such part."""
    _, _, process, _ = host_run("in-thread", gpu_us=100)
    idle = process["host"]["gpu_idle_python"]
    site = idle["python_sites"][0]
    assert (site["file"], site["line"], site["function"]) == (SCRIPT, TRANSFORM, "burn")
    assert site["share"] >= 0.6 and 0 < idle["python_samples"]
    _, _, process, _ = host_run("in-thread")
    assert "gpu_idle_python" not in process["host"]


def cuda_outside_ns(trace, v, tid):
    """Thread `tid`'s time outside its CUDA calls over the CUDA part of the run (its
    first call to the process's end), from its call slices."""
    calls = [s for s in trace.slices if s["name"] == "cudaDeviceSynchronize" and
             trace.owner(s["track_uuid"])[1] == tid]
    end, = [e["ts"] for e in trace.instants if e["name"] == v.text("event", "end")]
    first = min(s["ts"] for s in trace.slices if s["name"] == "cudaDeviceSynchronize")
    return end - first - sum(s["dur"] for s in calls)


def test_without_gpu_timings_the_host_says_what_the_loop_did_outside_cuda_calls(
        host_run, trace_vocabulary, build_dir, outside_reads):
    """CUPTI off, so no GPU timings: the launching thread's time outside its CUDA calls
    stands in for GPU-idle time. Its length is the call slices' complement exactly; the
    loop burns the CPU on its transform line then, with no worker to wait for."""
    proc, trace, process, findings = host_run("in-thread", CUDATRACE_CUPTI=0)
    host = process["host"]
    assert "gpu_idle_python" not in host
    idle = host["launcher_idle"]
    assert (idle["basis"], idle["tid"]) == ("outside_cuda", proc.pid)
    assert idle["ns"] == cuda_outside_ns(trace, trace_vocabulary, proc.pid)
    assert idle["in_cuda"] == 0 and idle["on_cpu"] >= 0.85
    assert idle["workers_busy"] is None or idle["workers_busy"] <= 0.2
    site = idle["python_sites"][0]
    assert (site["file"], site["line"], site["function"]) == (SCRIPT, TRANSFORM, "burn")
    assert site["share"] >= 0.6 and idle["python_samples"] > 0
    text = cudatrace_cmd.run(build_dir, "report", proc.run_dir / "trace.pftrace.zst").stdout
    said, = [x for x in text.splitlines() if "during time outside CUDA calls" in x]
    assert f"thread {proc.pid} during" in said and f"Python at {SCRIPT}:{TRANSFORM} in burn" in said


def test_without_gpu_timings_the_waiting_loop_and_its_busy_workers(host_run, outside_reads):
    """The same basis for a loop fed by a busy worker: outside its CUDA calls it sleeps,
    in Python's own wait, while the worker burns the CPU."""
    proc, _, process, _ = host_run("workers-busy", CUDATRACE_CUPTI=0)
    idle = process["host"]["launcher_idle"]
    assert idle["basis"] == "outside_cuda" and idle["asleep"] >= 0.6
    assert idle["workers_busy"] >= 0.8
    assert idle["python_sites"][0]["file"] != SCRIPT


def test_with_gpu_timings_the_basis_stays_gpu_idle_time(host_run, outside_reads):
    """With GPU timings the same loop is told by GPU-idle time, and its lines are the
    samples gpu_idle_python holds, one for one."""
    proc, _, process, _ = host_run("in-thread", gpu_us=100)
    host = process["host"]
    idle = host["launcher_idle"]
    assert (idle["basis"], idle["tid"]) == ("gpu_idle", proc.pid)
    assert idle["python_sites"] == host["gpu_idle_python"]["python_sites"]
    assert idle["python_samples"] == host["gpu_idle_python"]["python_samples"]
    assert idle["on_cpu"] >= 0.85 and idle["in_cuda"] <= 0.1


def test_without_gpu_timings_the_healthy_twin_is_mostly_inside_its_calls(host_run, trace_vocabulary):
    """The healthy loop waits inside its synchronise: its time outside CUDA calls is a
    small part of the run, and nothing is found."""
    proc, trace, process, findings = host_run("healthy", CUDATRACE_CUPTI=0,
                                              CT_DOUBLE_SYNC_NS=30_000_000)
    assert not HOST_FINDINGS & set(ids(findings)), [f["message"] for f in findings]
    idle = process["host"]["launcher_idle"]
    assert idle["basis"] == "outside_cuda"
    assert idle["ns"] == cuda_outside_ns(trace, trace_vocabulary, proc.pid)
    syncs = sum(s["dur"] for s in trace.slices if s["name"] == "cudaDeviceSynchronize")
    assert idle["ns"] <= 0.4 * (idle["ns"] + syncs)  # as in_cuda >= 0.6 above, for the pool's end

"""chrome-json's steps and ranks, written as PyTorch's profiler writes them so that Holistic Trace
Analysis (HTA) reads a job's exports per step and per rank.

This file owns the export's `ProfilerStep#N` events and its `distributedInfo`: the steps the
report finds (tests/programs/step_loop.c's NVTX ranges "train_step") become one complete event
each, named `ProfilerStep#N` with N counted from 0 as the profiler counts, in category
`user_annotation`, on the thread that made them, with the report's times to the nanosecond and
its step number in args.step; each file says its process's rank and world size on its first
line, where HTA's rank pattern looks. HTA itself (PyPI HolisticTraceAnalysis, pinned in
tests/requirements.txt) reads two ranks' exports in a child process, so that its whole log, its
parsing workers' too, is read: both ranks, each with every step as an iteration, and no word
about a step, an iteration or a rank. Twins: a run of no steps exports none and every event of
its trace as before, a process that no launcher ranked is rank 0 with no world size, and
PyTorch's own ProfilerStep ranges are not written twice.
"""
import json
import re
import subprocess
import sys

import cudatrace_cmd
from test_export_formats import assert_json_matches, export, trace_path
from test_preload_cupti import with_gpu
from test_report_finding_rules import FIRST, MS, PID, TID, new_trace, trace_format  # noqa: F401

HTA_TIMEOUT_S = 120
RANK_PATTERN = re.compile(r'"rank":\s+(\d+)')  # HTA's, in hta/common/trace_file.py
# Every launcher variable the collector takes a rank from (docs/report-schema.md, identity).
NO_LAUNCHER = {name: None for name in (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK",
    "PMI_SIZE", "PMIX_RANK", "MPI_LOCALRANKID")}


def ranked(rank, world_size):
    """torchrun's variables for one rank, and no other launcher's."""
    return {**NO_LAUNCHER, "RANK": rank, "LOCAL_RANK": rank, "WORLD_SIZE": world_size}


def exported(build_dir, trace, out):
    """(the export's JSON, its first line)."""
    export(build_dir, trace, "chrome-json", out)
    text = out.read_text()
    return json.loads(text), text.split("\n", 1)[0]


def profiler_steps(doc):
    return sorted((e for e in doc["traceEvents"] if e["name"].startswith("ProfilerStep")),
                  key=lambda e: e["ts"])


def ns(microseconds):
    return round(microseconds * 1000)


def span(e):
    return ns(e["ts"]), ns(e["dur"])


def test_each_step_is_a_profiler_step_with_the_reports_times(
        trace_run, build_dir, tmp_path):
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 8, "--wait-ms", 2,
                                "--slow-every", 4, "--slow-ms", 20, env=ranked(1, 2))
    assert completed.returncode == 0, completed.stderr
    (process,) = cudatrace_cmd.report(build_dir, trace_path(completed))["processes"]
    steps = process["steps"]
    doc, first_line = exported(build_dir, trace_path(completed), tmp_path / "out.json")
    events = profiler_steps(doc)
    assert [e["name"] for e in events] == [f"ProfilerStep#{n}" for n in range(8)]
    assert steps["count"] == 8
    for n, e in enumerate(events):
        assert (e["ph"], e["cat"], e["pid"], e["tid"]) == ("X", "user_annotation", completed.pid,
                                                           completed.pid)
        assert e["args"] == {"step": n + 1}
    # Each is its NVTX range, to the nanosecond, and the report's step of that number.
    ranges = sorted((e for e in doc["traceEvents"] if e["name"] == "train_step"),
                    key=lambda e: e["ts"])
    assert [span(e) for e in events] == [span(e) for e in ranges]
    durations = {n + 1: span(e)[1] for n, e in enumerate(events)}
    assert durations[1] == steps["first_ns"]
    assert durations[steps["max_step"]] == steps["max_ns"]
    assert durations[steps["median_step"]["step"]] == steps["median_step"]["ns"]
    # The slow ones: the program's two (a loaded machine may add a hiccup), at their times.
    slow = {s["step"]: s["ns"] for s in steps["slow"]}
    assert {4, 8} <= set(slow) and all(slow[n] == durations[n] for n in slow)
    # The rank, where HTA looks for it: the first line that matches its pattern.
    assert doc["distributedInfo"] == {"rank": 1, "world_size": 2}
    assert RANK_PATTERN.search(first_line).group(1) == "1"


def test_a_run_without_steps_exports_none(
        trace_run, build_dir, tmp_path):
    """The twin: a run of no steps (one pass over the API) and no launcher: every event of the
    trace, and nothing else, as test_export_formats holds any export to; rank 0, as HTA takes a
    file without one."""
    completed, trace, _ = trace_run("api_mix", 1, env=NO_LAUNCHER)
    assert completed.returncode == 0, completed.stderr
    (process,) = cudatrace_cmd.report(build_dir, trace_path(completed))["processes"]
    assert "steps" not in process and process["identity"]["rank"] is None
    doc, first_line = exported(build_dir, trace_path(completed), tmp_path / "out.json")
    assert profiler_steps(doc) == []
    assert_json_matches(doc, trace)
    assert doc["distributedInfo"] == {"rank": 0}
    assert RANK_PATTERN.search(first_line).group(1) == "0"


def test_steps_go_on_the_thread_that_made_them(
        new_trace, write_trace, build_dir, tmp_path):  # noqa: F811
    """A process whose calls and steps are all on a thread other than its main one."""
    t = new_trace()
    for i in range(4):
        t.slice(t.thread(TID), "train_step", FIRST + i * MS, MS // 2, source="source_nvtx")
        t.call("cudaDeviceSynchronize", FIRST + i * MS + 10_000, 1_000)
    doc, _ = exported(build_dir, t.write(write_trace), tmp_path / "out.json")
    events = profiler_steps(doc)
    assert [(e["name"], e["pid"], e["tid"]) for e in events] == [
        (f"ProfilerStep#{n}", PID, TID) for n in range(4)]
    assert [span(e) for e in events] == [(FIRST + i * MS, MS // 2) for i in range(4)]


def test_pytorchs_own_profiler_steps_are_not_written_twice(
        new_trace, write_trace, build_dir, tmp_path):  # noqa: F811
    """Steps that are PyTorch's own ProfilerStep#N ranges (its NVTX emission) keep the
    profiler's numbers, once each."""
    t = new_trace()
    for i in range(4):
        t.slice(t.thread(TID), f"ProfilerStep#{10 + i}", FIRST + i * MS, MS // 2,
                source="source_nvtx")
        t.call("cudaDeviceSynchronize", FIRST + i * MS + 10_000, 1_000)
    doc, _ = exported(build_dir, t.write(write_trace), tmp_path / "out.json")
    assert [e["name"] for e in profiler_steps(doc)] == [f"ProfilerStep#{10 + i}"
                                                         for i in range(4)]


# HTA in a child process: its log (its own, and its parsing workers', which fork) on stderr, at
# warning level, and what it made of the exports as JSON on stdout. The last step counts too
# (include_last_profiler_step): by default HTA drops it, as a profiler's last step is often cut.
HTA_CHILD = r"""
import json, logging, sys
handler = logging.StreamHandler(sys.stderr)
handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
logging.basicConfig(level=logging.WARNING, handlers=[handler])
hta_log = logging.getLogger("hta")
hta_log.handlers, hta_log.propagate = [handler], False
from hta.trace_analysis import TraceAnalysis
t = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True).t
print(json.dumps({rank: [int(i) for i in t.get_iterations(rank)] for rank in t.get_ranks()}))
"""


def test_hta_reads_two_ranks_with_their_steps(
        trace_run, build_dir, tmp_path):
    steps = 6
    job = tmp_path / "job"
    job.mkdir()
    # Named against their ranks' order: HTA must take the ranks from the files.
    for rank, name in ((0, "b.json"), (1, "a.json")):
        cupti_truth = tmp_path / f"cupti-{rank}.txt"
        env = {**with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_STATS=cupti_truth),
               **ranked(rank, 2)}
        completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", steps, "--wait-ms", 2,
                                    env=env)
        assert completed.returncode == 0, completed.stderr
        export(build_dir, trace_path(completed), "chrome-json", job / name)
    done = subprocess.run([sys.executable, "-c", HTA_CHILD, str(job)], capture_output=True,
                          text=True, timeout=HTA_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    iterations = json.loads(done.stdout.splitlines()[-1])
    assert iterations == {"0": list(range(steps)), "1": list(range(steps))}
    log = done.stderr.replace(str(job), "JOB")
    about = [line for line in log.splitlines()
             if re.search(r"ProfilerStep|\brank\b|\biteration", line, re.IGNORECASE)]
    assert about == [], log

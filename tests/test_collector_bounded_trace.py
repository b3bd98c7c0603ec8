"""A bounded trace: CUDATRACE_MAX_MB caps the trace file. Past
the cap the collector keeps the head (the first quarter) and the most
recent detail, and drops the middle in whole chunks, each of which reads
alone; a slice on the "cudatrace trace gap" track marks what went, and
carries what must stay whole: the memory peaks and the totals of threads
that ended in the middle. On the CPU double with tests/programs/long_run.c,
whose 64 MiB peak and whose worker thread (1,000 launches) both fall in the
middle a 1 MiB cap drops: the file stays under the cap, passes the suite's
Perfetto checks (the fixture runs them), and the report's counts and memory
figures equal the double's own."""
import os

import cudatrace_cmd

MIB = 1 << 20
MS = 1000000
GAP = "trace gap: middle dropped"
ROUNDS = 1000


def own_counts(stdout):
    return {name: int(n) for name, n in (line.split() for line in stdout.splitlines())}


def assert_report_is_the_programs(process, counts, truth):
    api = {name: s["calls"] for name, s in process["api"].items()}
    assert api == {name: n for name, n in counts.items() if name.startswith("cuda")}
    assert counts["cudaLaunchKernel"] == ROUNDS * 10 + 1000 == truth["launches"]
    assert counts["cudaMemsetAsync"] == ROUNDS * 100
    memory = process["memory"]
    assert (memory["peak_bytes"], memory["final_bytes"]) == (
        truth["peak_device_bytes"], truth["final_device_bytes"]) == (74 * MIB, 3 * MIB)
    assert (memory["allocs"], memory["frees"]) == (counts["cudaMalloc"], counts["cudaFree"])


def test_a_long_run_under_a_small_cap_keeps_its_ends_and_its_totals(trace_run, build_dir):
    completed, trace, truth = trace_run("long_run", ROUNDS, env={"CUDATRACE_MAX_MB": 1})
    assert completed.returncode == 0, completed.stderr
    path = completed.run_dir / "trace.pftrace.zst"
    assert path.stat().st_size <= MIB
    assert not [f for f in os.listdir(completed.run_dir) if f.endswith(".tmp")]
    gaps = [s for s in trace.slices if s["name"] == GAP]
    assert len(gaps) == 1
    gap = gaps[0]
    assert gap["args"]["dropped_chunks"] > 0 and gap["args"]["dropped_bytes"] > MIB
    assert gap["args"]["peak_device_bytes"] == 74 * MIB
    # The middle is gone: the 64 MiB allocation and the worker thread's track ...
    mallocs = [s["args"]["bytes"] for s in trace.slices if s["name"] == "cudaMalloc"]
    assert mallocs == [MIB] * 10
    assert {s["tid"] for s in trace.slices if s["tid"] is not None} == {completed.pid}
    # The gap is a span of the run's time, not of the order the collector
    # drained the threads in: no kept call begins inside it (a thread may run
    # 100 us ahead of another in the file), and it lies within the run.
    calls = sorted(s["ts"] for s in trace.slices if s["tid"] is not None)
    assert calls[0] < gap["ts"] and gap["ts"] + gap["dur"] <= calls[-1]
    inside = [t for t in calls if gap["ts"] + MS < t < gap["ts"] + gap["dur"] - MS]
    assert not inside
    launches = sum(s["name"] == "cudaLaunchKernel" for s in trace.slices)
    assert 0 < launches < ROUNDS * 10 / 2
    # ... the head and the end are there, and the live-memory counter only
    # ever holds values the program had, ending on its own.
    memory = sorted(trace.counters["CUDA device memory (live bytes)"])
    assert {v for _, v in memory} <= {k * MIB for k in range(1, 11)} | {74 * MIB}
    assert memory[0][1] == MIB and memory[-1][1] == 3 * MIB
    process = cudatrace_cmd.report(build_dir, path)["processes"][0]
    assert_report_is_the_programs(process, own_counts(completed.stdout), truth)
    assert process["gap"] == {"from_ns": gap["ts"], "to_ns": gap["ts"] + gap["dur"],
                              "dropped_bytes": gap["args"]["dropped_bytes"],
                              "dropped_chunks": gap["args"]["dropped_chunks"], "cut": []}
    text = cudatrace_cmd.run(build_dir, "report", path).stdout
    assert "gap            the trace's bound (CUDATRACE_MAX_MB) dropped" in text


def test_an_unbounded_trace_keeps_everything(trace_run, build_dir, tmp_path):
    """The twin: CUDATRACE_MAX_MB=0 writes every slice and no gap (read by
    the report only: the Python checks would take a minute on it)."""
    path = tmp_path / "unbounded.pftrace.zst"
    completed, _, truth = trace_run("long_run", ROUNDS,
                                    env={"CUDATRACE_MAX_MB": 0, "CUDATRACE_OUTPUT": path})
    assert completed.returncode == 0, completed.stderr
    assert path.stat().st_size > 2 * MIB
    process = cudatrace_cmd.report(build_dir, path)["processes"][0]
    assert process["gap"] is None
    assert all(s["dropped_slices"] == 0 for s in process["api"].values())
    assert_report_is_the_programs(process, own_counts(completed.stdout), truth)


def test_nvtx_ranges_open_across_chunks_stay_balanced(trace_run, build_dir):
    """A range open as a chunk ends is ended at the thread's latest event and
    begun again there in the next chunk, marked continued: every chunk is
    balanced, so a dropped one leaves no end without its begin (the fixture's
    check), and each continued range picks up where one of its name ended.
    8,000 steps inside an outer "run" range write more than the head (a
    quarter of 1 MiB): the head's end at least falls inside "run"."""
    preload = os.path.join(build_dir, "libcudatrace.so")
    completed, trace, _ = trace_run("nvtx_steps", 8000, "outer",
                                    env={"NVTX_INJECTION64_PATH": preload,
                                         "CUDATRACE_MAX_MB": 1})
    assert completed.returncode == 0, completed.stderr
    continued = [s for s in trace.slices if s["args"].get("continued") == 1]
    assert continued
    ends = {(s["name"], s["ts"] + s["dur"]) for s in trace.slices
            if s["args"].get("source") == "nvtx"}
    assert all((s["name"], s["ts"]) in ends for s in continued)
    assert "run" in {s["name"] for s in continued}
    assert {s["name"] for s in continued} <= {"run", "step", "forward", "backward"}

"""slow-alloc of a bounded trace is the whole run's.

slow-alloc weighs each allocation's and free's time against their median.
The collector tallies those times over every call record, per call site in
duration buckets (eight an octave, calls and total time each,
collector/tracks/usage_tally.c), and the gap carries the dropped chunks'
buckets; the report counts each bucket's calls at their mean. On the CPU
double with tests/programs/bounded_usage.c in its "allocs" mode, the middle
750 rounds each allocate and free a block, every tenth a 64 KiB one that
sleeps 40 ms (CT_DOUBLE_SLOW_ALLOC_NS), the others 4 KiB; the 1 MiB block
made up front sleeps too. The report's floor is raised to 20 ms
(slow_alloc_ns): on a loaded machine an allocation that waits for the
collector's ring can take a few milliseconds. Under a 1 MiB cap most of the middle is dropped,
and the finding's slow calls, their sites and the threshold equal those of
the same run unbounded, without kept_detail_only; the kept slices alone hold
too few slow calls to say so; the healthy twin (no slow allocations) stays
silent under the same cap."""
import os

from bounded_runs import MIDDLE, bounded_run
from test_report_usage_findings import site_line

MS = 1000000
SLEEP = 40 * MS
FLOOR = 20 * MS
LARGE = MIDDLE // 10
PROGRAM = os.path.join(os.path.dirname(__file__), "programs", "bounded_usage.c")
SITE = "bounded_usage.c:%d in timed_round" % site_line(PROGRAM, "the timed allocations")


def run(trace_run, build_dir, tmp_path, cap, slow):
    env = {"CT_DOUBLE_SLOW_ALLOC_BYTES": 65536}
    if slow:
        env["CT_DOUBLE_SLOW_ALLOC_NS"] = SLEEP
    completed, trace, _, r = bounded_run(trace_run, build_dir, tmp_path, "allocs", cap, env,
                                      report_args=("--threshold", f"slow_alloc_ns={FLOOR}"))
    assert completed.stdout.split() == ["allocs", str(MIDDLE), "large", str(LARGE)]
    kept_slow = trace and sum(s["name"] == "cudaMalloc" and s["dur"] >= FLOOR
                              for s in trace.slices)
    findings = {f["id"]: f for f in r["findings"]}
    return findings.get("slow-alloc"), kept_slow


def test_slow_alloc_of_a_dropped_middle_is_the_whole_runs(trace_run, build_dir, tmp_path):
    bounded, kept_slow = run(trace_run, build_dir, tmp_path, 1, True)
    whole, _ = run(trace_run, build_dir, tmp_path, 0, True)
    # The kept detail alone holds only some of the slow calls ...
    assert kept_slow < LARGE / 2
    # ... and the finding counts them all: the middle's 75 and the 1 MiB block.
    for f in (bounded, whole):
        assert f is not None
        assert "kept_detail_only" not in f["evidence"] and "kept detail" not in f["message"]
        assert f["evidence"]["slow_calls"] == LARGE + 1
        assert f["evidence"]["threshold_ns"] == FLOOR  # the floor: the median is microseconds
        assert f["evidence"]["median_ns"] < MS
        assert f["evidence"]["worst_ns"] >= SLEEP
    b, w = bounded["evidence"], whole["evidence"]
    assert [(s["site"], s["calls"]) for s in b["sites"]] == [
        (s["site"], s["calls"]) for s in w["sites"]]
    assert b["sites"][0]["site"].startswith(SITE) and b["sites"][0]["calls"] == LARGE
    # Each slow call sleeps at least 40 ms: the middle's slow time counts,
    # though the kept detail holds little of it.
    assert b["sites"][0]["ns"] >= LARGE * SLEEP and w["sites"][0]["ns"] >= LARGE * SLEEP


def test_a_healthy_middle_stays_silent(trace_run, build_dir, tmp_path):
    bounded, _ = run(trace_run, build_dir, tmp_path, 1, False)
    assert bounded is None, bounded["message"]

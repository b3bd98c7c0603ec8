"""The usage findings of a bounded trace are the whole run's.

The collector tallies, over every call record, what launch-overhead,
sync-stall, pageable-memcpy and small-copy-storm read (by the rules the
report applies to slices, common/call_cost.c) and writes the tallies of the
chunks it drops with the gap marker; the report adds them. On the CPU double
with tests/programs/bounded_usage.c, whose 750 syncs (1 ms each) and 750
small pageable copies all lie in the middle a 1 MiB cap drops, the bounded
trace's findings and their counts and top sites equal those of the same run
unbounded; the healthy twin, whose middle copies pinned memory in large
copies, stays silent under the same cap."""
import cudatrace_cmd
from bounded_runs import MIDDLE, bounded_run

MS = 1000000
USAGE = {"launch-overhead", "sync-stall", "pageable-memcpy", "small-copy-storm"}
COUNTS = {"sync-stall": ("sync_calls",), "pageable-memcpy": ("copies", "bytes"),
          "small-copy-storm": ("copies", "bytes")}


def run(trace_run, build_dir, tmp_path, mode, cap):
    completed, _, _, r = bounded_run(trace_run, build_dir, tmp_path, mode, cap,
                                  {"CT_DOUBLE_SYNC_NS": MS})
    assert completed.stdout.split() == ["syncs", str(MIDDLE if mode == "stalls" else 0),
                                        "copies", str(MIDDLE)]
    return r, {f["id"]: f for f in r["findings"] if f["id"] in USAGE}


def test_findings_of_a_dropped_middle_are_the_whole_runs(trace_run, build_dir, tmp_path):
    r, bounded = run(trace_run, build_dir, tmp_path, "stalls", 1)
    _, whole = run(trace_run, build_dir, tmp_path, "stalls", 0)
    process = r["processes"][0]
    # The middle's syncs are gone from the file's slices ...
    kept_syncs = process["api"]["cudaDeviceSynchronize"]
    assert kept_syncs["calls"] == MIDDLE and kept_syncs["dropped_slices"] > MIDDLE / 2
    # ... and the findings count them all the same.
    assert set(bounded) == set(whole) >= {"sync-stall", "pageable-memcpy", "small-copy-storm"}
    for finding_id, keys in COUNTS.items():
        b, w = bounded[finding_id]["evidence"], whole[finding_id]["evidence"]
        assert [b[k] for k in keys] == [w[k] for k in keys], finding_id
        assert [(s["site"], s["calls"]) for s in b["sites"]] == [
            (s["site"], s["calls"]) for s in w["sites"]], finding_id
        assert "kept detail only" not in bounded[finding_id]["message"]
    stall = bounded["sync-stall"]
    # 750 syncs and 750 pageable copies block, and the final cudaFree.
    assert stall["evidence"]["sync_calls"] == 2 * MIDDLE + 1
    assert stall["evidence"]["sync_ns"] >= MIDDLE * MS
    top = stall["evidence"]["sites"][0]
    assert "bounded_usage.c" in top["site"] and top["calls"] == MIDDLE and top["ns"] >= MIDDLE * MS
    copies = bounded["pageable-memcpy"]["evidence"]
    assert (copies["copies"], copies["bytes"]) == (MIDDLE, MIDDLE * 4096)
    assert bounded["small-copy-storm"]["evidence"]["copies"] == MIDDLE


def test_a_healthy_middle_stays_silent(trace_run, build_dir, tmp_path):
    _, bounded = run(trace_run, build_dir, tmp_path, "healthy", 1)
    assert not set(bounded) & {"sync-stall", "pageable-memcpy", "small-copy-storm"}, [
        f["message"] for f in bounded.values()]


def test_memory_growth_of_a_long_leak_is_whole(trace_run, build_dir, tmp_path):
    """memory-growth needs the live blocks and low points over the whole
    timeline, which the gap carries (collector/tracks/gap_memory.c): it is
    the whole run's, not the kept detail's. leak_loop's 20,000 steps (a 4 KiB
    copy and a 1 KiB block kept each) under a 1 MiB cap; small-copy-storm
    beside it counts every copy."""
    steps = 20000
    findings = {}
    for cap in (1, 0):
        path = tmp_path / f"leak-{cap}.pftrace.zst"
        completed, _, _ = trace_run("leak_loop", steps, 1024, 4096, env={
            "CUDATRACE_MAX_MB": cap, "CUDATRACE_OUTPUT": path})
        assert completed.returncode == 0, completed.stderr
        findings[cap] = {f["id"]: f for f in cudatrace_cmd.report(build_dir, path)["findings"]}
    bounded, whole = findings[1], findings[0]
    for f in (bounded["memory-growth"], whole["memory-growth"]):
        assert "kept_detail_only" not in f["evidence"] and "kept detail" not in f["message"]
        assert f["evidence"]["sites"][0]["site"].startswith("leak_loop.c:41 ")
    for f in (bounded["small-copy-storm"], whole["small-copy-storm"]):
        assert f["evidence"]["copies"] == steps and "kept_detail_only" not in f["evidence"]

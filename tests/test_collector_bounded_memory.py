"""Live device memory of a bounded trace is the whole run's.

The report recomputes live memory from the allocation and free slices; the
blocks a dropped middle made and left live come with the gap marker
(collector/tracks/gap_memory.c), with the middle's lowest and highest live
bytes. On the CPU double with tests/programs/bounded_usage.c: in the
"leaks" and "holds" modes the middle 750 rounds each keep a 64 KiB block
from one line, in the "frees" mode they free it again; all then ask for
1 TiB, which fails, with 1 MiB made up front still live; "holds" then
frees its blocks, in the kept tail. Under a 1 MiB cap the middle is
dropped, and memory-growth (its site, blocks and bytes) and oom (its live
bytes, exact) equal the same run's unbounded; the healthy twin stays silent
and its live bytes at the failure are the unbounded run's."""
import os

from bounded_runs import MIB, MIDDLE, bounded_run
from test_report_usage_findings import site_line

BLOCK = 64 * 1024
PROGRAM = os.path.join(os.path.dirname(__file__), "programs", "bounded_usage.c")
SITE = "bounded_usage.c:%d in middle_block" % site_line(PROGRAM, "the middle's blocks")


def run(trace_run, build_dir, tmp_path, mode, cap):
    completed, _, _, r = bounded_run(trace_run, build_dir, tmp_path, mode, cap,
                                  {"CT_DOUBLE_MEM_LIMIT": 1 << 30}, thinned=("cudaMalloc", SITE))
    assert completed.stdout.split() == ["blocks", str(0 if mode == "frees" else MIDDLE)]
    return {f["id"]: f for f in r["findings"]}


def test_memory_growth_and_oom_of_a_dropped_middle_are_the_whole_runs(trace_run, build_dir,
                                                                       tmp_path):
    bounded = run(trace_run, build_dir, tmp_path, "leaks", 1)
    whole = run(trace_run, build_dir, tmp_path, "leaks", 0)
    growth, whole_growth = bounded["memory-growth"], whole["memory-growth"]
    assert "kept_detail_only" not in growth["evidence"]
    assert "kept detail" not in growth["message"]
    top = growth["evidence"]["sites"][0]
    assert (top["site"], top["calls"], top["bytes"]) == (SITE, MIDDLE, MIDDLE * BLOCK)
    whole_top = whole_growth["evidence"]["sites"][0]
    assert (whole_top["site"], whole_top["calls"], whole_top["bytes"]) == (
        top["site"], top["calls"], top["bytes"])
    # The low points span the middle: from what was made up front to all of it.
    assert growth["evidence"]["low_first_bytes"] == MIB
    assert growth["evidence"]["low_last_bytes"] == MIB + MIDDLE * BLOCK
    oom = bounded["oom"]["evidence"]
    assert oom["live_bytes"] == whole["oom"]["evidence"]["live_bytes"] == MIB + MIDDLE * BLOCK
    assert oom["live_allocations_bytes"] == MIB + MIDDLE * BLOCK
    # The largest blocks: the 1 MiB made up front, then the middle's, by site.
    assert [(s["site"], s["bytes"]) for s in oom["sites"]] == [
        (s["site"], s["bytes"]) for s in whole["oom"]["evidence"]["sites"]]
    assert [s["site"] for s in oom["sites"][1:]] == [SITE] * (len(oom["sites"]) - 1)


def test_a_middle_that_frees_what_it_makes_stays_silent(trace_run, build_dir, tmp_path):
    bounded = run(trace_run, build_dir, tmp_path, "frees", 1)
    whole = run(trace_run, build_dir, tmp_path, "frees", 0)
    assert "memory-growth" not in bounded and "memory-growth" not in whole
    assert bounded["oom"]["evidence"]["live_bytes"] == whole["oom"]["evidence"][
        "live_bytes"] == MIB


def test_blocks_freed_after_the_gap_were_live_before_it(trace_run, build_dir, tmp_path):
    """The middle's blocks, freed in the kept tail after the failure, were
    live at it: the gap, written again at the end, still carries them, and
    their frees leave nothing that rose and stayed (no memory-growth)."""
    bounded = run(trace_run, build_dir, tmp_path, "holds", 1)
    whole = run(trace_run, build_dir, tmp_path, "holds", 0)
    assert bounded["oom"]["evidence"]["live_bytes"] == whole["oom"]["evidence"][
        "live_bytes"] == MIB + MIDDLE * BLOCK
    assert "memory-growth" not in bounded and "memory-growth" not in whole

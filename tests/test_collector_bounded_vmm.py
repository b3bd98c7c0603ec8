"""Virtual-memory handles a bounded trace's dropped middle made stay live
in its report.

A handle's physical memory (cuMemCreate, then cuMemMap) counts as device
memory from its create until it is released and unmapped; one made in a
dropped chunk and still live comes with the gap marker as a
`cudatrace.live_memory` instant with `handle` (collector/tracks/
gap_memory.c). On the CPU, driver and CUPTI doubles with
tests/programs/bounded_usage.c in its "vmm" mode, the middle 750 rounds
each make a 64 KiB handle and map it, all kept to the end. Under a 1 MiB cap
most of the middle's creates are gone from the file, yet memory (peak,
final, by source) and memory-growth (its site, handles and bytes) equal the
same run's unbounded; the healthy twin, which makes no handle, has no
virtual-memory bytes and no memory-growth under the same cap."""
import os

from bounded_runs import MIB, MIDDLE, bounded_run
from test_report_usage_findings import site_line

BLOCK = 64 * 1024
PROGRAM = os.path.join(os.path.dirname(__file__), "programs", "bounded_usage.c")
SITE = "bounded_usage.c:%d in vmm_round" % site_line(PROGRAM, "the middle's handles")


def run(trace_run, build_dir, tmp_path, mode, cap):
    # A GPU that keeps pace with the program's 150,000 memsets, so that none is still in
    # flight when it exits (which the tracer would wait for: docs/gpu.md).
    env = {"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver", "CT_DOUBLE_DRIVER": "1",
           "CT_DOUBLE_KERNEL_NS": 0, "CT_DOUBLE_TRANSFER_NS": 0}
    completed, _, _, r = bounded_run(trace_run, build_dir, tmp_path, mode, cap, env,
                                  thinned=("cuMemCreate", SITE))
    (process,) = r["processes"]
    return completed.stdout.split(), process["memory"], {f["id"]: f for f in r["findings"]}


def test_handles_of_a_dropped_middle_stay_live(trace_run, build_dir, tmp_path):
    out, memory, bounded = run(trace_run, build_dir, tmp_path, "vmm", 1)
    whole_out, whole_memory, whole = run(trace_run, build_dir, tmp_path, "vmm", 0)
    assert out == whole_out == ["handles", str(MIDDLE)]
    held = MIDDLE * BLOCK
    assert memory["by_source"]["vmm"] == {"peak_bytes": held, "final_bytes": held}
    assert memory["by_source"] == whole_memory["by_source"]
    assert (memory["peak_bytes"], memory["final_bytes"]) == (
        whole_memory["peak_bytes"], whole_memory["final_bytes"]) == (MIB + held, held)
    for f in (bounded["memory-growth"], whole["memory-growth"]):
        assert "kept_detail_only" not in f["evidence"] and "kept detail" not in f["message"]
        top = f["evidence"]["sites"][0]
        assert (top["site"], top["calls"], top["bytes"]) == (SITE, MIDDLE, held)
        assert f["evidence"]["low_first_bytes"] == MIB  # the device buffer made up front


def test_a_healthy_middle_makes_no_handle(trace_run, build_dir, tmp_path):
    out, memory, bounded = run(trace_run, build_dir, tmp_path, "healthy", 1)
    assert out == ["syncs", "0", "copies", str(MIDDLE)]
    assert memory["by_source"]["vmm"] == {"peak_bytes": 0, "final_bytes": 0}
    assert "memory-growth" not in bounded

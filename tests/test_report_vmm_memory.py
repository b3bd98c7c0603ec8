"""Device memory made through the driver's virtual-memory API (issue "Every byte on the
device"): PyTorch's expandable segments and NCCL's buffers grow by cuMemCreate and cuMemMap,
which no cudaMalloc shows. tests/programs/vmm_allocator.c imitates such an allocator on the
driver and CUPTI doubles, growing a segment by 2 MiB granules and never calling cudaMalloc;
it prints the physical bytes it holds as it counts them. The calls reach the trace through
CUPTI's driver callbacks; their physical memory is a counter of its own
(VMM_TRACK), and counts in the device total that the report and the memory findings use."""
import json
import os

import cudatrace_cmd

MIB = 1 << 20
GRANULE = 2 * MIB
VMM_TRACK = "CUDA device memory, virtual-memory API (physical bytes)"
SOURCE = os.path.join(os.path.dirname(__file__), "programs", "vmm_allocator.c")


def create_site():
    """The cuMemCreate call's site, from the line the program marks."""
    with open(SOURCE) as f:
        (line,) = [n for n, text in enumerate(f, 1) if "site: create" in text]
    return f"vmm_allocator.c:{line} in make"


def run(trace_run, build_dir, *args, **extra):
    env = {"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver", "CT_DOUBLE_DRIVER": "1",
           **{k: str(v) for k, v in extra.items()}}
    completed, trace, _ = trace_run("vmm_allocator", *map(str, args), env=env)
    assert completed.returncode == 0, completed.stderr
    truth = dict(zip(*[iter(completed.stdout.split()[1:])] * 2))
    report = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (process,) = report["processes"]
    return trace, {k: int(v) for k, v in truth.items()}, process, report["findings"]


def vmm_values(trace):
    return [v for _, v in trace.counters.get(VMM_TRACK, [])]


def test_a_segment_grown_by_granules_is_counted_exactly(trace_run, build_dir):
    """30 steps, each growing the segment by a granule it keeps: the counter rises by one
    granule a step, and the device total, peak and final, is the program's own."""
    trace, truth, p, findings = run(trace_run, build_dir, "leak", 30)
    assert truth == {"peak": 30 * GRANULE, "final": 30 * GRANULE, "creates": 30, "failed": 0}
    assert vmm_values(trace) == [k * GRANULE for k in range(1, 31)]
    memory = p["memory"]
    assert (memory["peak_bytes"], memory["final_bytes"]) == (30 * GRANULE, 30 * GRANULE)
    assert memory["by_source"] == {"allocations": {"peak_bytes": 0, "final_bytes": 0},
                                   "vmm": {"peak_bytes": 30 * GRANULE,
                                           "final_bytes": 30 * GRANULE},
                                   "graphs": {"peak_bytes": 0, "final_bytes": 0}}
    calls = {name: s["calls"] for name, s in p["api"].items()}
    assert {name: calls.get(name) for name in ("cuMemCreate", "cuMemMap", "cuMemSetAccess",
                                               "cuMemAddressReserve")} == {
        "cuMemCreate": 30, "cuMemMap": 30, "cuMemSetAccess": 60, "cuMemAddressReserve": 1}
    # Each map names the handle a create returned, and where in it the mapping starts.
    creates = [s for s in trace.slices if s["name"] == "cuMemCreate"]
    maps = [s for s in trace.slices if s["name"] == "cuMemMap"]
    assert [s["args"]["handle"] for s in maps] == [s["args"]["handle"] for s in creates]
    assert {(s["args"]["bytes"], s["args"]["offset"], s["args"]["seen_by"]) for s in maps} == {
        (GRANULE, 0, "cupti")}
    (growth,) = [f for f in findings if f["id"] == "memory-growth"]
    (top,) = growth["evidence"]["sites"]
    assert top["site"] == create_site()
    assert 12 <= top["calls"] <= 30 and top["bytes"] == top["calls"] * GRANULE


def test_healthy_twin_a_segment_made_up_front_and_reused(trace_run, build_dir):
    _, truth, p, findings = run(trace_run, build_dir, "reuse", 30)
    assert truth["peak"] == truth["final"] == 4 * GRANULE
    assert (p["memory"]["peak_bytes"], p["memory"]["final_bytes"]) == (4 * GRANULE, 4 * GRANULE)
    assert findings == []


def test_a_handle_released_while_mapped_holds_its_memory_until_the_unmap(trace_run, build_dir):
    """Each handle is released as soon as it is mapped, and the segment unmapped whole in
    one call at the end: the memory stays through the releases and goes with the unmap."""
    trace, truth, p, _ = run(trace_run, build_dir, "early-release", 10)
    assert (truth["peak"], truth["final"]) == (10 * GRANULE, 0)
    assert vmm_values(trace) == [k * GRANULE for k in range(1, 11)] + [0]
    assert p["memory"]["by_source"]["vmm"] == {"peak_bytes": 10 * GRANULE, "final_bytes": 0}


def test_a_handle_mapped_twice_counts_once(trace_run, build_dir):
    trace, truth, p, _ = run(trace_run, build_dir, "double-map")
    assert (truth["peak"], truth["final"]) == (4 * GRANULE, 0)
    assert vmm_values(trace) == [4 * GRANULE, 0]
    assert (p["memory"]["peak_bytes"], p["memory"]["final_bytes"]) == (4 * GRANULE, 0)


def test_oom_under_the_virtual_memory_api(trace_run, build_dir):
    """The sixth granule does not fit under a 10 MiB device: the oom finding names the live
    bytes and the sites that hold them, all physical memory no cudaMalloc made."""
    _, truth, p, findings = run(trace_run, build_dir, "oom", 8, CT_DOUBLE_VMM_LIMIT=10 * MIB)
    assert (truth["creates"], truth["failed"], truth["final"]) == (5, 1, 10 * MIB)
    (oom,) = [f for f in findings if f["id"] == "oom"]
    e = oom["evidence"]
    assert (e["requested_bytes"], e["live_bytes"], e["peak_bytes"], e["site"]) == (
        GRANULE, 10 * MIB, 10 * MIB, create_site())
    assert [(s["site"], s["bytes"]) for s in e["sites"]] == [(create_site(), GRANULE)] * 3
    assert (e["live_allocations_bytes"], e["live_vmm_bytes"], e["by_library"]) == (
        0, 10 * MIB, [])
    assert "pools_reserved_bytes" not in e  # it never asked a pool
    assert ("with 10.00 MiB live (peak 10.00 MiB): 0 B from allocations, 10.00 MiB physical "
            "memory of the virtual-memory API; largest live block from " + create_site()) \
        in oom["message"]
    assert p["api"]["cuMemCreate"]["errors"] == 1


def held_by_libraries(trace_run, build_dir, library):
    proc, _, _ = trace_run("call_library", os.path.join(build_dir, "tests", "holders", library),
                           "allocate_buffers")
    assert proc.returncode == 0 and "allocate_buffers -> 0" in proc.stdout, proc.stderr
    report = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")
    return report["processes"][0]["memory"], proc


def test_memory_a_cuda_library_allocated_is_named_as_its(trace_run, build_dir):
    # two 32 MiB blocks from inside "libnccl.so.2", one freed again
    memory, proc = held_by_libraries(trace_run, build_dir, "libnccl.so.2")
    assert memory["by_library"] == [{"library": "nccl", "peak_bytes": 64 * MIB,
                                     "final_bytes": 32 * MIB}]
    assert (memory["peak_bytes"], memory["final_bytes"]) == (64 * MIB, 32 * MIB)
    text = cudatrace_cmd.run(build_dir, "report", proc.run_dir / "trace.pftrace.zst").stdout
    assert "of it allocated by libnccl: peak 64.00 MiB, final 32.00 MiB\n" in text


def test_healthy_twin_memory_any_other_library_allocated_is_the_programs(trace_run, build_dir):
    memory, _ = held_by_libraries(trace_run, build_dir, "libbuffers.so")
    assert memory["by_library"] == []
    assert (memory["peak_bytes"], memory["final_bytes"]) == (64 * MIB, 32 * MIB)


POOL_TRACK = "CUDA memory pools reserved (bytes, as the runtime said when asked)"


def reserve_report(trace_run, build_dir, track, program, *args):
    """The program's output, its process report, the text report and the
    values of the reserve counter `track` in time order."""
    completed, trace, _ = trace_run(program, *args)
    assert completed.returncode == 0, completed.stderr
    path = str(completed.run_dir / "trace.pftrace.zst")
    as_json, as_text = (cudatrace_cmd.run(build_dir, "report", *flag, path).stdout
                        for flag in (["--json"], []))
    (process,) = json.loads(as_json)["processes"]
    counter = [v for _, v in sorted(trace.counters.get(track, []))]
    return completed.stdout, process, as_text, counter


def pool_report(trace_run, build_dir, program):
    stdout, process, text, counter = reserve_report(trace_run, build_dir, POOL_TRACK, program)
    return stdout, process["memory"], text, counter


def test_a_pools_reserve_is_what_the_runtime_said_when_asked(trace_run, build_dir):
    """tests/programs/pool_reserve.c reads its pool's ReservedMemCurrent 8 times (the double
    reserves in 2 MiB granules and gives back at a sync and a trim): the trace's counter steps
    at each answer, the report's peak is the most it was told, its final the last answer;
    12 MiB held while only 6 MiB were live."""
    stdout, memory, text, counter = pool_report(trace_run, build_dir, "pool_reserve")
    readings = [int(v) for v in stdout.split()]
    assert readings == [4 * MIB, 6 * MIB, 10 * MIB, 12 * MIB, 12 * MIB, 6 * MIB, 6 * MIB, 0]
    assert counter == readings  # the live view's counter steps at each answer
    assert memory["pools"] == {"readings": 8, "pools": 1, "trims": 1,
                               "reserved_peak_bytes": 12 * MIB, "reserved_final_bytes": 0}
    assert memory["peak_bytes"] == 12 * MIB and memory["final_bytes"] == 0
    assert "pools (cudaMallocAsync) held up to 12.00 MiB as the runtime said when asked, 0 B " \
        "when last asked (8 readings of 1 pool)" in text


def test_a_job_that_never_asks_a_pool_has_no_pool_figures(trace_run, build_dir):
    _, memory, text, counter = pool_report(trace_run, build_dir, "api_mix")
    assert counter == []
    assert memory["pools"] == {"readings": 0, "pools": 0, "trims": 0,
                               "reserved_peak_bytes": 0, "reserved_final_bytes": 0}
    assert "pools (cudaMallocAsync)" not in text


GRAPH_TRACK = "CUDA graphs' memory reserved (bytes, as the runtime said when asked)"


def graph_report(trace_run, build_dir, *args):
    return reserve_report(trace_run, build_dir, GRAPH_TRACK, "graph_memory", *args)


def test_graphs_memory_is_what_the_runtime_said_when_asked(trace_run, build_dir):
    """tests/programs/graph_memory.c: two executable graphs of 8 MiB of memory nodes, the
    graphs' reserve asked 6 times (the double holds an exec's allocations from its first launch
    to its destruction, and the reserve until a trim): the counter steps at each answer (the
    UsedMemCurrent read is not one), and the graphs are a source of device memory of their
    own, summed into the total, since no allocation call the tracer sees makes it."""
    stdout, p, text, counter = graph_report(trace_run, build_dir)
    readings = [int(v) for v in stdout.split()]
    assert readings == [8 * MIB, 8 * MIB, 16 * MIB, 16 * MIB, 8 * MIB, 0]
    assert counter == readings
    memory = p["memory"]
    assert memory["by_source"]["graphs"] == {"peak_bytes": 16 * MIB, "final_bytes": 0}
    assert (memory["peak_bytes"], memory["final_bytes"]) == (16 * MIB, 0)
    assert p["api"]["cudaDeviceGetGraphMemAttribute"]["calls"] == 7
    assert "of it held by CUDA graphs' allocator (memory nodes), as the runtime said when " \
        "asked: peak 16.00 MiB, final 0 B" in text


def test_healthy_twin_graphs_never_asked_have_no_figures(trace_run, build_dir):
    stdout, p, text, counter = graph_report(trace_run, build_dir, "quiet")
    assert stdout == "" and counter == []
    assert p["memory"]["by_source"]["graphs"] == {"peak_bytes": 0, "final_bytes": 0}
    assert p["memory"]["peak_bytes"] == 0 and "graphs' allocator" not in text

"""CUDA graphs through the tracer, on the doubles' stream capture, graph API and CUPTI
graph callbacks (tests/doubles/shared/double_graph.h): a call made on a capturing stream is
captured, not executed (cuda_runtime_api.h), so it starts no flow, moves no memory and counts as no
launch; every kernel, copy and set a graph launch replays carries the node it was made as, its
graph and the line that captured it, and ends the flow of the launch that ran it; the report's
graphs section counts the graph's nodes, instantiations, launches and replayed work, and
re-capture fires for graphs captured again and again at one line, never for a graph captured
once and replayed. The program is tests/programs/graph_steps.c, whose call sites are marked
`/* site X */`."""
import collections
import os
import subprocess
import sys

import pytest

import cudatrace_cmd
import perfetto_check
from test_cmd_ctl import snapshot
from test_gpu_records import IMPORT_ERRORS, rows, trace_processor
from test_preload_cupti import gpu_slices, host_slices, trace_file, with_gpu

SOURCE = os.path.join(os.path.dirname(__file__), "programs", "graph_steps.c")
KERNELS = {"A": ("graph_step_a", 20), "B": ("graph_step_b", 15), "C": ("graph_step_c", 5)}
CAPTURED = {"cudaMallocAsync": 1, "cudaLaunchKernel": 40, "cudaMemsetAsync": 1,
            "cudaFreeAsync": 1}


def line_of(tag):
    with open(SOURCE) as f:
        found = [n for n, text in enumerate(f, 1) if f"/* site {tag} */" in text]
    assert len(found) == 1, (tag, found)
    return found[0]


def at(site):
    """A site's "file:line", without the function (the compiler may inline the helpers)."""
    return site.split(" in ")[0] if site else site


def where(tag):
    return f"graph_steps.c:{line_of(tag)}"


def captured(trace):
    return [s for s in host_slices(trace) if s["args"].get("graph_work") == "captured"]


def replayed(trace):
    return [s for kind in ("kernel", "memcpy", "memset") for s in gpu_slices(trace, kind)
            if s["args"].get("graph_work") == "replayed"]


def graphs_of(report):
    (process,) = report["processes"]
    return process.get("graphs")


def findings(report, finding_id):
    return [f for f in report["findings"] if f["id"] == finding_id]


@pytest.mark.twin("capture-failed", "re-capture")
def test_capture_is_not_execution_and_each_replay_is_named_by_its_capture(trace_run, build_dir,
                                                                           tmp_path):
    """One capture of 40 kernels from three lines, a memset and an allocation with its free,
    replayed 1,000 times: 43 captured calls, none with a flow; 41,000 replayed pieces of work,
    each node 1,000 times under the id its captured call made, named by that call's line, each
    ending the flow of a cudaGraphLaunch; the report counts no launch and no allocation for the
    captured calls, and the graph with its nodes, launches and top kernels by line."""
    replays = 1000
    completed, trace, _ = trace_run("graph_steps", "--replays", replays,
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr

    calls = captured(trace)
    assert collections.Counter(s["name"] for s in calls) == CAPTURED
    assert all(not s["flow_ids"] for s in calls)
    building = collections.Counter(s["name"] for s in host_slices(trace)
                                   if s["args"].get("graph_work") == "building")
    assert building == {"cudaStreamBeginCapture": 1, "cudaStreamEndCapture": 1,
                        "cudaGraphInstantiate": 1, "cudaGraphExecDestroy": 1,
                        "cudaGraphDestroy": 1}
    made = {s["args"]["graph_node_id"]: s for s in calls}
    assert len(made) == 43 and len({s["args"]["graph_id"] for s in calls}) == 1

    work = replayed(trace)
    assert len(work) == replays * 41
    runs = collections.Counter(g["args"]["graph_node_id"] for g in work)
    kernel_and_set_nodes = {n for n, s in made.items()
                            if s["name"] in ("cudaLaunchKernel", "cudaMemsetAsync")}
    assert set(runs) == kernel_and_set_nodes and set(runs.values()) == {replays}
    for g in work:
        call = made[g["args"]["graph_node_id"]]
        assert g["args"]["graph_id"] == call["args"]["graph_id"]
        assert g["args"]["capture_site"] == call["args"]["site"]
    by_line = collections.Counter((g["name"], at(g["args"]["capture_site"])) for g in work)
    expected = {(name, where(tag)): n * replays for tag, (name, n) in KERNELS.items()}
    expected[("memset", where("S"))] = replays
    assert by_line == expected

    # A flow from the launch to each piece of work it ran, one id each (Perfetto joins a flow
    # id's start to one end).
    launches = {f: s for s in host_slices(trace, "cudaGraphLaunch") for f in s["flow_ids"]}
    assert len(host_slices(trace, "cudaGraphLaunch")) == replays
    ends = [g["terminating_flow_ids"] for g in work]
    assert all(len(e) == 1 and e[0] in launches for e in ends)
    assert len({e[0] for e in ends}) == len(launches) == replays * 41
    assert len({launches[e[0]]["ts"] for e in ends}) == replays

    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    (process,) = report["processes"]
    assert process["launches"]["count"] == 0
    assert process["api"]["cudaLaunchKernel"]["calls"] == 40
    assert (process["memory"]["allocs"], process["memory"]["frees"]) == (1, 1)  # the cudaMalloc
    g = graphs_of(report)
    assert (g["count"], g["captured_calls"], g["replayed_share"], g["unknown_node_work"]) == (
        1, 43, 1.0, 0)
    (graph,) = g["graphs"]
    assert graph["nodes"] == {"kernel": 40, "memcpy": 0, "memset": 1, "alloc": 1, "free": 1,
                              "other": 0}
    assert (graph["made_by"], at(graph["site"])) == ("capture", where("P"))
    assert (graph["instantiations"], graph["launches"]) == (1, replays)
    assert graph["replayed_work"] == replays * 41
    assert graph["launch_gpu_ns"]["launches"] == replays
    assert 0 < graph["launch_gpu_ns"]["median"] <= graph["launch_gpu_ns"]["max"]
    top = {(k["name"], at(k["capture_site"])): (k["nodes"], k["runs"]) for k in graph["top_kernels"]}
    assert top == {**{(name, where(tag)): (n, n * replays) for tag, (name, n) in KERNELS.items()},
                   ("memset", where("S")): (1, replays)}
    # The kernel table names each kernel's replays by the line that captured them.
    kernels = {k["name"]: [(at(c["site"]), c["count"]) for c in k["capture_sites"]]
               for k in process["gpu"]["top_kernels"]}
    assert kernels == {name: [(where(tag), n * replays)] for tag, (name, n) in KERNELS.items()}
    assert findings(report, "re-capture") == findings(report, "capture-failed") == []


@pytest.mark.parametrize("mode,into", [("global", None), ("thread", None), ("relaxed", None),
                                       ("global", "to-graph")])
def test_every_capture_mode_is_capture(trace_run, build_dir, tmp_path, mode, into):
    """Global, thread-local and relaxed capture differ in which other calls they prohibit, not in
    what a captured call is; nor does a capture into a graph made beforehand
    (cudaStreamBeginCaptureToGraph), whose graph is named by the line that began it."""
    extra = ["--to-graph"] if into else []
    completed, trace, _ = trace_run("graph_steps", "--mode", mode, "--replays", 5, *extra,
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert collections.Counter(s["name"] for s in captured(trace)) == CAPTURED
    assert len(replayed(trace)) == 5 * 41
    assert all(not s["flow_ids"] for s in captured(trace))
    (graph,) = graphs_of(cudatrace_cmd.report(build_dir, trace_file(completed)))["graphs"]
    assert (graph["made_by"], at(graph["site"])) == ("capture", where("G" if into else "P"))


@pytest.mark.parametrize("node,graph", [("clone", "original"), ("original", "original"),
                                        ("clone", "clone"), ("original", "clone")])
def test_replays_are_named_whichever_ids_cupti_gives(trace_run, build_dir, tmp_path, node, graph):
    """cupti_activity.h does not say whether a replayed record's graphNodeId is the executable
    graph's node or the one it was cloned from, nor whether graphId is the graph's or its
    clone's: under each, the work is named by the node its call captured, in that call's graph."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_CUPTI_GRAPH_NODE=node,
                   CT_DOUBLE_CUPTI_GRAPH_ID=graph)
    completed, trace, _ = trace_run("graph_steps", "--replays", 3, env=env)
    assert completed.returncode == 0, completed.stderr
    made = {s["args"]["graph_node_id"]: s for s in captured(trace)}
    work = replayed(trace)
    assert len(work) == 3 * 41
    for g in work:
        call = made[g["args"]["graph_node_id"]]
        assert (g["args"]["graph_id"], g["args"]["capture_site"]) == (call["args"]["graph_id"],
                                                                      call["args"]["site"])


@pytest.mark.finding("re-capture")
def test_graphs_rebuilt_every_step_are_re_capture(trace_run, build_dir, tmp_path):
    """After the captured-once graph's replays, five graphs are captured at one line and launched
    once each: re-capture names that line (site Q) with the five graphs, and not the first."""
    completed, _, _ = trace_run("graph_steps", "--replays", 10, "--rebuild", 5,
                                env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    (f,) = findings(report, "re-capture")
    assert at(f["evidence"]["sites"][0]["site"]) == where("Q")
    evidence = f["evidence"]
    assert (evidence["graphs"], evidence["launches"]) == (5, 5)
    assert evidence["building_ns"] > 0
    graphs = graphs_of(report)["graphs"]
    assert len(graphs) == 6
    rebuilt = [g for g in graphs if at(g["site"]) == where("Q")]
    assert len(rebuilt) == 5 and all(g["nodes"]["kernel"] == 10 and g["launches"] == 1
                                     for g in rebuilt)
    assert "re-capture" in cudatrace_cmd.run(build_dir, "report", trace_file(completed)).stdout


@pytest.mark.twin("re-capture")
@pytest.mark.parametrize("rebuilds", [0, 2])
def test_re_capture_twins_stay_silent(trace_run, build_dir, tmp_path, rebuilds):
    """A graph captured once and replayed, and two rebuilds (under the three the threshold
    asks for), are no re-capture."""
    completed, _, _ = trace_run("graph_steps", "--replays", 10, "--rebuild", rebuilds,
                                env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    assert findings(report, "re-capture") == []
    assert graphs_of(report)["count"] == 1 + rebuilds


def test_a_graph_built_with_the_graph_api(trace_run, build_dir, tmp_path):
    """Nodes the graph API adds are graph building (`added`) with their call's line, and their
    replays are named by it."""
    completed, trace, _ = trace_run("graph_steps", "--replays", 1, "--explicit",
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    added = [s for s in host_slices(trace) if s["args"].get("graph_work") == "added"]
    assert collections.Counter(s["name"] for s in added) == {"cudaGraphAddKernelNode": 3,
                                                              "cudaGraphAddMemsetNode": 1}
    assert {at(s["args"]["site"]) for s in added if s["name"] == "cudaGraphAddKernelNode"} == {
        where("K")}
    graph_id = added[0]["args"]["graph_id"]
    work = [g for g in replayed(trace) if g["args"]["graph_id"] == graph_id]
    assert collections.Counter((g["name"], at(g["args"]["capture_site"])) for g in work) == {
        ("graph_step_a", where("K")): 30, ("memset", at(added[-1]["args"]["site"])): 10}
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    (built,) = [g for g in graphs_of(report)["graphs"] if g["graph_id"] == graph_id]
    assert (built["made_by"], built["launches"], built["nodes"]["kernel"]) == ("graph API", 10, 3)


@pytest.mark.finding("capture-failed")
def test_a_failed_launch_and_an_invalidated_capture_start_nothing(trace_run, build_dir,
                                                                   tmp_path):
    """A launch refused inside a capture makes no node and no flow; the capture it was in, ended
    invalidated, is no graph, and capture-failed names the synchronisation that broke it (a
    launch's bad configuration does not invalidate a capture), its error and its line."""
    completed, trace, _ = trace_run("graph_steps", "--replays", 1, "--fail",
                                    env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["cudaErrorInvalidConfiguration",
                                        "cudaErrorStreamCaptureUnsupported",
                                        "cudaErrorStreamCaptureInvalidated"]
    (failed,) = [s for s in host_slices(trace, "cudaLaunchKernel") if s["args"]["result"] != 0]
    assert not failed["flow_ids"] and "graph_work" not in failed["args"]
    assert at(failed["args"]["site"]) == where("X")
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    assert graphs_of(report)["count"] == 1
    (f,) = findings(report, "capture-failed")
    assert (f["severity"], at(f["evidence"]["site"])) == ("error", where("Y"))
    assert (f["evidence"]["failed_captures"], f["evidence"]["end_error"],
            f["evidence"]["refused_error"]) == (1, 901, 900)
    assert "cudaStreamSynchronize" in f["message"] and "cudaErrorStreamCaptureUnsupported" in \
        f["message"]


def test_no_unfinished_work_at_a_snapshot_between_replays(build_dir, tmp_path):
    """A snapshot taken while the program pauses between replays, its stream synchronised: every
    flow a host call began is ended by GPU work, the captured calls beginning none."""
    from conftest import SAMPLE_HZ, _STEERING_PREFIXES, _STEERING_VARS

    trace = tmp_path / "trace.pftrace.zst"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(_STEERING_PREFIXES) and k not in _STEERING_VARS}
    env.update(with_gpu(build_dir, tmp_path), CUDATRACE_OUTPUT=str(trace),
               CUDATRACE_SAMPLE_HZ=SAMPLE_HZ,
               LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"))
    proc = subprocess.Popen([os.path.join(build_dir, "tests", "graph_steps"), "--replays", "200",
                             "--pause-at", "100", "--pause-ms", "3000"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "paused\n"
    path = snapshot(build_dir, proc.pid)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    taken = perfetto_check.load(path, allow_unclosed=True)
    assert len(captured(taken)) == 43
    begun = {f for s in host_slices(taken) for f in s["flow_ids"]}
    ended = {f for s in taken.slices for f in s["terminating_flow_ids"]}
    assert len(host_slices(taken, "cudaGraphLaunch")) == 100
    assert begun and begun - ended == set()


def test_graph_level_tracing_gives_one_record_per_launch(trace_run, build_dir, tmp_path):
    """CUDATRACE_GPU_GRAPHS=graphs: CUPTI's graph-level records ("without giving visibility
    about the execution of its nodes"), one slice per launch named by its graph, ending the
    launch's flow; the report times each launch from them."""
    env = with_gpu(build_dir, tmp_path, CUDATRACE_GPU_GRAPHS="graphs")
    completed, trace, _ = trace_run("graph_steps", "--replays", 20, env=env)
    assert completed.returncode == 0, completed.stderr
    whole = gpu_slices(trace, "graph")
    assert len(whole) == 20 and replayed(trace) == []
    graph_id = captured(trace)[0]["args"]["graph_id"]
    assert {(g["name"], g["args"]["graph_id"]) for g in whole} == {(f"graph {graph_id}",
                                                                     graph_id)}
    launches = {f for s in host_slices(trace, "cudaGraphLaunch") for f in s["flow_ids"]}
    assert {g["terminating_flow_ids"][0] for g in whole} == launches
    (graph,) = graphs_of(cudatrace_cmd.report(build_dir, trace_file(completed)))["graphs"]
    assert (graph["launches"], graph["launch_gpu_ns"]["launches"]) == (20, 20)
    assert graph["top_kernels"] == []


@pytest.mark.skipif(not trace_processor(), reason="no trace_processor_shell on PATH nor "
                    "$CUDATRACE_TRACE_PROCESSOR")
@pytest.mark.parametrize("records", ["typed", "tracks"])
def test_the_trace_processor_draws_a_flow_from_the_launch_to_every_node(trace_run, build_dir,
                                                                       tmp_path, records):
    """Perfetto's trace processor (v58.2) reads the trace with no import error and joins each
    replayed kernel and memset to the cudaGraphLaunch that ran it: with typed records through the
    launch's gpu_correlation, on GPU tracks through a flow id per node."""
    env = with_gpu(build_dir, tmp_path, CUDATRACE_GPU_RECORDS=records)
    completed, _, _ = trace_run("graph_steps", "--replays", 5, env=env)
    assert completed.returncode == 0, completed.stderr
    tp, path = trace_processor(), trace_file(completed)
    assert rows(tp, path, IMPORT_ERRORS, tmp_path) == []
    joined = rows(tp, path, """
        select h.name, s.name, count(*) from flow f join slice s on s.id = f.slice_in
        join slice h on h.id = f.slice_out where h.name = 'cudaGraphLaunch'
        group by h.name, s.name order by s.name;""", tmp_path)
    assert joined == [("cudaGraphLaunch", "graph_step_a", "100"),
                      ("cudaGraphLaunch", "graph_step_b", "75"),
                      ("cudaGraphLaunch", "graph_step_c", "25"),
                      ("cudaGraphLaunch", "memset", "5")]


GRAPH_RESERVED = "CUDA graphs' memory reserved (bytes, as the runtime said when asked)"
MIB = 1 << 20


@pytest.mark.parametrize("asks", ["asks", "quiet"])
def test_graph_memory_is_read_when_it_is_made_and_trimmed(trace_run, build_dir, tmp_path, asks):
    """tests/programs/graph_memory.c: two executable graphs of 8 MiB of allocation nodes. With
    CUPTI telling the preload that an instantiation made allocation nodes, the preload reads
    the graphs' reserve itself after each launch, destruction and trim: 8 MiB at the first
    launch, 16 at the second graph's, 8 after the first trim, 0 after the last, whether or not
    the program asks; the graphs are a source of device memory of their own in the report."""
    args = [] if asks == "asks" else ["quiet"]
    completed, trace, _ = trace_run("graph_memory", *args, env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    readings = sorted(trace.counters.get(GRAPH_RESERVED, []))
    launches = sorted(s["ts"] for s in host_slices(trace, "cudaGraphLaunch"))
    # Nothing before the first launch made the memory.
    assert readings and readings[0][0] >= launches[0]
    steps = [v for i, (_, v) in enumerate(readings) if i == 0 or v != readings[i - 1][1]]
    assert steps == [8 * MIB, 16 * MIB, 8 * MIB, 0]
    (process,) = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"]
    assert process["memory"]["by_source"]["graphs"] == {"peak_bytes": 16 * MIB, "final_bytes": 0}


def test_a_captured_allocation_is_the_graphs_from_its_first_launch(trace_run, build_dir,
                                                                   tmp_path):
    """graph_steps' capture allocates 4 MiB with cudaMallocAsync: not live when captured, made
    by the graphs' allocator at the first launch and held (nothing trims it), the graphs' own
    source in the report."""
    completed, trace, _ = trace_run("graph_steps", "--replays", 3, env=with_gpu(build_dir, tmp_path))
    assert completed.returncode == 0, completed.stderr
    first_launch = min(s["ts"] for s in host_slices(trace, "cudaGraphLaunch"))
    readings = sorted(trace.counters.get(GRAPH_RESERVED, []))
    assert readings[0][0] >= first_launch and readings[0][1] == 4 * MIB
    live = trace.counters.get("CUDA device memory (live bytes)", [])
    assert max(v for _, v in live) == 4096  # the program's one cudaMalloc, not the capture's
    memory = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"][0]["memory"]
    assert memory["by_source"]["graphs"] == {"peak_bytes": 4 * MIB, "final_bytes": 4 * MIB}
    assert memory["peak_bytes"] == 4 * MIB + 4096


PYTHON_SCRIPT = os.path.join(os.path.dirname(__file__), "python", "graph_script.py")


def python_line(tag):
    with open(PYTHON_SCRIPT) as f:
        found = [n for n, text in enumerate(f, 1) if text.rstrip().endswith(f"# site: {tag}")]
    assert len(found) == 1, (tag, found)
    return found[0]


def test_a_python_capture_is_named_by_its_python_lines(trace_run, build_dir, tmp_path):
    """A graph captured from Python (as torch.cuda.graph does): every replayed kernel is named by
    the Python line that launched it while capturing, and the graph by the line its capture
    began at."""
    completed, trace, _ = trace_run(sys.executable, PYTHON_SCRIPT, 20,
                                    env=with_gpu(build_dir, tmp_path, PYTHONPATH=None))
    assert completed.returncode == 0, completed.stderr
    launch = f"{PYTHON_SCRIPT}:{python_line('launch')} in step"
    work = replayed(trace)
    assert len(work) == 20 * 5
    assert {g["args"]["capture_site"] for g in work} == {launch}
    (graph,) = graphs_of(cudatrace_cmd.report(build_dir, trace_file(completed)))["graphs"]
    assert graph["site"] == f"{PYTHON_SCRIPT}:{python_line('begin')} in capture"
    assert [(k["capture_site"], k["nodes"], k["runs"]) for k in graph["top_kernels"]] == [
        (launch, 5, 100)]


def test_an_oom_counts_the_graphs_memory_live(trace_run, build_dir, tmp_path):
    """After the replays, the 4 MiB the graph's allocation node holds is live device memory when
    a cudaMalloc fails: oom counts it, and names the graphs' allocator as the largest block."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_MEM_LIMIT=MIB)
    completed, _, _ = trace_run("graph_steps", "--replays", 3, "--alloc-after", 2 * MIB, env=env)
    assert completed.stdout.split() == ["cudaErrorMemoryAllocation"]
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    (oom,) = findings(report, "oom")
    assert at(oom["evidence"]["site"]) == where("O")
    assert oom["evidence"]["live_bytes"] == 4 * MIB + 4096
    assert oom["evidence"]["sites"][0]["site"] == (
        "the CUDA graphs' allocator (memory-allocation nodes)")
    assert oom["evidence"]["sites"][0]["bytes"] == 4 * MIB


def test_a_capture_that_never_began_is_no_failed_capture(trace_run, build_dir):
    """On the toolkit's real runtime with no driver, every call fails, the capture's begin too:
    the report says the driver is missing, and no capture-failed, since no capture began."""
    completed, _, _ = trace_run("graph_steps", "--replays", 2, double=False)
    report = cudatrace_cmd.report(build_dir, trace_file(completed))
    ids = {f["id"] for f in report["findings"]}
    assert "driver-missing" in ids and "capture-failed" not in ids

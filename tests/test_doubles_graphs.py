"""CUDA graphs and stream capture in the CPU doubles (tests/doubles/shared/double_graph.h): what a
capture leaves on the simulated GPU (nothing), what a replay of tests/programs/graph_steps.c
gives CUPTI (records with graph ids, GRAPH_TRACE records, resource callbacks), the --fail
sequence's return codes and the graphs' memory figures. Records and callbacks are read through
tests/programs/cupti/graph_injection.c, loaded by the driver double as a profiler is."""
import collections
import os
import subprocess

import pytest

MIB = 1 << 20
NODES = 41  # 40 kernels and a memset; the allocation and free nodes do no work
CBID_GRAPH_CREATED, CBID_GRAPHNODE_CREATED, CBID_GRAPHEXEC_CREATED = 9, 13, 18
CBID_GRAPHNODE_CLONED = 20


@pytest.fixture
def graph_run(build_dir, tmp_path):
    """graph_run(*args, kinds="kernel,memset", resource=False, env=None) -> (stdout, lines,
    stats): graph_steps with the driver, CUPTI and the graph injection library; lines are the
    injection's output split in words, stats the CUPTI double's ground truth."""
    def run(*args, kinds="kernel,memset", resource=False, env=None):
        out, stats_path = tmp_path / "records.txt", tmp_path / "stats.txt"
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("CUDATRACE_", "CT_DOUBLE_", "CUDA_INJECTION"))
                    and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
        full_env.update(
            LD_LIBRARY_PATH=f"{build_dir}/double:{build_dir}/driver", CT_DOUBLE_DRIVER="1",
            CT_DOUBLE_CUPTI_STATS=str(stats_path), CT_TEST_OUT=str(out), CT_TEST_KINDS=kinds,
            CT_TEST_RESOURCE="1" if resource else "0",
            CUDA_INJECTION64_PATH=os.path.join(build_dir, "tests", "libct_graph_injection.so"))
        full_env.update(env or {})
        proc = subprocess.run([os.path.join(build_dir, "tests", "graph_steps"), *map(str, args)],
                              env=full_env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        lines = [line.split() for line in out.read_text().splitlines()]
        stats = dict(line.rsplit(" ", 1) for line in stats_path.read_text().splitlines())
        return proc.stdout, lines, {k: int(v) for k, v in stats.items()}
    return run


def of(lines, kind):
    return [[int(v) for v in line[1:]] for line in lines if line[0] == kind]


def test_a_capture_makes_no_gpu_work(graph_run):
    _, lines, stats = graph_run("--replays", 0)
    assert of(lines, "kernel") == of(lines, "memset") == []
    assert stats["kernel"] == stats["memset"] == stats["memory"] == 0


def test_each_replay_gives_every_node_once_under_its_own_id(graph_run):
    _, lines, stats = graph_run("--replays", 10)
    work = of(lines, "kernel") + of(lines, "memset")
    assert len(of(lines, "kernel")) == 10 * 40 and len(of(lines, "memset")) == 10
    assert all(graph != 0 and node != 0 for graph, node, _ in work)
    assert len({graph for graph, _, _ in work}) == 1
    per_node = collections.Counter(node for _, node, _ in work)
    assert len(per_node) == NODES and set(per_node.values()) == {10}
    # One launch's records share its correlation id, and each launch has its own.
    assert len({corr for _, _, corr in work}) == 10
    assert (stats["graph_kernel"], stats["graph_memset"]) == (400, 10)


def node_ids(lines, cbid):
    return {line[1] for line in of(lines, "resource") if line[0] == cbid}


@pytest.mark.parametrize("which", [None, "clone", "original"])
def test_the_node_id_switch(graph_run, which):
    env = {"CT_DOUBLE_CUPTI_GRAPH_NODE": which} if which else {}
    _, lines, _ = graph_run("--replays", 2, resource=True, env=env)
    recorded = {node for _, node, _ in of(lines, "kernel") + of(lines, "memset")}
    created = node_ids(lines, CBID_GRAPHNODE_CREATED)
    cloned = node_ids(lines, CBID_GRAPHNODE_CLONED)
    assert created.isdisjoint(cloned)
    assert recorded <= (created if which == "original" else cloned)
    assert len(recorded) == NODES


def test_the_graph_id_switch(graph_run):
    ids = {}
    for which in ("original", "clone"):
        _, lines, _ = graph_run("--replays", 1, env={"CT_DOUBLE_CUPTI_GRAPH_ID": which})
        ids[which] = {graph for graph, _, _ in of(lines, "kernel")}
    _, lines, _ = graph_run("--replays", 1)
    default = {graph for graph, _, _ in of(lines, "kernel")}
    assert len(ids["original"]) == len(ids["clone"]) == 1
    assert ids["original"] != ids["clone"] and default == ids["original"]


def test_resource_callbacks_arrive_only_when_enabled(graph_run):
    _, lines, stats = graph_run("--replays", 1, "--rebuild", 2, resource=True)
    per_cbid = collections.Counter(line[0] for line in of(lines, "resource"))
    # The main capture's 43 nodes and two rebuilds of 10, each graph made once and cloned once.
    assert per_cbid[CBID_GRAPHNODE_CREATED] == 43 + 2 * 10
    assert per_cbid[CBID_GRAPHNODE_CLONED] == 43 + 2 * 10
    assert per_cbid[CBID_GRAPH_CREATED] == per_cbid[CBID_GRAPHEXEC_CREATED] == 3
    assert stats[f"callbacks_resource {CBID_GRAPHNODE_CREATED}"] == 43 + 2 * 10
    _, lines, stats = graph_run("--replays", 1, "--rebuild", 2)
    assert of(lines, "resource") == []
    assert not any(k.startswith("callbacks_resource") for k in stats)


def test_graph_trace_gives_one_record_per_launch_and_hides_the_nodes(graph_run):
    _, lines, stats = graph_run("--replays", 10, kinds="kernel,memset,graph")
    graphs = of(lines, "graph")
    assert len(graphs) == stats["graph"] == 10
    assert of(lines, "kernel") == of(lines, "memset") == []
    assert all(graph != 0 and end >= start > 0 for _, graph, _, start, end in graphs)
    assert len({corr for corr, *_ in graphs}) == 10


def test_a_failed_capture_says_so_at_each_step(graph_run):
    stdout, lines, _ = graph_run("--replays", 0, "--fail")
    assert stdout.split() == ["cudaErrorInvalidConfiguration",
                              "cudaErrorStreamCaptureUnsupported",
                              "cudaErrorStreamCaptureInvalidated"]


@pytest.mark.parametrize("mode", ["global", "thread", "relaxed"])
def test_every_capture_mode_replays_the_same_graph(graph_run, mode):
    _, lines, _ = graph_run("--mode", mode, "--replays", 3, "--explicit")
    kernels = collections.Counter(node for _, node, _ in of(lines, "kernel"))
    assert sum(kernels.values()) == 3 * 40 + 10 * 3


@pytest.mark.parametrize("destroy, readings", [
    (None, [8, 8, 16, 16, 8, 0]), ("free", [8, 8, 16, 16, 8, 0]),
    ("keep", [8, 8, 16, 16, 16, 16])])
def test_graph_memory_at_each_documented_moment(build_dir, destroy, readings):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CT_DOUBLE_")}
    env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    if destroy:
        env["CT_DOUBLE_GRAPH_DESTROY"] = destroy
    proc = subprocess.run([os.path.join(build_dir, "tests", "graph_memory")], env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    assert [int(v) // MIB for v in proc.stdout.split()] == readings

"""The collector's outside Python reader (collector/host_sampling/python_stacks.c) on the
CPython versions this machine lacks: tests/programs/python_double plays a CPython 3.9, 3.10,
3.12 or 3.13 process (3.9 and 3.10 from builds of their own, python_double_3_9 and _3_10,
which export what tells those versions apart), laid out from the version's headers (3.13
with its _Py_DebugOffsets), with two threads whose stacks never move. The real collector
samples it under the preload, and the report's host section must put every stack sample of
each thread at exactly the innermost frame the double built, the shim frame under the second
thread's left out. 3.9 and 3.10 thread states hold a pthread_t, which the reader maps to the
thread through the tid its struct pthread holds, at an offset it finds in the process: glibc's
own structs, and made ones holding the tid elsewhere beside decoys. A thread state whose
pthread_t cannot be read, or a frame chain into unmapped memory, costs that thread its
stacks and nothing else. A bad debug-offsets table or an unknown version is said once, and
the host section is otherwise as it was.
"""
import os

import pytest

import cudatrace_cmd
from test_report_host import outside_reads  # noqa: F401 (a fixture)

STEPS = 40  # 10 ms each, at 100 Hz: dozens of samples per thread
MAIN = ("/srv/double/train.py", 47, "load_batch")
SECOND = ("/srv/double/worker.py", 14, "decode")


@pytest.fixture
def double_run(trace_run, build_dir):
    """double_run(version, mode) -> (completed, report's process, {tid: expected site})."""
    def run(version, mode="ok", steps=STEPS):
        program = "python_double" if int(version) >= 11 else f"python_double_3_{version}"
        proc, trace, _ = trace_run(os.path.join(build_dir, "tests", program), version, mode,
                                   str(steps), env={"CUDATRACE_SAMPLE_HZ": 100})
        assert proc.returncode == 0, proc.stderr
        truth = {}
        for line in proc.stdout.splitlines():
            _, tid, where, function = line.split()
            file, number = where.rsplit(":", 1)
            truth[int(tid)] = (file, int(number), function)
        assert list(truth.values()) == [MAIN, SECOND] and proc.pid in truth
        r = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")
        process, = r["processes"]
        proc.trace = trace
        return proc, process, truth
    return run


def sites(row):
    return [((s["file"], s["line"], s["function"]), s["samples"]) for s in row["python_sites"]]


def rows_of(process, truth):
    rows = {t["tid"]: t for t in process["host"]["threads"]}
    assert set(truth) <= set(rows)
    return rows


@pytest.mark.parametrize("version,mode", [
    ("9", "ok"), ("10", "ok"), ("9", "fake-pthread"), ("10", "fake-pthread"),
    ("12", "ok"), ("13", "ok"), ("13", "moved")])
def test_each_thread_is_read_at_its_innermost_frame(double_run, outside_reads, version, mode):  # noqa: F811
    """"moved" places 3.13's thread-state and interpreter fields where only its debug
    offsets say: reading it proves they are followed, not the table's own. "fake-pthread"
    holds 3.9's and 3.10's tids in made struct pthreads at another offset than glibc's,
    beside the pid in every struct (old glibc's pid field) and in the main's alone: reading
    it proves the offset is found in the process and confirmed by the second thread."""
    _, process, truth = double_run(version, mode)
    host = process["host"]
    assert host["state"] == "sampling" and host["python_stacks"] == "read"
    rows = rows_of(process, truth)
    for tid, site in truth.items():
        row = rows[tid]
        assert row["python_samples"] >= 10, row
        assert sites(row) == [(site, row["python_samples"])]


@pytest.mark.parametrize("version,mode,said", [
    ("13", "bad-cookie", 'Python 3.13 is not read from outside: _PyRuntime does not start '
                         'with the "xdebugpy" debug offsets'),
    ("13", "other-version", "Python 3.13 is not read from outside: its debug offsets are of "
                            "another version than its Py_Version"),
    ("13", "free-threaded", "Python 3.13 is not read from outside: a free-threaded build"),
    ("13", "too-far", "Python 3.13 is not read from outside: its debug offsets reach past what "
                      "this reader copies"),
    ("13", "unknown", "Python 3.14 is not read from outside: no layout of it is known here "
                      "(3.9 to 3.13 are read)"),
    ("8", "ok", "Python before 3.9 is not read from outside: its thread states and frames are "
                "laid out otherwise"),
])
def test_an_unreadable_version_is_said_once_and_nothing_else_changes(
        double_run, build_dir, outside_reads, version, mode, said):  # noqa: F811
    proc, process, truth = double_run(version, mode)
    _, healthy, _ = double_run(version)
    host = process["host"]
    assert host["python_stacks"] == f"not read: {said}"
    assert host["state"] == "sampling" and host["reason"] == ""
    rows = rows_of(process, truth)
    assert all(t["python_samples"] == 0 and t["python_sites"] == [] for t in rows.values())
    calls = {fn: c["calls"] for fn, c in process["api"].items()}
    assert calls == {fn: c["calls"] for fn, c in healthy["api"].items()}
    assert calls == {"cudaMalloc": 1, "cudaDeviceSynchronize": STEPS, "cudaFree": 1}
    assert process["exit"] == healthy["exit"] == "normal"
    text = cudatrace_cmd.run(build_dir, "report", proc.run_dir / "trace.pftrace.zst").stdout
    assert [x.strip() for x in text.splitlines() if "Python stacks:" in x] == [
        f"Python stacks: not read: {said}"]


def host_instant(proc, trace_vocabulary):
    closing, = [e for e in proc.trace.instants
                if e["name"] == trace_vocabulary.text("event", "host")]
    return closing["args"]


def only_the_main_thread_read(proc, process, truth, trace_vocabulary):
    """(the main thread's row, the host instant's args) of a run whose second thread
    gave no stack: the main's samples are all exact, the second has none."""
    rows = rows_of(process, truth)
    main = rows[proc.pid]
    assert main["python_samples"] >= 10 and sites(main) == [(MAIN, main["python_samples"])]
    second, = [tid for tid in truth if tid != proc.pid]
    assert rows[second]["python_samples"] == 0 and rows[second]["python_sites"] == []
    return main, host_instant(proc, trace_vocabulary)


@pytest.mark.parametrize("version", ["9", "10"])
def test_a_thread_state_whose_pthread_is_unmapped_costs_only_its_thread(
        double_run, trace_vocabulary, outside_reads, version):  # noqa: F811
    """The second thread's state holds a pthread_t no page backs: that thread has no stack
    and no race counted against it (it is never matched to a thread), the main's is exact."""
    proc, process, truth = double_run(version, "unmapped")
    host = process["host"]
    assert host["state"] == "sampling" and host["python_stacks"] == "read"
    main, args = only_the_main_thread_read(proc, process, truth, trace_vocabulary)
    assert args["python_raced"] == 0
    assert args["python_stack_count"] >= main["python_samples"]


@pytest.mark.parametrize("version", ["9", "10", "12", "13"])
def test_a_frame_chain_into_unmapped_memory_fails_only_that_read(
        double_run, trace_vocabulary, outside_reads, version):  # noqa: F811
    """The second thread's outermost frame links to an unmapped page: each of its reads
    fails (counted as dropped), nothing crashes, and the main thread's stacks are exact."""
    proc, process, truth = double_run(version, "garbage-frame")
    assert process["exit"] == "normal"
    main, args = only_the_main_thread_read(proc, process, truth, trace_vocabulary)
    assert args["python_raced"] >= 10
    assert process["host"]["python_stacks"] == "read"


@pytest.mark.parametrize("version", ["9", "10"])
def test_no_struct_pthread_holding_the_pid_is_said_once(double_run, outside_reads, version):  # noqa: F811
    """Neither thread's struct pthread holds the pid (the main's reads as an exited
    thread's, tid 0): the tid's place is never found, and after 64 rounds of trying
    (1.2 s of run at 100 Hz) the reader says so once and stops."""
    _, process, truth = double_run(version, "no-pid", steps=120)
    host = process["host"]
    assert host["python_stacks"] == (
        f"not read: Python 3.{version} is not read from outside: no struct pthread its thread "
        "states name holds the pid (the main thread's tid) in its first 1024 bytes")
    assert host["state"] == "sampling" and host["reason"] == ""
    assert all(t["python_samples"] == 0 for t in rows_of(process, truth).values())

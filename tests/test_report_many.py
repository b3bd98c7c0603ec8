"""`cudatrace report` over the processes of one job: a directory of traces
(one per rank or worker) or several files, a line per process, and the
findings that compare them, each with its healthy twin: inconsistent-
libraries (processes that loaded different files of one library family) and
straggler (one process waits in synchronisation far longer than the rest)."""
import os
import shutil
import socket

import cudatrace_cmd
import toolkit


def collect(runs, folder):
    """Copies each run's trace into one folder, named by rank."""
    folder.mkdir()
    for rank, (completed, _, _) in enumerate(runs):
        assert completed.returncode == 0, completed.stderr
        shutil.copy(completed.run_dir / "trace.pftrace.zst", folder / f"rank{rank}.pftrace.zst")
    return folder


def across(report):
    """The findings that compare processes: each rank's own (its loop syncs every step, which
    sync-stall names) are another test's business."""
    return [f for f in report["findings"] if f["id"] in ("straggler", "inconsistent-libraries")]


def assert_merged_equals_direct(build_dir, tmp_path, paths):
    """One summary per trace, merged, reports exactly what reading the traces does."""
    summaries = []
    for i, path in enumerate(paths):
        summaries.append(tmp_path / f"summary{i}.json")
        cudatrace_cmd.run(build_dir, "report", "--summary", "-o", summaries[-1], path)
    for form in ([], ["--json"]):
        direct = cudatrace_cmd.run(build_dir, "report", *form, *paths)
        merged = cudatrace_cmd.run(build_dir, "report", "--merge", *form, *summaries)
        assert merged.stdout == direct.stdout


def ranks_with_sync(trace_run, sync_ns):
    return [trace_run("train_loop", 10, env={"CT_DOUBLE_SYNC_NS": ns}) for ns in sync_ns]


def test_straggler_is_named(trace_run, build_dir, tmp_path):
    # Ten steps each; rank 1 waits 20 ms per step, the others 1 ms.
    runs = ranks_with_sync(trace_run, [1000000, 20000000, 1000000])
    r = cudatrace_cmd.report(build_dir, collect(runs, tmp_path / "job"))
    assert [p["pid"] for p in r["processes"]] == [c.pid for c, _, _ in runs]
    (finding,) = across(r)
    assert (finding["id"], finding["pid"]) == ("straggler", runs[1][0].pid)
    slow = r["processes"][1]["sync"]
    assert f"({slow['count']} calls)" in finding["message"]
    assert f"waited {slow['total_ns'] / 1e6:.1f} ms" in finding["message"]
    assert_merged_equals_direct(build_dir, tmp_path, sorted((tmp_path / "job").iterdir()))


def test_healthy_twin_ranks_that_wait_alike(trace_run, build_dir, tmp_path):
    runs = ranks_with_sync(trace_run, [5000000, 5000000, 5000000])
    assert across(cudatrace_cmd.report(build_dir, collect(runs, tmp_path / "job"))) == []


def test_inconsistent_libraries_across_ranks(trace_run, build_dir, tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    shutil.copy(toolkit.path("cudnn"), private)
    runs = [trace_run("load_libs", toolkit.path("cudnn")),
            trace_run("load_libs", private / toolkit.soname("cudnn")),
            trace_run("load_libs", toolkit.path("cudnn"))]
    r = cudatrace_cmd.report(build_dir, *(c.run_dir / "trace.pftrace.zst" for c, _, _ in runs))
    (finding,) = r["findings"]
    assert (finding["id"], finding["pid"]) == ("inconsistent-libraries", runs[1][0].pid)
    assert [lib["realpath"] for lib in finding["evidence"]["libraries"]] == [
        os.path.realpath(toolkit.path("cudnn")), str(private / toolkit.soname("cudnn"))]
    assert f"pid {runs[0][0].pid} " in finding["message"]
    assert f"pid {runs[1][0].pid} {private}" in finding["message"]
    assert_merged_equals_direct(build_dir, tmp_path,
                                [c.run_dir / "trace.pftrace.zst" for c, _, _ in runs])


def test_healthy_twin_ranks_with_the_same_libraries(trace_run, build_dir):
    runs = [trace_run("load_libs", toolkit.path("cudnn")) for _ in range(2)]
    r = cudatrace_cmd.report(build_dir, *(c.run_dir / "trace.pftrace.zst" for c, _, _ in runs))
    assert r["findings"] == []


def test_a_directory_is_its_traces(trace_run, build_dir, tmp_path):
    runs = ranks_with_sync(trace_run, [0, 0])
    job = collect(runs, tmp_path / "job")
    (job / "notes.txt").write_text("not a trace\n")
    listed = cudatrace_cmd.run(build_dir, "report", "--json", job / "rank0.pftrace.zst",
                               job / "rank1.pftrace.zst")
    assert cudatrace_cmd.run(build_dir, "report", "--json", job).stdout == listed.stdout
    text = cudatrace_cmd.run(build_dir, "report", job).stdout.splitlines()
    # The job first, then one line per process under its host (no launcher: no ranks).
    host = socket.gethostname()
    assert text[0] == "job: 2 processes on 1 host"
    table = text.index("pid        rank host                     wall      calls   launches"
                       "         sync  peak memory  exit")
    assert text[table + 1] == f"host {host}: pid {runs[0][0].pid}, pid {runs[1][0].pid}"
    assert [int(line.split()[0]) for line in text[table + 2:table + 4]] == [
        c.pid for c, _, _ in runs]


def test_a_trace_then_a_directory_without_traces(trace_run, build_dir, tmp_path):
    (run, _, _) = trace_run("api_mix", 1)
    (tmp_path / "empty").mkdir()
    done = cudatrace_cmd.run(build_dir, "report", "--json", run.run_dir / "trace.pftrace.zst",
                             tmp_path / "empty", status=1)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"cudatrace: {tmp_path / 'empty'}: holds no trace (*.pftrace, " \
        "*.pftrace.zst, *.pftrace.gz)\n"


def test_a_directory_without_traces(build_dir, tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here\n")
    done = cudatrace_cmd.run(build_dir, "report", "--json", tmp_path, status=1)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "holds no trace" in done.stderr

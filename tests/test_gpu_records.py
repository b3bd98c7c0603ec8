"""GPU work as Perfetto's typed GPU records (CUDATRACE_GPU_RECORDS=typed, the default): kernels,
copies and memsets as GpuRenderStageEvent on a hardware queue per device and stream, each host
call naming its work by the gpu_correlation extension, on the CPU doubles of the runtime, the
driver and CUPTI (see test_preload_cupti.py).

Checked here: the typed trace holds exactly the GPU work of the default one (count, names,
durations, annotations) and nothing on GPU tracks; every render stage event is named by the
host call that made it; the report and the chrome-json export give the same figures from
either trace; an unknown value warns once and writes the default; perfetto_check's rule 11
catches an undefined interned id, a correlation naming no event and work outside the trace;
and, where the official trace processor is at hand (trace_processor_shell on PATH or
$CUDATRACE_TRACE_PROCESSOR), that it files every piece of work in gpu_slice with a flow from
its call.
"""

import collections
import csv
import json
import os
import shutil
import subprocess

import pytest

import cudatrace_cmd
import perfetto_check
from test_preload_cupti import (STEPS, cupti_truth, gpu_slices, host_slices, trace_file,
                                with_gpu)

KINDS = ("kernel", "memcpy", "memset")
HOST_CALL = {"kernel": "cudaLaunchKernel", "memcpy": "cudaMemcpy", "memset": "cudaMemset"}
WARNING = ("cudatrace: ignoring CUDATRACE_GPU_RECORDS=bogus: expected typed or tracks; "
           "writing typed")


def typed_env(build_dir, tmp_path, value="typed"):
    """with_gpu's environment with CUDATRACE_GPU_RECORDS=value (None: unset, trace_run drops
    it)."""
    env = with_gpu(build_dir, tmp_path)
    env["CUDATRACE_GPU_RECORDS"] = value
    return env


def work_of_slices(trace):
    """(kind, name, duration, annotations but the correlation) of the default trace's GPU work."""
    return collections.Counter(
        (kind, s["name"], s["dur"], tuple(sorted((k, v) for k, v in s["args"].items()
                                                 if k != "correlation")))
        for kind in KINDS for s in gpu_slices(trace, kind))


def work_of_stages(trace):
    """The same of the typed trace's render stage events."""
    return collections.Counter(
        (s["stage"], s["name"], s["dur"], tuple(sorted((k, v) for k, v in s["args"].items()
                                                       if k != "correlation")))
        for s in trace.gpu_stages)


@pytest.fixture
def both(trace_run, build_dir, tmp_path):
    """(default run, its trace, typed run, its trace, CUPTI's truth of the typed run)."""
    default_run, default, _ = trace_run("train_loop", STEPS,
                                        env=typed_env(build_dir, tmp_path, "tracks"))
    typed_run, typed, _ = trace_run("train_loop", STEPS, env=typed_env(build_dir, tmp_path))
    assert default_run.returncode == typed_run.returncode == 0, typed_run.stderr
    return default_run, default, typed_run, typed, cupti_truth(tmp_path)[0]


def test_the_typed_trace_holds_the_same_gpu_work_as_the_default(both):
    _, default, _, typed, counts = both
    assert len(typed.gpu_stages) == counts["kernel"] + counts["memcpy"] + counts["memset"]
    assert collections.Counter(s["stage"] for s in typed.gpu_stages) == {
        "kernel": 201 * STEPS, "memcpy": 2 * STEPS, "memset": 1}
    assert work_of_stages(typed) == work_of_slices(default)
    assert not default.gpu_stages
    assert not any(gpu_slices(typed, kind) for kind in KINDS)
    assert {s["queue"] for s in typed.gpu_stages} == {"GPU 0 stream 7"}
    kernel = next(s for s in typed.gpu_stages if s["stage"] == "kernel")
    assert (kernel["grid"], kernel["block"], kernel["gpu_id"]) == ((128, 1, 1), (256, 1, 1), 0)
    assert kernel["kernel"] == (kernel["name"], kernel["name"])  # C names need no demangling
    assert all(s["grid"] is None and s["kernel"] is None
               for s in typed.gpu_stages if s["stage"] != "kernel")


def test_every_render_stage_is_named_by_the_call_that_made_it(both):
    _, _, typed_run, typed, _ = both
    by_id = {s["event_id"]: s for s in typed.gpu_stages}
    assert len(by_id) == len(typed.gpu_stages)
    calls = [s for s in host_slices(typed) if s["gpu_submissions"]]
    assert len(calls) == len(typed.gpu_stages)
    for call in calls:
        assert not call["flow_ids"]  # the correlation replaces the flow
        (submitted,) = call["gpu_submissions"]
        work = by_id.pop(submitted)
        assert call["name"] == HOST_CALL[work["stage"]]
        assert submitted == typed_run.pid << 32 | work["args"]["correlation"]
        assert call["ts"] <= work["ts"] < call["ts"] + 1_000_000_000
    assert not by_id
    assert {s["pid"] for s in typed.gpu_stages} == {typed_run.pid}


def gpu_figures(report):
    """The report's figures that come from the GPU's work alone (the findings weigh it
    against the host's timing, and the clock mapping's error and the delivery delay are
    timings too, which differ from run to run)."""
    (p,) = report["processes"]
    cupti = {k: v for k, v in p["cupti"].items() if not k.startswith(("clock_", "delivery_"))}
    return p["gpu"], cupti


def test_the_report_gives_the_same_figures_from_either_trace(both, build_dir):
    default_run, _, typed_run, _, counts = both
    default, typed = (cudatrace_cmd.report(build_dir, trace_file(r))
                      for r in (default_run, typed_run))
    assert gpu_figures(typed) == gpu_figures(default)
    gpu = typed["processes"][0]["gpu"]
    assert (gpu["kernels"], gpu["copies"], gpu["memsets"]) == (
        counts["kernel"], counts["memcpy"], counts["memset"])
    work = counts["kernel"] + counts["memcpy"] + counts["memset"]
    assert gpu["flows"] == {"gpu_work": work, "from_host_call": work}


def chrome_events(build_dir, run, out):
    cudatrace_cmd.run(build_dir, "export", trace_file(run), "--format", "chrome-json", "-o", out)
    events = json.load(open(out))["traceEvents"]
    rows = {e["tid"]: e["args"]["name"] for e in events
            if e["ph"] == "M" and e["name"] == "thread_name"}
    return collections.Counter(
        (e["ph"], e.get("cat"), rows.get(e["tid"]) if e.get("cat") != "ac2g" else None)
        for e in events if e["ph"] in ("X", "s", "f") and e.get("cat") != "cuda_runtime")


def test_the_chrome_json_export_is_the_same_from_either_trace(both, build_dir, tmp_path):
    default_run, _, typed_run, _, counts = both
    typed = chrome_events(build_dir, typed_run, tmp_path / "typed.json")
    assert typed == chrome_events(build_dir, default_run, tmp_path / "default.json")
    assert typed[("X", "kernel", "GPU 0 stream 7")] == counts["kernel"]
    work = counts["kernel"] + counts["memcpy"] + counts["memset"]
    assert typed[("s", "ac2g", None)] == typed[("f", "ac2g", None)] == work


@pytest.mark.parametrize("value", ["bogus", None, "typed", "tracks"])
def test_typed_is_the_default_and_an_unknown_value_warns_once_and_writes_it(trace_run, build_dir,
                                                                           tmp_path, value):
    completed, trace, _ = trace_run("train_loop", 1, env=typed_env(build_dir, tmp_path, value))
    assert completed.returncode == 0
    warnings = [line for line in completed.stderr.splitlines() if "CUDATRACE_GPU_RECORDS" in line]
    assert warnings == ([WARNING] if value == "bogus" else [])
    typed = [s for s in trace.gpu_stages if s["stage"] == "kernel"]
    tracks = gpu_slices(trace, "kernel")
    assert (len(typed), len(tracks)) == ((0, 201) if value == "tracks" else (201, 0))


def test_a_bounded_trace_defines_its_records_again_in_every_kept_chunk(trace_run, build_dir,
                                                                      tmp_path):
    env = typed_env(build_dir, tmp_path)
    env["CUDATRACE_MAX_MB"] = 1
    # The pause after the first rounds lets the tracer hand their work over (every 100 ms)
    # while the head is being written; the rest comes in the tail. Without it, where the work
    # lands depends on how the flushes fall against the chunks.
    completed, trace, _ = trace_run("long_run", 1000, 500, env=env)  # checked by the fixture
    assert completed.returncode == 0, completed.stderr
    assert [s["name"] for s in trace.slices].count("trace gap: middle dropped") == 1
    # CUPTI hands work over late (in buffers), so the chunks kept after the gap are told by
    # their sequences, restarted and defined afresh, not by the work's times.
    stages = collections.defaultdict(set)
    for s in trace.gpu_stages:
        stages[s["seq"]].add(s["stage"])
    first = trace.gpu_stages[0]["seq"]
    assert stages.pop(first) == {"kernel", "memset"}
    assert any(kinds == {"kernel", "memset"} for kinds in stages.values()), stages


# --------------------------------------------------------------------------
# perfetto_check's rule 11 on a broken copy of a typed trace


def typed_packets(trace_run, build_dir, tmp_path):
    completed, trace, _ = trace_run("train_loop", 1, env=typed_env(build_dir, tmp_path))
    assert completed.returncode == 0
    return [perfetto_check.pb.TracePacket.FromString(raw) for raw in trace.raw_packets]


def reparse(packets):
    return perfetto_check.parse(perfetto_check.pb.Trace(packet=packets).SerializeToString())


def first_stage(packets):
    return next(p for p in packets if p.HasField("gpu_render_stage_event"))


def test_the_untouched_copy_passes(trace_run, build_dir, tmp_path):
    trace = reparse(typed_packets(trace_run, build_dir, tmp_path))
    assert len(trace.gpu_stages) == 201 + 2 + 1


def test_rule_11_finds_a_hardware_queue_never_defined(trace_run, build_dir, tmp_path):
    packets = typed_packets(trace_run, build_dir, tmp_path)
    del first_stage(packets).interned_data.gpu_specifications[:]
    with pytest.raises(perfetto_check.TraceError, match=r"rule 11 .*hw_queue_iid \d+ "
                       r"\(InternedData.gpu_specifications\), not defined"):
        reparse(packets)


def test_rule_11_finds_a_correlation_that_names_no_render_stage(trace_run, build_dir, tmp_path):
    packets = typed_packets(trace_run, build_dir, tmp_path)
    first_stage(packets).gpu_render_stage_event.event_id += 1 << 40
    with pytest.raises(perfetto_check.TraceError,
                       match=r"rule 11 .*gpu_correlation names render stage event \d+, which"):
        reparse(packets)


def test_rule_11_finds_work_outside_the_trace(trace_run, build_dir, tmp_path):
    packets = typed_packets(trace_run, build_dir, tmp_path)
    first_stage(packets).gpu_render_stage_event.duration = 10 ** 15
    with pytest.raises(perfetto_check.TraceError, match=r"rule 11 .*lies outside the trace"):
        reparse(packets)


# --------------------------------------------------------------------------
# The official trace processor, when there is one


def trace_processor():
    return os.environ.get("CUDATRACE_TRACE_PROCESSOR") or shutil.which("trace_processor_shell")


def rows(tp, trace_path, sql, tmp_path):
    """The rows `sql` selects, as the trace processor prints them (CSV, quoted), header left
    out."""
    script = tmp_path / "query.sql"
    script.write_text(sql)
    done = subprocess.run([tp, "--query-file", str(script), str(trace_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return [tuple(row) for row in csv.reader(done.stdout.strip().splitlines()[1:])]


# The work as the trace processor files it: each gpu_slice with its duration, its track's name
# and type, and the name of the host slice its flow comes from.
GPU_WORK = """
select s.name, s.dur, t.name, t.type, h.name from gpu_slice s join track t on s.track_id = t.id
left join flow f on f.slice_in = s.id left join slice h on f.slice_out = h.id;
"""
IMPORT_ERRORS = """
select name, idx, value from stats where severity in ('error', 'data_losses') and value > 0;
"""


@pytest.mark.skipif(not trace_processor(), reason="no trace_processor_shell on PATH nor "
                    "$CUDATRACE_TRACE_PROCESSOR")
@pytest.mark.parametrize("program, args, calls", [
    ("train_loop", (STEPS,), {"cudaLaunchKernel", "cudaMemcpy", "cudaMemset"}),
    ("driver_launch", (50,), {"cuLaunchKernel", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2"})])
def test_the_trace_processor_files_every_piece_of_work_as_gpu_slices(trace_run, build_dir,
                                                                     tmp_path, program, args,
                                                                     calls):
    """Perfetto's own trace processor (v58.2) reads the default trace with no import error and
    files every kernel, copy and memset in gpu_slice, with its exact duration, on the render
    stage track of its device and stream, with a flow from the call that issued it: runtime
    launches, copies and memsets (train_loop), and the driver API's (driver_launch, as
    Triton launches)."""
    completed, typed, _ = trace_run(program, *args, env=typed_env(build_dir, tmp_path, None))
    assert completed.returncode == 0, completed.stderr
    tp = trace_processor()
    path = trace_file(completed)
    assert rows(tp, path, IMPORT_ERRORS, tmp_path) == []
    issuer = {i: s["name"] for s in host_slices(typed) for i in s["gpu_submissions"]}
    expected = collections.Counter((s["name"], str(s["dur"]), s["queue"], "gpu_render_stage",
                                    issuer[s["event_id"]]) for s in typed.gpu_stages)
    assert {call for *_, call in expected} == calls
    assert collections.Counter(rows(tp, path, GPU_WORK, tmp_path)) == expected

"""With GPU timings, the report says how busy the GPU was and where it sat idle.

GPU work reaches a trace on tracks named "GPU ..." under the process, one slice
per kernel, copy or memset with a `gpu_kind` annotation (docs/findings.md). No
GPU exists here, so the tests add such tracks to a real trace of a workload on
the double: kernels placed after its launch slices, encoded with Perfetto's
official schema and appended as one more zstd frame, as another writer of the
same trace would. The truth (busy time, gaps, kernel counts) is computed from
the slices the test placed.
"""

import cudatrace_cmd
import perfetto_check
import zstandard
from perfetto_check import pb

from test_report_usage_findings import run_patterns

SEQUENCE = 0x7FFFFFF1


def kernels_after_launches(trace, duration_ns, name="usage_kernel"):
    """One kernel slice per launch slice, starting 1 us after the launch returned."""
    launches = sorted((s for s in trace.slices if s["name"] == "cudaLaunchKernel"),
                      key=lambda s: s["ts"])
    return [("GPU 0 stream 0", name, "kernel", s["ts"] + s["dur"] + 1000,
             s["ts"] + s["dur"] + 1000 + duration_ns) for s in launches]


def append_gpu_work(path, trace, pid, work):
    """Appends `work` [(track name, slice name, gpu_kind, start, end)] to the trace at `path`."""
    process_uuid = trace.processes[pid]["uuid"]
    tracks = {}
    packets = []
    for track, *_ in work:
        if track not in tracks:
            tracks[track] = 0x6770750000 + len(tracks)
            packets.append(pb.TracePacket(
                trusted_packet_sequence_id=SEQUENCE, sequence_flags=1 if not packets else 0,
                track_descriptor=pb.TrackDescriptor(uuid=tracks[track], parent_uuid=process_uuid,
                                                    name=track)))
    for track, name, kind, start, end in work:
        kind_arg = pb.DebugAnnotation(name="gpu_kind", string_value=kind)
        packets.append(pb.TracePacket(
            trusted_packet_sequence_id=SEQUENCE, timestamp=start,
            track_event=pb.TrackEvent(type=pb.TrackEvent.TYPE_SLICE_BEGIN,
                                      track_uuid=tracks[track], name=name,
                                      debug_annotations=[kind_arg])))
        packets.append(pb.TracePacket(
            trusted_packet_sequence_id=SEQUENCE, timestamp=end,
            track_event=pb.TrackEvent(type=pb.TrackEvent.TYPE_SLICE_END,
                                      track_uuid=tracks[track])))
    with open(path, "ab") as f:
        f.write(zstandard.ZstdCompressor().compress(pb.Trace(packet=packets).SerializeToString()))
    perfetto_check.load(path)  # still a valid trace


def union(intervals, start, end):
    """Busy time and the gaps (start, length) between `intervals` within [start, end), and the
    idle time before the first and after the last, which are no gaps."""
    busy, gaps, at, first = 0, [], start, None
    for a, b in sorted(intervals):
        a, b = max(a, start), min(b, end)
        if b <= a:
            continue
        if first is None:
            first = a
        elif a > at:
            gaps.append((at, a - at))
        busy += b - max(a, at) if b > at else 0
        at = max(at, b)
    return busy, sorted(gaps, key=lambda g: -g[1]), first - start, end - at


def run_window(trace, report):
    """The CUDA part of the run the report measures: first call to the end."""
    first = min(s["ts"] for s in trace.slices)
    end = [i for i in trace.instants if i["name"] == "cudatrace.end"][0]["ts"]
    return first, end


def test_gpu_idle_between_steps_of_host_work(trace_run, build_dir):
    proc, trace, _ = run_patterns(trace_run, "launch-light", 30, CT_DOUBLE_LAUNCH_NS=5000)
    path = proc.run_dir / "trace.pftrace.zst"
    work = kernels_after_launches(trace, 20000)
    append_gpu_work(path, trace, proc.pid, work)
    report = cudatrace_cmd.report(build_dir, path)
    (process,) = report["processes"]
    first, end = run_window(trace, report)
    busy, gaps, before, after = union([(w[3], w[4]) for w in work], first, end)
    assert busy == 30 * 20000
    assert process["gpu"] == {
        "busy_ns": busy, "kernels": 30, "kernel_ns": 30 * 20000, "copies": 0, "memsets": 0,
        "top_kernels": [{"name": "usage_kernel", "count": 30, "total_ns": 30 * 20000,
                         "capture_sites": []}],
        # The appended GPU slices carry no flow: none is tied to a host call.
        "flows": {"gpu_work": 0, "from_host_call": 0}}
    (f,) = report["findings"]
    e = f["evidence"]
    assert f["id"] == "gpu-idle"
    assert abs(e["idle_share"] - (1 - busy / (end - first))) < 1e-9
    assert e["busy_ns"] == busy
    # The three longest gaps, as the test placed them; the host was working outside CUDA.
    for k, (start, length) in enumerate(gaps[:3], 1):
        assert (e[f"gap_{k}_start_ns"], e[f"gap_{k}_ns"]) == (start, length)
        assert e[f"gap_{k}_host_outside_cuda"] > 0.9
    assert "(input pipeline or host compute?)" in f["message"]
    assert (e["before_first_work_ns"], e["after_last_work_ns"]) == (before, after)


def test_start_up_and_shutdown_are_no_gaps_of_the_work(trace_run, build_dir):
    """Kernels for the first ten launches only: the long idle stretch after the last of them,
    the program's end (as an interpreter's shutdown would be), is said on its own, never as
    one of the longest gaps, which are those between kernels."""
    proc, trace, _ = run_patterns(trace_run, "launch-light", 30, CT_DOUBLE_LAUNCH_NS=5000)
    path = proc.run_dir / "trace.pftrace.zst"
    work = kernels_after_launches(trace, 20000)[:10]
    append_gpu_work(path, trace, proc.pid, work)
    report = cudatrace_cmd.report(build_dir, path)
    first, end = run_window(trace, report)
    busy, gaps, before, after = union([(w[3], w[4]) for w in work], first, end)
    assert after > gaps[0][1]  # the tail is longer than any gap between kernels
    (f,) = [f for f in report["findings"] if f["id"] == "gpu-idle"]
    e = f["evidence"]
    assert [(e[f"gap_{k}_start_ns"], e[f"gap_{k}_ns"]) for k in (1, 2, 3)] == gaps[:3]
    assert (e["before_first_work_ns"], e["after_last_work_ns"]) == (before, after)
    assert "after the last" in f["message"]


def test_healthy_twin_gpu_busy_while_the_host_works(trace_run, build_dir):
    proc, trace, _ = run_patterns(trace_run, "launch-light", 30, CT_DOUBLE_LAUNCH_NS=5000)
    path = proc.run_dir / "trace.pftrace.zst"
    launches = sorted((s for s in trace.slices if s["name"] == "cudaLaunchKernel"),
                      key=lambda s: s["ts"])
    # Each kernel runs from its launch until the next one's: the GPU is never starved.
    ends = [s["ts"] for s in launches[1:]] + [launches[-1]["ts"] + 2000000]
    work = [("GPU 0 stream 7", "usage_kernel", "kernel", s["ts"] + s["dur"], e)
            for s, e in zip(launches, ends)]
    work.append(("GPU 0 stream 8", "copy HtoD", "memcpy", launches[0]["ts"], launches[0]["ts"] + 500))
    append_gpu_work(path, trace, proc.pid, work)
    report = cudatrace_cmd.report(build_dir, path)
    assert report["findings"] == []
    gpu = report["processes"][0]["gpu"]
    assert (gpu["kernels"], gpu["copies"]) == (30, 1)


def test_launch_overhead_compares_kernels_with_their_launch(trace_run, build_dir):
    proc, trace, _ = run_patterns(trace_run, "launch-bound", 5000, CT_DOUBLE_LAUNCH_NS=5000)
    path = proc.run_dir / "trace.pftrace.zst"
    append_gpu_work(path, trace, proc.pid, kernels_after_launches(trace, 1000))
    findings = {f["id"]: f for f in cudatrace_cmd.report(build_dir, path)["findings"]}
    assert set(findings) == {"launch-overhead", "gpu-idle"}
    launch = findings["launch-overhead"]
    assert launch["evidence"]["mean_kernel_ns"] == 1000
    assert "the kernels run 1.000 us on average, shorter than their launch" in launch["message"]
    # Launch-bound: the GPU waits on the host; what the host did in the gaps was launching.
    assert "(making CUDA calls)" in findings["gpu-idle"]["message"]


def test_no_gpu_tracks_no_gpu_fields(trace_run, build_dir):
    proc, _, _ = run_patterns(trace_run, "launch-light", 5)
    report = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")
    assert "gpu" not in report["processes"][0] and report["findings"] == []


def test_html_page_lists_the_kernels(trace_run, build_dir, tmp_path):
    from test_export_html import render

    proc, trace, _ = run_patterns(trace_run, "launch-light", 10, CT_DOUBLE_LAUNCH_NS=5000)
    path = proc.run_dir / "trace.pftrace.zst"
    work = kernels_after_launches(trace, 20000)
    work += [(w[0], "other_kernel", "kernel", w[4] + 1000, w[4] + 6000) for w in work[:4]]
    append_gpu_work(path, trace, proc.pid, work)
    page = tmp_path / "page.html"
    cudatrace_cmd.run(build_dir, "export", "--format", "html", "-o", page, path)
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert [cells for _, cells in shown.rows("kernels")] == [
        ["usage_kernel", "10", "200 us", "91%"], ["other_kernel", "4", "20 us", "9%"]]

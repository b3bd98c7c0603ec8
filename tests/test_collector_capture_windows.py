"""Capture windows: CUDATRACE_CAPTURE=profiler, nvtx:NAME or
time:DELAY[:DURATION] records detail only inside its windows, while the
report's per-function counts stay the whole run's (the hooks still count
every call in their thread's totals), and so do its memory figures and
findings (allocations and frees are recorded, windows or not). Each window is a "capture window"
slice on the process's "cudatrace capture windows" track, after a "capture
setting" instant; the report lists the windows in text and JSON. The
programs are tests/programs/capture_steps.c, whose steps the arguments give,
and tests/nvtx/steps.c (per step, "forward" holds two launches, "backward"
one). The twins: unset, everything is recorded and nothing said about
windows; a bad value warns once and also records everything."""
import os

import pytest

import cudatrace_cmd

WINDOW = "capture window"
PROFILER_STEPS = ["3", "start", "5", "stop", "7", "start", "2", "stop", "1"]
STEPS = 4
MIB = 1 << 20


def counted(trace, name):
    return sum(s["name"] == name for s in trace.slices)


def calls(process):
    return {name: s["calls"] for name, s in process["api"].items()}


def windows(trace):
    return [s for s in trace.slices if s["name"] == WINDOW]


def test_the_profiler_api_opens_and_closes_windows(trace_run, build_dir):
    done, trace, _ = trace_run("capture_steps", *PROFILER_STEPS,
                               env={"CUDATRACE_CAPTURE": "profiler"})
    assert done.returncode == 0, done.stderr
    assert "ignoring" not in done.stderr
    # Inside: 5 + 2 launches and both starts (a window holds its start call,
    # not its stop call); the 3 + 7 + 1 launches outside left no slice.
    assert counted(trace, "cudaLaunchKernel") == 7
    assert counted(trace, "cudaProfilerStart") == 2
    assert counted(trace, "cudaProfilerStop") == 0
    marks = windows(trace)
    assert len(marks) == 2 and all(m["args"]["opened_by"] == "cudaProfilerStart" for m in marks)
    assert [i["args"]["capture"] for i in trace.instants if i["name"] == "capture setting"] == [
        "profiler"]
    launches = sorted(s["ts"] for s in trace.slices if s["name"] == "cudaLaunchKernel")
    assert all(any(m["ts"] <= t <= m["ts"] + m["dur"] for m in marks) for t in launches)
    process = cudatrace_cmd.report(build_dir, done.run_dir / "trace.pftrace.zst")["processes"][0]
    assert calls(process) == {"cudaLaunchKernel": 18, "cudaProfilerStart": 2,
                              "cudaProfilerStop": 2}
    assert process["capture"]["setting"] == "profiler"
    assert process["capture"]["counts_are_whole_run"] is True
    assert process["capture"]["memory_is_whole_run"] is True
    assert [(w["from_ns"], w["to_ns"]) for w in process["capture"]["windows"]] == [
        (m["ts"], m["ts"] + m["dur"]) for m in marks]
    text = cudatrace_cmd.run(build_dir, "report", done.run_dir / "trace.pftrace.zst").stdout
    assert ("capture        CUDATRACE_CAPTURE=profiler: 2 windows recorded in detail; the counts "
            "above and the device memory are the whole run's") in text
    assert "window 2 from" in text


def test_without_capture_everything_is_recorded(trace_run, build_dir):
    """The twin: the same program, CUDATRACE_CAPTURE unset."""
    done, trace, _ = trace_run("capture_steps", *PROFILER_STEPS)
    assert done.returncode == 0, done.stderr
    assert counted(trace, "cudaLaunchKernel") == 18
    assert counted(trace, "cudaProfilerStop") == 2
    assert not windows(trace)
    assert not [i for i in trace.instants if i["name"] == "capture setting"]
    path = done.run_dir / "trace.pftrace.zst"
    assert cudatrace_cmd.report(build_dir, path)["processes"][0]["capture"] is None
    assert "capture " not in cudatrace_cmd.run(build_dir, "report", path).stdout


def test_a_bad_setting_warns_once_and_records_everything(trace_run):
    done, trace, _ = trace_run("capture_steps", *PROFILER_STEPS,
                               env={"CUDATRACE_CAPTURE": "time:soon"})
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "CUDATRACE_CAPTURE" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("cudatrace: ignoring CUDATRACE_CAPTURE=time:soon: expected")
    assert counted(trace, "cudaLaunchKernel") == 18
    assert not windows(trace)


def test_an_nvtx_range_is_a_window(trace_run, build_dir):
    preload = os.path.join(build_dir, "libcudatrace.so")
    done, trace, _ = trace_run("nvtx_steps", STEPS, env={"NVTX_INJECTION64_PATH": preload,
                                                        "CUDATRACE_CAPTURE": "nvtx:forward"})
    assert done.returncode == 0, done.stderr
    assert counted(trace, "forward") == STEPS
    assert counted(trace, "cudaLaunchKernel") == 2 * STEPS
    assert counted(trace, "step") == counted(trace, "backward") == 0
    assert counted(trace, "cudaDeviceSynchronize") == 0
    marks = windows(trace)
    assert len(marks) == STEPS and all(m["args"]["opened_by"] == "NVTX range" for m in marks)
    process = cudatrace_cmd.report(build_dir, done.run_dir / "trace.pftrace.zst")["processes"][0]
    assert calls(process) == {"cudaLaunchKernel": 3 * STEPS, "cudaDeviceSynchronize": STEPS}
    assert len(process["capture"]["windows"]) == STEPS


def test_a_time_window_opens_after_its_delay_for_its_duration(trace_run, build_dir):
    """Launches at about 0 s, 1 s and 2 s; the window from 0.5 s for 1 s
    holds only the middle ones. The collector opens and closes it."""
    done, trace, _ = trace_run("capture_steps", "5", "sleep:1000", "7", "sleep:1000", "3",
                               env={"CUDATRACE_CAPTURE": "time:0.5:1"})
    assert done.returncode == 0, done.stderr
    assert counted(trace, "cudaLaunchKernel") == 7
    (mark,) = windows(trace)
    assert mark["args"]["opened_by"] == "time"
    assert abs(mark["dur"] - 1000000000) < 200000000  # the collector checks every cycle
    process = cudatrace_cmd.report(build_dir, done.run_dir / "trace.pftrace.zst")["processes"][0]
    assert calls(process) == {"cudaLaunchKernel": 15}
    assert process["capture"]["setting"] == "time:0.5:1"


def test_run_sets_the_time_window(build_dir, tmp_path):
    """`cudatrace run --delay S --duration S` is CUDATRACE_CAPTURE=time:S:S."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k != "LD_PRELOAD"}
    env["CUDATRACE_SAMPLE_HZ"] = "0"
    env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    program = os.path.join(build_dir, "tests", "capture_steps")
    cudatrace_cmd.run(build_dir, "run", "-q", "-o", "t.pftrace.zst", "--delay", "0.5",
                      "--duration", "1", "--", program, "5", "sleep:1000", "7", "sleep:1000", "3",
                      cwd=tmp_path, env=env)
    process = cudatrace_cmd.report(build_dir, tmp_path / "t.pftrace.zst")["processes"][0]
    assert process["capture"]["setting"] == "time:0.5:1"
    assert process["api"]["cudaLaunchKernel"]["calls"] == 15
    assert len(process["capture"]["windows"]) == 1


def test_a_time_window_without_a_duration_lasts_to_the_end(trace_run, build_dir):
    done, trace, _ = trace_run("capture_steps", "5", "sleep:1000", "7",
                               env={"CUDATRACE_CAPTURE": "time:0.5"})
    assert done.returncode == 0, done.stderr
    assert counted(trace, "cudaLaunchKernel") == 7
    (mark,) = windows(trace)
    last = max(s["ts"] + s["dur"] for s in trace.slices if s["name"] == "cudaLaunchKernel")
    assert mark["args"]["opened_by"] == "time" and mark["ts"] + mark["dur"] >= last


@pytest.mark.parametrize("value", ["profilers", "nvtx:", "time:", "time:1:0", "time:-1",
                                   "time:1:2:3", "time: 1", "nvtx:" + "x" * 80])
def test_each_malformed_setting_warns_and_records_everything(trace_run, value):
    done, trace, _ = trace_run("capture_steps", "start", "3", "stop", "2",
                               env={"CUDATRACE_CAPTURE": value})
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "CUDATRACE_CAPTURE" in line]
    assert len(warnings) == 1 and "recording everything" in warnings[0]
    assert counted(trace, "cudaLaunchKernel") == 5
    assert not windows(trace)


def test_with_cupti_the_gpu_work_stays_whole_and_only_window_calls_carry_flows(
        trace_run, build_dir, tmp_path):
    """CUPTI hands the GPU's work over later, in buffers, so it is not
    windowed; a call outside the window writes no correlation either, so
    only the calls inside begin flows to their kernels (a kernel of a call
    outside ends a flow nothing began, which Perfetto passes over)."""
    env = {"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver", "CT_DOUBLE_DRIVER": "1",
           "CUDATRACE_CAPTURE": "profiler", "CUDATRACE_GPU_RECORDS": "tracks",
           "CT_DOUBLE_CUPTI_STATS": str(tmp_path / "cupti-truth.txt")}
    done, trace, _ = trace_run("capture_steps", *PROFILER_STEPS, env=env)
    assert done.returncode == 0, done.stderr
    launches = [s for s in trace.slices if s["name"] == "cudaLaunchKernel"]
    assert len(launches) == 7 and all(s["flow_ids"] for s in launches)
    kernels = [s for s in trace.slices if s["name"] == "capture_step_kernel"]
    assert len(kernels) == 18
    ended = {f for s in kernels for f in s["terminating_flow_ids"]}
    assert {f for s in launches for f in s["flow_ids"]} <= ended


def test_a_window_opened_before_any_cuda_call_records(trace_run, build_dir):
    """The window's first event starts the session: its flag is the one opened."""
    done, trace, _ = trace_run("capture_steps", "start", "4", "stop", "2",
                               env={"CUDATRACE_CAPTURE": "profiler"})
    assert done.returncode == 0, done.stderr
    assert counted(trace, "cudaLaunchKernel") == 4 and len(windows(trace)) == 1
    preload = os.path.join(build_dir, "libcudatrace.so")
    done, trace, _ = trace_run("nvtx_steps", STEPS, env={"NVTX_INJECTION64_PATH": preload,
                                                        "CUDATRACE_CAPTURE": "nvtx:step"})
    assert done.returncode == 0, done.stderr
    assert [counted(trace, n) for n in ("step", "forward", "backward", "cudaLaunchKernel",
                                        "cudaDeviceSynchronize")] == [STEPS] * 3 + [3 * STEPS, STEPS]
    assert len(windows(trace)) == STEPS


# A leak spread over time (5 ms between allocations), so that its rise does not rest on how
# the scheduler spaced a few microseconds of calls.
LEAK_STEPS = ["malloc", "20", "sleep:5"] * 16 + ["start", "5", "stop", "oom", "3"]


def memory_answers(build_dir, path):
    answer = cudatrace_cmd.report(build_dir, path)
    memory = answer["processes"][0]["memory"]
    figures = {k: memory[k] for k in ("peak_bytes", "final_bytes", "allocs", "frees",
                                      "failed_allocs")}
    oom = [f for f in answer["findings"] if f["id"] == "oom"]
    growth = [f for f in answer["findings"] if f["id"] == "memory-growth"]
    return figures, [f["message"] for f in oom], len(growth)


@pytest.mark.parametrize("capture", ["profiler", "nvtx:forward", "time:60"])
def test_allocations_and_frees_are_the_whole_runs_under_any_window(trace_run, build_dir, capture):
    """16 MiB allocated outside the windows (one before the other: a leak), then an allocation
    that fails: the memory figures and findings are those of the same run unwindowed (the
    twin), whether the window opened (profiler) or never did (nvtx, time)."""
    done, trace, _ = trace_run("capture_steps", *LEAK_STEPS, env={"CUDATRACE_CAPTURE": capture})
    assert done.returncode == 0, done.stderr
    assert counted(trace, "cudaMalloc") == 17
    assert counted(trace, "cudaLaunchKernel") == (5 if capture == "profiler" else 0)
    windowed = memory_answers(build_dir, done.run_dir / "trace.pftrace.zst")
    twin, _, _ = trace_run("capture_steps", *LEAK_STEPS)
    whole = memory_answers(build_dir, twin.run_dir / "trace.pftrace.zst")
    assert windowed[0] == whole[0] == {"peak_bytes": 16 * MIB, "final_bytes": 16 * MIB,
                                       "allocs": 16, "frees": 0, "failed_allocs": 1}
    assert windowed[1] == whole[1] and len(whole[1]) == 1
    assert "with 16.00 MiB live" in whole[1][0] and "capture_steps.c:" in whole[1][0]
    assert windowed[2] == whole[2] == 1
    text = cudatrace_cmd.run(build_dir, "report", done.run_dir / "trace.pftrace.zst").stdout
    assert "the counts above and the device memory are the whole run's" in text

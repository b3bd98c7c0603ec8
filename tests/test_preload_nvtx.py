"""NVTX ranges and marks show on their thread's track, around the CUDA calls
made inside them.

tests/nvtx/steps.c pushes a "step" range holding "forward" (two launches,
nvtxRangePushA) and "backward" (one launch, nvtxRangePushEx), marks "loss"
and synchronises, per step; it is built into a program and into a library.
NVTX finds the tracer through NVTX_INJECTION64_PATH, which `cudatrace run`
sets; under a bare LD_PRELOAD the preload's getenv answers NVTX's look-up of
it while it is unset (CUDATRACE_NVTX=0: not), leaving the environment alone.
"""
import os
import subprocess

import cudatrace_cmd
import perfetto_check

STEPS = 4


def nested(trace):
    """[(name, depth)] of the thread's slices, in order, and the marks' names."""
    slices = sorted(trace.slices, key=lambda s: (s["ts"], -s["dur"]))
    return [(s["name"], s["depth"]) for s in slices], [
        i["name"] for i in trace.instants if i["args"].get("source") == "nvtx"]


def expected_steps(steps):
    one = [("step", 0), ("forward", 1), ("cudaLaunchKernel", 2), ("cudaLaunchKernel", 2),
           ("backward", 1), ("cudaLaunchKernel", 2), ("cudaDeviceSynchronize", 1)]
    return one * steps, ["loss"] * steps


def test_ranges_nest_around_the_calls(trace_run, build_dir):
    preload = os.path.join(build_dir, "libcudatrace.so")
    proc, trace, _ = trace_run("nvtx_steps", STEPS, env={"NVTX_INJECTION64_PATH": preload})
    assert proc.returncode == 0, proc.stderr
    assert nested(trace) == expected_steps(STEPS)
    ranges = [s for s in trace.slices if s["name"] in ("step", "forward", "backward")]
    assert all(s["args"] == {"source": "nvtx"} for s in ranges)
    # The report sums them up per name, by total time.
    report = cudatrace_cmd.report(build_dir, proc.run_dir / "trace.pftrace.zst")
    summed = report["processes"][0]["nvtx_ranges"]
    truth = {name: sum(s["dur"] for s in ranges if s["name"] == name)
             for name in ("step", "forward", "backward")}
    assert {r["name"]: (r["count"], r["total_ns"]) for r in summed} == {
        name: (STEPS, total) for name, total in truth.items()}
    assert [r["name"] for r in summed][0] == "step"  # it holds the other two


def test_run_sets_the_nvtx_tool(build_dir, tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE", "NVTX_")) and k != "LD_PRELOAD"}
    env["CUDATRACE_SAMPLE_HZ"] = "0"  # their slices are all calls (conftest.SAMPLE_HZ)
    env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    cudatrace_cmd.run(build_dir, "run", "-q", "-o", "t.pftrace.zst", "--",
                      os.path.join(build_dir, "tests", "nvtx_steps_via_lib"), STEPS, cwd=tmp_path,
                      env=env)
    assert nested(perfetto_check.load(tmp_path / "t.pftrace.zst")) == expected_steps(STEPS)


def calls_only(trace):
    names, marks = nested(trace)
    return [n for n, _ in names] == [n for n, _ in expected_steps(STEPS)[0]
                                     if n.startswith("cuda")] and marks == []


def test_bare_preload_without_the_variable_finds_the_ranges(trace_run):
    proc, trace, _ = trace_run("nvtx_steps", STEPS, env={"NVTX_INJECTION64_PATH": None})
    assert proc.returncode == 0, proc.stderr
    assert nested(trace) == expected_steps(STEPS)


def test_nvtx_answer_turned_off_records_calls_only(trace_run):
    proc, trace, _ = trace_run("nvtx_steps", STEPS, env={"NVTX_INJECTION64_PATH": None,
                                                         "CUDATRACE_NVTX": "0"})
    assert proc.returncode == 0, proc.stderr
    assert calls_only(trace)


def test_the_users_own_nvtx_tool_wins(trace_run, tmp_path):
    """A path the user set (nsys sets its own) is what NVTX gets: here one
    that does not exist, so NVTX has no tool and the program runs on."""
    proc, trace, _ = trace_run("nvtx_steps", STEPS,
                               env={"NVTX_INJECTION64_PATH": tmp_path / "no-such-tool.so"})
    assert proc.returncode == 0, proc.stderr
    assert calls_only(trace)


def test_the_environment_is_left_alone(build_dir):
    """The answer is getenv's alone: the environment a program reads and
    hands its children has no NVTX_INJECTION64_PATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "NVTX_")) and k != "LD_PRELOAD"}
    env["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
    done = subprocess.run(["sh", "-c", "env; echo ${NVTX_INJECTION64_PATH-unset}"], env=env,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == ""
    assert "NVTX_INJECTION64_PATH" not in done.stdout
    assert done.stdout.splitlines()[-1] == "unset"


def test_a_range_left_open_is_closed_at_the_end(trace_run, build_dir):
    preload = os.path.join(build_dir, "libcudatrace.so")
    proc, trace, _ = trace_run("nvtx_steps", 1, "open", env={"NVTX_INJECTION64_PATH": preload})
    assert proc.returncode == 0, proc.stderr
    # The fixture loads the trace with unclosed slices refused: it is closed, at the end.
    (last,) = [s for s in trace.slices if s["name"] == "never closed"]
    end = [i for i in trace.instants if i["name"] == "cudatrace.end"][0]["ts"]
    assert last["ts"] + last["dur"] == end

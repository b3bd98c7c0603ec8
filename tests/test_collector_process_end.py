"""The trace outlives the traced process: when it is SIGKILLed or crashes,
the collector still drains every record that reached a ring, ends the file
cleanly and marks the process as having ended without exiting. What was
recorded is checked against the program's own count of its calls, kept in a
shared mapping that outlives the process (tests/programs/thread_churn.c)."""
import json
import os
import signal
import struct
import subprocess
import time

import cudatrace_cmd
import perfetto_check


def wait_for_trace_end(build_dir, path, timeout_s=20):
    """The collector is detached; poll until its closing instant is on disk."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if os.path.exists(path):
            done = cudatrace_cmd.run(build_dir, "report", "--json", path, status=None)
            if done.returncode == 0:
                report = json.loads(done.stdout)
                if report["trace"]["tail"] == "complete" and report["processes"][0]["exit"] != "unknown":
                    return report
        time.sleep(0.1)
    raise AssertionError(f"{path} was not finished within {timeout_s} s")


def start(build_dir, tmp_path, program, *args, **extra_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUDATRACE_", "CT_DOUBLE"))}
    env["CUDATRACE_SAMPLE_HZ"] = "0"  # their slices are all calls (conftest.SAMPLE_HZ)
    env.update(LD_LIBRARY_PATH=os.path.join(build_dir, "double"),
               LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"),
               CUDATRACE_OUTPUT=str(tmp_path / "trace.pftrace.zst"), **extra_env)
    return subprocess.Popen([os.path.join(build_dir, "tests", program), *map(str, args)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigkill_keeps_every_recorded_call(build_dir, tmp_path):
    # One thread launching, 20 us per launch: the collector keeps up (nothing
    # dropped) and the trace stays small enough for the Python schema check.
    # Killed 0.2 s after the thread made its 1000th call.
    counts = tmp_path / "counts"
    proc = start(build_dir, tmp_path, "thread_churn", "busy-until-killed", 1, 1000, counts,
                 CT_DOUBLE_CALL_NS="20000")
    assert proc.stdout.readline() == b"thread_churn: 1 threads busy until killed\n"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    report = wait_for_trace_end(build_dir, str(tmp_path / "trace.pftrace.zst"))
    process = report["processes"][0]
    assert process["exit"] == "lost"
    launches = process["api"]["cudaLaunchKernel"]["calls"]
    assert process["dropped_events"] == 0
    assert process["tracer"]["calls_recorded"] == launches
    # The thread's own count: every call that returned to it was recorded, and
    # no call it had not started. Killed while inside a launch (20 us each) or,
    # rarely, between two: after the record was written, or before.
    ((tid, started, finished, _),) = struct.iter_unpack("<qQQQ", counts.read_bytes())
    in_flight = process["in_flight"]
    assert finished >= 1000 and started - finished in (0, 1)
    assert finished <= launches and launches + len(in_flight) <= started
    assert [(c["function"], c["tid"]) for c in in_flight] in ([], [("cudaLaunchKernel", tid)])
    trace = perfetto_check.load(tmp_path / "trace.pftrace.zst")
    finished_slices = [s for s in trace.slices if "in_flight" not in s["args"]]
    assert sum(s["name"] == "cudaLaunchKernel" for s in finished_slices) == launches
    assert len(trace.slices) - len(finished_slices) == len(in_flight)
    assert {s["tid"] for s in trace.slices} == {tid}


def test_normal_exit_is_marked_normal(trace_run):
    completed, trace, _ = trace_run("api_mix", 1)
    assert completed.returncode == 0
    (end,) = [i for i in trace.instants if i["name"] == "cudatrace.end"]
    assert end["args"]["exit"] == "normal"

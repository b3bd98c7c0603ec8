"""Training steps from the markers a program makes (issue 39, its first part): tests/programs/
step_loop.c's steps as NVTX ranges named "train_step", each three launches, a synchronisation and
a wait for input, with a warm-up step and a slow step every fifth. The report's `steps` section
counts them exactly, puts step 1 apart, gives the median within 5% of the program's own
measurement and the slow steps by number, and says what the median step was made of; a steady
twin has no slow step, and a loop that marks nothing has no steps section (steps found without
markers are not built yet)."""
import statistics

from test_preload_cupti import report_json, trace_file, with_gpu

MS = 1000000
KERNEL_NS = 100000


def own_times(stdout):
    """{step: ns} as the program measured each step."""
    return {int(w[1]): int(w[2]) for w in (line.split() for line in stdout.splitlines())
            if w and w[0] == "step"}


def steps_of(build_dir, completed):
    (process,) = report_json(build_dir, trace_file(completed))["processes"]
    return process.get("steps")


def test_marked_steps_with_a_warm_up_and_a_slow_step_every_fifth(trace_run, build_dir, tmp_path):
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=KERNEL_NS)
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 20, "--warmup-ms", 30,
                                "--slow-every", 5, "--slow-ms", 40, env=env)
    assert completed.returncode == 0, completed.stderr
    own = own_times(completed.stdout)
    s = steps_of(build_dir, completed)
    assert (s["source"], s["count"]) == ("nvtx:train_step", 20)
    assert abs(s["first_ns"] - own[1]) < 0.05 * own[1]
    rest = [own[n] for n in range(2, 21)]
    assert abs(s["median_ns"] - statistics.median_low(rest)) < 0.05 * statistics.median(rest)
    assert sorted(t["step"] for t in s["slow"]) == [5, 10, 15, 20]
    assert s["max_step"] in (5, 10, 15, 20) and s["max_ns"] >= 50 * MS
    assert s["median_step"]["step"] not in (1, 5, 10, 15, 20)
    # The median step: three 100 us kernels on the GPU, the host waiting for them in its sync.
    parts = s["median_parts"]
    assert abs(parts["gpu_busy_ns"] - 3 * KERNEL_NS) < 0.1 * 3 * KERNEL_NS
    assert 3 * KERNEL_NS * 0.5 < parts["sync_ns"] <= parts["in_cuda_ns"] < s["median_ns"]


def test_steady_twin_has_no_slow_step(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 12)
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert s["count"] == 12 and s["slow"] == []


def test_a_loop_that_marks_nothing_has_no_steps_section(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--steps", 12)
    assert completed.returncode == 0, completed.stderr
    assert steps_of(build_dir, completed) is None

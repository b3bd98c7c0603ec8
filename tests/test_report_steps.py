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
    # The median step: three 100 us kernels on the GPU (exact: the GPU's intervals are kept), the
    # host waiting for them in its sync (to within the usage timelines' buckets: a share of a
    # millisecond either side in a run this long).
    parts = s["median_parts"]
    assert abs(parts["gpu_busy_ns"] - 3 * KERNEL_NS) < 0.1 * 3 * KERNEL_NS
    assert 0 < parts["sync_ns"] < 2 * MS and 0 < parts["in_cuda_ns"] < 2 * MS


def test_steady_twin_has_no_slow_step(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 12)
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert s["count"] == 12 and s["slow"] == []


def test_a_loop_that_marks_nothing_has_no_steps_section(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--steps", 12)
    assert completed.returncode == 0, completed.stderr
    assert steps_of(build_dir, completed) is None


OUTSIDE_CUDA = 3  # the findings' grew_part for time outside CUDA calls (docs/findings.md)


def findings_of(build_dir, completed):
    return {f["id"]: f for f in report_json(build_dir, trace_file(completed))["findings"]}


def test_slow_steps_that_recur_on_a_timer(trace_run, build_dir):
    """Every fifth step waits 40 ms more for its input: slow-steps names the four by number with
    the time outside CUDA calls as what grew (by about 40 ms), and periodic-slowdown gives their
    spacing, the program's own five steps' time, within 10%."""
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 20, "--slow-every", 5,
                                "--slow-ms", 40)
    assert completed.returncode == 0, completed.stderr
    own = own_times(completed.stdout)
    f = findings_of(build_dir, completed)
    e = f["slow-steps"]["evidence"]
    assert (e["slow_steps"], e["grew_part"]) == (4, OUTSIDE_CUDA)
    assert abs(e["grew_ns"] - 40 * MS) < 0.1 * 40 * MS
    assert "slow steps: 5, 10, 15, 20" in f["slow-steps"]["message"]
    period = statistics.median(sum(own[n] for n in range(k - 4, k + 1)) for k in (10, 15, 20))
    p = f["periodic-slowdown"]["evidence"]
    assert p["slow_steps"] == 4 and abs(p["period_ns"] - period) < 0.1 * period
    assert "step-drift" not in f


def test_steps_slowing_over_the_run(trace_run, build_dir):
    """Each step waits 0.3 ms more than the one before: step-drift compares the last tenth's
    median step with the first tenth's, both within 5% of the program's own, with the time
    outside CUDA calls as what grew; no step is slow against the median."""
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 41, "--drift-us", 300)
    assert completed.returncode == 0, completed.stderr
    own = own_times(completed.stdout)
    f = findings_of(build_dir, completed)
    e = f["step-drift"]["evidence"]
    early = statistics.median_low([own[n] for n in range(2, 6)])
    late = statistics.median_low([own[n] for n in range(38, 42)])
    assert abs(e["first_tenth_median_ns"] - early) < 0.05 * early
    assert abs(e["last_tenth_median_ns"] - late) < 0.05 * late
    assert e["grew_part"] == OUTSIDE_CUDA
    assert "slow-steps" not in f and "periodic-slowdown" not in f


def test_steady_twin_has_no_step_finding(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 41)
    assert completed.returncode == 0, completed.stderr
    f = findings_of(build_dir, completed)
    assert not {"slow-steps", "periodic-slowdown", "step-drift"} & set(f)

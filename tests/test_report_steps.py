"""Training steps (docs/findings.md, "Steps"): tests/programs/step_loop.c's steps, each a wait for
input, three launches and a synchronisation, as NVTX ranges named "train_step" or unmarked, with a
warm-up step and a slow step every fifth. The report's `steps` section counts them exactly, puts
step 1 apart, gives the median within 5% of the program's own measurement and the slow steps by
number, and says what the median step was made of; a steady twin has no slow step. Unmarked, the
steps are found from the launching thread's repetition, through a different first step, steps
that differ by a kernel, a CUDA graph replayed per step and a second launching thread; named by
CUDATRACE_STEP or `cudatrace report --step`, they are what the name says. Under the NVML double,
periodic-slowdown says what else was on the GPU in the slow steps: another process, a lower clock,
a busier GPU; a neighbour there all along is its healthy twin."""
import os
import statistics
import subprocess

import pytest

import cudatrace_cmd
from test_preload_cupti import trace_file, with_gpu

MS = 1000000
KERNEL_NS = 100000


def own_times(stdout):
    """{step: ns} as the program measured each step."""
    return {int(w[1]): int(w[2]) for w in (line.split() for line in stdout.splitlines())
            if w and w[0] == "step"}


def steps_of(build_dir, completed):
    (process,) = cudatrace_cmd.report(build_dir, trace_file(completed))["processes"]
    return process.get("steps")


def test_marked_steps_with_a_warm_up_and_a_slow_step_every_fifth(trace_run, build_dir, tmp_path):
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=KERNEL_NS, CUDATRACE_SAMPLE_HZ=100)
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
    # Its three launches and no copy (counted over spans a few hundred us wide, far from where
    # the launches fall), and the model's 1 MiB live at its end.
    assert (parts["launches"], parts["copies"], parts["copy_ns"]) == (3, 0, 0)
    assert parts["memory_end_bytes"] == 1 << 20
    # The rest of it the thread sleeps (its input wait), as the host sampler saw its states: the
    # sampler's 10 ms period is the step's own length, so only which one dominates is held.
    assert parts["host_waiting_ns"] > 2 * parts["host_running_ns"]


@pytest.mark.twin("slow-steps", "periodic-slowdown")
def test_steady_twin_has_no_slow_step(trace_run, build_dir):
    """Twelve alike steps: none is slow, unless the machine hiccups in one (a few milliseconds,
    which no finding takes for a story)."""
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 12)
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert s["count"] == 12 and len(s["slow"]) <= 1
    assert not {"slow-steps", "periodic-slowdown"} & set(findings_of(build_dir, completed))


def sync_line():
    """step_loop.c:LINE of the step's synchronisation."""
    path = os.path.join(os.path.dirname(__file__), "programs", "step_loop.c")
    with open(path) as source:
        (line,) = [n for n, text in enumerate(source, 1) if "cudaDeviceSynchronize()" in text]
    return f"step_loop.c:{line}"


def check_times(s, own, count, first=True):
    """The steps' count, step 1 and the median as the program measured them, within 5%; with
    first=False, step 1 at least the program's own: step 1 found in the calls begins where the
    call before the loop ended, so it also holds what the thread did between that call and the
    program's own measure (on a loaded machine, some milliseconds)."""
    assert s["count"] == count
    assert abs(s["first_ns"] - own[1]) < 0.05 * own[1] if first else s["first_ns"] >= own[1]
    rest = [own[n] for n in range(2, count + 1)]
    assert abs(s["median_ns"] - statistics.median_low(rest)) < 0.05 * statistics.median(rest)


def test_steps_from_marks(trace_run, build_dir):
    """A loop that marks each step's start (an NVTX mark "step"): a step runs from one mark to
    the next on the thread, so 20 marks make 19 steps, each the program's own."""
    completed, _, _ = trace_run("step_loop", "--nvtx-mark", "--steps", 20, "--slow-every", 5,
                                "--slow-ms", 40)
    assert completed.returncode == 0, completed.stderr
    own = own_times(completed.stdout)
    s = steps_of(build_dir, completed)
    assert (s["source"], s["thread"]) == ("nvtx-mark:step", completed.pid)
    check_times(s, own, 19)
    assert sorted(t["step"] for t in s["slow"]) == [5, 10, 15]


def test_steps_from_profiler_windows(trace_run, build_dir, tmp_path):
    """A loop that opens a cudaProfilerStart/Stop window around each step's work (as
    torch.cuda.profiler.start and stop do): each window is a step, its input wait outside it."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=KERNEL_NS)
    completed, _, _ = trace_run("step_loop", "--profiler", "--steps", 12, env=env)
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert (s["source"], s["count"]) == ("profiler:cudaProfilerStart..cudaProfilerStop", 12)
    assert 3 * KERNEL_NS <= s["median_ns"] < 5 * MS  # the work, not the 10 ms wait
    assert s["median_parts"]["gpu_busy_ns"] == 3 * KERNEL_NS


def test_unmarked_steps_are_found_from_the_launching_thread(trace_run, build_dir):
    """No marker: each step ends with the synchronisation the loop waits for its input after,
    though step 1 launches five kernels more (warm-up) and every seventh step one more."""
    completed, _, _ = trace_run("step_loop", "--steps", 20, "--warmup-ms", 30, "--warmup-kernels",
                                5, "--extra-every", 7, "--slow-every", 5, "--slow-ms", 40)
    assert completed.returncode == 0, completed.stderr
    own = own_times(completed.stdout)
    s = steps_of(build_dir, completed)
    assert s["source"].startswith("inferred:cudaDeviceSynchronize at " + sync_line() + " ")
    check_times(s, own, 20, first=False)
    assert sorted(t["step"] for t in s["slow"]) == [5, 10, 15, 20]


def test_unmarked_steady_twin_has_no_slow_step(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--steps", 20, "--extra-every", 7)
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert s["count"] == 20 and len(s["slow"]) <= 1
    assert not {"slow-steps", "periodic-slowdown"} & set(findings_of(build_dir, completed))


def test_a_graph_replayed_each_step(trace_run, build_dir, tmp_path):
    """The three kernels captured once and replayed: the capture's calls are no step's, and each
    step is one graph launch and its synchronisation."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=KERNEL_NS)
    completed, _, _ = trace_run("step_loop", "--graph", "--steps", 12, env=env)
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert s["source"].startswith("inferred:cudaDeviceSynchronize")
    check_times(s, own_times(completed.stdout), 12, first=False)
    assert abs(s["median_parts"]["gpu_busy_ns"] - 3 * KERNEL_NS) < 0.1 * 3 * KERNEL_NS


def test_two_launching_threads(trace_run, build_dir):
    """A second thread launches each step's backward kernels: the steps are the main thread's,
    whose calls hold the loop's turn. (Step 1 holds the second thread's start as well, which
    the program's own measure does not.)"""
    completed, _, _ = trace_run("step_loop", "--threads", 2, "--steps", 15)
    assert completed.returncode == 0, completed.stderr
    own = own_times(completed.stdout)
    s = steps_of(build_dir, completed)
    assert s["source"].startswith("inferred:cudaDeviceSynchronize")
    assert (s["thread"], s["count"]) == (completed.pid, 15)
    rest = [own[n] for n in range(2, 16)]
    assert abs(s["median_ns"] - statistics.median_low(rest)) < 0.05 * statistics.median(rest)


def test_a_program_that_does_not_repeat_has_no_steps(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--steps", 2)
    assert completed.returncode == 0, completed.stderr
    assert steps_of(build_dir, completed) is None


def test_steps_named_in_the_traced_environment(trace_run, build_dir):
    """CUDATRACE_STEP, set where the program ran, is in its trace: each launch of the named kernel
    ends a step (three a step), though the loop's turn is elsewhere."""
    completed, _, _ = trace_run("step_loop", "--steps", 6,
                                env={"CUDATRACE_STEP": "kernel:step_kernel"})
    assert completed.returncode == 0, completed.stderr
    s = steps_of(build_dir, completed)
    assert (s["source"], s["count"]) == ("CUDATRACE_STEP=kernel:step_kernel", 18)


def test_steps_named_to_the_report(trace_run, build_dir):
    """--step over what was found: the NVTX ranges by name, or a function's calls; a name that
    is none of the forms is refused in one line."""
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 6)
    assert completed.returncode == 0, completed.stderr
    path = trace_file(completed)
    (process,) = cudatrace_cmd.report(build_dir, "--step", "call:cudaLaunchKernel",
                                      path)["processes"]
    assert process["steps"]["count"] == 18
    (process,) = cudatrace_cmd.report(build_dir, "--step", "nvtx:train_step", path)["processes"]
    assert process["steps"]["source"] == "CUDATRACE_STEP=nvtx:train_step"
    check_times(process["steps"], own_times(completed.stdout), 6)
    bad = cudatrace_cmd.run(build_dir, "report", "--json", "--step", "train_step", path, status=2)
    assert bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1 and "--step" in bad.stderr


OUTSIDE_CUDA = 3  # the findings' grew_part for time outside CUDA calls (docs/findings.md)


def findings_of(build_dir, completed):
    return {f["id"]: f for f in cudatrace_cmd.report(build_dir, trace_file(completed))["findings"]}


@pytest.mark.finding("slow-steps", "periodic-slowdown")
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
    # A C program, not sampled: no line is said (tests/test_report_python_steps.py says one).
    assert "python_line" not in e and "mostly at" not in f["slow-steps"]["message"]
    period = statistics.median(sum(own[n] for n in range(k - 4, k + 1)) for k in (10, 15, 20))
    p = f["periodic-slowdown"]["evidence"]
    assert p["slow_steps"] == 4 and abs(p["period_ns"] - period) < 0.1 * period
    assert "nvml_device" not in p  # no NVML: nothing said of the GPU then
    assert "step-drift" not in f


WAIT_MS, SLOW_MS = 20, 400
NVML_LOOP = ("--steps", 20, "--wait-ms", WAIT_MS, "--slow-every", 5, "--slow-ms", SLOW_MS)
LOOP_OTHERS = 14  # steps 3 to 20 but the slow 5, 10, 15 and 20


def in_slow_steps(into, until):
    """Times on the NVML double's clock, [(from_ms, to_ms)], from `into` ms into each of
    NVML_LOOP's slow steps to `until` ms into it. The double's clock starts with the traced
    program, within a few milliseconds of its first call; step 5 begins four WAIT_MS steps in,
    and each slow step 5 steps (a SLOW_MS one among them) after the one before."""
    starts = [4 * WAIT_MS + j * (5 * WAIT_MS + SLOW_MS) for j in range(4)]
    return [(start + into, start + until) for start in starts]


@pytest.fixture
def nvml_loop(trace_run, build_dir, tmp_path):
    """nvml_loop(script) -> findings by id: NVML_LOOP traced under the NVML double scripted
    with `script` (tests/doubles/nvml/nvml_double.c), sampled every 20 ms."""
    def run(script):
        path = tmp_path / "nvml-script"
        path.write_text("".join(line + "\n" for line in script))
        env = {"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/nvml",
               "CT_DOUBLE_NVML_SCRIPT": path, "CUDATRACE_NVML_MS": 20}
        completed, _, _ = trace_run("step_loop", *NVML_LOOP, env=env)
        assert completed.returncode == 0, completed.stderr
        return findings_of(build_dir, completed)
    return run


@pytest.fixture
def sleepers():
    """sleepers(n) -> n processes with a pid and a name (sleep) for the double to put on the
    GPU, killed after the test."""
    started = []

    def start(n):
        started.extend(subprocess.Popen(["sleep", "30"]) for _ in range(n))
        return [p.pid for p in started[-n:]]
    yield start
    for p in started:
        p.kill()
        p.wait()


def periodic_of(findings):
    f = findings["periodic-slowdown"]
    assert (f["evidence"]["slow_steps"], f["evidence"]["nvml_device"]) == (4, 0)
    return f["message"], f["evidence"]


def test_periodic_slowdown_names_another_process_in_the_slow_steps(nvml_loop, sleepers):
    """A probe on a timer: a new process on the GPU for 180 ms in each slow step, as a
    monitoring job's nvidia-smi would be; the finding says it was there in all four slow steps
    and in none of the others, and names each."""
    pids = sleepers(4)
    script = sorted((f"{a} 0 process {pid} 1048576", f"{b} 0 process_end {pid}")
                    for pid, (a, b) in zip(pids, in_slow_steps(120, 300)))
    message, e = periodic_of(nvml_loop([line for pair in script for line in pair]))
    assert (e["process_slow_steps"], e["process_other_steps"], e["pid"]) == (4, 0, pids[0])
    named = ", ".join(f"pid {pid} (sleep)" for pid in pids)
    assert (f"; another process was on GPU 0 in 4 of the 4 slow steps and 0 of the {LOOP_OTHERS} "
            f"others: {named}") in message
    assert (e["slow_sm_clock_mhz"], e["other_sm_clock_mhz"]) == (1980, 1980)


def test_periodic_slowdown_twin_a_neighbour_there_all_along(nvml_loop, sleepers):
    """Another process on the GPU through the whole run, the clocks and utilisation steady: it
    is in the slow steps as much as in the others, so nothing is said of the GPU then."""
    pid, = sleepers(1)
    message, e = periodic_of(nvml_loop([f"0 0 process {pid} 1048576"]))
    assert message.endswith("(a monitoring probe such as nvidia-smi, a checkpoint, a logger)")
    assert "process_slow_steps" not in e
    assert (e["slow_sm_clock_mhz"], e["other_sm_clock_mhz"]) == (1980, 1980)
    assert (e["slow_utilization_percent"], e["other_utilization_percent"]) == (100, 100)


def test_periodic_slowdown_says_a_lower_clock_in_the_slow_steps(nvml_loop):
    """The SM clock at half its maximum through most of each slow step, the GPU busy: the
    finding gives both medians."""
    script = [line for a, b in in_slow_steps(50, 370)
              for line in (f"{a} 0 sm_clock 990", f"{b} 0 sm_clock 1980")]
    message, e = periodic_of(nvml_loop(script))
    assert (e["slow_sm_clock_mhz"], e["other_sm_clock_mhz"]) == (990, 1980)
    assert ("; GPU 0's SM clock was lower in them while busy: median 990 MHz against 1980 MHz in "
            "the other steps") in message
    assert "another process" not in message and "busier" not in message


def test_periodic_slowdown_says_a_busier_gpu_in_the_slow_steps(nvml_loop):
    """The GPU 30% busy, and fully busy through most of each slow step: work that was not the
    loop's, which waited. No sample of the other steps was busy throughout NVML's period, so
    no clock is compared."""
    script = ["0 0 util_gpu 30"] + [line for a, b in in_slow_steps(50, 370)
                                    for line in (f"{a} 0 util_gpu 100", f"{b} 0 util_gpu 30")]
    message, e = periodic_of(nvml_loop(script))
    assert (e["slow_utilization_percent"], e["other_utilization_percent"]) == (100, 30)
    assert ("; GPU 0 was busier in them: utilisation median 100% against 30% in the other "
            "steps") in message
    assert "slow_sm_clock_mhz" not in e and "SM clock" not in message


@pytest.mark.twin("slow-steps", "periodic-slowdown")
def test_slow_steps_that_lose_little_are_no_finding(trace_run, build_dir):
    """Every fifth 4 ms step takes 4 ms more: the steps section lists the four as slow, but
    together they lose 16 ms (a few more where the machine hiccups), under slow_step_lost_ns
    (50 ms), and neither finding fires; with the threshold at 10 ms, slow-steps does."""
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 20, "--wait-ms", 4,
                                "--slow-every", 5, "--slow-ms", 4)
    assert completed.returncode == 0, completed.stderr
    assert {5, 10, 15, 20} <= {t["step"] for t in steps_of(build_dir, completed)["slow"]}
    assert not {"slow-steps", "periodic-slowdown"} & set(findings_of(build_dir, completed))
    lenient = cudatrace_cmd.report(build_dir, "--threshold", "slow_step_lost_ns=10e6",
                                   trace_file(completed))
    (f,) = [f for f in lenient["findings"] if f["id"] == "slow-steps"]
    assert f["evidence"]["slow_steps"] >= 4


@pytest.mark.finding("step-drift")
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


@pytest.mark.twin("slow-steps", "periodic-slowdown", "step-drift")
def test_steady_twin_has_no_step_finding(trace_run, build_dir):
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 41)
    assert completed.returncode == 0, completed.stderr
    f = findings_of(build_dir, completed)
    assert not {"slow-steps", "periodic-slowdown", "step-drift"} & set(f)


def test_annotate_writes_the_steps_track(trace_run, build_dir, trace_vocabulary):
    """`report --annotate` puts the steps on a "cudatrace steps" track in the process, a slice a
    step as long as the report's, with its number and parts as arguments; the report read back
    is the same, and the trace keeps to Perfetto's rules and the declared vocabulary."""
    import perfetto_check
    from trace_vocabulary import check as check_vocabulary

    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 8, "--slow-every", 4,
                                "--slow-ms", 30)
    assert completed.returncode == 0, completed.stderr
    path = trace_file(completed)
    before = cudatrace_cmd.report(build_dir, path)
    cudatrace_cmd.run(build_dir, "report", "--annotate", path)
    trace = perfetto_check.load(path)
    check_vocabulary(trace, trace_vocabulary)
    (track,) = [t for t in trace.tracks.values() if t["name"] == "cudatrace steps"]
    assert track["parent_uuid"] == trace.processes[completed.pid]["uuid"]
    steps = [s for s in trace.slices if s["track_uuid"] == track["uuid"]]
    assert [(s["name"], s["args"]["step"]) for s in steps] == [(f"step {n}", n) for n in
                                                               range(1, 9)]
    (process,) = before["processes"]
    assert steps[0]["dur"] == process["steps"]["first_ns"]
    assert sorted(s["dur"] for s in steps[1:])[3] == process["steps"]["median_ns"]
    assert [s["args"]["step"] for s in steps if s["args"]["slow"]] == [4, 8]
    after = cudatrace_cmd.report(build_dir, path)
    assert (after["processes"], after["findings"]) == (before["processes"], before["findings"])


def test_gpu_idle_judges_the_steps_and_says_start_up_and_shutdown_apart(trace_run, build_dir,
                                                                        tmp_path):
    """150 ms of host work before the loop and after it: gpu-idle judges the 19 steps after
    warm-up (the GPU busy exactly their 57 kernels' time), names no gap longer than a step's
    input wait, and says the start-up and the shutdown on their own."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=KERNEL_NS)
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 20, "--setup-ms", 150,
                                "--teardown-ms", 150, env=env)
    assert completed.returncode == 0, completed.stderr
    f = findings_of(build_dir, completed)["gpu-idle"]
    e = f["evidence"]
    assert e["in_steps"] == 1 and e["busy_ns"] == 19 * 3 * KERNEL_NS
    assert e["idle_share"] > 0.9 and e["gap_1_ns"] < 15 * MS
    assert 150 * MS <= e["before_steps_ns"] < 250 * MS and 150 * MS <= e["after_steps_ns"]
    assert "of the steps" in f["message"]
    assert "; before the steps (start-up and warm-up): " in f["message"]
    assert "; after the last step (shutdown): " in f["message"]


def test_healthy_twin_a_busy_loop_with_a_slow_start_and_end(trace_run, build_dir, tmp_path):
    """The GPU busy 90% of each step, idle through 300 ms of start-up and shutdown (over half
    the run): the steps are what gpu-idle judges, so it is silent."""
    env = with_gpu(build_dir, tmp_path, CT_DOUBLE_KERNEL_NS=3 * MS)
    completed, _, _ = trace_run("step_loop", "--nvtx", "--steps", 20, "--wait-ms", 1,
                                "--setup-ms", 150, "--teardown-ms", 150, env=env)
    assert completed.returncode == 0, completed.stderr
    assert "gpu-idle" not in findings_of(build_dir, completed)

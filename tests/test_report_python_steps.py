"""Training steps of a Python loop (tests/python/step_script.py): batches from a worker process a
few ahead over a queue, which stands in for PyTorch's DataLoader with a worker (PyTorch is not
installed here; its loop waits at the line that asks for the next batch just as this one does),
each step a copy, two launches and a synchronise through ctypes on the CPU double, with no NVTX.
The steps are found from the calls; a slow batch on a timer gives slow steps that recur, and
slow-steps names the loop's own line where their extra time went, from the host sampler's
Python stacks. The same loop without the slow batches is the healthy twin."""
import os
import statistics

import pytest

import cudatrace_cmd
from test_preload_cupti import trace_file
from test_report_host import PYTHON, outside_reads_refused

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "tests", "python", "step_script.py")
BATCH_BYTES = 4096  # step_script.py's batch
STEPS = 42
# A slow batch 0.625 s after the last slow one began, that is halfway through a 50 ms batch:
# the slow steps begin every nine steps (eight batches and a slow one, 650 ms), the first at
# step 14.
SLOW_EVERY_S, SLOW_S = 0.625, 0.2
OUTSIDE_CUDA = 3  # the findings' grew_part for time outside CUDA calls (docs/findings.md)
STEP_FINDINGS = {"slow-steps", "periodic-slowdown", "step-drift"}


def wait_line():
    """The line of step_script.py that asks for the next batch (`# site: wait`)."""
    with open(SCRIPT) as f:
        (line,) = [n for n, text in enumerate(f, 1) if text.rstrip().endswith("# site: wait")]
    return line


@pytest.fixture
def loop(trace_run, build_dir):
    """loop(slow_s) -> (own {step: ns}, the script's slow steps, steps section, findings by id),
    the loop sampled at 100 Hz."""
    if not os.path.exists(PYTHON):
        pytest.skip(f"no {PYTHON}")

    def run(slow_s):
        completed, _, _ = trace_run(PYTHON, SCRIPT, STEPS, SLOW_EVERY_S, slow_s,
                                    env={"CUDATRACE_SAMPLE_HZ": 100})
        assert completed.returncode == 0, completed.stderr
        lines = [line.split() for line in completed.stdout.splitlines() if line.startswith("step ")]
        own = {int(w[1]): int(w[2]) for w in lines}
        slow = [int(w[1]) for w in lines if w[3:] == ["slow"]]
        report = cudatrace_cmd.report(build_dir, trace_file(completed))
        (process,) = report["processes"]
        findings = {f["id"]: f for f in report["findings"] if f["id"] in STEP_FINDINGS}
        return own, slow, process["steps"], findings
    return run


def check_steps(s, own):
    """Found in the calls, all of them, the median step after warm-up (steps 1 and 2) within 5%
    of the script's own."""
    assert s["source"].startswith(f"inferred:cudaDeviceSynchronize at {SCRIPT}:")
    assert (s["count"], s["warmup_steps"]) == (STEPS, 2) and len(own) == STEPS
    rest = [own[n] for n in range(3, STEPS + 1)]
    assert abs(s["median_ns"] - statistics.median_low(rest)) < 0.05 * statistics.median(rest)


def test_a_slow_batch_on_a_timer(loop):
    """The slow batches' steps are the slow steps, by number; periodic-slowdown's period is the
    script's own spacing of them within 10%; slow-steps says the time outside CUDA calls grew,
    by about the slow batch, and where the stacks can be read, names the line that waits for the
    batch: nearly all of the loop's samples in the slow steps were there. Where they cannot be
    read, no line is said."""
    own, slow, s, f = loop(SLOW_S)
    assert len(slow) >= 3, slow  # the script's own: four on an idle machine
    check_steps(s, own)
    assert sorted(t["step"] for t in s["slow"]) == slow
    e = f["slow-steps"]["evidence"]
    assert (e["slow_steps"], e["grew_part"]) == (len(slow), OUTSIDE_CUDA)
    assert abs(e["grew_ns"] - SLOW_S * 1e9) < 0.1 * SLOW_S * 1e9
    spacing = statistics.median(sum(own[n] for n in range(a, b)) for a, b in zip(slow, slow[1:]))
    p = f["periodic-slowdown"]["evidence"]
    assert p["slow_steps"] == len(slow) and abs(p["period_ns"] - spacing) < 0.1 * spacing
    assert set(f) == {"slow-steps", "periodic-slowdown"}
    message = f["slow-steps"]["message"]
    if outside_reads_refused():
        assert "python_line" not in e and "mostly at" not in message
        return
    assert e["python_line"] == wait_line()
    assert (f", mostly at {SCRIPT}:{wait_line()} in train (the loop's thread there in "
            f"{e['python_line_samples']} of its {e['python_samples']} samples in them, "
            f"{e['python_line_other_per_step']:.1f} a step in the other steps); slow steps: "
            + ", ".join(map(str, slow))) in message
    # 100 Hz through about 200 ms more a slow step: some 20 samples each, all but a few at the
    # wait; the other steps' 50 ms are mostly there too, about 5 samples a step.
    assert e["python_samples"] >= 10 * len(slow)
    assert e["python_line_samples"] >= 0.9 * e["python_samples"]
    assert 2 <= e["python_line_other_per_step"] <= 6


def test_healthy_twin_the_same_loop_without_slow_batches(loop):
    own, slow, s, f = loop(0)
    assert slow == []
    check_steps(s, own)
    # What its median step was made of: one batch's copy and two launches, as the report counts
    # them over its spans, to within a span either side (report-schema.md): the copy and the
    # launches come just before the sync that ends the step, so the span holding them may be
    # shared with the next step in proportion; the bytes follow the copies they came with.
    parts = s["median_parts"]
    assert abs(parts["copies"] - 1) <= 1 and abs(parts["launches"] - 2) <= 2
    assert abs(parts["copy_bytes"] - parts["copies"] * BATCH_BYTES) <= 0.5 * BATCH_BYTES
    assert s["slow"] == [] and f == {}

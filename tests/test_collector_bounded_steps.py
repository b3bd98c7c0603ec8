"""The steps of a bounded trace are the whole run's (docs/findings.md, "Steps").

The collector tallies the NVTX ranges whose name says step as they end,
per chunk, by name and duration bucket (collector/tracks/usage_tally.c);
the gap carries the dropped chunks' and the report counts them with the
kept ranges, each at its bucket's mean. tests/programs/bounded_usage.c's
"steps" mode makes every round a "train_step" range that waits 1 ms for its
input, 3 ms more in every twentieth middle round, all in what a 1 MiB cap
drops: the bounded
report counts every step, with the unbounded run's median to within a
bucket (13%) and the middle's slow steps as its p99 and worst, though it
numbers only the kept ones; read without the gap's tallies it would count
the kept steps alone, none of them slow."""
from bounded_runs import bounded_run

ROUNDS = 1500
MIDDLE = ROUNDS // 2
SLOW = MIDDLE // 20


def run(trace_run, build_dir, tmp_path, cap):
    completed, _, _, r = bounded_run(trace_run, build_dir, tmp_path, "steps", cap, {},
                                     (ROUNDS,))
    assert completed.stdout.split() == ["slept", str(SLOW)]
    (process,) = r["processes"]
    return process["steps"]


def close(a, b):
    return abs(a - b) <= 0.13 * b


def test_the_steps_of_a_dropped_middle_are_counted(trace_run, build_dir, tmp_path):
    bounded = run(trace_run, build_dir, tmp_path, 1)
    whole = run(trace_run, build_dir, tmp_path, 0)
    assert bounded["source"] == whole["source"] == "nvtx:train_step"
    assert whole["count"] == bounded["count"] == ROUNDS and whole["in_gap"] == 0
    assert 0 < bounded["in_gap"] < ROUNDS
    assert close(bounded["median_ns"], whole["median_ns"]), (bounded, whole)
    # The slow steps were all in the middle: the bounded run's p99 and worst are theirs, at
    # least the program's 4 ms (each run oversleeps by its own amount on a loaded machine, so
    # the two are held to the program, not to each other).
    for steps in (bounded, whole):
        assert steps["p99_ns"] >= 4000000 and steps["max_ns"] >= steps["p99_ns"]

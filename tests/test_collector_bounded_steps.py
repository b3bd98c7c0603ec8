"""The steps of a bounded trace are the whole run's (docs/findings.md, "Steps").

The collector tallies the NVTX ranges whose name says step as they end,
per chunk, by name and duration bucket (collector/tracks/usage_tally.c);
the gap carries the dropped chunks' and the report counts them with the
kept ranges, each at its bucket's mean. tests/programs/bounded_usage.c's
"steps" mode makes every round a "train_step" range that waits 1 ms for its
input, 3 ms more in every twentieth middle round, all in what a 1 MiB cap
drops: the bounded
report counts every step, with the median, p99 and worst step of the
unbounded run's to within a bucket (13%), though it numbers only the kept
ones; read without the gap's tallies it would count the kept steps alone."""
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
    for figure in ("median_ns", "p99_ns", "max_ns"):
        assert close(bounded[figure], whole[figure]), (figure, bounded, whole)
    # The slow steps are long enough to tell from the others in either run.
    assert whole["max_ns"] > 3000000 and whole["p99_ns"] > 3000000

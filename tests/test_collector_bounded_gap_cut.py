"""A bounded trace's gap says what it had no room to carry.

The gap marker's packets (the totals, usage tallies and live memory of the
dropped middle) have a buffer of their own (collector/perfetto/writer.c);
what does not fit is written as a "cudatrace.gap_cut" instant per part,
which the report turns into `gap.cut` and a "gap cut" line. On the CPU
double, tests/programs/bounded_usage.c's "sites" mode spreads its middle
over 256 call sites whose text is over 250 bytes each: the usage tallies'
sites alone need more room than the buffer has, so the gap says it cut
usage entries; the "stalls" mode (one site of each kind) under the same 1
MiB cap has nothing cut. Both sample a launch's site every microsecond
(CUDATRACE_LAUNCH_SITE_US=1): at the default millisecond, how many of the
64 launch sites carry one depends on the machine's speed, and without them
the other three kinds' sites fit."""
import cudatrace_cmd
from bounded_runs import bounded_run

MS = 1000000
ROUNDS = 4000  # the middle's 2,000 rounds: most of them in the dropped chunks


def run(trace_run, build_dir, tmp_path, mode):
    completed, trace, path, r = bounded_run(trace_run, build_dir, tmp_path, mode, 1,
                                            {"CT_DOUBLE_SYNC_NS": MS, "CUDATRACE_LAUNCH_SITE_US": 1}, (ROUNDS,))
    if mode == "sites":
        assert completed.stdout.split() == ["rounds", str(ROUNDS // 2), "calls", str(ROUNDS // 2)]
    return path, trace, r["processes"][0]["gap"]


def test_a_gap_too_full_says_what_it_cut(trace_run, build_dir, tmp_path):
    path, trace, gap = run(trace_run, build_dir, tmp_path, "sites")
    assert gap["dropped_chunks"] > 0
    cut = {c["part"]: c for c in gap["cut"]}
    # The totals come first and are small; the usage tallies overflow.
    assert "totals" not in cut and "usage" in cut, gap["cut"]
    assert all(c["packets"] > 0 and c["bytes"] > 250 * c["packets"] for c in gap["cut"]
               if c["part"] == "usage"), gap["cut"]
    notes = [i for i in trace.instants if i["name"] == "cudatrace.gap_cut"]
    assert len(notes) == len(gap["cut"])
    text = cudatrace_cmd.run(build_dir, "report", path).stdout
    lines = [line for line in text.splitlines() if "gap cut" in line]
    assert len(lines) == len(gap["cut"])
    assert f"no room for {cut['usage']['packets']} of its usage entries" in "".join(lines)


def test_a_gap_with_room_cuts_nothing(trace_run, build_dir, tmp_path):
    path, trace, gap = run(trace_run, build_dir, tmp_path, "stalls")
    assert gap["dropped_chunks"] > 0 and gap["cut"] == []
    assert not [i for i in trace.instants if i["name"] == "cudatrace.gap_cut"]
    assert "gap cut" not in cudatrace_cmd.run(build_dir, "report", path).stdout

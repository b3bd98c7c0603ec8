"""gpu-idle of a bounded trace is the whole run's.

The collector keeps, per chunk, the GPU's work as intervals
(collector/tracks/gap_gpu.c, fed where gpu_tracks.c writes work, plain or
typed); the gap carries the dropped chunks' work as busy blocks split at
their longest idle gaps, and the report counts them. On the runtime,
driver and CUPTI doubles, tests/programs/bounded_usage.c's "idle" mode
syncs every round (1 ms of kernels) and sleeps in each middle round, three
of them 100, 80 and 60 ms, all in the middle a 1 MiB cap drops: the bounded
trace's gpu-idle has the unbounded run's idle share (within 2 points) and
its three longest gaps (each within 1 ms), without `kept_detail_only`;
read without the gap's GPU blocks, it is the kept detail's, which differs;
the "busy" twin, which never sleeps, has no gpu-idle under the same cap."""
import cudatrace_cmd
import perfetto_check
import pytest
from perfetto_check import pb

from bounded_runs import bounded_run

MS = 1000000
ROUNDS = 1500
LONG = [100 * MS, 80 * MS, 60 * MS]


def run(trace_run, build_dir, tmp_path, mode, cap, typed=False):
    env = {"CT_DOUBLE_DRIVER": 1, "CT_DOUBLE_KERNEL_NS": 100000,
           "LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver",
           "CUDATRACE_GPU_RECORDS": "typed" if typed else "tracks"}
    completed, _, path, r = bounded_run(trace_run, build_dir, tmp_path, mode, cap, env,
                                        (ROUNDS,))
    assert completed.stdout.split() == ["slept", str(ROUNDS // 2 if mode == "idle" else 0)]
    return path, r


def gpu_idle(r):
    findings = {f["id"]: f for f in r["findings"]}
    return findings.get("gpu-idle")


def gaps_of(f):
    e = f["evidence"]
    return [(e[f"gap_{k}_start_ns"], e[f"gap_{k}_ns"]) for k in (1, 2, 3)]


@pytest.mark.parametrize("typed", [False, True], ids=["slices", "typed"])
def test_gpu_idle_of_a_dropped_middle_is_the_whole_runs(trace_run, build_dir, tmp_path, typed):
    bounded_path, r = run(trace_run, build_dir, tmp_path, "idle", 1, typed)
    _, whole_report = run(trace_run, build_dir, tmp_path, "idle", 0, typed)
    gap = r["processes"][0]["gap"]
    bounded, whole = gpu_idle(r), gpu_idle(whole_report)
    assert bounded and whole
    b, w = bounded["evidence"], whole["evidence"]
    assert "kept_detail_only" not in b and "kept detail" not in bounded["message"]
    assert abs(b["idle_share"] - w["idle_share"]) < 0.02
    # The three long sleeps, all in the dropped middle, are the longest gaps either way.
    for (bs, bn), (_, wn), sleep in zip(gaps_of(bounded), gaps_of(whole), LONG):
        assert gap["from_ns"] < bs < gap["to_ns"]
        # Each run sleeps its own (a loaded or sanitized run oversleeps by a few ms):
        # each gap is held to the program's sleep, not to the other run's.
        assert sleep <= bn < sleep + 10 * MS and sleep <= wn < sleep + 10 * MS
    starts = [start for start, _ in gaps_of(bounded)]
    assert starts == sorted(starts)  # as the program slept them
    # Without the gap's GPU blocks the finding is the kept detail's: the
    # dropped middle is one idle stretch (its longest gap, or, where no kept
    # GPU work comes before or after it, the idle time before the first or
    # after the last), and the share far from the run's.
    kept = gpu_idle(cudatrace_cmd.report(build_dir, without_gap_gpu(bounded_path, tmp_path)))
    k = kept["evidence"]
    assert k["kept_detail_only"] == 1
    stretch = max(k["gap_1_ns"], k["before_first_work_ns"], k["after_last_work_ns"])
    assert stretch > (gap["to_ns"] - gap["from_ns"]) / 2 > 10 * LONG[0]
    assert k["idle_share"] - w["idle_share"] > 0.05


def test_a_busy_gpu_under_a_cap_stays_silent(trace_run, build_dir, tmp_path):
    _, r = run(trace_run, build_dir, tmp_path, "busy", 1)
    assert gpu_idle(r) is None


def without_gap_gpu(path, tmp_path):
    """The trace at `path` less its "cudatrace.gap_gpu" instants, as a
    trace from before the gap carried GPU work: plain, beside it."""
    with open(path, "rb") as f:
        trace = pb.Trace.FromString(perfetto_check._decompress(f.read()))
    name_iids = {}  # sequence -> the iid of the name on it
    kept = []
    for p in trace.packet:
        for n in p.interned_data.event_names:
            if n.name == "cudatrace.gap_gpu":
                name_iids[p.trusted_packet_sequence_id] = n.iid
        iid = name_iids.get(p.trusted_packet_sequence_id)
        if not (iid and p.HasField("track_event") and p.track_event.name_iid == iid):
            kept.append(p)
    assert len(kept) < len(trace.packet)
    out = tmp_path / "without-gap-gpu.pftrace"
    out.write_bytes(pb.Trace(packet=kept).SerializeToString())
    return out

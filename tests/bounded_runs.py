"""One run of tests/programs/bounded_usage.c, capped or not, as every
bounded-trace test (tests/test_collector_bounded_*.py) makes and checks it:
a capped run must be a bounded one (at most its cap, one gap marker, chunks
dropped), so that each test's own asserts are about what the gap carried."""
import cudatrace_cmd

MIB = 1 << 20
MIDDLE = 750  # the rounds the program's middle repeats, all in what a 1 MiB cap drops
GAP = "trace gap: middle dropped"


def bounded_run(trace_run, build_dir, tmp_path, mode, cap, env, args=(), report_args=(),
                thinned=None):
    """(completed, trace, path, report) of bounded_usage `mode` `args` under
    CUDATRACE_MAX_MB=`cap` MiB (0: unbounded, written under tmp_path), with
    `env`. The bounded trace is the fixture's, which checks it (Perfetto's
    rules, the trace vocabulary); the unbounded one is read by the report
    only. With thinned=(name, site), a capped run also keeps fewer than half
    the middle's `name` slices from `site`."""
    env = dict(env, CUDATRACE_MAX_MB=cap)
    if not cap:
        env["CUDATRACE_OUTPUT"] = tmp_path / f"{mode}-unbounded.pftrace.zst"
    completed, trace, _ = trace_run("bounded_usage", mode, *args, env=env)
    assert completed.returncode == 0, completed.stderr
    path = env.get("CUDATRACE_OUTPUT", completed.run_dir / "trace.pftrace.zst")
    r = cudatrace_cmd.report(build_dir, *report_args, path)
    if cap:
        assert path.stat().st_size <= cap * MIB
        assert sum(s["name"] == GAP for s in trace.slices) == 1
        assert r["processes"][0]["gap"]["dropped_chunks"] > 0
    if cap and thinned:
        name, site = thinned
        kept = sum(s["name"] == name and s["args"].get("site") == site for s in trace.slices)
        assert kept < MIDDLE / 2, kept
    return completed, trace, path, r

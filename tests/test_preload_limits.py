"""The settings hold at their documented limits, and the limits hold in all: the most rings
record every call; the rings' memory is bounded in total, not only per ring; a malformed
setting is said only by a process that is traced, not by every shell and tool that inherits
the preload; an output path that names a device is refused, never turned into a new file
beside it.
"""
import os
import subprocess
import sys

import cudatrace_cmd

MIB = 1 << 20
RING_MEMORY_MAX = 1024 * MIB  # what the rings may take in all (docs/configuration.md)


def test_the_most_rings_record_every_call(trace_run, program_calls, build_dir):
    """CUDATRACE_RINGS=4096, the documented maximum, traces exactly as the default does."""
    proc, trace, _ = trace_run("api_mix", 1, env={"CUDATRACE_RINGS": 4096})
    assert proc.returncode == 0, proc.stderr
    recorded = {}
    for s in trace.slices:
        recorded[s["name"]] = recorded.get(s["name"], 0) + 1
    assert recorded == program_calls("api_mix", 1)


def peak_rss_and_stderr(build_dir, tmp_path, *settings):
    """Runs `threads 4 1000` traced with `settings` (NAME=VALUE) in a child of a fresh Python,
    whose RUSAGE_CHILDREN peak is the traced program's alone (the collector is reaped by
    whoever the program leaves it to); -> (peak RSS in bytes, the program's stderr)."""
    probe = ("import resource, subprocess, sys\n"
             "done = subprocess.run(sys.argv[1:], stderr=subprocess.PIPE, text=True)\n"
             "assert done.returncode == 0, done.stderr\n"
             "sys.stderr.write(done.stderr)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k != "LD_PRELOAD"}
    env.update({"LD_LIBRARY_PATH": os.path.join(build_dir, "double"),
                "CUDATRACE_OUTPUT": str(tmp_path / "t.pftrace.zst"), "CUDATRACE_QUIET": "1"})
    env.update(s.split("=", 1) for s in settings)
    argv = [sys.executable, "-c", probe, "env",
            "LD_PRELOAD=" + os.path.join(build_dir, "libcudatrace.so"),
            os.path.join(build_dir, "tests", "threads"), "4", "1000"]
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=True)
    return int(done.stdout.split()[-1]), done.stderr


def test_ring_memory_is_bounded_in_all(build_dir, tmp_path):
    """The largest rings, 2^24 records of 64 bytes each, for four threads would take 4 GiB:
    the total is held to its bound, said once, and every call is still recorded."""
    peak, stderr = peak_rss_and_stderr(build_dir, tmp_path, "CUDATRACE_RING_RECORDS=16777216")
    said = [line for line in stderr.splitlines() if "CUDATRACE_RING_RECORDS" in line]
    assert len(said) == 1 and "1024 MiB" in said[0], stderr
    assert peak < RING_MEMORY_MAX + 256 * MIB, f"peak RSS {peak / MIB:.0f} MiB"
    (process,) = cudatrace_cmd.report(build_dir, tmp_path / "t.pftrace.zst")["processes"]
    assert process["api"]["cudaLaunchKernel"]["calls"] == 4000
    assert process["dropped_events"] == 0


def test_rings_within_the_bound_are_taken_as_asked(build_dir, tmp_path):
    """The healthy twin: 9 rings of 2^18 records (16 MiB each) fit; nothing is said, and a
    ring taken is made resident at the size asked. (How many of the 4 threads' rings are
    resident at once depends on how their runs overlap: a ring freed is reused.)"""
    peak, stderr = peak_rss_and_stderr(build_dir, tmp_path, "CUDATRACE_RING_RECORDS=262144",
                                       "CUDATRACE_RINGS=8")
    assert "cudatrace" not in stderr
    assert peak >= 16 * MIB, f"peak RSS {peak / MIB:.0f} MiB: no 16 MiB ring was made resident"


def test_a_malformed_setting_is_said_only_where_a_session_starts(build_dir, tmp_path):
    """sh, ls and cat inherit the preload and the setting but never touch CUDA: they say
    nothing; the one traced program says it once."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k != "LD_PRELOAD"}
    env.update({"LD_LIBRARY_PATH": os.path.join(build_dir, "double"),
                "LD_PRELOAD": os.path.join(build_dir, "libcudatrace.so"),
                "CUDATRACE_OUTPUT": str(tmp_path / "t.pftrace.zst"), "CUDATRACE_QUIET": "1",
                "CUDATRACE_RINGS": "many"})
    api_mix = os.path.join(build_dir, "tests", "api_mix")
    untraced = subprocess.run(["sh", "-c", "ls / > /dev/null; cat /dev/null; echo done"],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (untraced.returncode, untraced.stdout, untraced.stderr) == (0, "done\n", "")
    traced = subprocess.run(["sh", "-c", f"ls / > /dev/null; cat /dev/null; exec {api_mix} 1"],
                            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert traced.returncode == 0, traced.stderr
    assert traced.stderr.count("ignoring CUDATRACE_RINGS=many") == 1, traced.stderr


def test_an_output_that_is_a_device_is_refused(build_dir, tmp_path):
    """CUDATRACE_OUTPUT=/dev/full: the program runs as untraced, is told once that the path is
    not a file a trace can be written to, and no file appears in /dev."""
    before = set(os.listdir("/dev"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k != "LD_PRELOAD"}
    env.update({"LD_LIBRARY_PATH": os.path.join(build_dir, "double"),
                "CUDATRACE_OUTPUT": "/dev/full"})
    argv = [os.path.join(build_dir, "tests", "api_mix"), "1"]
    plain = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    env["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
    traced = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    made = set(os.listdir("/dev")) - before
    for name in made:
        os.unlink(os.path.join("/dev", name))
    assert not made, f"the tracer made {sorted(made)} in /dev"
    assert (traced.returncode, traced.stdout) == (plain.returncode, plain.stdout)
    lines = [line for line in traced.stderr.splitlines() if line.startswith("cudatrace:")]
    assert lines == ["cudatrace: cannot write the trace /dev/full: not a regular file; "
                     "tracing is off"], traced.stderr

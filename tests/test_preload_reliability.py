"""The tracer never hurts the traced program and keeps what it recorded:
crashes, kills, calls in flight, a killed collector, signal handlers,
constructors and destructors around the tracer's own, an unwritable or
size-limited output, a planted symlink, the preload loaded twice or through
dlopen, secure-execution processes, malformed settings and CUDATRACE_DISABLE.
(fork, exec and thread churn: test_preload_fork_threads.py; bad trace files:
test_report_cli.py.)
"""
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import cudatrace_cmd
import perfetto_check


def base_env(build_dir, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k != "LD_PRELOAD"}
    env.update(LD_LIBRARY_PATH=os.path.join(build_dir, "double"))
    env["CUDATRACE_SAMPLE_HZ"] = "0"  # their slices are all calls (conftest.SAMPLE_HZ)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(build_dir, argv, cwd, preload=True, timeout=60, **extra):
    env = base_env(build_dir, **extra)
    if preload:
        env["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def finished_report(build_dir, path, timeout_s=20):
    """The collector outlives a crashed process; wait until its file is whole."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if os.path.exists(path):
            r = cudatrace_cmd.run(build_dir, "report", "--json", path, status=None)
            if r.returncode == 0:
                parsed = json.loads(r.stdout)
                if parsed["processes"] and parsed["processes"][0]["exit"] != "unknown":
                    return parsed
        time.sleep(0.1)
    raise AssertionError(f"{path} was not finished in {timeout_s} s")


@pytest.mark.parametrize("mode,status", [("segv", -signal.SIGSEGV), ("abort", -signal.SIGABRT),
                                         ("kill", -signal.SIGKILL), ("thread-exit", 7)])
def test_crash_keeps_the_trace_whole(build_dir, tmp_path, mode, status):
    crash = os.path.join(build_dir, "tests", "crash")
    trace = tmp_path / "t.pftrace.zst"
    plain = run(build_dir, [crash, mode, 700], tmp_path, preload=False)
    traced = run(build_dir, [crash, mode, 700], tmp_path, CUDATRACE_OUTPUT=trace)
    assert plain.returncode == traced.returncode == status
    assert traced.stdout == plain.stdout
    process = finished_report(build_dir, trace)["processes"][0]
    assert process["exit"] == "lost"
    assert process["api"]["cudaLaunchKernel"]["calls"] == 700
    assert process["in_flight"] == []
    perfetto_check.load(trace)


def test_call_in_flight_at_the_crash_is_marked(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    traced = run(build_dir, [os.path.join(build_dir, "tests", "crash"), "inflight", 300],
                 tmp_path, CUDATRACE_OUTPUT=trace, CT_DOUBLE_SYNC_NS=30 * 10**9)
    assert traced.returncode == -signal.SIGSEGV
    process = finished_report(build_dir, trace)["processes"][0]
    (call,) = process["in_flight"]
    assert call["function"] == "cudaDeviceSynchronize"
    assert call["tid"] != process["pid"]  # the second thread, not main
    assert process["api"]["cudaLaunchKernel"]["calls"] == 300
    assert "cudaDeviceSynchronize" not in process["api"]  # it never returned
    t = perfetto_check.load(trace)
    (slice_,) = [s for s in t.slices if s["name"] == "cudaDeviceSynchronize"]
    assert slice_["args"]["in_flight"] == 1 and slice_["tid"] == call["tid"]


def collector_writing(path):
    """The pid of the collector that has `path` open: the one of this run,
    whatever else runs on the machine."""
    for pid in subprocess.run(["pgrep", "-f", "cudatrace-collector"], capture_output=True,
                              text=True).stdout.split():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in fds):
                return int(pid)
        except OSError:
            continue
    raise AssertionError(f"no collector has {path} open")


def train_loop_calls(steps, launches_per_step):
    """The runtime calls examples/train_loop.c makes, in order: six allocations and a memset,
    then per step a copy in, the launches, a copy out, one allocation and a synchronize."""
    step = ["cudaMemcpy"] + ["cudaLaunchKernel"] * launches_per_step + [
        "cudaMemcpy", "cudaMalloc", "cudaDeviceSynchronize"]
    return ["cudaMalloc"] * 6 + ["cudaMemset"] + step * steps + ["cudaFree"] * 6


def train_loop_losing_its_collector(build_dir, folder, steps, sync_ns, kill_after_s, **settings):
    """Runs examples/train_loop STEPS (each step with a SYNC_NS synchronize) traced into
    FOLDER/t.pftrace.zst, SIGKILLs its collector KILL_AFTER_S seconds after the trace file
    appeared, and returns the program's (stdout, stderr) once it exited with status 0."""
    trace = folder / "t.pftrace.zst"
    env = base_env(build_dir, CUDATRACE_OUTPUT=trace, CT_DOUBLE_SYNC_NS=sync_ns,
                   LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"), **settings)
    proc = subprocess.Popen([os.path.join(build_dir, "examples", "train_loop"), str(steps)],
                            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.time() + 10
    while not trace.exists() and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(kill_after_s)
    os.kill(collector_writing(trace), signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    return stdout, stderr


def test_killed_collector_leaves_the_program_alone_and_a_recoverable_trace(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    # About 4 s: 200 steps, each with a 20 ms synchronize; killed past the
    # first frame (the collector ends one every second).
    stdout, stderr = train_loop_losing_its_collector(build_dir, tmp_path, 200, 20000000, 1.5)
    assert stdout.splitlines()[-1].startswith("train_loop: simulated 200 steps")
    assert "may be incomplete" in stderr and len(stderr.splitlines()) == 1
    damaged = cudatrace_cmd.report(build_dir, trace)
    assert damaged["processes"][0]["exit"] == "unknown"
    recovered = tmp_path / "recovered.pftrace.zst"
    done = cudatrace_cmd.run(build_dir, "recover", trace, recovered)
    assert done.stdout.startswith("recovered ")
    # The recovered copy ends on a frame boundary, which the collector only
    # puts between packets: it decodes whole, with the official schema.
    t = perfetto_check.load(recovered, allow_unclosed=True)
    # What it holds is the program's calls from the first on, in order, none
    # missing, up to where the last sound frame ends: past the first step's
    # synchronize (the first frame ends a second into a run of 20 ms steps),
    # and short of the end.
    launches = int(re.search(r"simulated 200 steps, (\d+) kernel launches", stdout).group(1))
    expected = train_loop_calls(200, launches // 200)
    names = [s["name"] for s in sorted(t.slices, key=lambda s: s["ts"])]
    assert names == expected[:len(names)]
    assert "cudaDeviceSynchronize" in names and len(names) < len(expected)
    # `report` read the same frames of the damaged file.
    assert {name: v["calls"] for name, v in damaged["processes"][0]["api"].items()} == \
        collections.Counter(names)


def test_recover_cuts_at_the_last_sound_frame(build_dir, tmp_path):
    import zstandard
    trace = tmp_path / "t.pftrace.zst"
    assert run(build_dir, [os.path.join(build_dir, "examples", "train_loop"), "20"], tmp_path,
               CUDATRACE_OUTPUT=trace, CUDATRACE_QUIET=1).returncode == 0
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(trace.read_bytes())
    # Two frames split at a packet boundary, then the second one cut.
    ends, i = [], 0
    while i < len(plain):
        size, j = perfetto_check.read_varint(plain, i + 1)
        i = j + size
        ends.append(i)
    split = min(ends, key=lambda e: abs(e - len(plain) // 2))
    c = zstandard.ZstdCompressor(write_checksum=True)
    first, second = c.compress(plain[:split]), c.compress(plain[split:])
    damaged = tmp_path / "damaged.zst"
    damaged.write_bytes(first + second[:len(second) // 2])
    out = tmp_path / "clean.zst"
    done = cudatrace_cmd.run(build_dir, "recover", damaged, out)
    assert out.read_bytes() == first
    assert done.stdout == (f"recovered 1 frames, {len(first)} of {len(first) + len(second) // 2}"
                           f" bytes; {len(second) // 2} bytes after them were dropped\n")
    again = cudatrace_cmd.run(build_dir, "recover", damaged, out, status=1)
    assert "File exists" in again.stderr  # never overwrites


def test_signal_handler_calls_are_recorded_or_counted(build_dir, tmp_path):
    # 20 us a call: the collector keeps up, so the ring is never full and the
    # only calls dropped are the handler's that interrupted a record write or
    # the session start on the same thread.
    launches = 5000
    trace = tmp_path / "t.pftrace.zst"
    truth_path = tmp_path / "truth.json"
    traced = run(build_dir, [os.path.join(build_dir, "tests", "crash"), "signals", launches],
                 tmp_path, CUDATRACE_OUTPUT=trace, CT_DOUBLE_STATS=truth_path,
                 CT_DOUBLE_CALL_NS=20000)
    assert traced.returncode == 0, traced.stderr
    handler_calls = int(re.fullmatch(rf"crash: {launches} launches, (\d+) handler calls\n",
                                     traced.stdout).group(1))
    truth = json.load(open(truth_path))["calls"]
    assert (truth["cudaLaunchKernel"], truth["cudaStreamQuery"]) == (launches, handler_calls)
    process = cudatrace_cmd.report(build_dir, trace)["processes"][0]
    api = {name: v["calls"] for name, v in process["api"].items()}
    assert api["cudaLaunchKernel"] == launches
    assert set(api) == {"cudaLaunchKernel", "cudaStreamQuery"}
    # Calls made in the handler are recorded, all but those it had to drop: few,
    # as a record write or a session start is a small part of the run.
    assert api["cudaStreamQuery"] + process["dropped_events"] == handler_calls
    assert api["cudaStreamQuery"] > handler_calls // 2


def test_calls_from_atexit_are_recorded(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    traced = run(build_dir, [os.path.join(build_dir, "tests", "crash"), "atexit", 200],
                 tmp_path, CUDATRACE_OUTPUT=trace)
    assert traced.returncode == 0
    api = cudatrace_cmd.report(build_dir, trace)["processes"][0]["api"]
    assert api["cudaMalloc"]["calls"] == api["cudaFree"]["calls"] == 1


def test_library_constructor_before_ours_and_destructor_after(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    truth_path = tmp_path / "truth.json"
    user = os.path.join(build_dir, "tests", "early_user")
    plain = run(build_dir, [user, 40], tmp_path, preload=False)
    traced = run(build_dir, [user, 40], tmp_path, CUDATRACE_OUTPUT=trace,
                 CT_DOUBLE_STATS=truth_path)
    assert traced.returncode == plain.returncode == 0
    assert traced.stdout == plain.stdout
    truth = json.load(open(truth_path))["calls"]
    assert truth["cudaMalloc"] == 2  # the constructor's and the destructor's
    process = cudatrace_cmd.report(build_dir, trace)["processes"][0]
    # The constructor's call, made before our constructor ran, is traced; the
    # destructor's, made after our session ended, passes through untraced.
    assert process["api"]["cudaMalloc"]["calls"] == 1
    assert process["api"]["cudaLaunchKernel"]["calls"] == 40
    assert process["exit"] == "normal"


def test_unwritable_output_warns_once_and_changes_nothing(build_dir, tmp_path):
    mix = os.path.join(build_dir, "tests", "api_mix")
    plain = run(build_dir, [mix, 1], tmp_path, preload=False)
    traced = run(build_dir, [mix, 1], tmp_path, CUDATRACE_OUTPUT=tmp_path / "no" / "dir" / "t")
    assert traced.returncode == plain.returncode == 0
    assert traced.stdout == plain.stdout
    (line,) = traced.stderr.splitlines()
    assert line.startswith("cudatrace: cannot write the trace") and "tracing is off" in line


def test_file_size_limit_never_kills_the_program(build_dir, tmp_path):
    loop = os.path.join(build_dir, "examples", "train_loop")
    limited = f"ulimit -f 80; exec {loop} 100"
    plain = run(build_dir, ["sh", "-c", limited], tmp_path, preload=False)
    # Default rings need a 512 MiB memfd, above the limit: tracing stays off.
    off = run(build_dir, ["sh", "-c", limited], tmp_path, CUDATRACE_OUTPUT=tmp_path / "a")
    # Small rings fit; the trace outgrows the limit and the collector stops writing.
    cut = run(build_dir, ["sh", "-c", limited], tmp_path, CUDATRACE_OUTPUT=tmp_path / "b",
              CUDATRACE_RINGS=2, CUDATRACE_RING_RECORDS=64, CT_DOUBLE_CALL_NS=20000)
    assert plain.returncode == off.returncode == cut.returncode == 0
    assert plain.stdout == off.stdout == cut.stdout
    assert "File too large; tracing is off" in off.stderr
    assert not (tmp_path / "a").exists()
    (line,) = cut.stderr.splitlines()
    assert "writing the trace" in line and "File too large" in line
    assert cudatrace_cmd.report(build_dir, tmp_path / "b")["trace"]["tail"] == "cut"


def test_planted_symlink_is_never_followed(build_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "t.pftrace.zst").symlink_to(victim)
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], tmp_path,
                 CUDATRACE_OUTPUT=tmp_path / "t.pftrace.zst")
    assert traced.returncode == 0
    assert victim.read_text() == "precious\n"
    written = tmp_path / "t-1.pftrace.zst"
    assert oct(written.stat().st_mode & 0o777) == "0o600"
    assert cudatrace_cmd.report(build_dir, written)["processes"][0]["exit"] == "normal"


def test_preload_listed_twice_traces_once(build_dir, tmp_path):
    lib = os.path.join(build_dir, "libcudatrace.so")
    traced = run(build_dir, [os.path.join(build_dir, "tests", "launch_loop"), 500], tmp_path,
                 preload=False, LD_PRELOAD=f"{lib}:{lib}", CUDATRACE_OUTPUT=tmp_path / "t")
    assert traced.returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["t"]
    api = cudatrace_cmd.report(build_dir, tmp_path / "t")["processes"][0]["api"]
    assert api["cudaLaunchKernel"]["calls"] == 500


def test_dlopened_tracer_works_and_setuid_process_stays_inert(build_dir, tmp_path):
    probe = tmp_path / "dlopen_probe"
    shutil.copy(os.path.join(build_dir, "tests", "dlopen_probe"), probe)
    out_dir = tmp_path / "out"
    out_dir.mkdir(mode=0o777)
    out_dir.chmod(0o1777)  # anyone may write: only the tracer's own check keeps it empty
    lib = os.path.join(build_dir, "libcudatrace.so")
    # Not preloaded, only dlopen'ed: calls through the handle are traced.
    loaded = run(build_dir, [str(probe), lib], tmp_path, preload=False,
                 CUDATRACE_OUTPUT=out_dir / "loaded")
    assert loaded.returncode == 0 and "cudaMalloc -> 0" in loaded.stdout
    api = cudatrace_cmd.report(build_dir, out_dir / "loaded")["processes"][0]["api"]
    assert api["cudaMalloc"]["calls"] == 1
    # The same program set-uid to nobody runs in secure-execution mode.
    os.chown(probe, 65534, -1)
    probe.chmod(0o4755)
    tmp_path.chmod(0o755)
    secure = run(build_dir, [str(probe), lib], tmp_path, preload=False,
                 CUDATRACE_OUTPUT=out_dir / "secure")
    assert secure.returncode == 0, secure.stderr
    assert "cudaMalloc -> " in secure.stdout
    assert os.listdir(out_dir) == ["loaded"]
    assert secure.stderr == ""


# How each setting shows in a run: each function below runs a workload whose outcome depends on
# the value in effect, with the given settings, in a folder of its own, and returns the run's
# stderr and that outcome.


def threads_given_a_ring(build_dir, folder, settings):
    """One wave of 300 threads that all hold on to their ring at once, one call each: the calls
    recorded are as many as there are rings (CUDATRACE_RINGS), the rest dropped."""
    traced = run(build_dir, [os.path.join(build_dir, "tests", "thread_churn"), 1, 300, 1],
                 folder, CUDATRACE_OUTPUT=folder / "t", **settings)
    assert traced.returncode == 0, traced.stderr
    process = cudatrace_cmd.report(build_dir, folder / "t")["processes"][0]
    recorded = process["api"]["cudaLaunchKernel"]["calls"]
    assert recorded + process["dropped_events"] == 300
    return traced.stderr, recorded


def summary_printed(build_dir, folder, settings):
    """Whether the exit summary is printed (not with CUDATRACE_QUIET=1)."""
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], folder,
                 CUDATRACE_OUTPUT=folder / "t", **settings)
    assert traced.returncode == 0, traced.stderr
    return traced.stderr, f"cudatrace: trace {folder / 't'}: " in traced.stderr


def declared_clock(build_dir, folder, settings):
    """The clock the trace says its timestamps were read from (CUDATRACE_CLOCK)."""
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], folder,
                 CUDATRACE_OUTPUT=folder / "t", **settings)
    assert traced.returncode == 0, traced.stderr
    (clock,) = [i["args"]["clock"] for i in perfetto_check.load(folder / "t").instants
                if i["name"] == "cudatrace.trace"]
    return traced.stderr, clock


def exit_wait_ms(build_dir, folder, settings):
    """How long the program would wait at exit for its collector, as the warning it prints when
    the collector is gone says (CUDATRACE_EXIT_TIMEOUT_MS)."""
    _, stderr = train_loop_losing_its_collector(build_dir, folder, 50, 10000000, 0, **settings)
    return stderr, int(re.search(r"may be incomplete: the collector ended early or took over"
                                 r" (\d+) ms", stderr).group(1))


def calls_recorded_and_dropped(build_dir, folder, settings):
    """16000 back-to-back launches and a synchronize: all fit in a ring of the default 32768
    records (CUDATRACE_RING_RECORDS), so none can be dropped; a smaller ring drops some."""
    traced = run(build_dir, [os.path.join(build_dir, "tests", "launch_loop"), 16000], folder,
                 CUDATRACE_OUTPUT=folder / "t", **settings)
    assert traced.returncode == 0, traced.stderr
    process = cudatrace_cmd.report(build_dir, folder / "t")["processes"][0]
    return traced.stderr, (sum(v["calls"] for v in process["api"].values()),
                           process["dropped_events"])


# Each setting: a malformed value, how the setting shows, and how the default shows (None: as in
# a run without the setting, which depends on the machine).
MALFORMED_SETTINGS = {
    "CUDATRACE_RINGS": ("0", threads_given_a_ring, 256),
    "CUDATRACE_QUIET": ("yes", summary_printed, True),
    "CUDATRACE_CLOCK": ("tsc", declared_clock, None),
    "CUDATRACE_EXIT_TIMEOUT_MS": ("-1", exit_wait_ms, 10000),
    "CUDATRACE_RING_RECORDS": ("12abc", calls_recorded_and_dropped, (16001, 0)),
}


@pytest.mark.parametrize("variable", MALFORMED_SETTINGS)
def test_malformed_setting_warns_once_and_uses_the_default(build_dir, tmp_path, variable):
    value, shown, default = MALFORMED_SETTINGS[variable]
    (tmp_path / "malformed").mkdir()
    stderr, outcome = shown(build_dir, tmp_path / "malformed", {variable: value})
    warnings = [l for l in stderr.splitlines() if variable in l]
    assert len(warnings) == 1 and warnings[0].startswith(f"cudatrace: ignoring {variable}=")
    if default is None:
        (tmp_path / "unset").mkdir()
        default = shown(build_dir, tmp_path / "unset", {})[1]
    assert outcome == default


def test_disable_leaves_the_program_untraced_and_alone(build_dir, tmp_path, program_truth):
    """CUDATRACE_DISABLE=1: no trace file, no collector started (CUDATRACE_COLLECTOR is a script
    that notes each start, then runs the real one), the program's output unchanged, nothing on
    stderr, and no runtime call beyond the program's own. CUDATRACE_DISABLE=0 is the control:
    the same run is traced, so each of these checks fails when the variable is ignored."""
    marker = tmp_path / "collector-started"
    collector = tmp_path / "collector"
    collector.write_text(f"#!/bin/sh\necho started >> '{marker}'\n"
                         f"exec '{os.path.join(build_dir, 'cudatrace-collector')}' \"$@\"\n")
    collector.chmod(0o755)
    mix = os.path.join(build_dir, "tests", "api_mix")
    plain = run(build_dir, [mix, 1], tmp_path, preload=False)
    own_calls = program_truth("api_mix", 1)["calls"]

    def run_with(disable):
        """(completed run, whether it left a trace, whether it made only the program's calls)"""
        trace, truth = tmp_path / f"t{disable}", tmp_path / f"truth{disable}.json"
        done = run(build_dir, [mix, 1], tmp_path, CUDATRACE_DISABLE=disable,
                   CUDATRACE_OUTPUT=trace, CUDATRACE_COLLECTOR=collector, CT_DOUBLE_STATS=truth)
        assert done.returncode == plain.returncode == 0, done.stderr
        assert done.stdout == plain.stdout
        with open(truth) as f:
            return done, trace.exists(), json.load(f)["calls"] == own_calls

    done, traced, only_own_calls = run_with("1")
    assert (traced, marker.exists(), done.stderr, only_own_calls) == (False, False, "", True)
    # Traced, the collector starts, the summary is printed, and the tracer's own queries
    # (versions, devices) are runtime calls the program did not make.
    done, traced, only_own_calls = run_with("0")
    assert (traced, marker.exists(), only_own_calls) == (True, True, False)
    assert done.stderr.startswith("cudatrace: trace ")


def test_dlopen_inside_an_allocation(build_dir, tmp_path, program_calls):
    # The probe dlopens libm from inside the first allocation after start-up,
    # through the tracer's dlopen, and says whether it got a handle.
    lib = os.path.join(build_dir, "libcudatrace.so")
    probe = os.path.join(build_dir, "tests", "libcall_counter.so")
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], tmp_path,
                 preload=False, LD_PRELOAD=f"{probe}:{lib}", CT_PROBE_DLOPEN_IN_MALLOC=1,
                 CT_PROBE_OUT=tmp_path / "counts", CUDATRACE_OUTPUT=tmp_path / "t")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == "api_mix: 1 reps\n"
    with open(tmp_path / "counts") as f:
        assert f.read().splitlines()[-1] == "dlopen_in_malloc 1"
    # The trace is whole: every call the program made, by the double's count.
    process = cudatrace_cmd.report(build_dir, tmp_path / "t")["processes"][0]
    assert process["exit"] == "normal"
    assert {name: v["calls"] for name, v in process["api"].items()} == program_calls("api_mix", 1)

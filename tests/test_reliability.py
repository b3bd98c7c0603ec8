"""The tracer never hurts the traced program and keeps what it recorded:
crashes, kills, calls in flight, a killed collector, signal handlers,
constructors and destructors around the tracer's own, an unwritable or
size-limited output, a planted symlink, the preload loaded twice or through
dlopen, secure-execution processes, and malformed settings. (fork, exec and
thread churn: test_fork_threads.py; bad trace files: test_report_cli.py.)
"""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

import perfetto_check


def base_env(build_dir, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k != "LD_PRELOAD"}
    env.update(LD_LIBRARY_PATH=os.path.join(build_dir, "double"))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(build_dir, argv, cwd, preload=True, timeout=60, **extra):
    env = base_env(build_dir, **extra)
    if preload:
        env["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def report(build_dir, path):
    done = subprocess.run([os.path.join(build_dir, "cudatrace"), "report", "--json", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def finished_report(build_dir, path, timeout_s=20):
    """The collector outlives a crashed process; wait until its file is whole."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if os.path.exists(path):
            r = subprocess.run([os.path.join(build_dir, "cudatrace"), "report", "--json",
                                str(path)], capture_output=True, text=True)
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


def test_killed_collector_leaves_the_program_alone_and_a_recoverable_trace(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    # About 4 s: 200 steps, each with a 20 ms synchronize.
    env = base_env(build_dir, CUDATRACE_OUTPUT=trace, CT_DOUBLE_SYNC_NS=20000000,
                   LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"))
    proc = subprocess.Popen([os.path.join(build_dir, "examples", "train_loop"), "200"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    time.sleep(1.5)  # past the first frame (the collector ends one every second)
    collector = collector_writing(trace)
    os.kill(collector, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert stdout.splitlines()[-1].startswith("train_loop: simulated 200 steps")
    assert "may be incomplete" in stderr and len(stderr.splitlines()) == 1
    damaged = report(build_dir, trace)
    assert damaged["processes"][0]["exit"] == "unknown"
    recovered = tmp_path / "recovered.pftrace.zst"
    done = subprocess.run([os.path.join(build_dir, "cudatrace"), "recover", str(trace),
                           str(recovered)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recovered ")
    # The recovered copy ends on a frame boundary, which the collector only
    # puts between packets: it decodes whole, with the official schema.
    t = perfetto_check.load(recovered, allow_unclosed=True)
    assert sum(s["name"] == "cudaLaunchKernel" for s in t.slices) > 0


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
    done = subprocess.run([os.path.join(build_dir, "cudatrace"), "recover", str(damaged),
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == first
    assert done.stdout == (f"recovered 1 frames, {len(first)} of {len(first) + len(second) // 2}"
                           f" bytes; {len(second) // 2} bytes after them were dropped\n")
    again = subprocess.run([os.path.join(build_dir, "cudatrace"), "recover", str(damaged),
                            str(out)], capture_output=True, text=True)
    assert again.returncode == 1 and "File exists" in again.stderr  # never overwrites


def test_signal_handler_calls_are_recorded_or_counted(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    truth_path = tmp_path / "truth.json"
    traced = run(build_dir, [os.path.join(build_dir, "tests", "crash"), "signals", 200000],
                 tmp_path, CUDATRACE_OUTPUT=trace, CT_DOUBLE_STATS=truth_path)
    assert traced.returncode == 0, traced.stderr
    truth = json.load(open(truth_path))["calls"]
    process = report(build_dir, trace)["processes"][0]
    assert truth["cudaStreamQuery"] > 0
    issued = truth["cudaLaunchKernel"] + truth["cudaStreamQuery"]
    recorded = sum(v["calls"] for v in process["api"].values())
    assert recorded + process["dropped_events"] == issued


def test_calls_from_atexit_are_recorded(build_dir, tmp_path):
    trace = tmp_path / "t.pftrace.zst"
    traced = run(build_dir, [os.path.join(build_dir, "tests", "crash"), "atexit", 200],
                 tmp_path, CUDATRACE_OUTPUT=trace)
    assert traced.returncode == 0
    api = report(build_dir, trace)["processes"][0]["api"]
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
    process = report(build_dir, trace)["processes"][0]
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
    limited = f"ulimit -f 40; exec {loop} 100"
    plain = run(build_dir, ["sh", "-c", limited], tmp_path, preload=False)
    # Default rings need a 256 MiB memfd, above the limit: tracing stays off.
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
    assert report(build_dir, tmp_path / "b")["trace"]["tail"] == "cut"


def test_planted_symlink_is_never_followed(build_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "t.pftrace.zst").symlink_to(victim)
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], tmp_path,
                 CUDATRACE_OUTPUT=tmp_path / "t.pftrace.zst")
    assert traced.returncode == 0
    assert victim.read_text() == "precious\n"
    written = tmp_path / "t.pftrace.zst-1"
    assert oct(written.stat().st_mode & 0o777) == "0o600"
    assert report(build_dir, written)["processes"][0]["exit"] == "normal"


def test_preload_listed_twice_traces_once(build_dir, tmp_path):
    lib = os.path.join(build_dir, "libcudatrace.so")
    traced = run(build_dir, [os.path.join(build_dir, "tests", "launch_loop"), 500], tmp_path,
                 preload=False, LD_PRELOAD=f"{lib}:{lib}", CUDATRACE_OUTPUT=tmp_path / "t")
    assert traced.returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["t"]
    assert report(build_dir, tmp_path / "t")["processes"][0]["api"]["cudaLaunchKernel"]["calls"] == 500


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
    assert report(build_dir, out_dir / "loaded")["processes"][0]["api"]["cudaMalloc"]["calls"] == 1
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


@pytest.mark.parametrize("variable,value", [("CUDATRACE_RINGS", "0"), ("CUDATRACE_QUIET", "yes"),
                                            ("CUDATRACE_CLOCK", "tsc"),
                                            ("CUDATRACE_EXIT_TIMEOUT_MS", "-1"),
                                            ("CUDATRACE_RING_RECORDS", "12abc")])
def test_malformed_setting_warns_once_and_uses_the_default(build_dir, tmp_path, variable, value):
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], tmp_path,
                 CUDATRACE_OUTPUT=tmp_path / "t", **{variable: value})
    assert traced.returncode == 0
    warnings = [l for l in traced.stderr.splitlines() if variable in l]
    assert len(warnings) == 1 and warnings[0].startswith(f"cudatrace: ignoring {variable}=")
    assert report(build_dir, tmp_path / "t")["processes"][0]["exit"] == "normal"


def test_dlopen_inside_an_allocation(build_dir, tmp_path):
    # The probe dlopens libm from inside the first allocation after start-up.
    lib = os.path.join(build_dir, "libcudatrace.so")
    probe = os.path.join(build_dir, "tests", "libcall_counter.so")
    traced = run(build_dir, [os.path.join(build_dir, "tests", "api_mix"), 1], tmp_path,
                 preload=False, LD_PRELOAD=f"{probe}:{lib}", CT_PROBE_DLOPEN_IN_MALLOC=1,
                 CT_PROBE_OUT=tmp_path / "counts", CUDATRACE_OUTPUT=tmp_path / "t")
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == "api_mix: 1 reps\n"
    assert report(build_dir, tmp_path / "t")["processes"][0]["exit"] == "normal"

"""The traced program runs as it would untraced in the conditions real jobs meet
(tests/programs/hostile.c): as PID 1 of a container or a child subreaper that reaps every
child before it exits, with a SIGCHLD handler, started with its standard descriptors
closed and set up as a daemon, closing every descriptor it did not open and forking, or
having lost the tracer's collector. Each test compares the run's exit status and output
with what the program does untraced, and holds the trace to the calls it made.
"""
import os
import shutil
import signal
import subprocess
import time

import pytest

import cudatrace_cmd

RUN_TIMEOUT_S = 30


@pytest.fixture(params=["pidfd", "no pidfd"])
def kernel(request, build_dir):
    """The prefix that runs the program as on a kernel with pidfds, or without."""
    return [] if request.param == "pidfd" else [os.path.join(build_dir, "tests", "without_pidfd")]


def run(build_dir, tmp_path, *args, traced=True, wrap=(), kernel=(), env=None,
        timeout=RUN_TIMEOUT_S):
    """hostile ARGS..., optionally inside `wrap` (a command prefix) and as on `kernel`;
    -> (completed, trace)."""
    trace = tmp_path / "trace.pftrace.zst"
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("CUDATRACE_", "CT_DOUBLE_")) and k != "LD_PRELOAD"}
    full["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    full.update({"CUDATRACE_OUTPUT": str(trace), "CUDATRACE_QUIET": "1"})
    if traced:
        full["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
    full.update(env or {})
    argv = [*wrap, *kernel, os.path.join(build_dir, "tests", "hostile"), *map(str, args)]
    try:
        done = subprocess.run(argv, env=full, cwd=tmp_path, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(argv)} did not end within {timeout} s (traced={traced}): "
                    f"{e.stdout!r}")
    return done, trace if traced else None


def assert_whole(build_dir, trace, pairs):
    """The trace holds every pair the program made, and its normal end."""
    (p,) = cudatrace_cmd.report(build_dir, trace)["processes"]
    assert p["api"]["cudaMalloc"]["calls"] == pairs
    assert p["api"]["cudaFree"]["calls"] == pairs
    assert p["exit"] == "normal"


def same_as_untraced(build_dir, tmp_path, kernel, *args, wrap=(), env=None):
    plain, _ = run(build_dir, tmp_path / "plain", *args, traced=False, wrap=wrap, env=env)
    traced, trace = run(build_dir, tmp_path / "traced", *args, wrap=wrap, kernel=kernel, env=env)
    assert (traced.returncode, traced.stdout) == (plain.returncode, plain.stdout), traced.stderr
    return traced, trace


@pytest.fixture(autouse=True)
def folders(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "traced").mkdir()


@pytest.mark.parametrize("mode, children", [("reaper", 3), ("reaper-waitid", 4)])
def test_a_subreaper_that_reaps_every_child_exits_as_untraced(build_dir, tmp_path, kernel,
                                                             mode, children):
    """It reaps exactly its own children, with their exit codes, and then learns it has
    none left, with wait(), waitid(P_ALL) or waitpid(-1, WNOHANG) in a handler."""
    done, trace = same_as_untraced(build_dir, tmp_path, kernel, mode, 20)
    assert done.stdout == f"reaped {children} exits 3\n"
    assert_whole(build_dir, trace, 20)


def test_a_wait_with_sigchld_ignored_returns_when_the_children_are_gone(build_dir, tmp_path,
                                                                       kernel):
    done, trace = same_as_untraced(build_dir, tmp_path, kernel, "ignored", 20)
    assert done.stdout == "wait -1 errno ECHILD\n"
    assert_whole(build_dir, trace, 20)


def pid_namespace():
    """The prefix that runs a command as PID 1 of a new PID namespace, or a skip."""
    unshare = shutil.which("unshare")
    prefix = [unshare, "--pid", "--fork", "--kill-child", "--mount-proc"] if unshare else None
    if not prefix or subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("this machine cannot make a PID namespace (unshare, CAP_SYS_ADMIN)")
    return prefix


def test_pid_1_of_a_container_that_reaps_every_child_exits_as_untraced(build_dir, tmp_path,
                                                                        kernel):
    done, trace = same_as_untraced(build_dir, tmp_path, kernel, "reaper", 20,
                                   wrap=pid_namespace())
    assert done.stdout == "reaped 3 exits 3\n"
    assert_whole(build_dir, trace, 20)


def test_no_sigchld_reaches_the_program(build_dir, tmp_path, kernel):
    done, trace = same_as_untraced(build_dir, tmp_path, kernel, "sigchld", 20)
    assert done.stdout == "sigchld 0\n"
    assert_whole(build_dir, trace, 20)


def closed_stdio():
    return ["sh", "-c", 'exec 0<&- 1>&- 2>&- "$0" "$@"']


def test_a_daemon_started_with_stdio_closed_keeps_its_descriptors(build_dir, tmp_path,
                                                                   kernel):
    """The tracer's descriptors never take 0-2: /dev/null lands on 0, and the log, the
    program's stderr, gets its 100 lines and nothing of ours."""
    for folder in ("plain", "traced"):
        log = tmp_path / folder / "daemon.log"
        done, trace = run(build_dir, tmp_path / folder, "daemon", 200, log,
                          traced=folder == "traced", wrap=closed_stdio(),
                          kernel=kernel if folder == "traced" else ())
        assert done.returncode == 0, (folder, done.returncode)
        assert log.read_text() == "".join(f"log line {i}\n" for i in range(100)), folder
    assert_whole(build_dir, trace, 200)


def test_a_program_that_closes_every_descriptor_and_forks(build_dir, tmp_path, kernel):
    """Its child keeps the pipe the program made (none of the tracer's numbers are closed
    in it by number), its exit does not wait on one of the program's own descriptors, and
    the trace, whose lifeline it closed, holds every call."""
    env = {"CUDATRACE_EXIT_TIMEOUT_MS": "8000"}
    start = time.monotonic()
    done, trace = same_as_untraced(build_dir, tmp_path, kernel, "closefrom", 20, env=env)
    assert done.stdout == "child 0\n"
    assert time.monotonic() - start < 6, "the traced run waited at exit"
    assert_whole(build_dir, trace, 20)


def collector_of(pid):
    """The pid of the collector that is `pid`'s child (its own, or one reparented to it)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(pid), "-f", "cudatrace-collector"],
                               capture_output=True, text=True).stdout.split()
        if found:
            return int(found[0])
        time.sleep(0.05)
    raise AssertionError(f"no collector under {pid}")


def test_a_dead_collector_is_noticed_whoever_its_parent_is(build_dir, tmp_path, kernel):
    """A subreaper whose collector died: with every ring full, allocations and frees would
    wait for room while the collector lives; it does not, so they go on at once."""
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update({"LD_LIBRARY_PATH": os.path.join(build_dir, "double"), "CUDATRACE_QUIET": "1",
                "LD_PRELOAD": os.path.join(build_dir, "libcudatrace.so"),
                "CUDATRACE_OUTPUT": str(tmp_path / "t.pftrace.zst"),
                "CUDATRACE_RING_RECORDS": "64", "CUDATRACE_SPILL_MB": "0",
                "CUDATRACE_EXIT_TIMEOUT_MS": "2000"})
    proc = subprocess.Popen([*kernel, os.path.join(build_dir, "tests", "hostile"),
                             "lost-collector", "500"],
                            env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        os.kill(collector_of(proc.pid), signal.SIGKILL)
        time.sleep(0.2)
        out, _ = proc.communicate("go\n", timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the program waited on its dead collector")
    assert proc.returncode == 0
    took = int(out.split()[2])
    assert took < 1000, f"500 pairs took {took} ms with the collector gone"

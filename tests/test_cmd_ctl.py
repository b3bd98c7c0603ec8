"""`cudatrace ctl PID status|start|stop|snapshot`: a live traced process's
collector answers on a unix socket in a directory only its owner may open
(here /tmp/cudatrace-0 or $XDG_RUNTIME_DIR/cudatrace), named by the pid. The
program is tests/programs/capture_steps.c, steered line by line on stdin
(each line answered "ok" once done), so the test knows what it did before
each question. status gives the totals so far; start and stop open and close
a capture window (the same flag as CUDATRACE_CAPTURE); snapshot copies the
trace so far beside it while the program goes on; another uid is
refused; garbage and over-long lines get an error reply and change nothing
in the program; a pid without a collector is a one-line error."""
import ctypes
import os
import socket
import subprocess
import time

import cudatrace_cmd
import perfetto_check
from conftest import SAMPLE_HZ, _STEERING_PREFIXES, _STEERING_VARS
from test_preload_hostile import collector_of

NOBODY = 65534
MIB = 1 << 20


class Live:
    """capture_steps under the tracer, steered one line at a time."""

    def __init__(self, build_dir, tmp_path, env=None):
        self.build_dir = build_dir
        self.trace = tmp_path / "trace.pftrace.zst"
        full = {k: v for k, v in os.environ.items()
                if not k.startswith(_STEERING_PREFIXES) and k not in _STEERING_VARS}
        full.update(CUDATRACE_OUTPUT=str(self.trace), CUDATRACE_SAMPLE_HZ=SAMPLE_HZ,
                    LD_LIBRARY_PATH=os.path.join(build_dir, "double"),
                    LD_PRELOAD=os.path.join(build_dir, "libcudatrace.so"), **(env or {}))
        self.started = time.time()
        self.proc = subprocess.Popen([os.path.join(build_dir, "tests", "capture_steps")],
                                     env=full, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.pid = self.proc.pid

    def step(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "ok\n"
        # The collector starts with the first call and listens soon after.
        deadline = time.monotonic() + 10
        while not self.listening() and time.monotonic() < deadline:
            time.sleep(0.01)

    def listening(self):
        """Whether this process's collector has put its socket at the pid's path. A file there
        from before the process started is an earlier process's of the same pid (pids wrap at
        pid_max, 32768 on CI, and a killed collector leaves its file), which refuses
        connections until this collector renames its own over it."""
        try:
            return os.stat(self.socket_path()).st_ctime >= self.started - 1
        except FileNotFoundError:
            return False

    def ctl(self, *args, **options):
        return cudatrace_cmd.run(self.build_dir, "ctl", self.pid, *args, timeout=30, **options)

    def finish(self):
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err

    def socket_path(self):
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        folder = (os.path.join(runtime, "cudatrace") if runtime and runtime.startswith("/")
                  else f"/tmp/cudatrace-{os.geteuid()}")
        return os.path.join(folder, f"{self.pid}.sock")


def status(live):
    lines = live.ctl("status").stdout.splitlines()
    calls = {parts[1]: int(parts[2]) for parts in (l.split() for l in lines) if parts[0] == "calls"}
    figures = {parts[0]: parts[1] for parts in (l.split() for l in lines) if parts[0] != "calls"}
    return figures, calls


def slices(live, name):
    trace = perfetto_check.load(live.trace)
    return sum(s["name"] == name for s in trace.slices), trace


def test_status_gives_the_totals_so_far(build_dir, tmp_path):
    live = Live(build_dir, tmp_path)
    live.step("3")
    figures, calls = status(live)
    assert calls == {"cudaLaunchKernel": 3}
    assert figures["pid"] == str(live.pid) and figures["window"] == "open"
    assert figures["capture"] == "all"
    assert int(figures["records"]) <= 3
    live.step("malloc")
    live.step("4")
    # status brings the trace up to its moment (collector/catch_up.c): the allocation just
    # made is in the live memory, not held back for ordering.
    figures, calls = status(live)
    assert calls == {"cudaLaunchKernel": 7, "cudaMalloc": 1}
    assert figures["device_bytes"] == str(MIB) and figures["records"] == "8"
    # The file grows a frame at a time.
    deadline = time.monotonic() + 10
    while int(status(live)[0]["trace_bytes"]) == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    later = status(live)[0]
    assert later["dropped"] == "0" and int(later["trace_bytes"]) > 0
    code, out, _ = live.finish()
    assert (code, out) == (0, "")  # each step answered "ok", nothing more
    assert not os.path.exists(live.socket_path())  # the collector removed it


def accepts_while(collector, tmp_path, action):
    """accept4 calls the collector makes, as strace sees them, while `action()` runs."""
    out = tmp_path / "accepts"
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=accept,accept4", "-o", str(out),
                               "-p", str(collector)], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(f"/proc/{collector}/status") as f:
                if any(l.startswith("TracerPid:") and l.split()[1] != "0" for l in f):
                    break
            time.sleep(0.01)
        action()
    finally:
        tracer.terminate()
        tracer.wait(timeout=30)
    return sum("accept" in line for line in out.read_text().splitlines())


def test_an_idle_collector_accepts_only_a_connection_that_waits(build_dir, tmp_path):
    """An accept4 on an empty backlog is no cheap 'nothing': Linux makes and frees a socket,
    an inode and a file for it, which at a drain cycle a millisecond was 40% of an idle
    collector's CPU. Half a second of idling makes none; a `ctl status` is accepted."""
    live = Live(build_dir, tmp_path)
    live.step("3")
    collector = collector_of(live.pid)
    assert accepts_while(collector, tmp_path, lambda: time.sleep(0.5)) == 0
    replies = []
    assert accepts_while(collector, tmp_path, lambda: replies.append(status(live))) >= 1
    assert replies[0][1] == {"cudaLaunchKernel": 3}
    assert live.finish()[:2] == (0, "")


def snapshot(build_dir, pid):
    done = cudatrace_cmd.run(build_dir, "ctl", pid, "snapshot", timeout=30)
    (line,) = done.stdout.splitlines()
    word, path = line.split(" ", 1)
    assert word == "snapshot"
    return path


def test_snapshot_twice_on_a_running_program(build_dir, tmp_path):
    """Each snapshot opens (the suite's Perfetto checks) and holds what was recorded by then;
    the program's output and exit status are unchanged, and the trace lists both."""
    live = Live(build_dir, tmp_path)
    live.step("3")
    first = snapshot(build_dir, live.pid)
    live.step("4")
    second = snapshot(build_dir, live.pid)
    assert (first, second) == (str(tmp_path / "trace.snapshot-1.pftrace.zst"),
                               str(tmp_path / "trace.snapshot-2.pftrace.zst"))
    for path, launches in ((first, 3), (second, 7)):
        trace = perfetto_check.load(path)
        assert sum(s["name"] == "cudaLaunchKernel" for s in trace.slices) == launches
    code, out, err = live.finish()
    assert (code, out) == (0, ""), err
    process = cudatrace_cmd.report(build_dir, live.trace)["processes"][0]
    assert process["api"]["cudaLaunchKernel"]["calls"] == 7
    assert [(s["trigger"], s["path"]) for s in process["snapshots"]] == [
        ("asked", first), ("asked", second)]


def device_memory(build_dir, path):
    """The report's peak and final device bytes, and failed allocations, of a trace or snapshot."""
    memory = cudatrace_cmd.report(build_dir, path)["processes"][0]["memory"]
    return memory["peak_bytes"], memory["final_bytes"], memory["failed_allocs"]


def test_a_snapshot_right_after_an_allocation_holds_it(build_dir, tmp_path):
    """The collector holds memory events back to put threads' events in time order; a snapshot
    applies what it has received up to its moment, so the allocation just made is in it. The
    trace itself, which goes on, ends with the same figures."""
    live = Live(build_dir, tmp_path)
    live.step("malloc")
    assert device_memory(build_dir, snapshot(build_dir, live.pid)) == (MIB, MIB, 0)
    code, out, err = live.finish()
    assert (code, out) == (0, ""), err
    assert device_memory(build_dir, live.trace) == (MIB, MIB, 0)


def test_the_oom_snapshot_holds_the_allocations_before_the_failure(build_dir, tmp_path):
    live = Live(build_dir, tmp_path, env={"CUDATRACE_SNAPSHOT_ON": "oom"})
    live.step("malloc")
    live.step("malloc")
    live.step("oom")
    code, out, err = live.finish()
    assert (code, out) == (0, ""), err
    assert device_memory(build_dir, tmp_path / "trace.snapshot-1.pftrace.zst") == (
        2 * MIB, 2 * MIB, 1)
    assert device_memory(build_dir, live.trace) == (2 * MIB, 2 * MIB, 1)


def test_start_and_stop_open_and_close_a_window(build_dir, tmp_path):
    live = Live(build_dir, tmp_path, env={"CUDATRACE_CAPTURE": "profiler"})
    live.step("2")
    assert status(live)[0]["window"] == "closed"
    assert status(live)[0]["capture"] == "profiler"
    assert live.ctl("start").stdout == "window open\n"
    live.step("5")
    assert live.ctl("stop").stdout == "window closed\n"
    live.step("7")
    assert status(live)[1] == {"cudaLaunchKernel": 14}
    code, _, err = live.finish()
    assert code == 0, err
    launches, trace = slices(live, "cudaLaunchKernel")
    assert launches == 5
    windows = [s for s in trace.slices if s["name"] == "capture window"]
    assert [w["args"]["opened_by"] for w in windows] == ["cudatrace ctl"]
    process = cudatrace_cmd.report(build_dir, live.trace)["processes"][0]
    assert process["api"]["cudaLaunchKernel"]["calls"] == 14
    assert [w["opened_by"] for w in process["capture"]["windows"]] == ["cudatrace ctl"]


def test_stop_without_capture_set_keeps_the_start(build_dir, tmp_path):
    """Unset, everything is recorded from the start: stop closes that window."""
    live = Live(build_dir, tmp_path)
    live.step("4")
    live.ctl("stop")
    live.step("6")
    assert live.finish()[0] == 0
    launches, trace = slices(live, "cudaLaunchKernel")
    assert launches == 4
    assert [w["args"]["opened_by"] for w in trace.slices if w["name"] == "capture window"] == [
        "the start"]


def ask_raw(path, data):
    """Sends `data` to the socket and returns the whole reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        try:
            s.sendall(data)
        except BrokenPipeError:
            pass  # a refusal can be answered and closed before the line is sent; it is still read
        reply = b""
        while chunk := s.recv(4096):
            reply += chunk
        return reply


def test_garbage_gets_an_error_and_changes_nothing(build_dir, tmp_path):
    live = Live(build_dir, tmp_path)
    live.step("3")
    path = live.socket_path()
    assert ask_raw(path, b"\xff\x00\x01status\n").startswith(b"error: ")
    assert ask_raw(path, b"x" * 10000) == b"error: the command is too long\n"
    assert ask_raw(path, b"status extra\n").startswith(b"error: unknown command 'status extra'")
    # A peer that sends nothing is let go after a second, and nobody waits on it.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        idle.connect(path)
        assert status(live)[1] == {"cudaLaunchKernel": 3}
        idle.settimeout(10)
        assert idle.recv(4096).startswith(b"error: no command came")
    done = live.ctl("bogus", status=1)
    assert done.stderr == f"cudatrace: ctl: pid {live.pid}: unknown command 'bogus' (try help)\n"
    live.step("2")
    code, out, _ = live.finish()
    assert (code, out) == (0, "")
    assert slices(live, "cudaLaunchKernel")[0] == 5


def in_child_as_nobody(fn):
    """Runs fn() in a forked child; its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        except BaseException as e:
            print(f"child: {e!r}", flush=True)
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_another_uid_is_refused(build_dir, tmp_path):
    live = Live(build_dir, tmp_path)
    live.step("1")
    path = live.socket_path()

    def through_the_directory():
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        done = live.ctl("status", status=None)
        ok = done.returncode == 1 and done.stderr.startswith(f"cudatrace: ctl: pid {live.pid}: ")
        return 0 if ok and done.stdout == "" else 1

    def past_the_directory():
        # Files as root (fsuid 0) reach the socket; the connection is nobody's
        # (euid), which SO_PEERCRED reports.
        os.setresuid(0, NOBODY, 0)
        ctypes.CDLL(None, use_errno=True).setfsuid(0)
        reply = ask_raw(path, b"status\n")
        return 0 if reply == b"error: refused: not the owner of the traced process\n" else 1

    assert in_child_as_nobody(through_the_directory) == 0
    assert in_child_as_nobody(past_the_directory) == 0
    assert status(live)[1] == {"cudaLaunchKernel": 1}
    assert live.finish()[0] == 0


def test_a_pid_without_a_collector_is_a_clear_error(build_dir):
    untraced = subprocess.Popen(["sleep", "30"])
    try:
        done = cudatrace_cmd.run(build_dir, "ctl", untraced.pid, "status", timeout=30, status=1)
    finally:
        untraced.kill()
        untraced.wait()
    assert done.stdout == ""
    assert done.stderr.startswith(f"cudatrace: ctl: pid {untraced.pid}: no cudatrace collector "
                                  "is listening")
    assert done.stderr.count("\n") == 1
    bad = cudatrace_cmd.run(build_dir, "ctl", "nope", "status", timeout=30, status=2)
    assert "not a process id" in bad.stderr


def test_a_directory_others_can_enter_is_refused(build_dir, tmp_path):
    runtime = tmp_path / "runtime"
    (runtime / "cudatrace").mkdir(parents=True)
    os.chmod(runtime / "cudatrace", 0o755)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    done = cudatrace_cmd.run(build_dir, "ctl", "1", "status", timeout=30, env=env, status=1)
    assert f"refusing {runtime}/cudatrace: it must be a directory owned by uid" in done.stderr
    assert "mode 0755" in done.stderr


def test_held_connections_make_it_busy_not_stuck(build_dir, tmp_path):
    """Four silent peers fill its slots: the next is told it is busy at once,
    the program runs on, and once they are let go status answers again."""
    live = Live(build_dir, tmp_path)
    live.step("1")
    path = live.socket_path()
    held = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(4)]
    try:
        for s in held:
            s.connect(path)
        time.sleep(0.2)  # accepted, each in a slot
        assert ask_raw(path, b"status\n") == b"error: busy: try again\n"
        live.step("2")
        for s in held:
            s.settimeout(10)
            assert s.recv(4096).startswith(b"error: no command came")
    finally:
        for s in held:
            s.close()
    assert status(live)[1] == {"cudaLaunchKernel": 3}
    assert live.finish()[0] == 0

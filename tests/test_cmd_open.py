"""`cudatrace open`: serves a trace on 127.0.0.1 for the Perfetto UI, prints the
ui.perfetto.dev link that loads it, answers the UI's CORS preflight and GET the way
the UI expects, and exits 0 once the file went out. The file is served only at the
link's path, /TOKEN/NAME with a fresh random TOKEN, since any local user can reach the
port. Other origins get 403 without a CORS header, other paths 404; a busy port and a
timeout end it with status 1. Slow and idle connections neither hold up the UI's
request nor stay past the request timeout.

Every test talks to 127.0.0.1 only, with bounded waits; none opens a browser (no
DISPLAY, or a fake xdg-open that only notes its arguments)."""
import http.client
import os
import re
import select
import socket
import stat
import subprocess
import time

import pytest

import cudatrace_cmd

WAIT_S = 30
LINK = re.compile(r"^(\S+)/#!/\?url=http://127\.0\.0\.1:(\d+)(/\S+)\n$")
UI = "https://ui.perfetto.dev"
SERVED = re.compile(r"^/([0-9a-f]{32})/([^/]+)$")  # /TOKEN/NAME, TOKEN 128 random bits
REQUEST_TIMEOUT_S = 5  # what a connection has to send its whole request head


@pytest.fixture
def trace_file(trace_run):
    completed, _, _ = trace_run("train_loop", 5)
    assert completed.returncode == 0, completed.stderr
    return completed.run_dir / "trace.pftrace.zst"


def quiet_env(**extra):
    """The environment without a desktop, so that nothing opens a browser."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(extra)
    return env


class Server:
    """A running `cudatrace open`: its process, and the port and path its link names."""

    def __init__(self, build_dir, trace, *args, env=None):
        self.proc = cudatrace_cmd.start(build_dir, "open", *args, trace, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env or quiet_env())
        self.link = self.proc.stdout.readline()
        match = LINK.match(self.link)
        if not match:
            self.proc.kill()
            pytest.fail(f"no link on stdout: {self.link!r}; stderr: {self.proc.stderr.read()}")
        self.port, self.path = int(match.group(2)), match.group(3)

    def request(self, method, path=None, headers=(), timeout=WAIT_S):
        """(status, {header: value}, body) of one request on a fresh connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path or self.path, headers=dict(headers))
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()

    def finish(self):
        """(status, stdout after the link, stderr) once the process ended by itself."""
        try:
            out, err = self.proc.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"cudatrace open still running {WAIT_S} s after the GET")
        return self.proc.returncode, out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


@pytest.fixture
def serve(build_dir):
    servers = []

    def start(trace, *args, env=None):
        servers.append(Server(build_dir, trace, "--no-browser", "--port", "0", "--timeout",
                              str(WAIT_S), *args, env=env))
        return servers[-1]

    yield start
    for server in servers:
        server.kill()


@pytest.mark.parametrize("origin, private_network", [
    (UI, False),
    ("http://127.0.0.1:10000", True),  # a Perfetto UI served locally, for offline use
    ("http://localhost:10000", False),
])
def test_preflight_then_get_then_exit(serve, trace_file, origin, private_network):
    server = serve(trace_file)
    assert server.link.startswith(UI + "/#!/?url=http://127.0.0.1:")
    served = SERVED.match(server.path)
    assert served and served.group(2) == "trace.pftrace.zst", server.path
    ask = {"Origin": origin, "Access-Control-Request-Method": "GET",
           "Access-Control-Request-Headers": "range, x-perfetto-probe"}
    if private_network:  # Chrome's preflight for a page reaching the local network
        ask["Access-Control-Request-Private-Network"] = "true"
    status, headers, body = server.request("OPTIONS", headers=ask)
    expected = {"Access-Control-Allow-Origin": origin, "Vary": "Origin",
                "Access-Control-Allow-Methods": "GET",
                "Access-Control-Allow-Headers": "range, x-perfetto-probe",
                "Content-Length": "0", "Cache-Control": "no-cache", "Connection": "close"}
    if private_network:
        expected["Access-Control-Allow-Private-Network"] = "true"
    assert (status, headers, body) == (204, expected, b"")
    assert server.proc.poll() is None, "a preflight must not end the server"

    status, headers, body = server.request("GET", headers={"Origin": origin})
    data = trace_file.read_bytes()
    assert status == 200
    assert body == data
    assert headers["Access-Control-Allow-Origin"] == origin
    assert headers["Content-Length"] == str(len(data))
    assert headers["Content-Type"] == "application/octet-stream"
    code, out, err = server.finish()
    assert code == 0, err
    assert out == ""
    assert "was fetched" in err.splitlines()[-1]


def test_other_origins_hosts_and_paths_are_refused(serve, trace_file):
    server = serve(trace_file)
    for origin in ("https://evil.example", "null", "https://ui.perfetto.dev.evil.example",
                   "http://127.0.0.1.evil.example:10000"):
        for method in ("OPTIONS", "GET"):
            status, headers, body = server.request(
                method, headers={"Origin": origin, "Access-Control-Request-Method": "GET"})
            assert status == 403, (origin, method)
            assert not any(h.lower().startswith("access-control-") for h in headers), headers
            assert trace_file.read_bytes() not in body
    # A page that reached us through a DNS name of its own (rebinding) sends no Origin
    # on a same-origin GET, but its Host is not ours.
    status, _, _ = server.request("GET", headers={"Host": f"evil.example:{server.port}"})
    assert status == 403
    for path in ("/other.pftrace.zst", "/", "/../trace.pftrace.zst", server.path + "/x"):
        status, _, body = server.request("GET", path, headers={"Origin": UI})
        assert status == 404, path
        assert body == b"404 Not Found\n"
    status, _, _ = server.request("POST", headers={"Origin": UI})
    assert status == 405
    # The UI first looks for a trace processor on this port; a 404 tells it there is none.
    status, headers, _ = server.request("POST", "/status", headers={"Origin": UI})
    assert status == 404 and headers["Access-Control-Allow-Origin"] == UI
    assert server.proc.poll() is None, "refusals must not end the server"
    status, _, body = server.request("GET", headers={"Origin": UI})
    assert status == 200 and body == trace_file.read_bytes()
    assert server.finish()[0] == 0


def test_each_run_links_to_its_own_random_token(serve, trace_file):
    tokens = []
    for _ in range(2):
        server = serve(trace_file)
        served = SERVED.match(server.path)
        assert served and served.group(2) == "trace.pftrace.zst", server.path
        tokens.append(served.group(1))
    assert tokens[0] != tokens[1]


def test_only_the_linked_path_gets_the_trace(serve, trace_file):
    """Any local user can reach the port, and a request without Origin (curl's) is
    let through: without the token, the trace's own name or a wrong token gets 404,
    and none of them counts as the fetch that ends `open`."""
    server = serve(trace_file)
    status, _, body = server.request("GET", f"/{trace_file.name}")
    assert (status, body) == (404, b"404 Not Found\n"), "served at a path anyone can guess"
    served = SERVED.match(server.path)
    assert served, server.path
    token, name = served.groups()
    wrong = ("0" if token[0] != "0" else "1") + token[1:]
    for path in (f"/{wrong}/{name}", f"/{token}", f"/{token}/", f"/{token}/x",
                 f"/{token[:-1]}/{name}"):
        status, _, body = server.request("GET", path)
        assert (status, body) == (404, b"404 Not Found\n"), path
    assert server.proc.poll() is None, "a fetch at another path must not end the server"
    status, _, body = server.request("GET")
    assert status == 200 and body == trace_file.read_bytes()
    code, _, err = server.finish()
    assert code == 0, err
    assert err.splitlines()[-1].endswith(" was fetched; done")


def test_an_idle_connection_does_not_hold_up_the_ui(serve, trace_file):
    """A browser may connect ahead of need (preconnect) and send nothing on that
    connection; the request on the next one is answered at once all the same."""
    server = serve(trace_file)
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S):
        start = time.monotonic()
        status, _, body = server.request("GET", headers={"Origin": UI})
        assert status == 200 and body == trace_file.read_bytes()
        assert time.monotonic() - start < 3
    assert server.finish()[0] == 0


def partial_request(server):
    """A connection that sent part of a request head and waits."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
    sock.sendall(f"GET {server.path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())
    return sock


def test_slow_and_idle_clients_do_not_hold_up_the_ui(serve, trace_file):
    """Three clients stuck in their request head and sixteen idle ones (more than
    the server holds at once) are connected; the UI's request is answered at once."""
    server = serve(trace_file)
    slow = [partial_request(server) for _ in range(3)]
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
            for _ in range(16)]
    try:
        start = time.monotonic()
        status, _, body = server.request("GET", headers={"Origin": UI}, timeout=2)
        assert status == 200 and body == trace_file.read_bytes()
        assert time.monotonic() - start < 2
        code, _, err = server.finish()
        assert code == 0, err
    finally:
        for sock in slow + idle:
            sock.close()


def test_a_client_taking_the_file_slowly_holds_up_no_one(serve, tmp_path):
    """While a GET's reply waits for its client to read (a file larger than the
    socket's buffers), another connection is answered at once."""
    big = tmp_path / "big.pftrace"
    data = os.urandom(64 << 20)
    big.write_bytes(data)
    server = serve(big)
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S) as taker:
        taker.sendall(f"GET {server.path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      f"Origin: {UI}\r\n\r\n".encode())
        assert taker.recv(1, socket.MSG_PEEK) == b"H"  # the reply has begun
        start = time.monotonic()
        status, _, body = server.request("OPTIONS", timeout=2, headers={
            "Origin": UI, "Access-Control-Request-Method": "GET"})
        assert (status, body) == (204, b"")
        assert time.monotonic() - start < 2
        assert server.proc.poll() is None, "the file is not all out yet"
        received = bytearray()
        while chunk := taker.recv(1 << 20):
            received += chunk
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert f"\r\nContent-Length: {len(data)}\r\n".encode() in head
    assert body == data
    assert server.finish()[0] == 0


def closed_after(sock, start, dribble):
    """Seconds from `start` until the server closed `sock` without a word (None when
    it answered instead); sends a byte of a request head every 0.25 s if `dribble`."""
    while time.monotonic() - start < REQUEST_TIMEOUT_S + 3:
        if select.select([sock], [], [], 0.25)[0]:
            try:
                data = sock.recv(4096)
            except ConnectionResetError:
                data = b""
            return time.monotonic() - start if data == b"" else None
        if dribble:
            try:
                sock.send(b"X")
            except OSError:
                pass
    pytest.fail(f"still open {REQUEST_TIMEOUT_S + 3} s after connecting")


@pytest.mark.parametrize("client", ["silent", "partial", "dribbling"])
def test_a_slow_client_is_closed_after_the_request_timeout(serve, trace_file, client):
    server = serve(trace_file)
    start = time.monotonic()
    if client == "partial":
        sock = partial_request(server)
    else:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
    with sock:
        elapsed = closed_after(sock, start, dribble=client == "dribbling")
    assert elapsed is not None, "closed with an answer"
    assert REQUEST_TIMEOUT_S - 0.5 <= elapsed < REQUEST_TIMEOUT_S + 2
    assert server.proc.poll() is None, "a timed-out client must not end the server"
    status, _, body = server.request("GET", headers={"Origin": UI})
    assert status == 200 and body == trace_file.read_bytes()
    assert server.finish()[0] == 0


def test_a_busy_port_is_one_line_and_status_1(build_dir, trace_file):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        done = cudatrace_cmd.run(build_dir, "open", "--no-browser", "--port", port, "--timeout",
                                 "5", trace_file, timeout=WAIT_S, env=quiet_env(), status=1)
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("cudatrace: open: ") and f"port {port} " in line and "in use" in line


def test_the_timeout_ends_it(build_dir, trace_file):
    start = time.monotonic()
    done = cudatrace_cmd.run(build_dir, "open", "--no-browser", "--port", "0", "--timeout", "1",
                             trace_file, timeout=WAIT_S, env=quiet_env(), status=1)
    elapsed = time.monotonic() - start
    assert LINK.match(done.stdout)
    assert "was not fetched within 1 s" in done.stderr.splitlines()[-1]
    assert 1 <= elapsed < 10


def fake_xdg_open(tmp_path):
    """A PATH whose xdg-open only writes its arguments to tmp_path/xdg-open.log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "xdg-open"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path}/xdg-open.tmp\n'
                      f'mv {tmp_path}/xdg-open.tmp {tmp_path}/xdg-open.log\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", tmp_path / "xdg-open.log"


@pytest.mark.parametrize("no_browser", [False, True])
def test_the_link_is_opened_where_a_desktop_exists(build_dir, trace_file, tmp_path, no_browser):
    path, log = fake_xdg_open(tmp_path)
    args = ["--port", "0", "--timeout", str(WAIT_S)] + (["--no-browser"] if no_browser else [])
    server = Server(build_dir, trace_file, *args, env=quiet_env(PATH=path, DISPLAY=":99"))
    try:
        if not no_browser:
            deadline = time.monotonic() + WAIT_S
            while not log.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert log.read_text() == server.link
        assert server.request("GET", headers={"Origin": UI})[0] == 200
        assert server.finish()[0] == 0
        assert log.exists() != no_browser
    finally:
        server.kill()


def test_another_ui_gets_its_link_and_its_origin(serve, trace_file):
    server = serve(trace_file, "--ui", "https://perfetto.example.org/ui/")
    assert server.link.startswith("https://perfetto.example.org/ui/#!/?url=http://127.0.0.1:")
    status, headers, _ = server.request("GET", headers={"Origin": "https://perfetto.example.org"})
    assert status == 200
    assert headers["Access-Control-Allow-Origin"] == "https://perfetto.example.org"
    assert server.finish()[0] == 0


def test_a_name_a_link_would_escape_is_served_plain(serve, trace_file, tmp_path):
    odd = tmp_path / "rank 0#a&b?.pftrace.zst"
    odd.write_bytes(trace_file.read_bytes())
    server = serve(odd)
    served = SERVED.match(server.path)
    assert served and served.group(2) == "rank_0_a_b_.pftrace.zst", server.path
    status, _, body = server.request("GET", headers={"Origin": UI})
    assert status == 200 and body == odd.read_bytes()
    assert server.finish()[0] == 0


@pytest.mark.parametrize("args", [[], ["--bogus", "t"], ["--port", "65536", "t"],
                                  ["--timeout", "0", "t"], ["--port"], ["a", "b"],
                                  ["--ui", "ftp://x", "t"]])
def test_bad_usage_is_one_line_and_status_2(build_dir, args):
    """One line says what is wrong; an option getopt refuses is followed by the usage."""
    done = cudatrace_cmd.run(build_dir, "open", *args, timeout=WAIT_S, env=quiet_env(), status=2)
    assert done.stdout == ""
    first, *rest = done.stderr.splitlines()
    assert first.startswith("cudatrace: "), first
    refused_by_getopt = args in (["--bogus", "t"], ["--port"])
    assert (rest[0].startswith("usage: cudatrace open") if refused_by_getopt else rest == []), rest


def test_a_missing_trace_is_one_line_and_status_1(build_dir, tmp_path):
    done = cudatrace_cmd.run(build_dir, "open", "--port", "0", tmp_path / "absent.pftrace.zst",
                             timeout=WAIT_S, env=quiet_env(), status=1)
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "absent.pftrace.zst" in line

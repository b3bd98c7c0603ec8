"""Tests of `build/cudatrace export TRACE --format FORMAT [-o OUTPUT]`.

This file owns what each export format holds and how the command behaves:

* perfetto and perfetto-gz: decoded and checked by perfetto_check (Perfetto's official compiled
  schema, every import rule) and equal, packet for packet and byte for byte, to the trace they
  were made from;
* chrome-json: parsed as JSON and checked event by event against the trace as perfetto_check
  decodes it: the same slices (pid, tid, name, ts and dur to the nanosecond, args), the same
  instants and counter values, the process and thread names, and nothing else;
* a damaged input: a cut tail (every whole packet exported, one note on stderr, status 0, as
  `report` and `recover` do) and slices left open (chrome-json: "X" to the trace's last
  timestamp, args.unclosed = 1);
* the output: its default name, never replacing a file nor following a planted symlink, `-o -`
  as standard output (the same bytes, no file made), progress on a terminal and silence
  elsewhere, memory bounded on a large trace;
* help, bad usage and bad input: one line, a non-zero status, no output file left behind.

Traces come from the trace_run fixture (conftest.py): the built test programs run under the
preload on the CPU double of the CUDA runtime.
"""

import collections
import gzip
import json
import os
import pathlib
import pty
import re
import resource

import pytest
import zstandard

import cudatrace_cmd
import perfetto_check
from test_report_cli import (decodable, new_gzip_decoder, new_zstd_decoder, packet_ends,
                             two_parts, varint)

EXPORT_TIMEOUT_S = 30
FORMATS = ["perfetto", "perfetto-gz", "chrome-json"]
EXTENSIONS = {"perfetto": ".pftrace", "perfetto-gz": ".pftrace.gz", "chrome-json": ".json"}
MAX_ADDRESS_SPACE = 32 << 20  # bytes; an export runs in under 12 MiB


def trace_path(proc):
    return proc.run_dir / "trace.pftrace.zst"


def export(build_dir, trace, fmt, output=None):
    """Exports quietly and successfully; returns the output's path."""
    args = ["export", trace, "--format", fmt] + (["-o", output] if output else [])
    written = cudatrace_cmd.run(build_dir, *args, quiet=True).stdout
    assert re.fullmatch(r"wrote .+\n", written), written
    return written[len("wrote "):-1]


def plain_bytes(path):
    """The Trace bytes of a plain, gzip or zstd file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == perfetto_check.GZIP_MAGIC:
        return decodable(data, new_gzip_decoder)
    if data[:4] == perfetto_check.ZSTD_MAGIC:
        return decodable(data, new_zstd_decoder)
    return data


def assert_refused(done, status):
    """A failure with `status`: one 'cudatrace: ' line on stderr, nothing on stdout."""
    assert done.returncode == status, done
    assert done.stdout == b""
    lines = done.stderr.decode(errors="replace").splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudatrace: "), lines


# --------------------------------------------------------------------------
# Reading a chrome-json export back


def ns(microseconds):
    return round(microseconds * 1000)


def as_traced(args):
    """Exported args as the trace has them: grid and block back to "XxYxZ", stream_handle back
    to stream; the Kineto shapes are checked on the way."""
    out = {}
    for key, value in args.items():
        if key in ("grid", "block"):
            assert isinstance(value, list) and len(value) == 3, (key, value)
            value = "x".join(map(str, value))
        assert key != "stream", "a runtime call's stream is stream_handle (HTA: GPU only)"
        out["stream" if key == "stream_handle" else key] = value
    return out


def by_phase(doc):
    phases = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        phases[e["ph"]].append(e)
    assert set(phases) <= {"M", "X", "i", "C"}, set(phases)
    return phases


def trace_end(trace):
    """The latest time anywhere in the trace: where slices left open end."""
    times = [s["ts"] + s["dur"] for s in trace.slices] + [s["ts"] for s in trace.unclosed]
    times += [i["ts"] for i in trace.instants]
    times += [t for values in trace.counters.values() for t, _ in values]
    return max(times)


def exported_slices(events):
    return sorted(({"pid": e["pid"], "tid": e["tid"], "name": e["name"], "ts": ns(e["ts"]),
                    "dur": ns(e["dur"]), "args": as_traced(e["args"])} for e in events),
                  key=lambda s: (s["pid"], s["tid"], s["ts"], s["dur"], s["name"]))


def traced_slices(slices, end=None, extra=None):
    """perfetto_check's slices in the shape exported_slices gives; `end` for open ones."""
    return sorted(({"pid": s["pid"], "tid": s["tid"], "name": s["name"], "ts": s["ts"],
                    "dur": s["dur"] if end is None else end - s["ts"],
                    "args": {**s["args"], **(extra or {})}} for s in slices),
                  key=lambda s: (s["pid"], s["tid"], s["ts"], s["dur"], s["name"]))


def assert_names_match(events, trace):
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"]
               for e in events if e["name"] == "thread_name"}
    assert procs == {pid: p["name"] for pid, p in trace.processes.items()}
    assert threads == {(t["pid"], t["tid"]): t["name"] for t in trace.threads.values()}
    assert len(events) == len(procs) + len(threads)  # each named once


def assert_instants_match(events, trace):
    def key(i):
        return (i["pid"], i["tid"] or 0, i["ts"], i["name"], json.dumps(i["args"], sort_keys=True))

    exported = []
    for e in events:
        assert e["s"] == ("t" if "tid" in e else "p"), e
        exported.append({"pid": e["pid"], "tid": e.get("tid"), "ts": ns(e["ts"]),
                         "name": e["name"], "args": as_traced(e["args"])})
    assert sorted(exported, key=key) == sorted(
        ({k: i[k] for k in ("pid", "tid", "ts", "name", "args")} for i in trace.instants),
        key=key)


def assert_counters_match(events, trace):
    (pid,) = trace.processes
    exported = collections.defaultdict(list)
    for e in events:
        assert (e["pid"], set(e["args"])) == (pid, {"value"}), e
        exported[e["name"]].append((ns(e["ts"]), e["args"]["value"]))
    assert {n: sorted(v) for n, v in exported.items()} == {
        n: sorted(v) for n, v in trace.counters.items()}


def assert_json_matches(doc, trace):
    """A chrome-json export against the trace it came from, event by event."""
    phases = by_phase(doc)
    assert_names_match(phases["M"], trace)
    # the steps the report finds, as PyTorch's profiler names them (test_export_steps_hta.py)
    steps = [e for e in phases["X"] if e["cat"] == "user_annotation"]
    assert [e["name"] for e in steps] == [f"ProfilerStep#{n}" for n in range(len(steps))]
    phases["X"] = [e for e in phases["X"] if e["cat"] != "user_annotation"]
    assert all(e["cat"] == "cuda_runtime" for e in phases["X"])
    closed = [e for e in phases["X"] if "unclosed" not in e["args"]]
    still_open = [e for e in phases["X"] if "unclosed" in e["args"]]
    assert exported_slices(closed) == traced_slices(trace.slices)
    assert exported_slices(still_open) == traced_slices(trace.unclosed, trace_end(trace),
                                                        {"unclosed": 1})
    assert_instants_match(phases["i"], trace)
    assert_counters_match(phases["C"], trace)
    assert doc["displayTimeUnit"] == "ms"


# --------------------------------------------------------------------------
# 1. Each format against the trace it came from


@pytest.mark.parametrize("fmt", ["perfetto", "perfetto-gz"])
def test_protobuf_formats_are_the_trace_packet_for_packet(trace_run, build_dir, fmt):
    proc, trace, _ = trace_run("train_loop", 10)
    assert proc.returncode == 0, proc.stderr
    out = export(build_dir, trace_path(proc), fmt)
    assert out == str(proc.run_dir / f"trace{EXTENSIONS[fmt]}")  # the default name
    magic = perfetto_check.GZIP_MAGIC if fmt == "perfetto-gz" else b"\x0a"  # Trace.packet
    assert pathlib.Path(out).read_bytes().startswith(magic)
    exported = perfetto_check.load(out)  # every import rule, Perfetto's own schema
    assert exported.raw_packets == trace.raw_packets
    assert plain_bytes(out) == plain_bytes(trace_path(proc))
    assert os.stat(out).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("program, args", [("train_loop", [10]), ("api_mix", [3]),
                                           ("threads", [3, 50])])
def test_chrome_json_has_every_event_of_the_trace(trace_run, build_dir, tmp_path, program, args):
    proc, trace, _ = trace_run(program, *args)
    assert proc.returncode == 0, proc.stderr
    out = export(build_dir, trace_path(proc), "chrome-json", tmp_path / "out.json")
    with open(out) as f:
        doc = json.load(f)
    assert_json_matches(doc, trace)
    assert doc["otherData"] == {"exporter": "cudatrace", "packets": len(trace.packets),
                                "tail": "complete", "unclosed_slices": 0}
    slices = [e for e in by_phase(doc)["X"] if e["cat"] == "cuda_runtime"]
    assert len(slices) == len(trace.slices) > 0


def test_chrome_json_uses_kineto_names_for_launches(trace_run, build_dir, tmp_path):
    proc, trace, _ = trace_run("api_mix", 1)
    assert proc.returncode == 0, proc.stderr
    out = export(build_dir, trace_path(proc), "chrome-json", tmp_path / "out.json")
    with open(out) as f:
        launches = [e for e in json.load(f)["traceEvents"] if e["name"] == "cudaLaunchKernel"]
    traced = [s for s in trace.slices if s["name"] == "cudaLaunchKernel"]
    assert len(launches) == len(traced) > 0
    for e in launches:
        assert e["cat"] == "cuda_runtime"
        assert all(isinstance(v, int) for v in e["args"]["grid"] + e["args"]["block"])
        assert {"kernel", "stream_handle", "result"} <= set(e["args"])


# --------------------------------------------------------------------------
# 2. Damaged input


def cut_trace(trace_run, tmp_path):
    """(cut file, the trace of its whole packets): a real trace whose last zstd frame is cut
    in half, as a collector killed mid-write leaves it."""
    proc, _, _ = trace_run("train_loop", 50)
    assert proc.returncode == 0, proc.stderr
    parts = two_parts(trace_path(proc), "zstd")
    plain = b"".join(p for _, p in parts)
    last = parts[-1][0]
    cut = tmp_path / "cut.pftrace.zst"
    cut.write_bytes(b"".join(c for c, _ in parts[:-1]) + last[:len(last) // 2])
    decoded = decodable(cut.read_bytes(), new_zstd_decoder)
    whole = max(e for e in [0, *packet_ends(plain)] if e <= len(decoded))
    return cut, perfetto_check.parse(plain[:whole], check=False)


def assert_cut_noted(done, cut, before, copies_packets=False):
    """The one line a cut trace's export prints. A format that copies packets
    (perfetto, perfetto-gz) pairs no slices, so it says nothing of calls that
    never ended; the others mark them, and say how many (whether the cut fell
    inside a call depends on where the frame ended)."""
    assert done.returncode == 0, done
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith(f"cudatrace: {cut}: cut short mid-write; exported the "
                           f"{len(before.packets)} whole packets before the cut"), line
    assert ("never ended" in line) == (bool(before.unclosed) and not copies_packets), line


@pytest.mark.parametrize("fmt", ["perfetto", "perfetto-gz"])
def test_cut_tail_exports_every_whole_packet(trace_run, build_dir, tmp_path, fmt):
    cut, before = cut_trace(trace_run, tmp_path)
    out = tmp_path / "out"
    done = cudatrace_cmd.run(build_dir, "export", cut, "--format", fmt, "-o", out, text=False)
    assert_cut_noted(done, cut, before, copies_packets=True)
    assert len(before.packets) > 0
    exported = perfetto_check.load(out, allow_unclosed=True)
    assert exported.raw_packets == before.raw_packets


def test_cut_tail_in_chrome_json(trace_run, build_dir, tmp_path):
    cut, before = cut_trace(trace_run, tmp_path)
    out = tmp_path / "out.json"
    done = cudatrace_cmd.run(build_dir, "export", cut, "--format", "chrome-json", "-o", out,
                             text=False)
    assert_cut_noted(done, cut, before)
    with open(out) as f:
        doc = json.load(f)
    assert_json_matches(doc, before)
    assert doc["otherData"] == {"exporter": "cudatrace", "packets": len(before.packets),
                                "tail": "cut", "unclosed_slices": len(before.unclosed)}


def test_slices_left_open_run_to_the_trace_end(trace_run, build_dir, tmp_path):
    # A trace that stops right after a slice began (its writer died between the two packets):
    # whole packets, nothing cut, one call never ended.
    proc, trace, _ = trace_run("train_loop", 10)
    assert proc.returncode == 0, proc.stderr
    begins = [k for k, p in enumerate(trace.packets)
              if p.track_event.type == perfetto_check.BEGIN]
    whole = plain_bytes(trace_path(proc))
    plain = whole[:packet_ends(whole)[begins[len(begins) // 2]]]
    open_trace = tmp_path / "open.pftrace"
    open_trace.write_bytes(plain)
    before = perfetto_check.parse(plain, check=False)
    assert len(before.unclosed) == 1

    done = cudatrace_cmd.run(build_dir, "export", open_trace, "--format", "chrome-json",
                             text=False)
    assert done.stderr.decode() == (
        f"cudatrace: {open_trace}: 1 call(s) never ended: they run to the trace's last "
        "timestamp, marked unclosed\n")
    with open(tmp_path / "open.json") as f:
        doc = json.load(f)
    assert_json_matches(doc, before)
    (unclosed,) = [e for e in doc["traceEvents"] if "unclosed" in e.get("args", {})]
    assert unclosed["args"]["unclosed"] == 1 and unclosed["ph"] == "X"
    assert doc["otherData"]["tail"] == "complete"
    assert doc["otherData"]["unclosed_slices"] == 1


def test_crashed_process_exports_its_in_flight_call(trace_run, build_dir, tmp_path):
    # The collector outlives a crash and ends the call the process died in (in_flight): a
    # complete trace, exported with nothing left open. (On the double, without its statistics
    # file, which a crash never writes.)
    proc, trace, _ = trace_run("crash", "inflight", 5, double=False,
                               env={"LD_LIBRARY_PATH": os.path.join(build_dir, "double"),
                                    "CT_DOUBLE_SYNC_NS": 30 * 10**9})
    assert proc.returncode < 0  # killed by its signal
    in_flight = [s for s in trace.slices if "in_flight" in s["args"]]
    assert len(in_flight) == 1
    out = export(build_dir, trace_path(proc), "chrome-json", tmp_path / "crash.json")
    with open(out) as f:
        doc = json.load(f)
    assert_json_matches(doc, trace)
    exported = [e for e in doc["traceEvents"] if "in_flight" in e.get("args", {})]
    assert exported_slices(exported) == traced_slices(in_flight)
    assert doc["otherData"]["unclosed_slices"] == 0


# --------------------------------------------------------------------------
# 3. The output file


def test_existing_output_is_never_replaced(trace_run, build_dir, tmp_path):
    proc, _, _ = trace_run("api_mix", 1)
    trace = trace_path(proc)
    kept = tmp_path / "kept.json"
    kept.write_bytes(b"keep")
    victim = tmp_path / "victim"
    victim.write_bytes(b"victim")
    (tmp_path / "link").symlink_to(victim)
    (tmp_path / "dangling").symlink_to(tmp_path / "planted")
    for out in (kept, tmp_path / "link", tmp_path / "dangling"):
        for fmt in FORMATS:
            done = cudatrace_cmd.run(build_dir, "export", trace, "--format", fmt, "-o", out,
                                     text=False, status=1)
            assert_refused(done, 1)
            assert done.stderr.decode() == (f"cudatrace: {out}: already exists; not "
                                            "overwriting it (give -o NEW_FILE)\n")
    assert kept.read_bytes() == b"keep" and victim.read_bytes() == b"victim"
    assert not (tmp_path / "planted").exists()
    export(build_dir, trace, "perfetto")
    assert_refused(cudatrace_cmd.run(build_dir, "export", trace, "--format", "perfetto",
                                     text=False, status=1), 1)  # the default name


@pytest.mark.parametrize("fmt", FORMATS + ["html"])
def test_dash_is_standard_output(trace_run, build_dir, tmp_path, fmt):
    proc, _, _ = trace_run("api_mix", 1)
    trace = trace_path(proc)
    written = pathlib.Path(export(build_dir, trace, fmt, tmp_path / "file")).read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    done = cudatrace_cmd.run(build_dir, "export", trace, "--format", fmt, "-o", "-", cwd=work,
                             text=False, quiet=True)
    assert done.stdout == written  # the export's bytes alone: no "wrote" line among them
    assert os.listdir(work) == []
    # A file called "-" is still one path away.
    done = cudatrace_cmd.run(build_dir, "export", trace, "--format", fmt, "-o", "./-", cwd=work,
                             text=False)
    assert (done.returncode, done.stderr, done.stdout) == (0, b"", b"wrote ./-\n")
    assert (work / "-").read_bytes() == written


def test_progress_only_on_a_terminal(trace_run, build_dir, tmp_path):
    proc, _, _ = trace_run("train_loop", 10)
    trace = trace_path(proc)
    export(build_dir, trace, "chrome-json", tmp_path / "piped.json")  # stderr a pipe: silent
    master, slave = pty.openpty()
    done = cudatrace_cmd.run(build_dir, "export", trace, "--format", "chrome-json", "-o",
                             tmp_path / "tty.json", stderr=slave, text=False)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other side is closed and drained
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    size_mib = os.path.getsize(trace) / (1 << 20)
    assert re.fullmatch(
        rb"(\rcudatrace: exporting " + re.escape(trace.name.encode())
        + rb": \d+\.\d of " + f"{size_mib:.1f}".encode() + rb" MiB \(\d+%\))+\r\x1b\[K",
        shown), shown


def limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (MAX_ADDRESS_SPACE, MAX_ADDRESS_SPACE))


LARGE_LAUNCHES = 500_000


def skip_on_sanitizer(build_dir):
    """Skips the test on a sanitizer build, whose shadow memory takes more address space than
    any limit a test sets."""
    with open(cudatrace_cmd.path(build_dir), "rb") as f:
        if re.search(rb"__[at]san_init", f.read()):
            pytest.skip("a sanitizer's shadow memory takes more address space than the limit")


def large_trace(trace_run, build_dir, tmp_path):
    """A trace of LARGE_LAUNCHES launches whose uncompressed form is larger than
    MAX_ADDRESS_SPACE, so holding it whole could not work; skips on a sanitizer build
    (skip_on_sanitizer)."""
    skip_on_sanitizer(build_dir)
    big = tmp_path / "big.pftrace.zst"
    proc, _, _ = trace_run("launch_loop", LARGE_LAUNCHES,
                           env={"CUDATRACE_OUTPUT": big, "CUDATRACE_RING_RECORDS": 1 << 20})
    assert proc.returncode == 0, proc.stderr
    assert len(plain_bytes(big)) > MAX_ADDRESS_SPACE
    return big


@pytest.mark.parametrize("fmt", FORMATS)
def test_memory_stays_bounded_on_a_large_trace(trace_run, build_dir, tmp_path, fmt):
    big = large_trace(trace_run, build_dir, tmp_path)
    launches = LARGE_LAUNCHES
    plain = plain_bytes(big)
    out = tmp_path / f"big{EXTENSIONS[fmt]}"
    cudatrace_cmd.run(build_dir, "export", big, "--format", fmt, "-o", out, quiet=True,
                      preexec_fn=limit_address_space, timeout=EXPORT_TIMEOUT_S)
    if fmt != "chrome-json":
        assert plain_bytes(out) == plain
        return
    data = out.read_bytes()
    assert data.count(b'"ph":"X"') == launches + 1  # and one cudaDeviceSynchronize
    assert data.endswith(b'"tail":"complete","unclosed_slices":0}}\n')


# --------------------------------------------------------------------------
# 4. Help, usage and bad input


def test_help_lists_formats_and_examples(build_dir):
    done = cudatrace_cmd.run(build_dir, "export", "--help", text=False, quiet=True)
    text = done.stdout.decode()
    assert text.startswith("usage: cudatrace export TRACE --format FORMAT [-o OUTPUT]\n")
    for fmt in FORMATS:
        assert re.search(rf"^    {fmt} +.+\({re.escape(EXTENSIONS[fmt])}\)$", text, re.M), fmt
    assert ("  -o, --output OUTPUT\n"
            "                   the file to write, which must not exist, or - for standard\n"
            "                   output (./- for a file called that); by default TRACE\n") in text
    assert "\nexamples:\n  cudatrace export " in text
    assert cudatrace_cmd.run(build_dir, "help", "export", text=False).stdout == done.stdout
    listing = cudatrace_cmd.run(build_dir, "help", text=False)
    assert "  export TRACE --format FORMAT [-o OUTPUT]\n" in listing.stdout.decode()


@pytest.mark.parametrize("args, message", [
    (["export"], "export: no trace file given"),
    (["export", "t.pftrace.zst"], "export: no --format given"),
    (["export", "t.pftrace.zst", "--format", "xml"], "export: unknown format xml"),
    (["export", "t.pftrace.zst", "--format=html5"], "export: unknown format html5"),
    (["export", "t.pftrace.zst", "--format"], "export: --format needs a value"),
    (["export", "t.pftrace.zst", "--format", "perfetto", "-o"], "export: -o needs a value"),
    (["export", "t.pftrace.zst", "--frobnicate"], "export: unknown option --frobnicate"),
    (["export", "a.pftrace.zst", "b.pftrace.zst", "--format", "perfetto"],
     "export: one TRACE at a time"),
])
def test_bad_usage_is_one_line(build_dir, tmp_path, args, message):
    """One line, and for an option getopt refused the usage line after it."""
    done = cudatrace_cmd.run(build_dir, *args, cwd=tmp_path, text=False, status=2)
    line, *usage = done.stderr.decode().splitlines()
    assert (done.returncode, done.stdout) == (2, b""), done
    assert line.startswith(f"cudatrace: {message}")
    assert usage in ([], ["usage: cudatrace export TRACE --format FORMAT [-o OUTPUT]"])
    assert os.listdir(tmp_path) == []


def bad_inputs(tmp_path):
    """{case: path} of files that are no trace, or no sound one."""
    noise = bytes(range(7, 256)) * 8
    good = perfetto_check.pb.Trace(packet=[
        perfetto_check.pb.TracePacket(timestamp=1, trusted_packet_sequence_id=1)
    ]).SerializeToString()
    contents = {
        "empty file": b"",
        "random bytes": noise,
        "0x0A then garbage": b"\x0a" + noise[1:],
        "zstd of hello": zstandard.ZstdCompressor().compress(b"hello"),
        "gzip of hello": gzip.compress(b"hello"),
        "a good packet, then one of 2^40 bytes": good + b"\x0a" + varint(1 << 40) + noise,
        "a good packet, then one that is no TracePacket": good + b"\x0a\x02\xff\xff",
    }
    paths = {"missing file": tmp_path / "absent.pftrace.zst", "directory": tmp_path / "dir"}
    (tmp_path / "dir").mkdir()
    for n, (case, data) in enumerate(contents.items()):
        paths[case] = tmp_path / f"bad{n}.pftrace.zst"
        paths[case].write_bytes(data)
    return paths


@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_input_is_refused_and_leaves_nothing(build_dir, tmp_path, fmt):
    for case, path in bad_inputs(tmp_path).items():
        before = set(os.listdir(tmp_path))
        out = tmp_path / "out"
        done = cudatrace_cmd.run(build_dir, "export", path, "--format", fmt, "-o", out,
                                 text=False, status=1)
        assert_refused(done, 1)
        assert done.stderr.decode().startswith(f"cudatrace: {path}: "), case
        assert set(os.listdir(tmp_path)) == before, case

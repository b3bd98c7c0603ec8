"""What one trace packet may cost the reader, in `report` and in every `export` format.

This file owns the reader's bound on one packet (viewer-export/read/trace_decode.c): a trace
of a few kilobytes whose one packet would decode into gigabytes (millions of empty
annotations, or of fields the schema does not have, which zstd squeezes to nothing) is
refused in one line, status 1, nothing on stdout and no output file, well inside an address
space of 1 GiB; a packet of many annotations or unknown fields within the bound reads as any
other. The traces are written here, a cudatrace process and its format event first, so the
refusal is of the packet after them.
"""

import json
import os
import resource

import pytest
import zstandard

import cudatrace_cmd
import perfetto_check
from test_contract_trace_format import process_trace
from test_export_formats import plain_bytes, skip_on_sanitizer
from test_export_html import embedded
from test_report_cli import varint

ADDRESS_SPACE = 1 << 30  # bytes; the refused packets took 2 and 6.5 GB unbounded
DECODE_BUDGET_MIB = 256  # trace_decode.c: what decoding one packet may take
PID = 42  # process_trace's
EXPORTS = {"perfetto": ".pftrace", "perfetto-gz": ".pftrace.gz", "chrome-json": ".json",
           "html": ".html"}
COMMANDS = [["report"], ["report", "--json"]] + [["export", "--format", f] for f in EXPORTS]

EMPTY_ANNOTATION = b"\x22\x00"  # TrackEvent.debug_annotations (field 4), of no bytes
UNKNOWN_FIELD = b"\x78\x00"  # field 15 = 0, which our TracePacket has not


def length_delimited(field, payload):
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def trace_then(packet_body, tmp_path, name):
    """A zstd trace file: a cudatrace process, its format event, then one packet of
    `packet_body` (the TracePacket's encoded fields)."""
    head = perfetto_check.pb.Trace(packet=process_trace(1)).SerializeToString()
    path = tmp_path / name
    path.write_bytes(zstandard.ZstdCompressor().compress(
        head + length_delimited(1, packet_body)))
    return path


def annotations_packet(annotations):
    """A TracePacket's body: an instant on the process track with `annotations`, the raw
    encoded DebugAnnotations."""
    event = perfetto_check.pb.TrackEvent(type=perfetto_check.pb.TrackEvent.TYPE_INSTANT,
                                         track_uuid=7, name="many.args")
    packet = perfetto_check.pb.TracePacket(trusted_packet_sequence_id=1, timestamp=2000)
    return packet.SerializeToString() + length_delimited(
        11, event.SerializeToString() + annotations)


def in_one_gib():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run(build_dir, command, trace, tmp_path):
    """(CompletedProcess, output path or None) of `cudatrace COMMAND TRACE [-o OUTPUT]` in an
    address space of ADDRESS_SPACE."""
    skip_on_sanitizer(build_dir)
    out = tmp_path / f"out{EXPORTS[command[2]]}" if command[0] == "export" else None
    done = cudatrace_cmd.run(build_dir, *command, trace, *(["-o", out] if out else []),
                             cwd=tmp_path, preexec_fn=in_one_gib, text=False, status=None)
    return done, out


@pytest.fixture(scope="module")
def costly_traces(tmp_path_factory):
    """{case: path}: traces of under 16 KiB whose third packet, under the 64 MiB packet
    cap, would decode into gigabytes."""
    tmp = tmp_path_factory.mktemp("costly")
    traces = {
        "33 million empty annotations": trace_then(
            annotations_packet(EMPTY_ANNOTATION * 33_000_000), tmp, "annotations.pftrace.zst"),
        "22 million unknown fields": trace_then(
            UNKNOWN_FIELD * 22_000_000, tmp, "unknown.pftrace.zst"),
    }
    for path in traces.values():
        assert path.stat().st_size < 16 << 10, path
    return traces


@pytest.mark.parametrize("case", ["33 million empty annotations", "22 million unknown fields"])
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_costly_packet_is_refused_in_one_line(build_dir, costly_traces, tmp_path, case,
                                              command):
    trace = costly_traces[case]
    done, out = run(build_dir, command, trace, tmp_path)
    assert done.stderr.decode() == (
        f"cudatrace: {trace}: packet 2 takes more than {DECODE_BUDGET_MIB} MiB to decode, "
        "beyond any trace cudatrace writes\n")
    assert (done.returncode, done.stdout) == (1, b"")
    assert os.listdir(tmp_path) == []  # no output file, not even a partial one


def many_args_instant(doc):
    """The chrome-json "i" event of the instant named many.args."""
    (event,) = [e for e in doc["traceEvents"] if e["name"] == "many.args"]
    return event


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_packet_within_the_bound_reads(build_dir, tmp_path, command):
    # 1000 annotations: far more than the collector writes (12), still a modest packet; and
    # 100,000 fields the schema does not have, as a newer writer might add, skipped.
    annotations = b"".join(length_delimited(4, perfetto_check.pb.DebugAnnotation(
        name=f"a{k}", uint_value=k).SerializeToString()) for k in range(1000))
    trace = trace_then(annotations_packet(annotations) + UNKNOWN_FIELD * 100_000, tmp_path,
                       "many.pftrace.zst")
    done, out = run(build_dir, command, trace, tmp_path)
    assert (done.returncode, done.stderr) == (0, b""), done
    if command == ["report", "--json"]:
        (process,) = json.loads(done.stdout)["processes"]
        assert process["pid"] == PID
    elif command == ["report"]:
        assert done.stdout.startswith(f"process {PID}\n".encode()), done.stdout
    elif command[2] == "chrome-json":
        event = many_args_instant(json.loads(out.read_bytes()))
        # The reader keeps an event's first 16 annotations (CT_MAX_EVENT_ARGS).
        assert event["args"] == {f"a{k}": k for k in range(16)}
        assert (event["ts"], event["pid"]) == (2.0, PID)
    elif command[2].startswith("perfetto"):
        assert plain_bytes(out) == plain_bytes(trace)
    else:
        (process,) = embedded(out, "report-data")["processes"]
        assert process["pid"] == PID

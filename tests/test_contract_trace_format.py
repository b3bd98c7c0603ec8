"""The command reads only traces in its own trace format: the collector states
the format in each trace's first event (cudatrace.trace, format 1), and a
trace of another format is refused in one line with a non-zero status rather
than misread, by `report` and by every `export` format alike, which then
leaves no output behind. `report` also refuses a Perfetto trace with no
cudatrace process in it."""
import gzip
import json
import os

import pytest

import cudatrace_cmd
from perfetto_check import pb


def process_trace(format_value):
    """A minimal cudatrace-like trace: a process track and the format event."""
    process = pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=3)
    process.track_descriptor.uuid = 7
    process.track_descriptor.process.pid = 42
    event = pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=2, timestamp=1000)
    event.track_event.type = pb.TrackEvent.TYPE_INSTANT
    event.track_event.track_uuid = 7
    event.track_event.name = "cudatrace.trace"
    annotation = event.track_event.debug_annotations.add()
    annotation.name = "format"
    annotation.uint_value = format_value
    return [process, event]


def test_current_format_is_read(build_dir, write_trace):
    done = cudatrace_cmd.run(build_dir, "report", "--json", write_trace(process_trace(1)))
    assert '"pid":42' in done.stdout


def test_other_format_is_refused(build_dir, write_trace):
    path = write_trace(process_trace(2), compress="zstd")
    done = cudatrace_cmd.run(build_dir, "report", "--json", path, status=1)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"cudatrace: {path}: written by another cudatrace "
                           "(trace format 2; this one reads 1)\n")


def test_foreign_perfetto_trace_is_refused(build_dir, write_trace):
    packet = pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=3)
    packet.track_descriptor.uuid = 9
    packet.track_descriptor.name = "not ours"
    path = write_trace([packet])
    done = cudatrace_cmd.run(build_dir, "report", "--json", path, status=1)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"cudatrace: {path}: holds no traced process: not a cudatrace trace\n"


EXPORT_FORMATS = ["perfetto", "perfetto-gz", "chrome-json", "html"]


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_current_format_is_exported(build_dir, write_trace, tmp_path, fmt):
    path = write_trace(process_trace(1), compress="zstd")
    out = tmp_path / "out"
    done = cudatrace_cmd.run(build_dir, "export", path, "--format", fmt, "-o", out, text=False)
    assert (done.returncode, done.stderr, done.stdout) == (0, b"", f"wrote {out}\n".encode())
    data = out.read_bytes()
    if fmt == "perfetto":
        assert data == pb.Trace(packet=process_trace(1)).SerializeToString()
    elif fmt == "perfetto-gz":
        assert gzip.decompress(data) == pb.Trace(packet=process_trace(1)).SerializeToString()
    elif fmt == "chrome-json":
        (event,) = json.loads(data)["traceEvents"]
        assert (event["name"], event["args"]) == ("cudatrace.trace", {"format": 1})
    else:
        assert b'"pid":42' in data


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_other_format_is_refused_by_every_export(build_dir, write_trace, tmp_path, fmt):
    # The same refusal as the report's, from the same place: a trace of another format is
    # never converted as if it were ours.
    path = write_trace(process_trace(2), compress="zstd")
    done = cudatrace_cmd.run(build_dir, "export", path, "--format", fmt, "-o", tmp_path / "out",
                             text=False, status=1)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (f"cudatrace: {path}: written by another cudatrace "
                                    "(trace format 2; this one reads 1)\n")
    assert os.listdir(tmp_path) == [path.name]

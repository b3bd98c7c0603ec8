"""The report reads only traces in its own trace format: the collector states
the format in each trace's first event (cudatrace.trace, format 1), and a
trace of another format, or a Perfetto trace with no cudatrace process in it,
is refused in one line with a non-zero status rather than misread."""
import os
import subprocess

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


def report(build_dir, path):
    return subprocess.run([os.path.join(build_dir, "cudatrace"), "report", "--json", str(path)],
                          capture_output=True, text=True, timeout=30)


def test_current_format_is_read(build_dir, write_trace):
    done = report(build_dir, write_trace(process_trace(1)))
    assert done.returncode == 0, done.stderr
    assert '"pid":42' in done.stdout


def test_other_format_is_refused(build_dir, write_trace):
    path = write_trace(process_trace(2), compress="zstd")
    done = report(build_dir, path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"cudatrace: {path}: written by another cudatrace "
                           "(trace format 2; this one reads 1)\n")


def test_foreign_perfetto_trace_is_refused(build_dir, write_trace):
    packet = pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=3)
    packet.track_descriptor.uuid = 9
    packet.track_descriptor.name = "not ours"
    path = write_trace([packet])
    done = report(build_dir, path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"cudatrace: {path}: holds no traced process: not a cudatrace trace\n"

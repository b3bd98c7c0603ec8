"""The trace vocabulary (include/cudatrace/trace_names.h): one declared list of the
track names, event names, annotation keys and enumerated values cudatrace writes into
a trace and reads back.

Two directions are held to it. What is written: conftest's ``trace_run`` checks every
trace the suite makes with tests/trace_vocabulary.py, and the tests here show that the
check refuses each kind of undeclared name on a small trace, and lets the names that
are data through. What is declared: every entry is used by a writer (the collector, or
the findings and steps tracks of ``report --annotate``), and neither side names a trace name by a
bare string where the list has a constant for it.
"""

import glob
import os
import re
import subprocess

import pytest

from perfetto_check import pb
from trace_vocabulary import VocabularyError, check
import perfetto_check

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTOR = sorted(glob.glob(os.path.join(REPO, "collector", "**", "*.c"), recursive=True))
WRITERS = COLLECTOR + [os.path.join(REPO, "viewer-export", "output", name)
                       for name in ("findings_track.c", "steps_track.c")]
READERS = sorted(glob.glob(os.path.join(REPO, "viewer-export", "**", "*.c"), recursive=True))
PID, TID = 4242, 4243
PROCESS, THREAD, OTHER = 1, 2, 3  # track uuids
T = pb.TrackEvent


def read(paths):
    return "\n".join(open(p).read() for p in paths)


def text(vocab, kind, ident):
    return vocab.text(kind, ident)


def trace_of(vocab, track=None, events=(), counter=False):
    """A process, a thread and, when `track` is a name, one more track under the
    process; `events` are (track uuid, type, name, [DebugAnnotation]) on them."""
    packets = [
        pb.TracePacket(trusted_packet_sequence_id=1, sequence_flags=1,
                       track_descriptor=pb.TrackDescriptor(
                           uuid=PROCESS, process=pb.ProcessDescriptor(pid=PID,
                                                                      process_name="app"))),
        pb.TracePacket(trusted_packet_sequence_id=1, track_descriptor=pb.TrackDescriptor(
            uuid=THREAD, parent_uuid=PROCESS,
            thread=pb.ThreadDescriptor(pid=PID, tid=TID, thread_name="main"))),
    ]
    if track is not None:
        d = pb.TrackDescriptor(uuid=OTHER, parent_uuid=PROCESS, name=track)
        if counter:
            d.counter.unit = pb.CounterDescriptor.UNIT_COUNT
        packets.append(pb.TracePacket(trusted_packet_sequence_id=1, track_descriptor=d))
    ts = 1000
    for uuid, kind, name, args in events:
        ts += 10
        packets.append(pb.TracePacket(trusted_packet_sequence_id=1, timestamp=ts,
                                      track_event=pb.TrackEvent(type=kind, track_uuid=uuid,
                                                                name=name,
                                                                debug_annotations=args)))
        if kind == T.TYPE_SLICE_BEGIN:
            packets.append(pb.TracePacket(trusted_packet_sequence_id=1, timestamp=ts + 5,
                                          track_event=pb.TrackEvent(type=T.TYPE_SLICE_END,
                                                                    track_uuid=uuid)))
    return perfetto_check.parse(pb.Trace(packet=packets).SerializeToString())


def arg(name, **value):
    return pb.DebugAnnotation(name=name, **value)


# --------------------------------------------------------------------------
# What is written: the check refuses what the list does not declare


def test_declared_names_pass(trace_vocabulary):
    v = trace_vocabulary
    trace = trace_of(v, text(v, "track", "libraries"), [
        (OTHER, T.TYPE_INSTANT, text(v, "event", "library"),
         [arg(text(v, "key", "path"), string_value="/lib/libcudart.so.13"),
          arg(text(v, "key", "size"), uint_value=4096)]),
        (THREAD, T.TYPE_SLICE_BEGIN, "cudaMalloc",
         [arg(text(v, "key", "ptr"), pointer_value=0x7f00),
          arg(text(v, "key", "device"), int_value=0)]),
        (PROCESS, T.TYPE_INSTANT, text(v, "event", "cupti"),
         [arg(text(v, "key", "state"), string_value=text(v, "value", "cupti_active"))]),
    ])
    check(trace, v)


@pytest.mark.parametrize("case", ["track", "counter", "event", "thread event", "key", "type",
                                  "value"])
def test_an_undeclared_name_type_or_value_is_refused(trace_vocabulary, case):
    v = trace_vocabulary
    library = text(v, "event", "library")
    path = text(v, "key", "path")
    traces = {
        "track": lambda: trace_of(v, "CUDA librarys"),
        "counter": lambda: trace_of(v, text(v, "track", "libraries"), counter=True),
        "event": lambda: trace_of(v, text(v, "track", "libraries"),
                                  [(OTHER, T.TYPE_INSTANT, "cuda.libary", [])]),
        "thread event": lambda: trace_of(v, None, [(THREAD, T.TYPE_SLICE_BEGIN,
                                                    "cudaMallocc", [])]),
        "key": lambda: trace_of(v, text(v, "track", "libraries"), [
            (OTHER, T.TYPE_INSTANT, library, [arg("pathname", string_value="/x")])]),
        "type": lambda: trace_of(v, text(v, "track", "libraries"), [
            (OTHER, T.TYPE_INSTANT, library, [arg(path, uint_value=1)])]),
        "value": lambda: trace_of(v, None, [
            (PROCESS, T.TYPE_INSTANT, text(v, "event", "cupti"),
             [arg(text(v, "key", "state"), string_value="activ")])]),
    }
    with pytest.raises(VocabularyError):
        check(traces[case](), v)


def test_names_that_are_data_pass(trace_vocabulary):
    """Kernel names on GPU tracks, NVTX names, and a finding's own numbers."""
    v = trace_vocabulary
    kind, kernel = text(v, "key", "gpu_kind"), text(v, "value", "gpu_kind_kernel")
    source, nvtx = text(v, "key", "source"), text(v, "value", "source_nvtx")
    gpu = text(v, "track", "gpu_stream").replace("%u", "0", 1).replace("%u", "7", 1)
    check(trace_of(v, gpu, [(OTHER, T.TYPE_SLICE_BEGIN, "void gemm<float>(float*)",
                             [arg(kind, string_value=kernel)])]), v)
    check(trace_of(v, None, [(THREAD, T.TYPE_SLICE_BEGIN, "train step 3",
                              [arg(source, string_value=nvtx)])]), v)
    check(trace_of(v, text(v, "track", "findings"), [
        (OTHER, T.TYPE_INSTANT, "warning memory-growth",
         [arg(text(v, "key", "id"), string_value="memory-growth"),
          arg("growth_bytes", double_value=1e9)])]), v)


def test_a_gpu_copy_is_not_data(trace_vocabulary):
    """Only kernels are named by data on GPU tracks: a copy's name is declared."""
    v = trace_vocabulary
    kind, memcpy = text(v, "key", "gpu_kind"), text(v, "value", "gpu_kind_memcpy")
    gpu = text(v, "track", "gpu_stream").replace("%u", "0")
    with pytest.raises(VocabularyError):
        check(trace_of(v, gpu, [(OTHER, T.TYPE_SLICE_BEGIN, "copy HtoD",
                                 [arg(kind, string_value=memcpy)])]), v)


def test_a_trace_of_the_tracer_passes_and_uses_the_list(trace_run, trace_vocabulary):
    """A real trace passes (trace_run checks it), and what it holds is declared: the
    process's instants and tracks are found among the list's entries."""
    _, trace, _ = trace_run("api_mix")
    names = {e["name"] for e in trace.instants}
    for ident in ("trace_format", "versions", "end", "calls", "library", "toolkit"):
        assert text(trace_vocabulary, "event", ident) in names, ident
    tracks = {t["name"] for t in trace.tracks.values()}
    for ident in ("device_memory", "pinned_memory", "launch_rate", "dropped", "libraries"):
        assert text(trace_vocabulary, "track", ident) in tracks, ident


# --------------------------------------------------------------------------
# What is declared: every entry has a writer, and no side spells a name out


def preprocessed(paths, build_dir):
    """The writers' code as the compiler sees it (a name may be built by a macro, as
    ct_key_##field), without the vocabulary's own declarations."""
    done = subprocess.run(["cc", "-E", "-P", "-D_GNU_SOURCE", "-I", REPO, "-I",
                           os.path.join(REPO, "include"), "-I", os.path.join(build_dir, "gen"),
                           "-isystem", os.path.join(build_dir, "nvml-include"),
                           *paths], capture_output=True, text=True, check=True)
    return "\n".join(line for line in done.stdout.splitlines()
                     if not line.startswith("static const char ct_"))


def test_every_entry_is_written_by_a_writer(trace_vocabulary, build_dir):
    used = set(re.findall(r"\bct_\w+", preprocessed(WRITERS, build_dir)))
    unused = [f"ct_{kind}_{ident}"
              for kind in ("track", "event", "key", "value", "frame")
              for ident in trace_vocabulary.entries[kind]
              if f"ct_{kind}_{ident}" not in used]
    assert not unused, f"declared in trace_names.h and written by no one: {unused}"


# The calls through which a trace name is written or read.
NAME_CALLS = re.compile(
    r'(?:ct_event_(?:text|int|arg)\(\w+, |arg_uint\(\w+, |CT_(?:TEXT|UINT|INT)_ARG\(|'
    r'ct_strings_intern_cstr\(|strcmp\(\w+->name, |annotation\(\w+, )"([^"]+)"')


@pytest.mark.parametrize("side", ["collector", "viewer-export"])
def test_no_trace_name_is_spelled_out(trace_vocabulary, side):
    declared = {t for kind in ("track", "event", "key", "value", "frame")
                for t, _ in trace_vocabulary.entries[kind].values()}
    paths = COLLECTOR if side == "collector" else READERS
    spelled = sorted({(os.path.relpath(p, REPO), m.group(1))
                      for p in paths for m in NAME_CALLS.finditer(open(p).read())
                      if m.group(1) in declared})
    assert not spelled, f"use the trace_names.h constant for: {spelled}"

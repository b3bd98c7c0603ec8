"""Tests of tests/perfetto_check.py on tiny traces built with Perfetto's own pb2 classes."""

import subprocess
import sys

import pytest

import perfetto_check
from conftest import encode_trace
from perfetto_check import TraceError, pb

PID, TID, TID2 = 100, 101, 102
PROC, THREAD, GPU_MEM, WORKER = 1, 2, 3, 4  # track uuids
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
T = pb.TrackEvent


def packet(seq=1, flags=None, ts=None, **fields):
    p = pb.TracePacket(**fields)
    if seq is not None:
        p.trusted_packet_sequence_id = seq
    if flags is not None:
        p.sequence_flags = flags
    if ts is not None:
        p.timestamp = ts
    return p


def event(ts, type, seq=1, flags=NEEDS, **fields):
    """A track event packet; fields of TracePacket go there, the rest to the TrackEvent."""
    outer = {k: fields.pop(k) for k in list(fields)
             if k in pb.TracePacket.DESCRIPTOR.fields_by_name}
    return packet(seq, flags, ts, track_event=pb.TrackEvent(type=type, **fields), **outer)


def annotation(name_iid=None, name=None, **value):
    a = pb.DebugAnnotation(**value)
    if name_iid is not None:
        a.name_iid = name_iid
    if name is not None:
        a.name = name
    return a


# Positions in good() that the bad traces change.
P_PROCESS, P_COUNTER_DESC, P_MALLOC_BEGIN, P_MALLOC_END, P_COUNTER = 0, 2, 3, 4, 5
P_KERNEL_BEGIN, P_INSTANT, P_KERNEL_END, P_WORKER_DESC, P_FREE_BEGIN = 6, 7, 8, 10, 11


def good():
    """Two sequences (one per thread), interning, defaults, a counter, a flow."""
    return [
        packet(flags=CLEARED, track_descriptor=pb.TrackDescriptor(
            uuid=PROC, process=pb.ProcessDescriptor(
                pid=PID, process_name="app", cmdline=["./app", "-x"]))),
        packet(track_descriptor=pb.TrackDescriptor(
            uuid=THREAD, parent_uuid=PROC,
            thread=pb.ThreadDescriptor(pid=PID, tid=TID, thread_name="main"))),
        packet(track_descriptor=pb.TrackDescriptor(
            uuid=GPU_MEM, parent_uuid=PROC, name="GPU memory",
            counter=pb.CounterDescriptor(unit=pb.CounterDescriptor.UNIT_SIZE_BYTES))),
        event(1000, T.TYPE_SLICE_BEGIN, name_iid=1, category_iids=[1],
              debug_annotations=[annotation(name_iid=1, uint_value=4096)],
              interned_data=pb.InternedData(
                  event_names=[pb.EventName(iid=1, name="cudaMalloc"),
                               pb.EventName(iid=2, name="cudaLaunchKernel")],
                  event_categories=[pb.EventCategory(iid=1, name="cuda")],
                  debug_annotation_names=[pb.DebugAnnotationName(iid=1, name="size"),
                                          pb.DebugAnnotationName(iid=2, name="kernel")],
                  debug_annotation_string_values=[pb.InternedString(iid=1, str=b"vecAdd")]),
              trace_packet_defaults=pb.TracePacketDefaults(
                  track_event_defaults=pb.TrackEventDefaults(track_uuid=THREAD))),
        event(1500, T.TYPE_SLICE_END,
              debug_annotations=[annotation(name="result", string_value="cudaSuccess")]),
        event(1500, T.TYPE_COUNTER, track_uuid=GPU_MEM, counter_value=4096),
        event(2000, T.TYPE_SLICE_BEGIN, name_iid=2, flow_ids=[77],
              debug_annotations=[annotation(name_iid=2, string_value_iid=1)]),
        event(2100, T.TYPE_INSTANT, name="sync", timestamp_clock_id=3),
        event(2500, T.TYPE_SLICE_END, track_uuid=THREAD),
        event(2500, T.TYPE_COUNTER, track_uuid=GPU_MEM, double_counter_value=0.5),
        packet(seq=2, flags=CLEARED, track_descriptor=pb.TrackDescriptor(
            uuid=WORKER, parent_uuid=PROC,
            thread=pb.ThreadDescriptor(pid=PID, tid=TID2, thread_name="worker"))),
        event(1200, T.TYPE_SLICE_BEGIN, seq=2, track_uuid=WORKER, name_iid=1,
              terminating_flow_ids=[77],
              interned_data=pb.InternedData(event_names=[pb.EventName(iid=1, name="cudaFree")])),
        event(1300, T.TYPE_SLICE_END, seq=2, track_uuid=WORKER),
    ]


def parse(packets, **kw):
    return perfetto_check.parse(encode_trace(packets), **kw)


def bad(packets, rule, **kw):
    """Assert that the trace breaks `rule`, and return the message."""
    with pytest.raises(TraceError) as e:
        parse(packets, **kw)
    assert f"rule {rule} " in str(e.value), str(e.value)
    return str(e.value)


# ---- the good trace, decoded ----------------------------------------------


def test_good_trace_decodes_with_names_resolved():
    t = parse(good())
    assert t.processes == {PID: {"pid": PID, "name": "app", "cmdline": ["./app", "-x"],
                                 "uuid": PROC}}
    assert t.threads == {THREAD: {"pid": PID, "tid": TID, "name": "main"},
                         WORKER: {"pid": PID, "tid": TID2, "name": "worker"}}
    assert t.tracks[GPU_MEM]["is_counter"] and t.tracks[GPU_MEM]["unit"] == "UNIT_SIZE_BYTES"
    assert t.tracks[GPU_MEM]["parent_uuid"] == PROC and not t.tracks[THREAD]["is_counter"]
    assert [(s["name"], s["ts"], s["dur"], s["tid"], s["seq"]) for s in t.slices] == [
        ("cudaMalloc", 1000, 500, TID, 1),
        ("cudaFree", 1200, 100, TID2, 2),
        ("cudaLaunchKernel", 2000, 500, TID, 1),
    ]
    malloc, free, kernel = t.slices
    assert malloc["args"] == {"size": 4096, "result": "cudaSuccess"}  # BEGIN + END
    assert malloc["categories"] == ["cuda"] and malloc["pid"] == PID
    assert kernel["args"] == {"kernel": "vecAdd"} and kernel["track_uuid"] == THREAD
    assert kernel["flow_ids"] == [77] and free["terminating_flow_ids"] == [77]
    assert [(i["name"], i["ts"], i["tid"]) for i in t.instants] == [("sync", 2100, TID)]
    assert t.counters == {"GPU memory": [(1500, 4096), (2500, 0.5)]}
    assert t.counters_by_uuid == {GPU_MEM: [(1500, 4096), (2500, 0.5)]}
    assert t.unclosed == [] and len(t.packets) == len(good())
    assert t.summary() == "13 packets, 3 slices, 2 counter values, 1 processes"


@pytest.mark.parametrize("compress", [None, "gzip", "zstd"])
def test_load_reads_each_format(write_trace, compress):
    t = perfetto_check.load(write_trace(good(), compress))
    assert len(t.slices) == 3


@pytest.mark.parametrize("data, message", [
    (b"", "empty"),
    (b"hello", "unknown format"),
    (b"\x0a\x05ab", "truncated"),
    (b"\x0a\x00\x12\x00", "top-level field 2"),
    (b"\x0a\x02\x50\x80", "packet #0: cannot decode TracePacket"),
])
def test_not_a_trace(data, message):
    with pytest.raises(TraceError, match=message):
        perfetto_check.parse(data)


def test_truncated_zstd_is_an_error():
    data = encode_trace(good(), "zstd")
    with pytest.raises(TraceError, match="truncated zstd frame #1"):
        perfetto_check.parse(data[:-5])


def test_nested_slices_close_innermost_first():
    t = parse(good()[:P_MALLOC_BEGIN + 1] + [
        event(1100, T.TYPE_SLICE_BEGIN, name="inner"),
        event(1200, T.TYPE_SLICE_END),
        event(1300, T.TYPE_SLICE_END),
    ])
    assert [(s["name"], s["dur"], s["depth"]) for s in t.slices] == [
        ("cudaMalloc", 300, 0), ("inner", 100, 1)]


def test_end_and_begin_at_same_ts_pair_in_file_order():
    t = parse(good()[:P_MALLOC_BEGIN + 1] + [
        event(1500, T.TYPE_SLICE_END),
        event(1500, T.TYPE_SLICE_BEGIN, name="next"),
        event(1600, T.TYPE_SLICE_END),
    ])
    assert [(s["name"], s["ts"], s["dur"]) for s in t.slices] == [
        ("cudaMalloc", 1000, 500), ("next", 1500, 100)]


def test_check_false_skips_validation():
    pkts = good()
    del pkts[P_KERNEL_END]
    t = parse(pkts, check=False)
    assert [s["name"] for s in t.unclosed] == ["cudaLaunchKernel"]


# ---- one bad trace per rule -----------------------------------------------


def test_rule1_sequence_id_required():
    pkts = good()
    pkts[P_COUNTER].ClearField("trusted_packet_sequence_id")
    assert "no trusted_packet_sequence_id" in bad(pkts, 1)


def test_rule2_first_packet_must_clear():
    pkts = good()
    pkts[P_WORKER_DESC].sequence_flags = 0
    assert "first on sequence 2" in bad(pkts, 2)


def test_rule2_interned_use_needs_flag():
    pkts = good()
    pkts[P_KERNEL_BEGIN].sequence_flags = 0
    assert "SEQ_NEEDS_INCREMENTAL_STATE" in bad(pkts, 2)


def test_rule3_undefined_iid():
    pkts = good()
    pkts[P_KERNEL_BEGIN].track_event.debug_annotations[0].string_value_iid = 9
    msg = bad(pkts, 3)
    assert "string_value_iid 9" in msg and "debug_annotation_string_values" in msg


def test_rule3_iid_gone_after_clear():
    pkts = good()
    pkts[P_KERNEL_BEGIN].sequence_flags = CLEARED | NEEDS  # drops the interned names
    assert "name_iid 2 is not defined" in bad(pkts, 3)


def test_rule3_iid_redefined_differently():
    pkts = good()
    pkts[P_KERNEL_BEGIN].interned_data.event_names.add(iid=1, name="cudaMallocHost")
    assert "redefined as 'cudaMallocHost'" in bad(pkts, 3)


def test_rule3_iid_defined_again_identically_is_fine():
    pkts = good()
    pkts[P_KERNEL_BEGIN].interned_data.event_names.add(iid=1, name="cudaMalloc")
    parse(pkts)


def test_rule4_track_without_descriptor():
    pkts = good()
    pkts[P_INSTANT].track_event.track_uuid = 999
    assert "track_uuid 999 has no TrackDescriptor" in bad(pkts, 4)


def test_rule4_no_track_at_all():
    pkts = good()
    pkts[P_FREE_BEGIN].track_event.ClearField("track_uuid")
    assert "no TracePacketDefaults track_uuid" in bad(pkts, 4)


def test_rule4_unknown_parent():
    pkts = good()
    pkts[P_COUNTER_DESC].track_descriptor.parent_uuid = 42
    assert "parent_uuid 42" in bad(pkts, 4)


def test_rule5_counter_on_plain_track():
    pkts = good()
    pkts[P_COUNTER].track_event.track_uuid = THREAD
    assert "has no counter field" in bad(pkts, 5)


def test_rule5_counter_descriptor_after_first_value():
    pkts = good()
    pkts.append(pkts.pop(P_COUNTER_DESC))
    assert "before its TrackDescriptor" in bad(pkts, 5)


def test_rule5_slice_on_counter_track():
    pkts = good()
    pkts[P_INSTANT].track_event.track_uuid = GPU_MEM
    assert "TYPE_INSTANT event on counter track" in bad(pkts, 5)


def test_rule6_end_without_begin():
    pkts = good()
    pkts.insert(P_WORKER_DESC + 1, event(1100, T.TYPE_SLICE_END, seq=2, track_uuid=WORKER))
    assert "SLICE_END at ts 1100 on track 4 with no open slice" in bad(pkts, 6)


def test_rule6_unclosed_slice_unless_allowed():
    pkts = good()
    del pkts[P_KERNEL_END]
    assert "'cudaLaunchKernel'" in bad(pkts, 6)
    t = parse(pkts, allow_unclosed=True)
    assert [(s["name"], s["dur"]) for s in t.unclosed] == [("cudaLaunchKernel", None)]
    assert "cudaLaunchKernel" not in [s["name"] for s in t.slices]


def _field(number, wire, payload):
    def varint(n):
        out = bytearray()
        while True:
            out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)
    return varint(number << 3 | wire) + (varint(len(payload)) if wire == 2 else b"") + payload


def test_rule7_flow_id_as_varint():
    p = event(2200, T.TYPE_INSTANT, name="flow")
    te = p.track_event.SerializeToString() + _field(47, 0, b"\x05")  # varint, not fixed64
    p.ClearField("track_event")
    raw = _field(1, 2, p.SerializeToString() + _field(11, 2, te))
    data = pb.Trace(packet=good()).SerializeToString() + raw
    with pytest.raises(TraceError, match=r"rule 7 .*flow_ids \(field 47\) has wire type 0"):
        perfetto_check.parse(data)


def _with_raw_event_field(number, wire, payload):
    """good() plus one instant whose TrackEvent carries an extra raw field."""
    p = event(2200, T.TYPE_INSTANT, name="extra")
    te = p.track_event.SerializeToString() + _field(number, wire, payload)
    p.ClearField("track_event")
    raw = _field(1, 2, p.SerializeToString() + _field(11, 2, te))
    return pb.Trace(packet=good()).SerializeToString() + raw


def test_rule10_unknown_field_number():
    with pytest.raises(TraceError, match=r"rule 10 .*TracePacket.track_event: field 999 "
                                         r"\(wire type 0\)"):
        perfetto_check.parse(_with_raw_event_field(999, 0, b"\x01"))


def test_rule10_track_uuid_with_the_wrong_wire_type():
    # track_uuid (11) as fixed64: the reader keeps the default track instead.
    with pytest.raises(TraceError, match=r"rule 10 .*TracePacket.track_event: field 11 "
                                         r"\(wire type 1\)"):
        perfetto_check.parse(_with_raw_event_field(11, 1, (THREAD).to_bytes(8, "little")))


def test_rule10_unknown_field_in_a_nested_message():
    pkts = good()
    raw = pb.Trace(packet=pkts).SerializeToString()
    descriptor = pb.TracePacket(trusted_packet_sequence_id=1, track_descriptor=pb.TrackDescriptor(
        uuid=99, parent_uuid=PROC, name="x"))
    inner = descriptor.track_descriptor.SerializeToString() + _field(77, 0, b"\x02")
    descriptor.ClearField("track_descriptor")
    extra = _field(1, 2, descriptor.SerializeToString() + _field(60, 2, inner))
    with pytest.raises(TraceError, match=r"rule 10 .*TracePacket.track_descriptor: field 77"):
        perfetto_check.parse(raw + extra)


def test_rule8_zero_timestamp():
    pkts = good()
    pkts[P_INSTANT].ClearField("timestamp")
    assert "zero timestamp" in bad(pkts, 8)


def test_rule8_unknown_clock():
    pkts = good()
    pkts[P_INSTANT].timestamp_clock_id = 100
    assert "timestamp_clock_id 100" in bad(pkts, 8)


def test_rule8_clock_from_earlier_snapshot_is_fine_later_one_is_not():
    pkts = good()
    pkts[P_INSTANT].timestamp_clock_id = 64
    snapshot = packet(flags=0, clock_snapshot=pb.ClockSnapshot(clocks=[
        pb.ClockSnapshot.Clock(clock_id=64, timestamp=0),
        pb.ClockSnapshot.Clock(clock_id=6, timestamp=10)]))
    parse(pkts[:P_INSTANT] + [snapshot] + pkts[P_INSTANT:])
    assert "sequence 1" in bad(pkts + [snapshot], 8)


def test_rule9_two_threads_on_one_sequence():
    pkts = good()
    pkts[P_INSTANT].track_event.track_uuid = WORKER
    assert "tid 102" in bad(pkts, 9)


def test_rule9_conflicting_descriptors():
    pkts = good()
    pkts.append(packet(seq=2, track_descriptor=pb.TrackDescriptor(
        uuid=WORKER, thread=pb.ThreadDescriptor(pid=PID, tid=TID))))
    assert "track 4 described as" in bad(pkts, 9)


# ---- command line -------------------------------------------------------------


def run_cli(*args):
    return subprocess.run([sys.executable, perfetto_check.__file__, *map(str, args)],
                          capture_output=True, text=True)


def test_cli_ok_and_error(write_trace):
    ok = run_cli(write_trace(good(), "zstd"))
    assert ok.returncode == 0
    assert ok.stdout == "ok: 13 packets, 3 slices, 2 counter values, 1 processes\n"
    pkts = good()
    del pkts[P_KERNEL_END]
    broken = write_trace(pkts)
    err = run_cli(broken)
    assert err.returncode == 1 and err.stdout.startswith("error: rule 6 ")
    assert run_cli("--allow-unclosed", broken).returncode == 0
    both = run_cli(broken, write_trace(good()))
    assert both.returncode == 1 and both.stdout.count(": ok: ") == 1


# ---- callstack samples (PerfSample with interned frames) --------------------


def sampled(sample_flags=NEEDS, drop=None):
    """good() and a callstack sample on sequence 1: two frames, one mapping; `drop`
    names an InternedData table whose entries are left out."""
    interned = pb.InternedData(
        function_names=[pb.InternedString(iid=1, str=b"main (a.py:3)"),
                        pb.InternedString(iid=2, str=b"f (a.py:9)")],
        mapping_paths=[pb.InternedString(iid=5, str=b"a.py")],
        mappings=[pb.Mapping(iid=5, path_string_ids=[5])],
        frames=[pb.Frame(iid=1, function_name_id=1, mapping_id=5, rel_pc=3),
                pb.Frame(iid=2, function_name_id=2, mapping_id=5, rel_pc=9)],
        callstacks=[pb.Callstack(iid=7, frame_ids=[1, 2])])
    if drop:
        interned.ClearField(drop)
    return good() + [packet(flags=sample_flags, ts=2500, interned_data=interned,
                            perf_sample=pb.PerfSample(pid=PID, tid=TID, callstack_iid=7))]


def test_callstack_sample_resolves_bottom_frame_first():
    s, = parse(sampled()).callstack_samples
    assert (s["pid"], s["tid"], s["ts"]) == (PID, TID, 2500)
    assert s["frames"] == ["main (a.py:3)", "f (a.py:9)"] and s["mappings"] == ["a.py"] * 2


@pytest.mark.parametrize("table, what", [
    ("callstacks", "PerfSample.callstack_iid 7"), ("frames", "Callstack 7 frame 1"),
    ("function_names", "Frame 1 name 1"), ("mappings", "Frame 1 mapping 5"),
    ("mapping_paths", "Mapping 5 path 5")])
def test_rule3_callstack_sample_reaches_an_undefined_iid(table, what):
    assert f"{what} is not defined in InternedData.{table}" in bad(sampled(drop=table), 3)


def test_rule2_callstack_sample_needs_the_flag():
    assert "PerfSample" in bad(sampled(sample_flags=0), 2)

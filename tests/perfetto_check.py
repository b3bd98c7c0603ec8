"""Decode cudatrace's Perfetto traces with Perfetto's official schema, and check them.

This module owns three things:

* reading a trace file: plain protobuf, gzip, or zstd (one or more frames);
* decoding it with the compiled schema that ships in the ``perfetto`` PyPI
  package (``perfetto_trace_pb2``) into plain Python data, interned names
  resolved (see ``Trace``);
* the import rules a trace must follow for Perfetto to show it as written,
  one ``check_*`` function each, raising ``TraceError("rule N (...): ...")``:
  1 sequence ids, 2 incremental-state flags, 3 interning, 4 track descriptors,
  5 counters, 6 balanced slices, 7 flow-id encoding, 8 timestamps and clocks,
  9 one thread per sequence, 10 no field the schema does not know, 11 typed GPU
  records (GpuRenderStageEvent and the host calls' gpu_correlation, which
  perfetto_gpu.py decodes: the package's schema lacks their extension fields).

Nothing is downloaded: Perfetto's TraceProcessor is not used.

Library::

    trace = perfetto_check.load("out.pftrace.zst")  # TraceError if a rule breaks
    trace.slices, trace.instants, trace.counters, trace.processes, ...

Shell::

    python3 tests/perfetto_check.py [--allow-unclosed] TRACE...
"""

import gzip
import sys
import zlib

from google.protobuf.message import DecodeError
from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

import perfetto_gpu

__all__ = ["TraceError", "Trace", "load", "parse", "validate", "typed_annotations"]


class TraceError(Exception):
    """The file is not a trace, or a trace that breaks an import rule."""


CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED  # 1
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE  # 2
BEGIN = pb.TrackEvent.TYPE_SLICE_BEGIN
END = pb.TrackEvent.TYPE_SLICE_END
INSTANT = pb.TrackEvent.TYPE_INSTANT
COUNTER = pb.TrackEvent.TYPE_COUNTER
BUILTIN_CLOCKS = {1, 2, 3, 4, 5, 6, 9}  # REALTIME..BOOTTIME, TSC
SEQUENCE_SCOPED_CLOCKS = range(64, 128)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
TRACE_PACKET_FIELD = 1  # Trace.packet
TRACK_EVENT_FIELD = 11  # TracePacket.track_event
FLOW_ID_FIELDS = {47: "flow_ids", 48: "terminating_flow_ids"}  # fixed64
WIRE_FIXED64 = 1


# --------------------------------------------------------------------------
# Reading the file


def _decompress(data):
    if not data:
        raise TraceError("empty file")
    if data[:1] == b"\x0a":
        return data
    if data[:2] == GZIP_MAGIC:
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise TraceError(f"bad gzip data: {e}") from None
    if data[:4] == ZSTD_MAGIC:
        return _zstd_decompress(data)
    raise TraceError(f"not a trace: unknown format, first bytes {data[:4].hex()}")


def _zstd_decompress(data):
    """Decompress concatenated zstd frames, refusing a truncated last frame."""
    import zstandard

    out, rest, frame = [], data, 0
    while rest:
        d = zstandard.ZstdDecompressor().decompressobj()
        try:
            out.append(d.decompress(rest))
        except zstandard.ZstdError as e:
            raise TraceError(f"bad zstd frame #{frame}: {e}") from None
        if not d.eof:
            raise TraceError(f"truncated zstd frame #{frame}")
        rest, frame = d.unused_data, frame + 1
    return b"".join(out)


def read_varint(buf, i):
    value = shift = 0
    while True:
        if i >= len(buf):
            raise TraceError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise TraceError("varint longer than 10 bytes")


def _wire_fields(buf):
    """Yield (field number, wire type, value) for each field of a message.

    value is an int for varints, else a memoryview of the field's bytes.
    """
    buf = memoryview(buf)
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(buf, i)
        else:
            if wire == 2:
                size, i = read_varint(buf, i)
            elif wire in (1, 5):
                size = 8 if wire == 1 else 4
            else:
                raise TraceError(f"field {field}: unsupported wire type {wire}")
            if i + size > len(buf):
                raise TraceError(f"field {field}: truncated")
            value, i = buf[i:i + size], i + size
        yield field, wire, value


def _split_packets(data):
    """The raw bytes of each Trace.packet, in file order."""
    raw = []
    for field, wire, value in _wire_fields(data):
        if field != TRACE_PACKET_FIELD or wire != 2:
            raise TraceError(f"not a trace: top-level field {field} wire type {wire}")
        raw.append(bytes(value))
    return raw


# --------------------------------------------------------------------------
# Decoding


def _set_fields(msg):
    """{field name: value} of the fields set in msg (much faster than HasField/getattr)."""
    return {f.name: v for f, v in msg.ListFields()}


class _SeqState:
    """One sequence's incremental state: interned tables and packet defaults."""

    def __init__(self):
        self.interned = {}  # InternedData field name -> {iid: value}
        self.defaults = None  # TracePacketDefaults
        self.event_defaults = {}  # its TrackEventDefaults, as _set_fields()

    def intern(self, interned_data):
        """Add a packet's interned data; return the (table, iid, old, new) conflicts."""
        conflicts = []
        for field, entries in interned_data.ListFields():
            table = self.interned.setdefault(field.name, {})
            for entry in entries:
                value = _interned_value(entry)
                if entry.iid in table and table[entry.iid] != value:
                    conflicts.append((field.name, entry.iid, table[entry.iid], value))
                table[entry.iid] = value
        for name, entries in perfetto_gpu.interned_extensions(interned_data).items():
            table = self.interned.setdefault(name, {})
            for iid, value in entries:
                if iid in table and table[iid] != value:
                    conflicts.append((name, iid, table[iid], value))
                table[iid] = value
        return conflicts

    def lookup(self, table, iid):
        return self.interned.get(table, {}).get(iid)

    def set_defaults(self, defaults):
        self.defaults = defaults
        self.event_defaults = _set_fields(defaults.track_event_defaults)


def _interned_value(entry):
    names = set(entry.DESCRIPTOR.fields_by_name)
    if names == {"iid", "name"}:
        return entry.name
    if names == {"iid", "str"}:
        return entry.str.decode("utf-8", "replace")
    return entry


def _walk(packets):
    """Yield (index, packet, sequence state, interning conflicts) in file order.

    Replays each sequence's incremental state as Perfetto does for a packet:
    first the clear, then the packet's defaults, then its interned data.
    """
    states = {}
    for i, p in enumerate(packets):
        seq = p.trusted_packet_sequence_id
        if seq not in states or p.sequence_flags & CLEARED:
            states[seq] = _SeqState()
        st = states[seq]
        if p.HasField("trace_packet_defaults"):
            st.set_defaults(p.trace_packet_defaults)
        conflicts = st.intern(p.interned_data) if p.HasField("interned_data") else []
        yield i, p, st, conflicts


_EVENT_IIDS = {"name_iid": "event_names", "source_location_iid": "source_locations",
               "correlation_id_str_iid": "correlation_id_str", "callstack_iid": "callstacks"}
_ANNOTATION_IIDS = {"name_iid": "debug_annotation_names",
                    "string_value_iid": "debug_annotation_string_values",
                    "proto_type_name_iid": "debug_annotation_value_type_names"}


def _interned_refs(te):
    """(table, iid, what) for every interned id a TrackEvent uses."""
    f = _set_fields(te)
    refs = [(table, f[field], f"TrackEvent.{field}")
            for field, table in _EVENT_IIDS.items() if field in f]
    refs += [("event_categories", iid, "TrackEvent.category_iids")
             for iid in f.get("category_iids", ())]
    pending = list(f.get("debug_annotations", ()))
    while pending:
        a = _set_fields(pending.pop())
        refs += [(table, a[field], f"DebugAnnotation.{field}")
                 for field, table in _ANNOTATION_IIDS.items() if field in a]
        pending += list(a.get("dict_entries", ())) + list(a.get("array_values", ()))
    return refs


def _annotation(a, st):
    name = a.name if a.HasField("name") else st.lookup("debug_annotation_names", a.name_iid)
    return name, _annotation_value(a, st)


def _annotation_value(a, st):
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        return st.lookup("debug_annotation_string_values", a.string_value_iid)
    if kind == "nested_value":
        return None  # legacy, unused by cudatrace
    if kind is not None:
        return getattr(a, kind)
    if a.dict_entries:
        return dict(_annotation(e, st) for e in a.dict_entries)
    if a.array_values:
        return [_annotation_value(v, st) for v in a.array_values]
    if a.proto_value:
        return a.proto_value
    return None


def typed_annotations(trace):
    """Per event of trace.events, [(name, value field, value)] of its debug annotations:
    the field says the type it was written as ("uint_value", "string_value_iid", ...)."""
    out = []
    for _, p, st, _ in _walk(trace.packets):
        if p.HasField("track_event"):
            out.append([(_annotation(a, st)[0], a.WhichOneof("value"), _annotation_value(a, st))
                        for a in p.track_event.debug_annotations])
    return out


def _decode_event(i, p, st):
    f = _set_fields(p.track_event)
    defaults = st.event_defaults
    name = f.get("name")
    if name is None and "name_iid" in f:
        name = st.lookup("event_names", f["name_iid"])
    value = f.get("counter_value", f.get("double_counter_value"))
    extra = []  # [(uuids, values)] for int, then double
    for kind in ("", "_double"):
        values = list(f.get(f"extra{kind}_counter_values", ()))
        uuids = f.get(f"extra{kind}_counter_track_uuids") or defaults.get(
            f"extra{kind}_counter_track_uuids", ())
        extra.append((list(uuids) if values else [], values))
    return {
        "i": i,
        "seq": p.trusted_packet_sequence_id,
        "ts": p.timestamp,
        "type": f.get("type", 0),
        "track_uuid": f.get("track_uuid", defaults.get("track_uuid")),
        "name": name,
        "categories": list(f.get("categories", ()))
        + [st.lookup("event_categories", iid) for iid in f.get("category_iids", ())],
        "args": dict(_annotation(a, st) for a in f.get("debug_annotations", ())),
        "flow_ids": list(f.get("flow_ids", ())),
        "terminating_flow_ids": list(f.get("terminating_flow_ids", ())),
        "gpu_submissions": perfetto_gpu.submissions(p.track_event, read_varint),
        "value": value,
        "extra_counters": extra,
    }


def _decode_sample(p, st):
    stack = st.lookup("callstacks", p.perf_sample.callstack_iid)
    frames = [st.lookup("frames", iid) for iid in (stack.frame_ids if stack else ())]
    paths = [st.lookup("mappings", f.mapping_id) if f else None for f in frames]
    return {
        "ts": p.timestamp, "pid": p.perf_sample.pid, "tid": p.perf_sample.tid,
        "frames": [st.lookup("function_names", f.function_name_id) if f else None
                   for f in frames],
        "mappings": [st.lookup("mapping_paths", m.path_string_ids[0]) if m else None
                     for m in paths],
    }


def _track_dict(d):
    c = d.counter if d.HasField("counter") else None
    kind = d.WhichOneof("static_or_dynamic_name")
    return {
        "uuid": d.uuid,
        "name": getattr(d, kind) if kind else None,
        "parent_uuid": d.parent_uuid if d.HasField("parent_uuid") else None,
        "is_counter": c is not None,
        "unit": pb.CounterDescriptor.Unit.Name(c.unit) if c and c.unit else None,
        "unit_name": c.unit_name if c and c.HasField("unit_name") else None,
        "unit_multiplier": c.unit_multiplier if c and c.HasField("unit_multiplier") else None,
        "is_incremental": bool(c and c.is_incremental),
        "pid": d.process.pid if d.HasField("process") else
        d.thread.pid if d.HasField("thread") else None,
        "tid": d.thread.tid if d.HasField("thread") else None,
    }


class Trace:
    """A decoded trace, not yet checked (validate() does that).

    Timestamps are the packets' own, in their own clock; counter values are as
    written (is_incremental and unit_multiplier, in tracks, are not applied).
    Slices pair SLICE_BEGIN/SLICE_END per track after a stable sort by time;
    their args are the BEGIN event's merged with the END event's.
    """

    def __init__(self, raw_packets):
        self.raw_packets = raw_packets  # bytes of each TracePacket, file order
        self.packets = []  # decoded pb.TracePacket, file order
        for i, raw in enumerate(raw_packets):
            try:
                self.packets.append(pb.TracePacket.FromString(raw))
            except DecodeError as e:
                raise TraceError(f"packet #{i}: cannot decode TracePacket: {e}") from None
        self.processes = {}  # pid -> {"pid", "name", "cmdline", "uuid"}
        self.threads = {}  # track uuid -> {"pid", "tid", "name"}
        self.tracks = {}  # track uuid -> dict, see _track_dict
        self.events = []  # every TrackEvent decoded, file order
        self.slices = []  # closed slices, in order of their begin
        self.unclosed = []  # slices begun but never ended (dur None)
        self.orphan_ends = []  # SLICE_END events with no open slice
        self.instants = []
        self.counters = {}  # track name -> [(ts, value)]
        self.counters_by_uuid = {}  # track uuid -> [(ts, value)]
        # callstack samples: {"ts", "pid", "tid", "frames": names bottom
        # (outermost) first, None where unresolved, "mappings": their paths}
        self.callstack_samples = []
        self.gpu_stages = []  # GpuRenderStageEvents, file order: perfetto_gpu.decode_stage
        self._decode_tracks()
        try:
            self._decode_events()
        except perfetto_gpu.GpuRecordError as e:
            raise TraceError(f"rule 11 (gpu records): {e}") from None
        self._pair_events()

    def _decode_events(self):
        for i, p, st, _ in _walk(self.packets):
            if p.HasField("gpu_render_stage_event"):
                self.gpu_stages.append(perfetto_gpu.decode_stage(i, p, st))
            if p.HasField("track_event"):
                self.events.append(_decode_event(i, p, st))
            if p.HasField("perf_sample") and p.perf_sample.HasField("callstack_iid"):
                self.callstack_samples.append(_decode_sample(p, st))

    def owner(self, uuid):
        """(pid, tid) of a track: tid only for a thread track, pid from it or an ancestor."""
        tid = self.tracks.get(uuid, {}).get("tid")
        seen = set()
        while uuid in self.tracks and uuid not in seen:
            seen.add(uuid)
            if self.tracks[uuid]["pid"] is not None:
                return self.tracks[uuid]["pid"], tid
            uuid = self.tracks[uuid]["parent_uuid"]
        return None, tid

    def _decode_tracks(self):
        for p in self.packets:
            if not p.HasField("track_descriptor"):
                continue
            d = p.track_descriptor
            t = self.tracks[d.uuid] = _track_dict(d)
            if d.HasField("process"):
                self.processes[d.process.pid] = {
                    "pid": d.process.pid,
                    "name": d.process.process_name or t["name"],
                    "cmdline": list(d.process.cmdline),
                    "uuid": d.uuid,
                }
            if d.HasField("thread"):
                self.threads[d.uuid] = {
                    "pid": d.thread.pid,
                    "tid": d.thread.tid,
                    "name": d.thread.thread_name or t["name"],
                }

    def _pair_events(self):
        """Build slices, instants and counters, sorting events by time as Perfetto does."""
        stacks = {}  # track uuid -> open slices
        for e in sorted(self.events, key=lambda e: e["ts"]):  # sorted() is stable
            pid, tid = self.owner(e["track_uuid"])
            if e["type"] == BEGIN:
                stack = stacks.setdefault(e["track_uuid"], [])
                s = {k: e[k] for k in ("name", "ts", "track_uuid", "categories", "flow_ids",
                                       "terminating_flow_ids", "gpu_submissions", "seq")}
                s.update(dur=None, pid=pid, tid=tid, depth=len(stack), args=dict(e["args"]))
                stack.append(s)
                self.slices.append(s)
            elif e["type"] == END:
                stack = stacks.get(e["track_uuid"])
                if not stack:
                    self.orphan_ends.append(e)
                    continue
                s = stack.pop()
                s["dur"] = e["ts"] - s["ts"]
                s["args"].update(e["args"])
                s["flow_ids"] += e["flow_ids"]
                s["terminating_flow_ids"] += e["terminating_flow_ids"]
            elif e["type"] == INSTANT:
                self.instants.append({
                    "name": e["name"], "ts": e["ts"], "track_uuid": e["track_uuid"],
                    "pid": pid, "tid": tid, "args": e["args"], "seq": e["seq"],
                    "categories": e["categories"], "flow_ids": e["flow_ids"],
                    "terminating_flow_ids": e["terminating_flow_ids"],
                })
            if e["type"] == COUNTER and e["value"] is not None:
                self._add_counter(e["track_uuid"], e["ts"], e["value"])
            for uuids, values in e["extra_counters"]:
                for uuid, value in zip(uuids, values):
                    self._add_counter(uuid, e["ts"], value)
        self.unclosed = [s for stack in stacks.values() for s in stack]
        self.slices = [s for s in self.slices if s["dur"] is not None]

    def _add_counter(self, uuid, ts, value):
        self.counters_by_uuid.setdefault(uuid, []).append((ts, value))
        name = self.tracks.get(uuid, {}).get("name")
        self.counters.setdefault(name, []).append((ts, value))

    def summary(self):
        values = sum(len(v) for v in self.counters_by_uuid.values())
        return (f"{len(self.packets)} packets, {len(self.slices)} slices, "
                f"{values} counter values, {len(self.processes)} processes")


# --------------------------------------------------------------------------
# The import rules, one function each. Each raises TraceError("rule N ...").


def _fail(rule, msg):
    raise TraceError(f"rule {rule}: {msg}")


def check_sequence_ids(trace):
    """1. Packets with track_event, interned_data or track_descriptor name their sequence."""
    for i, p in enumerate(trace.packets):
        for field in ("track_event", "interned_data", "track_descriptor"):
            if p.HasField(field) and not p.trusted_packet_sequence_id:
                _fail("1 (sequence id)",
                      f"packet #{i} has {field} but no trusted_packet_sequence_id")


def _uses_incremental_state(te):
    return bool(_interned_refs(te)) or not te.HasField("track_uuid") or (
        te.extra_counter_values and not te.extra_counter_track_uuids) or (
        te.extra_double_counter_values and not te.extra_double_counter_track_uuids)


def check_incremental_flags(trace):
    """2. Each sequence starts with a clear; later packets using its state say so."""
    seen = set()
    for i, p in enumerate(trace.packets):
        seq = p.trusted_packet_sequence_id
        if not seq:
            continue
        flags = p.sequence_flags
        if seq not in seen:
            seen.add(seq)
            if not flags & CLEARED:
                _fail("2 (incremental state)",
                      f"packet #{i}, the first on sequence {seq}, lacks sequence_flags "
                      f"SEQ_INCREMENTAL_STATE_CLEARED (flags={flags})")
        elif (p.HasField("track_event") and not flags & (CLEARED | NEEDS)
              and _uses_incremental_state(p.track_event)):
            _fail("2 (incremental state)",
                  f"packet #{i} on sequence {seq} uses interned data or sequence defaults "
                  f"but lacks sequence_flags SEQ_NEEDS_INCREMENTAL_STATE (flags={flags})")


def check_interning(trace):
    """3. Interned ids are defined earlier on the sequence, since its last clear, once."""
    for i, p, st, conflicts in _walk(trace.packets):
        seq = p.trusted_packet_sequence_id
        for table, iid, old, new in conflicts:
            _fail("3 (interning)",
                  f"packet #{i}: iid {iid} of InternedData.{table} redefined as {new!r} "
                  f"(was {old!r}) on sequence {seq} within one clear period")
        if not p.HasField("track_event"):
            continue
        for table, iid, what in _interned_refs(p.track_event):
            if iid not in st.interned.get(table, {}):
                _fail("3 (interning)",
                      f"packet #{i}: {what} {iid} is not defined in InternedData.{table} "
                      f"earlier on sequence {seq} since its last SEQ_INCREMENTAL_STATE_CLEARED")


def _profile_refs(p, st):
    """(table, iid, what) for every interned id a PerfSample uses, through its
    callstack's frames to their names and mappings, and their mappings' paths."""
    if not p.HasField("perf_sample") or not p.perf_sample.HasField("callstack_iid"):
        return []
    iid = p.perf_sample.callstack_iid
    refs = [("callstacks", iid, "PerfSample.callstack_iid")]
    stack = st.lookup("callstacks", iid)
    for frame_id in stack.frame_ids if stack is not None else ():
        refs.append(("frames", frame_id, f"Callstack {iid} frame"))
        frame = st.lookup("frames", frame_id)
        if frame is None:
            continue
        refs.append(("function_names", frame.function_name_id, f"Frame {frame_id} name"))
        if frame.mapping_id:
            refs.append(("mappings", frame.mapping_id, f"Frame {frame_id} mapping"))
            mapping = st.lookup("mappings", frame.mapping_id)
            refs += [("mapping_paths", path, f"Mapping {frame.mapping_id} path")
                     for path in (mapping.path_string_ids if mapping is not None else ())]
    return refs


def check_profile_interning(trace):
    """3. A callstack sample's callstack, frames, names, mappings and paths are
    defined earlier on its sequence, since its last clear, which it needs."""
    for i, p, st, _ in _walk(trace.packets):
        refs = _profile_refs(p, st)
        if refs and not p.sequence_flags & (CLEARED | NEEDS):
            _fail("2 (incremental state)", f"packet #{i}: a PerfSample on sequence "
                  f"{p.trusted_packet_sequence_id} lacks SEQ_NEEDS_INCREMENTAL_STATE")
        for table, iid, what in refs:
            if iid not in st.interned.get(table, {}):
                _fail("3 (interning)",
                      f"packet #{i}: {what} {iid} is not defined in InternedData.{table} "
                      f"earlier on sequence {p.trusted_packet_sequence_id} since its last clear")


def _used_tracks(e):
    """(uuid, role) for every track an event writes to."""
    used = [(e["track_uuid"], "track_uuid")]
    for uuids, _ in e["extra_counters"]:
        used += [(u, "extra counter track") for u in uuids]
    return used


def check_tracks_described(trace):
    """4. Every track used by an event, and every parent, has a TrackDescriptor."""
    for e in trace.events:
        if e["track_uuid"] is None:
            _fail("4 (track descriptors)",
                  f"packet #{e['i']}: TrackEvent has no track_uuid and sequence {e['seq']} "
                  f"has no TracePacketDefaults track_uuid")
        for uuid, role in _used_tracks(e):
            if uuid not in trace.tracks:
                _fail("4 (track descriptors)",
                      f"packet #{e['i']}: {role} {uuid} has no TrackDescriptor in the trace")
    for uuid, t in trace.tracks.items():
        if t["parent_uuid"] is not None and t["parent_uuid"] not in trace.tracks:
            _fail("4 (track descriptors)",
                  f"track {uuid} has parent_uuid {t['parent_uuid']} with no TrackDescriptor")


def check_counter_tracks(trace):
    """5. Counter values only on counter tracks described before them; nothing else there."""
    described = {}  # uuid -> index of its first counter descriptor
    for i, p in enumerate(trace.packets):
        d = p.track_descriptor
        if p.HasField("track_descriptor") and d.HasField("counter"):
            described.setdefault(d.uuid, i)
    for e in trace.events:
        counter_uuids = [u for uuids, _ in e["extra_counters"] for u in uuids]
        if e["type"] == COUNTER:
            if e["value"] is None:
                _fail("5 (counters)", f"packet #{e['i']}: TYPE_COUNTER event without a value")
            counter_uuids.append(e["track_uuid"])
        elif e["track_uuid"] in described:
            kind = pb.TrackEvent.Type.Name(e["type"])
            _fail("5 (counters)",
                  f"packet #{e['i']}: {kind} event on counter track {e['track_uuid']}")
        for uuids, values in e["extra_counters"]:
            if len(uuids) != len(values):
                _fail("5 (counters)", f"packet #{e['i']}: {len(values)} extra counter "
                      f"values for {len(uuids)} extra counter tracks")
        for uuid in counter_uuids:
            if uuid not in described:
                _fail("5 (counters)", f"packet #{e['i']}: counter value on track {uuid}, "
                      f"whose TrackDescriptor has no counter field")
            if described[uuid] > e["i"]:
                _fail("5 (counters)", f"packet #{e['i']}: counter value on track {uuid} "
                      f"before its TrackDescriptor (packet #{described[uuid]})")


def check_slices_balanced(trace, allow_unclosed=False):
    """6. No SLICE_END without an open slice on its track; no slice left open."""
    for e in trace.orphan_ends:
        _fail("6 (balanced slices)", f"packet #{e['i']}: SLICE_END at ts {e['ts']} on "
              f"track {e['track_uuid']} with no open slice")
    if trace.unclosed and not allow_unclosed:
        s = trace.unclosed[0]
        _fail("6 (balanced slices)",
              f"{len(trace.unclosed)} slice(s) never ended, first {s['name']!r} at ts "
              f"{s['ts']} on track {s['track_uuid']}")


def check_flow_id_encoding(trace):
    """7. TrackEvent.flow_ids / terminating_flow_ids are written as fixed64 (wire type 1)."""
    for i, (raw, p) in enumerate(zip(trace.raw_packets, trace.packets)):
        te = p.track_event
        if not (te.flow_ids or te.terminating_flow_ids or UnknownFieldSet(te)):
            continue  # a misencoded flow id would be in flow_ids or an unknown field
        for field, wire, value in _wire_fields(raw):
            if field != TRACK_EVENT_FIELD or wire != 2:
                continue
            for f, w, _ in _wire_fields(value):
                if f in FLOW_ID_FIELDS and w != WIRE_FIXED64:
                    _fail("7 (flow ids)",
                          f"packet #{i}: TrackEvent.{FLOW_ID_FIELDS[f]} (field {f}) has wire "
                          f"type {w}; it must be fixed64 (wire type 1)")


def check_timestamps(trace):
    """8. Track events have a timestamp; clock ids are builtin or defined by a ClockSnapshot."""
    defined = set()  # (sequence or None, clock id); None for trace-wide clocks
    for i, p, st, _ in _walk(trace.packets):
        seq = p.trusted_packet_sequence_id
        if p.HasField("track_event") and not p.timestamp:
            _fail("8 (timestamps)", f"packet #{i}: track event with no or zero timestamp")
        if p.HasField("timestamp_clock_id"):
            clock = p.timestamp_clock_id
        elif st.defaults is not None and st.defaults.HasField("timestamp_clock_id"):
            clock = st.defaults.timestamp_clock_id
        else:
            clock = None
        if clock is not None and clock not in BUILTIN_CLOCKS:
            scope = seq if clock in SEQUENCE_SCOPED_CLOCKS else None
            if (scope, clock) not in defined:
                _fail("8 (timestamps)", f"packet #{i}: timestamp_clock_id {clock} is not "
                      f"builtin (1..6, 9) nor defined by an earlier ClockSnapshot"
                      + (f" on sequence {seq}" if scope is not None else ""))
        for c in p.clock_snapshot.clocks:
            defined.add((seq if c.clock_id in SEQUENCE_SCOPED_CLOCKS else None, c.clock_id))


def check_one_thread_per_sequence(trace):
    """9. A sequence writes to one thread's tracks, and descriptors of a uuid agree."""
    tids = {}  # sequence -> (tid, packet index)
    for e in trace.events:
        tid = trace.tracks.get(e["track_uuid"], {}).get("tid")
        if tid is None:
            continue
        first = tids.setdefault(e["seq"], (tid, e["i"]))
        if first[0] != tid:
            _fail("9 (one thread per sequence)",
                  f"packet #{e['i']}: sequence {e['seq']} has events for tid {tid} and, "
                  f"at packet #{first[1]}, for tid {first[0]}")
    identity = {}
    for i, p in enumerate(trace.packets):
        if p.HasField("track_descriptor"):
            t = _track_dict(p.track_descriptor)
            ident = (t["pid"], t["tid"], t["is_counter"], t["parent_uuid"])
            first = identity.setdefault(t["uuid"], (ident, i))
            if first[0] != ident:
                _fail("9 (one thread per sequence)",
                      f"packet #{i}: track {t['uuid']} described as (pid, tid, counter, "
                      f"parent)={ident}, but as {first[0]} at packet #{first[1]}")


def _unknown_fields(message, path):
    """'PATH: field N (wire type W)' for every field of `message` and of the
    messages inside it that the schema does not know, or knows with another
    wire type (the parser keeps both as unknown fields)."""
    found = [f"{path}: field {f.field_number} (wire type {f.wire_type})"
             for f in UnknownFieldSet(message)
             if (message.DESCRIPTOR.name, f.field_number) not in perfetto_gpu.EXTENSIONS]
    for field, value in message.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        repeated = field.is_repeated
        for k, item in enumerate(value if repeated else [value]):
            found += _unknown_fields(item, f"{path}.{field.name}" + (f"[{k}]" if repeated else ""))
    return found


def check_unknown_fields(trace):
    """10. Every field is one Perfetto's schema knows, with its wire type: the
    reader skips any other, so a TrackEvent with a field number of another
    message, or a track_uuid written as fixed64, lands on the wrong track."""
    for i, p in enumerate(trace.packets):
        found = _unknown_fields(p, "TracePacket")
        if found:
            _fail("10 (unknown fields)", f"packet #{i}: {found[0]}")


def validate(trace, allow_unclosed=False):
    """Run every rule in order; raise TraceError on the first violation."""
    check_sequence_ids(trace)
    check_incremental_flags(trace)
    check_interning(trace)
    check_profile_interning(trace)
    check_tracks_described(trace)
    check_counter_tracks(trace)
    check_slices_balanced(trace, allow_unclosed)
    check_flow_id_encoding(trace)
    check_timestamps(trace)
    check_one_thread_per_sequence(trace)
    check_unknown_fields(trace)
    perfetto_gpu.check_gpu_records(trace, _fail)


# --------------------------------------------------------------------------
# Entry points


def parse(data, check=True, allow_unclosed=False):
    """Decode trace bytes (plain, gzip or zstd) and, unless check=False, validate them."""
    trace = Trace(_split_packets(_decompress(bytes(data))))
    if check:
        validate(trace, allow_unclosed)
    return trace


def load(path, check=True, allow_unclosed=False):
    """Read and decode a trace file; see parse()."""
    with open(path, "rb") as f:
        return parse(f.read(), check, allow_unclosed)


def main(argv):
    args = [a for a in argv if a != "--allow-unclosed"]
    if not args or any(a.startswith("-") for a in args):
        print("usage: perfetto_check.py [--allow-unclosed] TRACE...\n"
              "Prints 'ok: ...' or 'error: ...' per trace (prefixed by its path when "
              "several are given); exits 1 if any has an error.", file=sys.stderr)
        return 2
    status = 0
    for path in args:
        prefix = f"{path}: " if len(args) > 1 else ""
        try:
            trace = load(path, allow_unclosed="--allow-unclosed" in argv)
            print(f"{prefix}ok: {trace.summary()}")
        except (TraceError, OSError) as e:
            print(f"{prefix}error: {e}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

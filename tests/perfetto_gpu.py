"""Perfetto's typed GPU records in a cudatrace trace (CUDATRACE_GPU_RECORDS=typed), for
perfetto_check.

This module owns what the ``perfetto`` PyPI package's compiled schema leaves out or cannot
resolve alone:

* the extension fields it lacks, decoded here from the fields it keeps as unknown:
  ``TrackEvent.gpu_correlation`` (3000, GpuCorrelation: render_stage_submission_event_ids = 1)
  and ``InternedData.compute_kernels`` (1000, InternedComputeKernel) and
  ``InternedData.compute_arg_names`` (1000 + 1, InternedComputeArgName: iid 1, name 2);
* each ``GpuRenderStageEvent`` (TracePacket 53) as a plain dict, its interned ids resolved
  (``decode_stage``);
* rule 11, the rules of these records (``check_gpu_records``).

Field numbers are Perfetto's (protos/perfetto/trace/gpu/, v58.2).
"""

from google.protobuf.unknown_fields import UnknownFieldSet
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

GPU_CORRELATION_FIELD = 3000  # TrackEvent extension, GpuTrackEvent.gpu_correlation
COMPUTE_KERNELS_FIELD = 1000  # InternedData extension, GpuInternedData.compute_kernels
COMPUTE_ARG_NAMES_FIELD = 1001  # InternedData extension, GpuInternedData.compute_arg_names
SUBMISSION_IDS_FIELD = 1  # GpuCorrelation.render_stage_submission_event_ids
WIRE_VARINT, WIRE_BYTES = 0, 2
GAP_SLICE = "trace gap: middle dropped"  # trace_names.h's ct_event_trace_gap
# The extension fields this module decodes, by (message, field): rule 10 leaves them to rule 11.
EXTENSIONS = {("TrackEvent", GPU_CORRELATION_FIELD), ("InternedData", COMPUTE_KERNELS_FIELD),
              ("InternedData", COMPUTE_ARG_NAMES_FIELD)}


class GpuRecordError(Exception):
    """An extension field that does not decode as Perfetto's schema says."""


def _extension(message, field):
    """The bytes of each occurrence of length-delimited unknown field `field`."""
    out = []
    for f in UnknownFieldSet(message):
        if f.field_number != field:
            continue
        if f.wire_type != WIRE_BYTES:
            raise GpuRecordError(f"{message.DESCRIPTOR.name} field {field} has wire type "
                                 f"{f.wire_type}; it is a message (wire type 2)")
        out.append(bytes(f.data))
    return out


def _varints(buf, field, read_varint):
    """The values of repeated varint `field` in `buf`, packed or not."""
    values, i = [], 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == WIRE_VARINT:
            value, i = read_varint(buf, i)
            if number == field:
                values.append(value)
        elif wire == WIRE_BYTES:
            size, i = read_varint(buf, i)
            end = i + size
            while number == field and i < end:
                value, i = read_varint(buf, i)
                values.append(value)
            i = end
        else:
            raise GpuRecordError(f"GpuCorrelation field {number}: wire type {wire}")
    return values


def submissions(track_event, read_varint):
    """The render stage event ids a TrackEvent's gpu_correlation names."""
    return [v for data in _extension(track_event, GPU_CORRELATION_FIELD)
            for v in _varints(data, SUBMISSION_IDS_FIELD, read_varint)]


def interned_extensions(interned_data):
    """{table: [(iid, value)]} of the extension tables a packet's InternedData adds:
    a kernel's value is (name, demangled_name), an argument name's its name."""
    kernels = [pb.InternedComputeKernel.FromString(d)
               for d in _extension(interned_data, COMPUTE_KERNELS_FIELD)]
    arg_names = [pb.InternedComputeArgName.FromString(d)
                 for d in _extension(interned_data, COMPUTE_ARG_NAMES_FIELD)]
    return {"compute_kernels": [(k.iid, (k.name, k.demangled_name)) for k in kernels],
            "compute_arg_names": [(a.iid, a.name) for a in arg_names]}


def _refs(e):
    """(table, iid, what) for every interned id a GpuRenderStageEvent uses."""
    refs = [("gpu_specifications", e.hw_queue_iid, "hw_queue_iid"),
            ("gpu_specifications", e.stage_iid, "stage_iid"),
            ("graphics_contexts", e.context, "context")]
    if e.HasField("name_iid"):
        refs.append(("event_names", e.name_iid, "name_iid"))
    if e.HasField("kernel_iid"):
        refs.append(("compute_kernels", e.kernel_iid, "kernel_iid"))
    for a in e.launch.args:
        if a.HasField("name_iid"):
            refs.append(("compute_arg_names", a.name_iid, "launch.args.name_iid"))
        if a.HasField("string_value_iid"):
            refs.append(("debug_annotation_string_values", a.string_value_iid,
                         "launch.args.string_value_iid"))
    return refs


def _arg_value(a, st):
    kind = a.WhichOneof("value")
    if kind == "string_value_iid":
        return st.lookup("debug_annotation_string_values", a.string_value_iid)
    return getattr(a, kind) if kind else None


def _name(spec):
    return spec.name if spec is not None else None


def decode_stage(i, p, st):
    """A GpuRenderStageEvent as a dict: where it ran (queue: the hardware queue's name, stage,
    gpu_id, pid), when (ts, dur), what (name, kernel: (name, demangled) or None, grid and
    block as (x, y, z) or None, args: {name: value}) and event_id; "missing" lists the
    interned ids it uses that its sequence has not defined."""
    e = p.gpu_render_stage_event
    missing = [f"{what} {iid} (InternedData.{table})" for table, iid, what in _refs(e)
               if iid not in st.interned.get(table, {})]
    context = st.lookup("graphics_contexts", e.context)
    launch = e.launch
    dims = [(d.x, d.y, d.z) if launch.HasField(field) else None
            for field, d in (("grid_size", launch.grid_size),
                             ("workgroup_size", launch.workgroup_size))]
    name = e.name if e.HasField("name") else st.lookup("event_names", e.name_iid)
    return {
        "i": i, "seq": p.trusted_packet_sequence_id, "ts": p.timestamp, "dur": e.duration,
        "event_id": e.event_id if e.HasField("event_id") else None,
        "queue": _name(st.lookup("gpu_specifications", e.hw_queue_iid)),
        "stage": _name(st.lookup("gpu_specifications", e.stage_iid)),
        "gpu_id": e.gpu_id,
        "pid": context.pid if context is not None else None,
        "api": context.api if context is not None else None,
        "name": name,
        "kernel": st.lookup("compute_kernels", e.kernel_iid) if e.HasField("kernel_iid") else None,
        "grid": dims[0], "block": dims[1],
        "args": {st.lookup("compute_arg_names", a.name_iid): _arg_value(a, st)
                 for a in launch.args},
        "missing": missing,
    }


def check_gpu_records(trace, fail):
    """11. Typed GPU records: every interned id a GpuRenderStageEvent uses is defined on its
    sequence before it (its hardware queue, stage, context, name, kernel, argument names and
    string values); every event has an event id and a hardware queue named "GPU ..."; its
    context is a CUDA one of a process in the trace; it lies within the trace's host time;
    and every render stage event id a host call's gpu_correlation names is that of a render
    stage event, unless a bounded trace dropped its middle, where a kept call's work may be
    gone (Perfetto then draws no arrow from it)."""
    stages = trace.gpu_stages
    if not stages and not any(e["gpu_submissions"] for e in trace.events):
        return
    host = [e["ts"] for e in trace.events if e["ts"]]
    first, last = min(host), max(host)
    ids = set()
    for s in stages:
        where = f"packet #{s['i']}: GpuRenderStageEvent"
        if s["missing"]:
            fail("11 (gpu records)", f"{where} uses {s['missing'][0]}, not defined earlier on "
                 f"sequence {s['seq']} since its last clear")
        if not s["event_id"]:
            fail("11 (gpu records)", f"{where} has no event_id: Perfetto drops it")
        if not (s["queue"] or "").startswith("GPU "):
            fail("11 (gpu records)", f"{where} is on hardware queue {s['queue']!r}")
        if s["api"] != pb.InternedGraphicsContext.CUDA or s["pid"] not in trace.processes:
            fail("11 (gpu records)", f"{where} has context api {s['api']} of pid {s['pid']}, "
                 f"not CUDA of a process in the trace")
        if not (first <= s["ts"] and s["ts"] + s["dur"] <= last):
            fail("11 (gpu records)", f"{where} at {s['ts']}+{s['dur']} ns lies outside the "
                 f"trace's host events, {first}..{last}")
        ids.add(s["event_id"])
    if any(s["name"] == GAP_SLICE for s in trace.slices):
        return
    for e in trace.events:
        for submitted in e["gpu_submissions"]:
            if submitted not in ids:
                fail("11 (gpu records)", f"packet #{e['i']}: gpu_correlation names render "
                     f"stage event {submitted}, which the trace does not hold")

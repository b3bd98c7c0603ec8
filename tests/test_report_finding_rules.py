"""Each finding's rule, held against the smallest trace whose facts make it fire.

This file holds the rules of viewer-export/findings/ as `cudatrace report --json` applies them
to a trace, with no program run: for the library, driver, usage, hang and CUPTI findings and
those that compare processes (the NVML, host, step and CUDA graph findings and
inconsistent-environment are held by their own files' traces; each test says which finding it
covers with @pytest.mark.finding or @pytest.mark.twin, and tests/test_findings_declared.py holds
every declared finding to both), a synthetic trace that holds only the facts the rule turns on
must get exactly that finding, with its severity and the numbers and paths of its evidence;
and a healthy twin that differs in that one fact must get none. A rule with a threshold gets a
trace on each side of it, by its facts or by `--threshold NAME=VALUE`.

The traces are written packet by packet by ProcessTrace below, as the collector writes them (a
process track, a thread track per thread with one slice per call named as functions.h names
it, the libraries track's instants, the device-memory counter, GPU tracks), every name taken
from the trace vocabulary (trace_vocabulary fixture), never spelled here; each is checked as
it is written against Perfetto's import rules (perfetto_check) and the vocabulary, and starts
with the cudatrace.trace event of the format include/cudatrace/trace_names.h declares.

Every finding can be reached from a trace: the report computes them from the trace alone, and
none is faked here. Two facts are taken as the collector gives them: no-kernel-image reads the
collector's cuda.no_kernel_image instant (written when a launch failed with error 209), so its
twin is the launch that succeeded; and the straggler's ratio and margin are constants
(across.c), so their sides are set by the facts. Where the code does not do what the docs say,
the test states the documented behaviour and is marked xfail(strict=True) with the difference.
"""
import os
import re

import pytest

import cudatrace_cmd
import perfetto_check
import trace_vocabulary
from perfetto_check import pb

REPORT_TIMEOUT_S = 30
PID, TID, TID2 = 4242, 4243, 4244
US, MS, S = 1_000, 1_000_000, 1_000_000_000
KIB, MIB = 1 << 10, 1 << 20
T0 = 5 * S  # process start
FIRST = T0 + 10 * MS  # the first CUDA call: where the CUDA part of the run begins
OFFSET = 10 * US  # the calls after it
WALL = 10 * MS  # the CUDA part of the run, unless a test says otherwise

CUDA_ERRORS = {1: "cudaErrorInvalidValue", 2: "cudaErrorMemoryAllocation",
               34: "cudaErrorStubLibrary", 35: "cudaErrorInsufficientDriver",
               209: "cudaErrorNoKernelImageForDevice"}
DEVICE, EVENT, STREAM = 0x7F10_0000_0000, 0x5500_0010, 0x5500_0020  # handles and pointers
HOST = 0x7F30_0000_0000  # a host buffer, pinned or not as a test says

SITE_A, SITE_B = "train.py:41 in step", "train.py:57 in evaluate"
SITE_OOM, SITE_SLOW, SITE_GROW = "train.py:12 in build_model", "data.py:8 in batch", \
    "cache.py:30 in grow"

SITE_PACKAGES = "/opt/venv/lib/python3.11/site-packages"
TORCH = f"{SITE_PACKAGES}/torch/lib/libtorch_cuda.so"
CUDART = f"{SITE_PACKAGES}/nvidia/cuda_runtime/lib/libcudart.so.13"
SYSTEM_LIB = "/usr/lib/x86_64-linux-gnu"
WHEEL_CUDNN = f"{SITE_PACKAGES}/nvidia/cudnn/lib"


# --------------------------------------------------------------------------
# Writing a trace


class ProcessTrace:
    """One traced process, written as the collector writes it: the process track and its
    cudatrace.trace event first, the rest as the helpers add it, cudatrace.end last (write).

    Annotations are given by the vocabulary's key ids (`requested_as=`); a key whose values the
    vocabulary declares takes a value id (`found_via="via_cache"`, `kind="copy_host_to_device"`).
    The value type is the one the vocabulary declares for the key (a pointer where it says
    POINTER, unsigned where it allows UINT, else signed)."""

    def __init__(self, vocab, trace_format, pid=PID, wall=WALL):
        self.vocab, self.pid, self.end = vocab, pid, FIRST + wall
        self.uuid = pid << 32
        self.packets, self.sequences, self.tracks = [], {}, {}  # sequences: thread track -> id
        self.cleared = set()  # sequences whose first packet is written
        self.live = {}  # device pointer -> bytes
        self.packets.append(self._packet(1, track_descriptor=pb.TrackDescriptor(
            uuid=self.uuid, process=pb.ProcessDescriptor(pid=pid, process_name="python",
                                                         cmdline=["python", "train.py"]))))
        self.instant(self.uuid, "trace_format", T0, format=trace_format, clock="clock_boottime")

    # -- packets --

    def _packet(self, seq, ts=None, **fields):
        """A packet of sequence `seq`; the first one clears its state (nothing is interned)."""
        p = pb.TracePacket(trusted_packet_sequence_id=seq, **fields)
        if seq not in self.cleared:
            self.cleared.add(seq)
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        if ts is not None:
            p.timestamp = ts
        return p

    def _annotation(self, key_id, value):
        name = self.vocab.text("key", key_id)
        types = {s.strip() for s in self.vocab.entries["key"][key_id][1].split("|")}
        if name in self.vocab.values:
            value = self.vocab.text("value", value)
        if isinstance(value, str):
            field = "STRING"
        elif isinstance(value, float):
            field = "DOUBLE"
        else:
            field = next(t for t in ("POINTER", "UINT", "INT") if t in types and
                         (t == "INT" or value >= 0))
        assert field in types, (key_id, value, types)
        return pb.DebugAnnotation(name=name, **{f"{field.lower()}_value": value})

    def _event(self, track, ts, type, name=None, args=(), **fields):
        seq = self.sequences.get(track, 1)
        event = pb.TrackEvent(type=type, track_uuid=track, **fields)
        if name is not None:
            event.name = name
        event.debug_annotations.extend(self._annotation(k, v) for k, v in dict(args).items())
        self.packets.append(self._packet(seq, ts, track_event=event))

    def _track(self, key, **descriptor):
        """A track of the process, described before its first event."""
        if key not in self.tracks:
            self.tracks[key] = self.uuid + 1 + len(self.tracks)
            self.packets.append(self._packet(1, track_descriptor=pb.TrackDescriptor(
                uuid=self.tracks[key], parent_uuid=self.uuid, **descriptor)))
        return self.tracks[key]

    def thread(self, tid):
        """The thread's track, on a sequence of its own (one thread per sequence)."""
        key = ("thread", tid)
        if key not in self.tracks:
            uuid = self.tracks[key] = self.uuid | 0x8000_0000 | tid
            seq = self.sequences[uuid] = 2 + len(self.sequences)
            self.packets.append(self._packet(seq, track_descriptor=pb.TrackDescriptor(
                uuid=uuid, parent_uuid=self.uuid,
                thread=pb.ThreadDescriptor(pid=self.pid, tid=tid))))
        return self.tracks[key]

    def value(self, value_id):
        return self.vocab.text("value", value_id)

    def instant(self, track, event_id, ts, **args):
        self._event(track, ts, pb.TrackEvent.TYPE_INSTANT, self.vocab.text("event", event_id),
                    args)

    def slice(self, track, name, ts, dur, **args):
        self._event(track, ts, pb.TrackEvent.TYPE_SLICE_BEGIN, name, args)
        self._event(track, ts + dur, pb.TrackEvent.TYPE_SLICE_END)

    # -- calls --

    def call(self, fn, ts, dur, tid=TID, site=None, result=0, **args):
        """One call slice of runtime function `fn`, with its result (and error) and site."""
        args["result"] = result
        if result:
            args["error"] = CUDA_ERRORS[result]
        if site:
            args["site"] = site
        self.slice(self.thread(tid), self.vocab.text("function", fn), ts, dur, **args)

    def first_call(self, result=0):
        """The program's first CUDA call, at FIRST: where the CUDA part of its run begins."""
        self.call("cudaGetDeviceCount", FIRST, 1 * US, result=result,
                  **({} if result else {"count": 1}))

    def _device_bytes(self, ts):
        self._event(self._track("device", name=self.vocab.text("track", "device_memory"),
                                counter=pb.CounterDescriptor()),
                    ts, pb.TrackEvent.TYPE_COUNTER, counter_value=sum(self.live.values()))

    def malloc(self, ts, dur, ptr, size, site=None, result=0, tid=TID, **args):
        self.call("cudaMalloc", ts, dur, tid=tid, site=site, result=result,
                  ptr=0 if result else ptr, bytes=size, **args)
        if not result:
            self.live[ptr] = size
            self._device_bytes(ts + dur)

    def pools_reserved(self, ts, size):
        """A value of the collector's counter of the pools' reserve (their latest answers)."""
        self._event(self._track("pools", name=self.vocab.text("track", "pool_reserved"),
                                counter=pb.CounterDescriptor()),
                    ts, pb.TrackEvent.TYPE_COUNTER, counter_value=size)

    def free(self, ts, dur, ptr, site=None, tid=TID):
        self.call("cudaFree", ts, dur, tid=tid, site=site, ptr=ptr)
        if self.live.pop(ptr, None) is not None:
            self._device_bytes(ts + dur)

    def copy(self, fn, ts, dur, kind, size, dst, src, site=None):
        stream = {"stream": STREAM} if "Async" in fn else {}
        self.call(fn, ts, dur, site=site, bytes=size, kind=kind, ptr=dst, src=src, **stream)

    def launch(self, ts, dur, site=None):
        self.call("cudaLaunchKernel", ts, dur, site=site, kernel="step_kernel", grid="128x1x1",
                  block="256x1x1", stream=STREAM)

    def pin(self, how, size=64 * MIB, ts=FIRST + 2 * US):
        """Host memory at HOST pinned by `how` (cudaMallocHost, cudaHostAlloc,
        cudaHostRegister), before the calls at FIRST + OFFSET."""
        self.call(how, ts, 1 * US, ptr=HOST, bytes=size)

    # -- the process track, the libraries track, the GPU --

    def versions(self, runtime, driver, devices=1):
        self.instant(self.uuid, "versions", T0, runtime_version=runtime, driver_version=driver,
                     device_count=devices)

    def device(self, name, capability):
        self.instant(self.uuid, "device", T0, device=0, name=name, compute_capability=capability)

    def libraries_instant(self, event_id, ts=T0 + MS, **args):
        track = self._track("libraries", name=self.vocab.text("track", "libraries"))
        self.instant(track, event_id, ts, **args)

    def library(self, realpath, family, version, path=None, ts=T0 + MS, **args):
        """A CUDA-stack file mapped (the inventory's cuda.library instant)."""
        self.libraries_instant("library", ts, path=path or realpath, realpath=realpath,
                               family=family, soname=os.path.basename(realpath), version=version,
                               build_id="5d1f0c2a", size=4 * MIB, order=0, **args)

    def load(self, realpath, requested_as, requested_by, found_via, ts=T0 + MS, **args):
        """The loader's account of a load (the preload's view)."""
        self.libraries_instant("library_load", ts, requested_as=requested_as,
                               requested_by=requested_by, seen_by="seen_by_preload",
                               how="how_dlopen", found_via=found_via, path=realpath,
                               realpath=realpath, **args)

    def failed_load(self, requested_as, requested_by, searched, error, seen_by="seen_by_preload",
                    **more):
        self.libraries_instant("library_failed", requested_as=requested_as,
                               requested_by=requested_by, seen_by=seen_by,
                               how="how_dlopen", searched=":".join(searched), error=error,
                               **more)

    def query(self, requested_as, requested_by):
        """An RTLD_NOLOAD dlopen of a name not loaded (only the preload sees the mode)."""
        self.libraries_instant("library_query", requested_as=requested_as,
                               requested_by=requested_by, seen_by="seen_by_preload",
                               how="how_dlopen")

    def gpu(self, ts, dur, name="step_kernel", stream=7):
        """A kernel as the GPU ran it, on the stream's GPU track."""
        track = self._track(("gpu", stream),
                            name=self.vocab.text("track", "gpu_stream").replace("%u", "0", 1)
                            .replace("%u", str(stream), 1))
        self.slice(track, name, ts, dur, gpu_kind="gpu_kind_kernel", correlation=1)

    def cupti(self, state, why="", ts=T0 + MS):
        reason = {"library" if state == "cupti_active" else "reason": why}
        self.instant(self.uuid, "cupti", ts, state=state, cupti_version=26, cupti_result=0,
                     **reason)

    def gpu_totals(self, dropped):
        self.instant(self.uuid, "gpu_totals", self.end, kernels=0, memcpys=0, memsets=0,
                     syncs=0, memory_operations=0, cupti_dropped=dropped, unmapped=0,
                     clock_samples=2, clock_reading_error_ns=0, clock_drift_ns=0)

    def write(self, write_trace):
        """Ends the process at self.end and writes the trace, checked on the way."""
        self.instant(self.uuid, "end", self.end, calls=0, collector_cpu_ns=0,
                     collector_max_rss_kb=0, dropped=0, process_start_ns=T0, exit="exit_normal")
        path = write_trace(self.packets)
        decoded = perfetto_check.parse(path.read_bytes())
        trace_vocabulary.check(decoded, self.vocab)
        assert decoded.events[0]["name"] == self.vocab.text("event", "trace_format")
        return path


@pytest.fixture(scope="module")
def trace_format(repo_root):
    with open(os.path.join(repo_root, "include", "cudatrace", "trace_names.h")) as f:
        return int(re.search(r"^#define CT_TRACE_FORMAT (\d+)$", f.read(), re.M).group(1))


@pytest.fixture
def new_trace(trace_vocabulary, trace_format):
    """new_trace(pid=PID, wall=WALL) -> a ProcessTrace to add facts to."""
    return lambda **kw: ProcessTrace(trace_vocabulary, trace_format, **kw)


@pytest.fixture
def findings(build_dir, write_trace, tmp_path):
    """findings(*traces, **thresholds) -> the report's findings of the traces, each written to
    its own file; several are read as one job, from their directory."""

    def run(*traces, **thresholds):
        paths = [t.write(write_trace) for t in traces]
        options = [arg for name, value in thresholds.items()
                   for arg in ("--threshold", f"{name}={value}")]
        target = tmp_path if len(paths) > 1 else paths[0]
        report = cudatrace_cmd.report(build_dir, *options, target, quiet=True,
                                      timeout=REPORT_TIMEOUT_S)
        assert len(report["processes"]) == len(traces)
        return report["findings"]

    return run


def ids(found):
    return sorted(f["id"] for f in found)


def the(found, finding_id, severity, pid=PID, also=()):
    """The one finding `finding_id` among `found`, which holds nothing else but `also`."""
    assert ids(found) == sorted([finding_id, *also]), [f["message"] for f in found]
    f = next(f for f in found if f["id"] == finding_id)
    assert (f["severity"], f["pid"]) == (severity, pid)
    return f


def realpaths(f):
    return [lib["realpath"] for lib in f["evidence"]["libraries"]]


def sites(f):
    return [(s["site"], s["calls"], s["ns"], s["bytes"], s["share"])
            for s in f["evidence"]["sites"]]


def numbers(f, *keys):
    return {k: f["evidence"][k] for k in keys}


def step(i, n, wall=WALL):
    """The start of the i-th of n calls spread over the run after the first call."""
    return FIRST + OFFSET + i * ((wall - OFFSET) // n)


# --------------------------------------------------------------------------
# Library findings


@pytest.mark.finding("duplicate-library")
def test_duplicate_library(new_trace, findings):
    t = new_trace()
    t.library(CUDART, "cudart", "13.0")
    t.library("/usr/local/cuda-12.4/lib64/libcudart.so.12", "cudart", "12.4")
    f = the(findings(t), "duplicate-library", "error")
    assert realpaths(f) == [CUDART, "/usr/local/cuda-12.4/lib64/libcudart.so.12"]
    assert [lib["version"] for lib in f["evidence"]["libraries"]] == ["13.0", "12.4"]
    assert f["message"].startswith("2 copies of libcudart are loaded in one process")


@pytest.mark.twin("duplicate-library")
def test_duplicate_library_twin_one_file_under_two_names(new_trace, findings):
    t = new_trace()
    t.library(CUDART, "cudart", "13.0")
    t.library(CUDART, "cudart", "13.0", path=f"{SITE_PACKAGES}/torch/lib/libcudart.so.13")
    assert findings(t) == []


@pytest.mark.twin("duplicate-library")
def test_duplicate_library_needs_both_mapped_at_once(new_trace, findings):
    t = new_trace()
    other = "/usr/local/cuda-12.4/lib64/libcudart.so.12"
    t.library(other, "cudart", "12.4")
    t.load(other, "libcudart.so.12", TORCH, "via_cache", ts=T0 + 1 * MS)
    t.libraries_instant("library_unload", T0 + 2 * MS, path=other, realpath=other)
    t.library(CUDART, "cudart", "13.0", ts=T0 + 3 * MS)
    t.load(CUDART, "libcudart.so.13", TORCH, "via_runpath", ts=T0 + 3 * MS)
    assert findings(t) == []


CUDNN_MISSING = ("libcudnn.so.9", [f"{SITE_PACKAGES}/torch/lib", SYSTEM_LIB],
                 "libcudnn.so.9: cannot open shared object file: No such file or directory")


@pytest.mark.finding("library-load-failed")
@pytest.mark.parametrize("attempts", [1, 3])
def test_library_load_failed(new_trace, findings, attempts):
    t = new_trace()
    name, searched, error = CUDNN_MISSING
    for _ in range(attempts):  # a loop retrying the load fails the same way: one entry
        t.failed_load(name, TORCH, searched, error)
    f = the(findings(t), "library-load-failed", "error")
    assert f["evidence"]["failed_loads"] == [{
        "requested_as": name, "requested_by": TORCH, "error": error, "searched": searched,
        "seen_by": t.value("seen_by_preload"), "attempts": attempts,
        "missing": [], "other_majors": [], "rolled_back": []}]
    assert f"searched {':'.join(searched)}" in f["message"]


@pytest.mark.finding("library-load-failed")
@pytest.mark.parametrize("other_majors, fix", [
    ("/opt/cuda/lib/libcufft.so.12", " Other majors of them are installed "
     "(/opt/cuda/lib/libcufft.so.12): install the ones it was built for, or a build made for "
     "these."),
    ("", " Install them, or put their directory on the asking library's RUNPATH or on "
     "LD_LIBRARY_PATH."),
])
def test_library_load_failed_names_every_missing_dependency(new_trace, findings, other_majors,
                                                            fix):
    """Names that do not follow the CUDA major (cuFFT 11 is CUDA 12's) say
    which majors are installed without naming CUDA releases."""
    t = new_trace()
    name, searched = "libcufft.so.11", [SYSTEM_LIB]
    error = f"{name}: cannot open shared object file: No such file or directory"
    t.failed_load(name, TORCH, searched, error, missing="libcufft.so.11:libcurand.so.9",
                  other_majors=other_majors)
    f = the(findings(t), "library-load-failed", "error")
    assert f["message"] == (
        f"{name} could not be loaded (asked for by {TORCH}): {error}; searched {SYSTEM_LIB}. "
        f"{TORCH} needs 2 libraries that cannot be found (the loader stops at the first): "
        f"libcufft.so.11, libcurand.so.9.{fix}")
    (load,) = f["evidence"]["failed_loads"]
    assert (load["missing"], load["other_majors"]) == (
        ["libcufft.so.11", "libcurand.so.9"], [other_majors] if other_majors else [])


@pytest.mark.twin("library-load-failed")
@pytest.mark.parametrize("twin, expected", [
    ("the requester got the library under another name", []),
    ("another object got the library", ["library-load-failed"]),
    ("the failure is the driver's", ["driver-missing"]),
])
def test_library_load_failed_twins(new_trace, findings, twin, expected):
    """A name that failed is a probe when its requester got the same library by another
    name (cuDNN asks for libcudnn_graph.so.9.19.0 before .9); the library being mapped
    for someone else does not answer this requester."""
    t = new_trace()
    name, searched, error = CUDNN_MISSING
    if twin == "the failure is the driver's":
        t.failed_load("libcuda.so.1", CUDART, searched, error)
    else:
        t.failed_load(name + ".19.0", TORCH, searched, error)
        cudnn = f"{WHEEL_CUDNN}/libcudnn.so.9"
        t.library(cudnn, "cudnn", "9.19.0")
        got_by = TORCH if twin == "the requester got the library under another name" else CUDART
        t.load(cudnn, name, got_by, "via_runpath")
    assert ids(findings(t)) == expected


@pytest.mark.parametrize("searches, failed", [(1, []), (2, [1])])
def test_library_load_failed_not_for_an_audited_query(new_trace, findings, searches, failed):
    """The audit module sees an RTLD_NOLOAD query of a name not loaded as a failed search
    of it; each query the preload saw takes one back. A load of the name that also failed
    is left, with its own attempts."""
    t = new_trace()
    name, searched, error = CUDNN_MISSING
    t.query(name, TORCH)
    for _ in range(searches):
        t.failed_load(name, TORCH, searched, error, seen_by="seen_by_audit")
    found = findings(t)
    assert [f["evidence"]["failed_loads"][0]["attempts"] for f in found] == failed
    assert ids(found) == ["library-load-failed"] * len(failed)


SYSTEM_CUDNN = f"{SYSTEM_LIB}/libcudnn.so.9.1.0"
RUNPATH_CUDNN = f"{WHEEL_CUDNN}/libcudnn.so.9.19.0"


def shadowing(t, found_via="via_library_path", runpath_copy=RUNPATH_CUDNN):
    t.library(SYSTEM_CUDNN, "cudnn", "9.1.0")
    copy = {"runpath_copy": runpath_copy} if runpath_copy else {}
    t.load(SYSTEM_CUDNN, "libcudnn.so.9", TORCH, found_via, **copy)


@pytest.mark.finding("shadowed-library")
def test_shadowed_library(new_trace, findings):
    t = new_trace()
    shadowing(t)
    f = the(findings(t), "shadowed-library", "warning")
    assert f["evidence"]["runpath_copy"] == RUNPATH_CUDNN
    (lib,) = f["evidence"]["libraries"]
    assert (lib["realpath"], lib["found_via"], lib["requested_by"]) == (
        SYSTEM_CUDNN, t.value("via_library_path"), TORCH)
    assert f"{RUNPATH_CUDNN} (9.19.0), which was not used" in f["message"]


@pytest.mark.twin("shadowed-library")
@pytest.mark.parametrize("found_via, runpath_copy", [
    ("via_library_path", None),  # the requester's own dirs hold no other copy
    ("via_runpath", RUNPATH_CUDNN),
])
def test_shadowed_library_twins(new_trace, findings, found_via, runpath_copy):
    t = new_trace()
    shadowing(t, found_via, runpath_copy)
    assert findings(t) == []


FALLBACK_CUDNN = f"{SYSTEM_LIB}/libcudnn.so.9.19.0"
EXPECTED_DIRS = f"{SITE_PACKAGES}/torch/lib/../../nvidia/cudnn/lib"


@pytest.mark.finding("fallback-resolution")
@pytest.mark.parametrize("pin, severity", [
    (None, "warning"),  # no wheel pins a version
    ("9.26.0.51", "error"),  # the wheel pins another version than the one taken
    ("9.19", "warning"),  # it pins this one, in fewer parts
])
def test_fallback_resolution(new_trace, findings, pin, severity):
    t = new_trace()
    t.library(FALLBACK_CUDNN, "cudnn", "9.19.0")
    wheel = {"expected_version": pin, "expected_package": "nvidia-cudnn-cu13",
             "expected_by": "torch 2.9.0"} if pin else {}
    t.load(FALLBACK_CUDNN, "libcudnn.so.9", TORCH, "via_cache", expected_dirs=EXPECTED_DIRS,
           **wheel)
    f = the(findings(t), "fallback-resolution", severity)
    (lib,) = f["evidence"]["libraries"]
    assert (lib["realpath"], lib["expected_dirs"], lib["expected_version"],
            lib["expected_by"]) == (FALLBACK_CUDNN, EXPECTED_DIRS, pin or "",
                                    "torch 2.9.0" if pin else "")
    assert f"expects it in {EXPECTED_DIRS}" in f["message"]


@pytest.mark.twin("fallback-resolution")
def test_fallback_resolution_twin_found_where_expected(new_trace, findings):
    t = new_trace()
    t.library(FALLBACK_CUDNN, "cudnn", "9.19.0")
    t.load(FALLBACK_CUDNN, "libcudnn.so.9", TORCH, "via_cache")
    assert findings(t) == []


# Each case: the libraries (file, family, version, built_for_cuda), the runtime version the
# process reported, which of them the evidence names (in order), and the one library the
# healthy twin has instead of the first.
VERSION_MISMATCHES = {
    "cudnn sub-library of another major": (
        [(f"{WHEEL_CUDNN}/libcudnn_ops.so.8", "cudnn_ops", "8.9.7", 0),
         (f"{WHEEL_CUDNN}/libcudnn.so.9", "cudnn", "9.19.0", 0)], None, [0, 1],
        (f"{WHEEL_CUDNN}/libcudnn_ops.so.9", "cudnn_ops", "9.19.0", 0)),
    "cublas of another major than the runtime": (
        [(f"{SITE_PACKAGES}/nvidia/cublas/lib/libcublas.so.12", "cublas", "12.4.5", 0),
         (CUDART, "cudart", "13.0", 0)], None, [0, 1],
        (f"{SITE_PACKAGES}/nvidia/cublas/lib/libcublas.so.13", "cublas", "13.1.0", 0)),
    "cudnn built for another CUDA": (
        [(f"{WHEEL_CUDNN}/libcudnn.so.9", "cudnn", "9.19.0", 12)], 13000, [0],
        (f"{WHEEL_CUDNN}/libcudnn.so.9", "cudnn", "9.19.0", 13)),
}


def mapped(t, libs, runtime):
    if runtime:
        t.versions(runtime, runtime)
    for realpath, family, version, built_for in libs:
        t.library(realpath, family, version, **({"built_for_cuda": built_for} if built_for
                                                 else {}))


@pytest.mark.finding("version-mismatch")
@pytest.mark.parametrize("case", VERSION_MISMATCHES)
def test_version_mismatch(new_trace, findings, case):
    libs, runtime, named, _ = VERSION_MISMATCHES[case]
    t = new_trace()
    mapped(t, libs, runtime)
    f = the(findings(t), "version-mismatch", "error")
    assert realpaths(f) == [libs[i][0] for i in named]
    assert f["evidence"].get("runtime_version") == runtime


@pytest.mark.twin("version-mismatch")
@pytest.mark.parametrize("case", VERSION_MISMATCHES)
def test_version_mismatch_twin_one_release(new_trace, findings, case):
    libs, runtime, _, healthy = VERSION_MISMATCHES[case]
    t = new_trace()
    mapped(t, [healthy, *libs[1:]], runtime)
    assert findings(t) == []


OLD_TOOLKIT_CUDART = "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127"


def toolkit_case(t, realpath, found_via):
    t.libraries_instant("toolkit", home="/usr/local/cuda", root="/usr/local/cuda-13.0",
                        version="13.0")
    t.library(realpath, "cudart", "12.4")
    t.load(realpath, "libcudart.so.12", TORCH, found_via)


@pytest.mark.finding("toolkit-mismatch")
def test_toolkit_mismatch(new_trace, findings):
    t = new_trace()
    toolkit_case(t, OLD_TOOLKIT_CUDART, "via_cache")
    f = the(findings(t), "toolkit-mismatch", "warning")
    assert realpaths(f) == [OLD_TOOLKIT_CUDART]
    assert f["evidence"]["libraries"][0]["found_via"] == t.value("via_cache")
    assert "in CUDA 12.4" in f["message"]
    assert "the toolkit in use is CUDA 13.0 (/usr/local/cuda-13.0)" in f["message"]


@pytest.mark.twin("toolkit-mismatch")
@pytest.mark.parametrize("realpath, found_via", [
    ("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.48", "via_cache"),
    (OLD_TOOLKIT_CUDART, "via_runpath"),  # asked for by that path, not found by the cache
])
def test_toolkit_mismatch_twins(new_trace, findings, realpath, found_via):
    t = new_trace()
    toolkit_case(t, realpath, found_via)
    assert findings(t) == []


KERNEL_LIBRARY = "/opt/app/lib/libkernels.so"


def kernel_launch(t, missing_archs=None):
    """A launch; with `missing_archs`, one that failed with no code for this GPU (209), which
    the collector follows with its cuda.no_kernel_image instant."""
    t.device("NVIDIA H200", "9.0")
    failed = missing_archs is not None
    t.call("cudaLaunchKernel", FIRST, 5 * US, result=209 if failed else 0, kernel="vecAdd",
           grid="1x1x1", block="32x1x1", stream=0)
    if failed:
        t.libraries_instant("no_kernel_image", FIRST + 5 * US, kernel="vecAdd(float*, int)",
                            library=KERNEL_LIBRARY, archs=missing_archs)


@pytest.mark.finding("no-kernel-image")
@pytest.mark.parametrize("archs, listed", [("sm_80,sm_86", ["sm_80", "sm_86"]), ("", [])])
def test_no_kernel_image(new_trace, findings, archs, listed):
    t = new_trace()
    kernel_launch(t, archs)
    f = the(findings(t), "no-kernel-image", "error")
    assert numbers(f, "kernel", "library", "library_archs", "compute_capability") == {
        "kernel": "vecAdd(float*, int)", "library": KERNEL_LIBRARY, "library_archs": listed,
        "compute_capability": "9.0"}
    assert "has no code for NVIDIA H200 (compute capability 9.0)" in f["message"]


@pytest.mark.twin("no-kernel-image")
def test_no_kernel_image_twin_launch_ran(new_trace, findings):
    t = new_trace()
    kernel_launch(t)
    assert findings(t) == []


# --------------------------------------------------------------------------
# Driver findings

STUB = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so"
REAL_DRIVER = f"{SYSTEM_LIB}/libcuda.so.580.65.06"


def driver_calls(t, result, count=2):
    for i in range(count):
        t.call("cudaGetDeviceCount", step(i, count), 1 * US, result=result,
               **({} if result else {"count": 1}))


@pytest.mark.finding("stub-driver")
@pytest.mark.parametrize("libcuda, result, failed_calls", [
    (STUB, 0, None),  # the stub is mapped
    (None, 34, 3),  # calls failed with cudaErrorStubLibrary
])
def test_stub_driver(new_trace, findings, libcuda, result, failed_calls):
    t = new_trace()
    if libcuda:
        t.library(libcuda, "cuda", "")
    driver_calls(t, result, 3)
    f = the(findings(t), "stub-driver", "error")
    assert f["evidence"].get("failed_calls") == failed_calls
    assert [lib["realpath"] for lib in f["evidence"].get("libraries", [])] == (
        [libcuda] if libcuda else [])


@pytest.mark.twin("stub-driver")
def test_stub_driver_twin_the_real_driver(new_trace, findings):
    t = new_trace()
    t.library(REAL_DRIVER, "cuda", "580.65.06")
    driver_calls(t, 0, 3)
    assert findings(t) == []


def missing_driver_lookup(t):
    t.failed_load("libcuda.so.1", CUDART, [SYSTEM_LIB, "/lib"],
                  "libcuda.so.1: cannot open shared object file: No such file or directory")


@pytest.mark.finding("driver-missing")
def test_driver_missing_calls_fail(new_trace, findings):
    t = new_trace()
    t.versions(13000, 0, devices=0)
    driver_calls(t, 35)
    f = the(findings(t), "driver-missing", "error")
    assert numbers(f, "failed_calls", "runtime_version", "driver_version") == {
        "failed_calls": 2, "runtime_version": 13000, "driver_version": 0}
    assert "libcuda.so.1 was never loaded" in f["message"]
    assert "; 2 calls failed with cudaErrorInsufficientDriver." in f["message"]


@pytest.mark.finding("driver-missing")
@pytest.mark.parametrize("calls, seen", [
    (0, "no call into a shared CUDA runtime was seen (a runtime linked statically into the "
        "program or a framework is not hooked)"),
    (3, "none of the 3 CUDA runtime calls seen failed with cudaErrorInsufficientDriver"),
])
def test_driver_missing_libcuda_not_found(new_trace, findings, calls, seen):
    """What the calls showed is said as it is: a count of zero failed calls where none was
    seen would read as if they had succeeded."""
    t = new_trace()
    t.versions(13000, 0, devices=0)
    missing_driver_lookup(t)
    for k in range(calls):
        t.call("cudaRuntimeGetVersion", FIRST + k * US, US)
    f = the(findings(t), "driver-missing", "error")
    (load,) = f["evidence"]["failed_loads"]
    assert (load["requested_as"], load["searched"]) == ("libcuda.so.1", [SYSTEM_LIB, "/lib"])
    assert f"(looked for by {CUDART}; searched {SYSTEM_LIB}:/lib); {seen}. Install" in f["message"]


@pytest.mark.twin("driver-missing")
@pytest.mark.parametrize("twin", ["the calls succeed", "libcuda.so.1 was not looked for"])
def test_driver_missing_twins(new_trace, findings, twin):
    t = new_trace()
    t.versions(13000, 0, devices=0)
    if twin == "the calls succeed":
        driver_calls(t, 0)
    assert findings(t) == []


@pytest.mark.twin("driver-missing")
def test_no_driver_missing_for_a_probe_while_a_driver_is_reported(new_trace, findings):
    """A library looking for libcuda.so.1 in vain while the runtime reports a driver."""
    t = new_trace()
    t.versions(13000, 13000)
    missing_driver_lookup(t)
    assert findings(t) == []


@pytest.mark.finding("driver-too-old")
def test_driver_too_old(new_trace, findings):
    t = new_trace()
    t.versions(13000, 12040)
    driver_calls(t, 35)
    f = the(findings(t), "driver-too-old", "error")
    assert numbers(f, "failed_calls", "runtime_version", "driver_version") == {
        "failed_calls": 2, "runtime_version": 13000, "driver_version": 12040}
    assert "the driver supports CUDA 12.4 but the runtime needs 13.0" in f["message"]


@pytest.mark.twin("driver-too-old")
@pytest.mark.parametrize("driver, result", [
    (13000, 35),  # the driver is new enough
    (12040, 0),  # it is older, and nothing failed for it
])
def test_driver_too_old_twins(new_trace, findings, driver, result):
    t = new_trace()
    t.versions(13000, driver)
    driver_calls(t, result)
    assert findings(t) == []


# --------------------------------------------------------------------------
# Usage findings


def launches(t, count, dur, sited=(SITE_A,) * 3 + (SITE_B,) * 2):
    """`count` launches of `dur` spread over the run; the first ones carry the sampled sites."""
    t.first_call()
    for i in range(count):
        t.launch(step(i, count), dur, site=sited[i] if i < len(sited) else None)


@pytest.mark.finding("launch-overhead")
@pytest.mark.twin("launch-overhead")
@pytest.mark.parametrize("count, dur, thresholds, fires", [
    (20, 100 * US, {}, True),  # 0.2 of the run, 2000 launches/s
    (20, 70 * US, {}, False),  # 0.14 of the run
    (5, 400 * US, {}, False),  # 0.2 of the run, 500 launches/s
    (20, 100 * US, {"launch_share": 0.2}, True),  # at the share
    (20, 100 * US, {"launch_share": 0.25}, False),
    (20, 100 * US, {"launch_rate": 2500}, False),
])
def test_launch_overhead(new_trace, findings, count, dur, thresholds, fires):
    t = new_trace()
    launches(t, count, dur)
    found = findings(t, **thresholds)
    if not fires:
        assert found == []
        return
    f = the(found, "launch-overhead", "warning")
    assert numbers(f, "share_of_wall", "launches", "launches_per_s", "mean_launch_ns",
                   "sampled_launch_sites") == {
        "share_of_wall": count * dur / WALL, "launches": count,
        "launches_per_s": count / (WALL / 1e9), "mean_launch_ns": dur,
        "sampled_launch_sites": 5}
    assert "mean_kernel_ns" not in f["evidence"]
    assert sites(f) == [(SITE_A, 3, 3 * dur, 0, 0.6), (SITE_B, 2, 2 * dur, 0, 0.4)]


@pytest.mark.finding("launch-overhead")
def test_launch_overhead_with_gpu_timings_compares_the_kernels(new_trace, findings):
    t = new_trace()
    launches(t, 20, 100 * US)
    for i in range(20):
        t.gpu(step(i, 20) + 100 * US, 20 * US)
    f = the(findings(t), "launch-overhead", "warning", also=["gpu-idle"])
    assert f["evidence"]["mean_kernel_ns"] == 20 * US
    assert "shorter than their launch" in f["message"]


# Calls that block the host, each as (function, annotations), and those that do not.
BLOCKING = {
    "cudaDeviceSynchronize": {},
    "cudaStreamSynchronize": {"stream": STREAM},
    "cudaEventSynchronize": {"event": EVENT},
    "cudaMemcpy": {"kind": "copy_device_to_host", "bytes": 4 * MIB, "ptr": HOST, "src": DEVICE},
    "cudaMemcpyAsync": {"kind": "copy_host_to_device", "bytes": 4 * MIB, "ptr": DEVICE,
                        "src": HOST, "stream": STREAM},  # from pageable memory
    "cudaFree": {"ptr": DEVICE},
}


def blocked(t, fn="cudaDeviceSynchronize", count=10, dur=300 * US, tid=TID, site=SITE_A):
    t.first_call()
    for i in range(count):
        t.call(fn, step(i, count), dur, tid=tid, site=site, **BLOCKING[fn])


@pytest.mark.finding("sync-stall")
@pytest.mark.parametrize("fn", BLOCKING)
def test_sync_stall(new_trace, findings, fn):
    t = new_trace()
    blocked(t, fn)
    also = ["pageable-memcpy"] if fn == "cudaMemcpyAsync" else []
    f = the(findings(t), "sync-stall", "warning", also=also)
    assert numbers(f, "tid", "share_of_wall", "sync_calls", "sync_ns") == {
        "tid": TID, "share_of_wall": 10 * 300 * US / WALL, "sync_calls": 10,
        "sync_ns": 10 * 300 * US}
    assert sites(f) == [(SITE_A, 10, 10 * 300 * US, 10 * BLOCKING[fn].get("bytes", 0), 1.0)]


@pytest.mark.twin("sync-stall")
@pytest.mark.parametrize("twin", ["async copy from pinned memory", "async device copy"])
def test_sync_stall_twin_calls_that_do_not_block(new_trace, findings, twin):
    t = new_trace()
    t.first_call()
    pinned = twin == "async copy from pinned memory"
    if pinned:
        t.pin("cudaMallocHost")
    kind = "copy_host_to_device" if pinned else "copy_device_to_device"
    for i in range(10):
        t.copy("cudaMemcpyAsync", step(i, 10), 300 * US, kind, 4 * MIB, DEVICE,
               HOST if pinned else DEVICE + 4 * MIB)
    assert findings(t) == []


@pytest.mark.finding("sync-stall")
@pytest.mark.twin("sync-stall")
@pytest.mark.parametrize("count, dur, thresholds, fires", [
    (10, 200 * US, {}, True),  # 0.2 of the run, at the share
    (9, 300 * US, {}, False),  # one call short
    (10, 150 * US, {}, False),  # 0.15 of the run
    (10, 300 * US, {"sync_share": 0.35}, False),
    (10, 300 * US, {"sync_calls": 11}, False),
])
def test_sync_stall_thresholds(new_trace, findings, count, dur, thresholds, fires):
    t = new_trace()
    blocked(t, count=count, dur=dur)
    assert ids(findings(t, **thresholds)) == (["sync-stall"] if fires else [])


def test_sync_stall_counts_per_thread(new_trace, findings):
    t = new_trace()
    blocked(t, dur=300 * US)
    for i in range(10):
        t.call("cudaDeviceSynchronize", step(i, 10), 150 * US, tid=TID2, site=SITE_A)
    f = the(findings(t), "sync-stall", "warning")
    assert numbers(f, "tid", "sync_calls", "sync_ns") == {
        "tid": TID, "sync_calls": 10, "sync_ns": 3 * MS}
    assert sites(f) == [(SITE_A, 20, 4500 * US, 0, 1.0)]  # over all threads


@pytest.mark.twin("sync-stall")
@pytest.mark.parametrize("first, second", [
    ((10, 150 * US), (10, 150 * US)),  # 0.3 of the run in all, 0.15 on each thread
    ((9, 400 * US), (5, 10 * US)),  # 14 calls in all, 9 on the thread that waited
])
def test_sync_stall_twin_threads_that_wait_in_parallel(new_trace, findings, first, second):
    t = new_trace()
    blocked(t, count=first[0], dur=first[1])
    for i in range(second[0]):
        t.call("cudaDeviceSynchronize", step(i, second[0]), second[1], tid=TID2)
    assert findings(t) == []


@pytest.mark.finding("sync-stall")
@pytest.mark.twin("sync-stall")
@pytest.mark.parametrize("gpu_busy, fires", [(0.6, True), (0.8, False), (0.85, False)])
def test_sync_stall_quiet_when_the_gpu_is_the_bottleneck(new_trace, findings, gpu_busy, fires):
    t = new_trace()
    blocked(t)
    t.gpu(FIRST, int(gpu_busy * WALL))
    assert ids(findings(t)) == (["sync-stall"] if fires else [])


PAGEABLE_COPIES = {"to the device": ("copy_host_to_device", lambda i: (DEVICE, HOST + i * MIB)),
                   "to the host": ("copy_device_to_host", lambda i: (HOST + i * MIB, DEVICE))}


def async_copies(t, direction="to the device", count=10, pin=None, unpin=None):
    """`count` async copies of 1 MiB (20 us each) between the device and HOST, which `pin`
    pins first and `unpin` releases again."""
    t.first_call()
    if pin:
        t.pin(pin)
    if unpin:
        t.call(unpin, FIRST + 5 * US, 1 * US, ptr=HOST)
    kind, ends = PAGEABLE_COPIES[direction]
    for i in range(count):
        t.copy("cudaMemcpyAsync", step(i, count), 20 * US, kind, MIB, *ends(i), site=SITE_A)


@pytest.mark.finding("pageable-memcpy")
@pytest.mark.parametrize("direction", PAGEABLE_COPIES)
@pytest.mark.parametrize("pin, unpin", [(None, None), ("cudaMallocHost", "cudaFreeHost"),
                                        ("cudaHostRegister", "cudaHostUnregister")])
def test_pageable_memcpy(new_trace, findings, direction, pin, unpin):
    t = new_trace()
    async_copies(t, direction, pin=pin, unpin=unpin)
    f = the(findings(t), "pageable-memcpy", "warning")
    assert numbers(f, "copies", "bytes", "ns") == {"copies": 10, "bytes": 10 * MIB,
                                                   "ns": 200 * US}
    assert sites(f) == [(SITE_A, 10, 200 * US, 10 * MIB, 1.0)]


@pytest.mark.twin("pageable-memcpy")
@pytest.mark.parametrize("direction", PAGEABLE_COPIES)
@pytest.mark.parametrize("pin", ["cudaMallocHost", "cudaHostAlloc", "cudaHostRegister"])
def test_pageable_memcpy_twin_pinned(new_trace, findings, direction, pin):
    t = new_trace()
    async_copies(t, direction, pin=pin)
    assert findings(t) == []


@pytest.mark.twin("pageable-memcpy")
@pytest.mark.parametrize("count, thresholds", [(9, {}), (10, {"pageable_copies": 11})])
def test_pageable_memcpy_below_the_count(new_trace, findings, count, thresholds):
    t = new_trace()
    async_copies(t, count=count)
    assert findings(t, **thresholds) == []


def small_copies(t, count=100, size=4, wall=S // 2, kind="copy_host_to_device"):
    """`count` synchronous copies of `size` bytes, 2 us each, spread over the run."""
    t.first_call()
    for i in range(count):
        t.copy("cudaMemcpy", step(i, count, wall), 2 * US, kind, size, DEVICE, HOST,
               site=SITE_A if i % 4 else SITE_B)


@pytest.mark.finding("small-copy-storm")
def test_small_copy_storm(new_trace, findings):
    t = new_trace(wall=S // 2)
    small_copies(t)
    f = the(findings(t), "small-copy-storm", "warning")
    assert numbers(f, "copies", "copies_per_s", "bytes") == {
        "copies": 100, "copies_per_s": 100 / ((S // 2) / 1e9), "bytes": 400}
    assert sites(f) == [(SITE_A, 75, 150 * US, 300, 0.75), (SITE_B, 25, 50 * US, 100, 0.25)]


@pytest.mark.finding("small-copy-storm")
@pytest.mark.twin("small-copy-storm")
@pytest.mark.parametrize("facts, thresholds, fires", [
    ({"size": 65535}, {}, True),  # just under small_copy_bytes
    ({"size": 65536}, {}, False),
    ({"kind": "copy_device_to_host"}, {}, True),
    ({"kind": "copy_device_to_device"}, {}, False),  # not host<->device
    ({"count": 99}, {}, False),
    ({"count": 100, "wall": 2 * S}, {}, False),  # 50 a second
    ({}, {"small_copy_rate": 250}, False),
    ({}, {"small_copy_count": 101}, False),
    ({"size": 65536}, {"small_copy_bytes": 65537}, True),
])
def test_small_copy_storm_thresholds(new_trace, findings, facts, thresholds, fires):
    t = new_trace(wall=facts.get("wall", S // 2))
    small_copies(t, **facts)
    assert ids(findings(t, **thresholds)) == (["small-copy-storm"] if fires else [])


@pytest.mark.twin("small-copy-storm")
def test_small_copy_storm_not_at_exactly_the_rate(new_trace, findings):
    t = new_trace(wall=S)
    small_copies(t, wall=S)  # 100 copies in 1 s
    assert findings(t) == []


def memory_levels(t, levels):
    """Live device memory that sits at levels[k] through the k-th of the 8 periods the rule
    cuts the run into: the run's 256 low-point spans of 1 us each, period k from span 32k,
    where a block of levels[k] bytes replaces the one before; the last one again at span 255,
    so that all 256 spans are used. The blocks made after the first period carry SITE_GROW."""
    t.first_call()
    start = FIRST + OFFSET  # the first allocation's end: where the spans begin
    for k, span in enumerate([32 * k for k in range(8)] + [255]):
        at = start + span * US
        t.malloc(at - 50, 50, DEVICE + k * 512 * MIB, levels[min(k, 7)],
                 site=SITE_GROW if k else SITE_A)
        if k:
            t.free(at + 100, 100, DEVICE + (k - 1) * 512 * MIB)


RISING = [(k + 1) * MIB for k in range(8)]


@pytest.mark.finding("memory-growth")
def test_memory_growth(new_trace, findings):
    t = new_trace()
    memory_levels(t, RISING)
    f = the(findings(t), "memory-growth", "warning")
    assert numbers(f, "low_first_bytes", "low_last_bytes", "bytes_per_s", "peak_bytes") == {
        "low_first_bytes": MIB, "low_last_bytes": 8 * MIB,
        # from the start of span 31, the last at the first level, to the end at 256 us
        "bytes_per_s": 7 * MIB / (225 * US / 1e9),
        "peak_bytes": 16 * MIB}
    assert sites(f) == [(SITE_GROW, 1, 0, 8 * MIB, 1.0)]  # the one block still live


@pytest.mark.twin("memory-growth")
def test_memory_growth_twin_given_back_by_the_end(new_trace, findings):
    """The same rise, then the last block freed before the run ends: a working set that rose
    and fell (threads that each hold a buffer while they run), not a leak."""
    t = new_trace()
    memory_levels(t, RISING)
    t.free(FIRST + OFFSET + 255 * US + 500, 100, DEVICE + 8 * 512 * MIB)
    assert findings(t) == []


def test_memory_growth_sites_a_leak_begun_in_the_first_period(new_trace, findings):
    """A model of 8 MiB, then a leak of 1 MiB every 32 us from span 24 on, three quarters into
    the first period by time, and the model freed at exit. The first period's level is the
    model's; every leaked block is a site, the one made inside the first period too (the rise
    began with span 23, the last at that level before the level reached the last period's),
    and the exit's free, which takes the level under the first, does not move that."""
    t = new_trace()
    t.first_call()
    start = FIRST + OFFSET
    t.malloc(start - 50, 50, DEVICE, 8 * MIB, site=SITE_A)
    for j in range(8):
        t.malloc(start + (24 + 32 * j) * US - 50, 50, DEVICE + (j + 1) * 512 * MIB, MIB,
                 site=SITE_GROW)
    t.free(start + 255 * US, 100, DEVICE)
    f = the(findings(t), "memory-growth", "warning")
    assert numbers(f, "low_first_bytes", "low_last_bytes") == {
        "low_first_bytes": 8 * MIB, "low_last_bytes": 15 * MIB}
    assert sites(f) == [(SITE_GROW, 8, 0, 8 * MIB, 1.0)]


def mib(*levels):
    return [int(level * MIB) for level in levels]


@pytest.mark.finding("memory-growth")
@pytest.mark.twin("memory-growth")
@pytest.mark.parametrize("levels, thresholds, fires", [
    (mib(1, 2, 3, 2.5, 4, 5, 6, 7), {}, True),  # one dip: 6 of 7 steps rise
    (mib(1, 2, 1.5, 3, 2.5, 4, 5, 6), {}, False),  # two dips
    (mib(1, 5, 5, 5, 5, 5, 5, 5), {}, True),  # rises, then holds
    (mib(4, 4, 4, 4, 4, 4, 4, 4), {}, False),  # a pool made up front
    (mib(*(1 + k / 10 for k in range(8))), {}, False),  # 0.7 MiB, under growth_bytes
    (mib(*(1 + k / 10 for k in range(8))), {"growth_bytes": 700_000}, True),
    (mib(*range(201, 209)), {}, False),  # 7 MiB of a 416 MiB peak, under growth_share
    (mib(*range(201, 209)), {"growth_share": 0.01}, True),
])
def test_memory_growth_thresholds(new_trace, findings, levels, thresholds, fires):
    t = new_trace()
    memory_levels(t, levels)
    assert ids(findings(t, **thresholds)) == (["memory-growth"] if fires else [])


def test_memory_growth_holds_then_rises(new_trace, findings):
    t = new_trace()
    memory_levels(t, mib(1, 1, 1, 1, 1, 1, 1, 9))
    the(findings(t), "memory-growth", "warning")


def fast_allocations(t, then_launches):
    """64 blocks of 1 MiB allocated in the first 64 us of a 10 ms run and never freed, then
    `then_launches` launches spread over the rest of it, and a last synchronisation."""
    t.first_call()
    at = FIRST + OFFSET
    for k in range(64):
        t.malloc(at + k * US, US // 2, DEVICE + k * MIB, MIB, site=SITE_GROW)
    for k in range(then_launches):
        t.launch(at + 100 * US + k * ((WALL - 200 * US) // then_launches), US)
    t.call("cudaDeviceSynchronize", FIRST + WALL - 10 * US, US)


@pytest.mark.finding("memory-growth")
def test_memory_growth_fast(new_trace, findings):
    """A leak that runs in microseconds: all but one call of the run are its allocations, though
    they take 1% of its time. By time the level holds from the first period on; by calls made
    it rises through all of them."""
    t = new_trace()
    fast_allocations(t, 0)
    f = the(findings(t), "memory-growth", "warning")
    e = numbers(f, "low_first_bytes", "low_last_bytes", "peak_bytes")
    assert e["peak_bytes"] == 64 * MIB
    assert e["low_first_bytes"] <= 16 * MIB and e["low_last_bytes"] >= 48 * MIB, e
    # The blocks made after the periods left out, the first of the eight by calls made (where
    # a job makes its model and pools) and the one counted from: about 3/4 of them.
    ((site, calls, _, size, share),) = sites(f)
    assert (site, size, share) == (SITE_GROW, calls * MIB, 1.0) and 40 <= calls <= 56


@pytest.mark.twin("memory-growth")
def test_memory_growth_fast_twin_a_pool_made_up_front(new_trace, findings):
    """The same allocations, then the work that uses them: 640 launches at the level they left,
    which is flat by time and by calls made."""
    t = new_trace()
    fast_allocations(t, 640)
    assert findings(t) == []


LIVE_BLOCKS = [(8 * MIB, SITE_A), (4 * MIB, SITE_B), (2 * MIB, SITE_GROW), (1 * MIB, SITE_SLOW)]


def out_of_memory(t, *failures):
    """The LIVE_BLOCKS allocated back to back, then allocations failing with each of
    `failures`: (bytes, cudaError)."""
    t.first_call()
    at = FIRST + OFFSET
    for i, (size, site) in enumerate(LIVE_BLOCKS):
        t.malloc(at + i * 200, 100, DEVICE + i * 64 * MIB, size, site=site)
    for i, (size, result) in enumerate(failures):
        t.malloc(at + 1000 + i * 200, 100, 0, size, site=SITE_OOM, result=result)


@pytest.mark.finding("oom")
@pytest.mark.parametrize("failures", [[(64 * MIB, 2)], [(64 * MIB, 2), (128 * MIB, 2)]])
def test_oom(new_trace, findings, failures):
    t = new_trace()
    out_of_memory(t, *failures)
    f = the(findings(t), "oom", "error")
    assert numbers(f, "requested_bytes", "live_bytes", "peak_bytes", "site") == {
        "requested_bytes": 64 * MIB, "live_bytes": 15 * MIB, "peak_bytes": 15 * MIB,
        "site": SITE_OOM}  # the first failure's
    assert sites(f) == [(site, 1, 0, size, size / (15 * MIB)) for size, site in LIVE_BLOCKS[:3]]


def test_oom_names_the_live_bytes_by_source(new_trace, findings):
    """The LIVE_BLOCKS (15 MiB the program allocated), 4 MiB more that NCCL allocated (its
    stack's innermost frame outside the runtime is libnccl's), the pools' reserve asked at
    24 MiB before the failure and 0 after it: the evidence has each source at the failure."""
    t = new_trace()
    out_of_memory(t)
    at = FIRST + OFFSET
    t.malloc(at + 800, 100, DEVICE + 8 * 64 * MIB, 4 * MIB, site=SITE_B,
             stack="cudaMalloc (libcudart.so.13)\nncclMemAlloc (libnccl.so.2)\nmain (prog)")
    t.pools_reserved(at + 900, 24 * MIB)
    t.malloc(at + 1000, 100, 0, 64 * MIB, site=SITE_OOM, result=2)
    t.pools_reserved(at + 2000, 0)
    f = the(findings(t), "oom", "error")
    assert numbers(f, "live_bytes", "live_allocations_bytes", "live_vmm_bytes",
                   "pools_reserved_bytes", "by_library") == {
        "live_bytes": 19 * MIB, "live_allocations_bytes": 19 * MIB, "live_vmm_bytes": 0,
        "pools_reserved_bytes": 24 * MIB,
        "by_library": [{"library": "nccl", "live_bytes": 4 * MIB}]}
    assert ("with 19.00 MiB live (peak 19.00 MiB): 19.00 MiB from allocations, 0 B physical "
            "memory of the virtual-memory API; the pools held 24.00 MiB when last asked; nccl "
            "held 4.00 MiB; largest live block from " + SITE_A) in f["message"]


def test_oom_without_pools_or_libraries_names_neither(new_trace, findings):
    t = new_trace()
    out_of_memory(t, (64 * MIB, 2))
    f = the(findings(t), "oom", "error")
    assert "pools_reserved_bytes" not in f["evidence"] and f["evidence"]["by_library"] == []
    assert "the pools held" not in f["message"] and " held " not in f["message"]


@pytest.mark.parametrize("written", ["in time order", "second thread first"])
def test_oom_live_bytes_when_threads_share_an_address(new_trace, findings, written):
    """Thread A allocates 1 MiB at an address and frees it; thread B gets the address back for
    2 MiB; then thread C's allocation fails. A collector that drained B's ring first writes B's
    sequence first: the live memory at the failure is B's 2 MiB whatever the order written."""
    t = new_trace()
    t.first_call()
    at = FIRST + OFFSET
    a = lambda: (t.malloc(at, 100, DEVICE, MIB, site=SITE_A, tid=TID + 1),
                 t.free(at + 1000, 50, DEVICE, tid=TID + 1))
    b = lambda: t.malloc(at + 1100, 100, DEVICE, 2 * MIB, site=SITE_B, tid=TID + 2)
    for write in ((a, b) if written == "in time order" else (b, a)):
        write()
    t.malloc(at + 2000, 100, 0, 64 * MIB, site=SITE_OOM, result=2, tid=TID + 3)
    f = the(findings(t), "oom", "error")
    assert numbers(f, "requested_bytes", "live_bytes", "peak_bytes") == {
        "requested_bytes": 64 * MIB, "live_bytes": 2 * MIB, "peak_bytes": 2 * MIB}
    assert sites(f) == [(SITE_B, 1, 0, 2 * MIB, 1.0)]


@pytest.mark.twin("oom")
def test_oom_twin_another_error(new_trace, findings):
    t = new_trace()
    out_of_memory(t, (64 * MIB, 1))
    assert findings(t) == []


def allocations(t, fast_ns, slow_ns, slow, fast=10):
    """`fast` allocations and `slow` slow ones, each freed at once; frees take fast_ns."""
    t.first_call()
    durations = [fast_ns] * fast + [slow_ns] * slow
    for i, dur in enumerate(durations):
        at = step(i, len(durations), 50 * MS)
        t.malloc(at, dur, DEVICE + i * MIB, 4 * KIB, site=SITE_SLOW if dur == slow_ns else SITE_A)
        t.free(at + dur + 10 * US, fast_ns, DEVICE + i * MIB, site=SITE_B)


# -- hang: a thread still inside a CUDA call at the end --------------------------------------

HANG_WALL = 90 * S  # a run killed 90 s into a sync that never returned


def stuck_sync(t, in_flight=True, tid=TID):
    """A cudaDeviceSynchronize from FIRST + OFFSET to the end of the run, marked in flight
    (never returned) or, for the twin, returned just then."""
    t.first_call()
    since = FIRST + OFFSET
    args = {"in_flight": 1} if in_flight else {}
    if in_flight:
        t.slice(t.thread(tid), t.vocab.text("function", "cudaDeviceSynchronize"), since,
                t.end - since, **args)
    else:
        t.call("cudaDeviceSynchronize", since, t.end - since, tid=tid)
    return t.end - since


@pytest.mark.finding("hang")
@pytest.mark.parametrize("wall, thresholds", [(HANG_WALL, {}), (2 * S, {"hang_ns": 1 * S})])
def test_hang(new_trace, findings, wall, thresholds):
    t = new_trace(wall=wall)
    inside = stuck_sync(t)
    f = the(findings(t, **thresholds), "hang", "error")
    assert numbers(f, "tid", "inside_ns", "since_ns", "threshold_ns") == {
        "tid": TID, "inside_ns": inside, "since_ns": FIRST + OFFSET,
        "threshold_ns": thresholds.get("hang_ns", 60 * S)}
    assert f"thread {TID} was inside cudaDeviceSynchronize for" in f["message"]


@pytest.mark.twin("hang")
@pytest.mark.parametrize("wall, in_flight, thresholds", [
    (2 * S, True, {}),  # in flight at the end, but for under a minute: a crash, not a hang
    (HANG_WALL, False, {}),  # as long, but it returned
    (2 * S, True, {"hang_ns": 3 * S}),
])
def test_hang_twins(new_trace, findings, wall, in_flight, thresholds):
    t = new_trace(wall=wall)
    stuck_sync(t, in_flight)
    assert "hang" not in ids(findings(t, **thresholds))


def ranks_stuck(new_trace, stuck):
    """One process per entry of `stuck`: those True are stuck in a cudaDeviceSynchronize at the
    end, killed after HANG_WALL; the others made the same call and returned. Also how long the
    stuck were inside it."""
    ranks = []
    for i, is_stuck in enumerate(stuck):
        rank = new_trace(pid=PID + i, wall=HANG_WALL)
        inside = stuck_sync(rank, in_flight=is_stuck)
        ranks.append(rank)
    return ranks, inside


@pytest.mark.finding("hang-missing")
def test_hang_missing_names_the_rank_the_others_wait_for(new_trace, findings):
    ranks, inside = ranks_stuck(new_trace, [True, True, False, True])
    found = findings(*ranks)
    assert ids(found) == ["hang", "hang", "hang", "hang-missing"]
    f = the([x for x in found if x["id"] == "hang-missing"], "hang-missing", "error", pid=PID + 2)
    assert f["evidence"] == {"stuck": 3, "processes": 4, "longest_ns": inside}
    assert f["message"].startswith(
        f"pid {PID + 2} was not inside a CUDA call when its trace ended, while 3 of the 4 "
        f"processes were stuck in one (the longest, pid {PID}, for {inside / 1e9:.1f} s)")


@pytest.mark.twin("hang-missing")
@pytest.mark.parametrize("stuck", [
    [True, True, True],  # all stuck: nothing says which is missing
    [True, False, False],  # one stuck: its own hang, not a job's
    [True, True, False, False],  # half
])
def test_hang_missing_twins(new_trace, findings, stuck):
    found = findings(*ranks_stuck(new_trace, stuck)[0])
    assert ids(found) == ["hang"] * sum(stuck)


def flow_launch(t, ts, flow, stream, kernel, site):
    """A launch whose GPU work carries flow `flow` (CUPTI's correlation under the pid)."""
    args = {"result": 0, "kernel": kernel, "grid": "1x1x1", "block": "32x1x1", "stream": stream,
            "site": site}
    track = t.thread(TID2)
    t._event(track, ts, pb.TrackEvent.TYPE_SLICE_BEGIN,
             t.vocab.text("function", "cudaLaunchKernel"), args, flow_ids=[PID << 32 | flow])
    t._event(track, ts + 500, pb.TrackEvent.TYPE_SLICE_END)


def flow_kernel(t, ts, flow, stream_id, kernel):
    """That launch's kernel as the GPU ran it, on its stream's GPU track."""
    track = t._track(("gpu", stream_id), name=t.vocab.text("track", "gpu_stream")
                     .replace("%u", "0", 1).replace("%u", str(stream_id), 1))
    t._event(track, ts, pb.TrackEvent.TYPE_SLICE_BEGIN, kernel,
             {"gpu_kind": "gpu_kind_kernel", "correlation": flow, "stream": stream_id},
             terminating_flow_ids=[PID << 32 | flow])
    t._event(track, ts + 200, pb.TrackEvent.TYPE_SLICE_END)


HANDLE_A, HANDLE_B = 0x5000A, 0x5000B


@pytest.mark.parametrize("completed, dropped", [(False, 0), (True, 0), (False, 5)])
def test_hang_names_the_gpu_work_never_completed(new_trace, findings, completed, dropped):
    """Stream handle A's work runs as CUPTI's stream 7 (flow 1 completes); flows 2 and 3 on A
    and 4 on B never complete when `completed` is False; flow 5, launched after the sync
    began, is not what it waits for. The twin completes them all. Records CUPTI dropped
    make the unfinished work uncertain, which the message says."""
    t = new_trace(wall=HANG_WALL)
    if dropped:
        t.gpu_totals(dropped)
    t.first_call()
    at = FIRST + 2 * US  # the launches, 1 us apart, before the sync at FIRST + OFFSET
    flow_launch(t, at, 1, HANDLE_A, "warmup_kernel", "train.py:80 in warmup")
    flow_kernel(t, at + 600, 1, 7, "warmup_kernel")
    flow_launch(t, at + 1 * US, 2, HANDLE_A, "ncclDevKernel_AllReduce", "train.py:88 in step")
    flow_launch(t, at + 2 * US, 3, HANDLE_A, "ncclDevKernel_AllReduce", "train.py:89 in step")
    flow_launch(t, at + 3 * US, 4, HANDLE_B, "loss_kernel", "train.py:90 in step")
    if completed:
        for flow, stream in ((2, 7), (3, 7), (4, 8)):
            flow_kernel(t, at + 4 * US + flow * US, flow, stream, "k")
    stuck_sync(t)
    flow_launch(t, FIRST + OFFSET + 1 * MS, 5, HANDLE_B, "late_kernel", "train.py:99 in log")
    f = the(findings(t), "hang", "error", also=["gpu-idle"])  # the GPU idle while it waits
    if completed:
        assert "On the GPU" not in f["message"] and "unfinished_launches" not in f["evidence"]
        return
    assert f["message"].endswith(
        ". On the GPU, stream 7: 2 launched and not completed; the first, "
        "ncclDevKernel_AllReduce, launched at train.py:88 in step; stream 0x5000b: 1 launched "
        "and not completed; the first, loss_kernel, launched at train.py:90 in step"
        + (f" (CUPTI dropped {dropped} records: some of this work may have completed)"
           if dropped else "")), f["message"]
    assert numbers(f, "unfinished_launches", "unfinished_streams") == {
        "unfinished_launches": 3, "unfinished_streams": 2}


@pytest.mark.finding("slow-alloc")
@pytest.mark.twin("slow-alloc")
@pytest.mark.parametrize("fast_ns, slow_ns, slow, thresholds, threshold_ns", [
    (50 * US, 2 * MS, 3, {}, 1 * MS),  # over 1 ms and 10x the 50 us median
    (50 * US, 2 * MS, 2, {}, None),  # two calls
    (50 * US, 2 * MS, 2, {"slow_alloc_calls": 2}, 1 * MS),
    (50 * US, 900 * US, 3, {}, None),  # under 1 ms
    (50 * US, 900 * US, 3, {"slow_alloc_ns": 800 * US}, 800 * US),
    (200 * US, 1500 * US, 3, {}, None),  # under 10x the 200 us median
    (200 * US, 1500 * US, 3, {"slow_alloc_factor": 5}, 1 * MS),
])
def test_slow_alloc(new_trace, findings, fast_ns, slow_ns, slow, thresholds, threshold_ns):
    t = new_trace(wall=50 * MS)
    allocations(t, fast_ns, slow_ns, slow)
    found = findings(t, **thresholds)
    if threshold_ns is None:
        assert found == []
        return
    f = the(found, "slow-alloc", "warning")
    assert numbers(f, "slow_calls", "worst_ns", "median_ns", "threshold_ns") == {
        "slow_calls": slow, "worst_ns": slow_ns, "median_ns": fast_ns,
        "threshold_ns": threshold_ns}
    assert sites(f) == [(SITE_SLOW, slow, slow * slow_ns, 0, 1.0)]


GPU_WALL = 10_240 * US  # 160 spans of 64 us: the gaps fall on span edges


def gpu_gaps(t, busy, host_waits=False):
    """The first call, then a kernel from +2048 us lasting `busy`; with `host_waits`, a sync
    that blocks the host from the kernel's end to the end of the run."""
    t.first_call()
    t.gpu(FIRST + 2048 * US, busy)
    if host_waits:
        t.call("cudaDeviceSynchronize", FIRST + 2048 * US + busy, GPU_WALL - 2048 * US - busy)


@pytest.mark.finding("gpu-idle")
@pytest.mark.parametrize("host_waits, outside, doing", [
    (False, 1.0, "(input pipeline or host compute?)"),
    (True, 0.0, "(waiting in synchronising calls)"),
])
def test_gpu_idle(new_trace, findings, host_waits, outside, doing):
    """One kernel: the idle time before it (start-up) and after it (the end) are no gaps of the
    work, said apart with what the host did then."""
    t = new_trace(wall=GPU_WALL)
    busy = 3072 * US
    gpu_gaps(t, busy, host_waits)
    f = the(findings(t), "gpu-idle", "warning")
    end = FIRST + 2048 * US + busy
    assert numbers(f, "idle_share", "busy_ns", "before_first_work_ns",
                   "before_first_host_outside_cuda", "after_last_work_ns",
                   "after_last_host_outside_cuda") == {
        "idle_share": 1 - busy / GPU_WALL, "busy_ns": busy,
        "before_first_work_ns": 2048 * US,
        "before_first_host_outside_cuda": 1 - 1 * US / (2048 * US),  # the first call, 1 us of it
        "after_last_work_ns": FIRST + GPU_WALL - end, "after_last_host_outside_cuda": outside}
    assert "gap_1_ns" not in f["evidence"]
    parts = f["message"].split("; ")
    assert parts[1].startswith("before the first GPU work: 2.048 ms at +0 ns")
    assert parts[2].startswith("after the last: ") and parts[2].endswith(doing)


@pytest.mark.finding("gpu-idle")
@pytest.mark.twin("gpu-idle")
@pytest.mark.parametrize("busy, thresholds, fires", [
    (5120 * US, {}, True),  # idle half the run, at the share
    (6144 * US, {}, False),  # idle 0.4 of it
    (3072 * US, {"gpu_idle_share": 0.8}, False),
])
def test_gpu_idle_thresholds(new_trace, findings, busy, thresholds, fires):
    t = new_trace(wall=GPU_WALL)
    gpu_gaps(t, busy)
    assert ids(findings(t, **thresholds)) == (["gpu-idle"] if fires else [])


@pytest.mark.twin("gpu-idle")
def test_gpu_idle_twin_no_gpu_timings(new_trace, findings):
    t = new_trace(wall=GPU_WALL)
    t.first_call()
    assert findings(t) == []


# --------------------------------------------------------------------------
# CUPTI


@pytest.mark.finding("cupti-unavailable")
def test_cupti_unavailable(new_trace, findings):
    t = new_trace()
    t.versions(13000, 13000)
    t.cupti("cupti_unavailable", "no libcupti.so.13 found")
    f = the(findings(t), "cupti-unavailable", "info")
    assert f["evidence"] == {}
    assert "CUPTI was not used (no libcupti.so.13 found)" in f["message"]


@pytest.mark.twin("cupti-unavailable")
@pytest.mark.parametrize("twin, expected", [
    ("no GPU", []),
    ("CUPTI active", []),
    ("a driver finding explains it", ["driver-missing"]),
])
def test_cupti_unavailable_twins(new_trace, findings, twin, expected):
    t = new_trace()
    t.versions(13000, 0 if twin == "a driver finding explains it" else 13000)
    if twin == "a driver finding explains it":
        driver_calls(t, 35)
    state = {"no GPU": "cupti_no_gpu", "CUPTI active": "cupti_active"}.get(
        twin, "cupti_unavailable")
    t.cupti(state, "no libcupti.so.13 found")
    assert ids(findings(t)) == expected


@pytest.mark.finding("cupti-yielded")
@pytest.mark.twin("cupti-yielded")
@pytest.mark.parametrize("state, fires", [("cupti_yielded", True), ("cupti_active", False)])
def test_cupti_yielded(new_trace, findings, state, fires):
    t = new_trace()
    t.cupti(state, "the program subscribed to CUPTI (torch.profiler)", ts=FIRST + 4 * MS)
    found = findings(t)
    if fires:
        f = the(found, "cupti-yielded", "info")
        assert f["message"] == ("GPU timings cover only the start of the run: the program "
                                "subscribed to CUPTI (torch.profiler)")
    else:
        assert found == []


@pytest.mark.finding("cupti-dropped")
@pytest.mark.twin("cupti-dropped")
@pytest.mark.parametrize("dropped", [42, 0])
def test_cupti_dropped(new_trace, findings, dropped):
    t = new_trace()
    t.cupti("cupti_active", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13")
    t.gpu_totals(dropped)
    found = findings(t)
    if dropped:
        assert the(found, "cupti-dropped", "warning")["evidence"] == {"dropped": dropped}
    else:
        assert found == []


# --------------------------------------------------------------------------
# Across processes


@pytest.mark.finding("inconsistent-libraries")
@pytest.mark.twin("inconsistent-libraries")
@pytest.mark.parametrize("realpath, version, fires", [
    ("/usr/local/cuda-13.0/lib64/libcudart.so.13", "13.0", True),  # another file
    (CUDART, "13.1", True),  # the same path, another version
    (CUDART, "13.0", False),
])
def test_inconsistent_libraries(new_trace, findings, realpath, version, fires):
    ranks = [new_trace(pid=PID + i) for i in range(3)]
    for rank, (path, v) in zip(ranks, [(CUDART, "13.0"), (CUDART, "13.0"), (realpath, version)]):
        rank.library(path, "cudart", v)
    found = findings(*ranks)
    if not fires:
        assert found == []
        return
    f = the(found, "inconsistent-libraries", "warning", pid=PID + 2)
    assert [(lib["realpath"], lib["version"]) for lib in f["evidence"]["libraries"]] == [
        (CUDART, "13.0"), (realpath, version)]
    assert f"pid {PID} {CUDART} (13.0), pid {PID + 2} {realpath} ({version})" in f["message"]


def ranks_waiting(new_trace, waits_ms):
    """One process per wait: each waits that long in one cudaDeviceSynchronize."""
    ranks = []
    for i, wait in enumerate(waits_ms):
        rank = new_trace(pid=PID + i, wall=(wait + 1) * MS)
        rank.call("cudaDeviceSynchronize", FIRST, wait * MS)
        ranks.append(rank)
    return ranks


@pytest.mark.finding("straggler")
def test_straggler(new_trace, findings):
    f = the(findings(*ranks_waiting(new_trace, [10, 12, 200])), "straggler", "warning",
            pid=PID + 2)
    assert f["evidence"] == {}
    assert f["message"].startswith(
        f"pid {PID + 2} waited 200.0 ms in synchronising calls (1 calls), 18.2x the other "
        "processes' median of 11.0 ms")


@pytest.mark.finding("straggler")
@pytest.mark.twin("straggler")
@pytest.mark.parametrize("waits_ms, fires", [
    ([10, 200], False),  # two processes: either could be the odd one
    ([10, 12, 60], False),  # 49 ms longer
    ([10, 12, 61], True),  # 50 ms longer
    ([100, 100, 190], False),  # 1.9x
])
def test_straggler_thresholds(new_trace, findings, waits_ms, fires):
    found = findings(*ranks_waiting(new_trace, waits_ms))
    assert ids(found) == (["straggler"] if fires else [])


@pytest.mark.twin("straggler")
def test_straggler_not_at_exactly_twice(new_trace, findings):
    assert findings(*ranks_waiting(new_trace, [60, 60, 120])) == []

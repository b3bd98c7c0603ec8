"""Tests of `build/cudatrace report [--json] TRACE...`, the trace summary command.

This file owns what the report says and how it fails:

* the JSON form (schema "cudatrace.report/1", docs/report-schema.md) against the trace it was
  made from (decoded independently by perfetto_check) and against the CPU double's ground truth
  (CT_DOUBLE_STATS): calls, errors and time per function, launches, synchronisation, device
  memory, versions, devices, drops, exit;
* the input formats it reads (zstd in any number of frames, plain protobuf, gzip in any number
  of members), several traces on one command line, and a trace whose tail was cut off;
* the text form's key lines;
* bad input and bad usage: a non-zero status, one "cudatrace: " line on stderr, nothing on
  stdout, no crash and no hang.

Traces come from the trace_run fixture (conftest.py, section "build fixtures"): the built
test programs run under the preload on the CPU double of the CUDA runtime.
"""

import collections
import gzip
import json
import os
import random
import re
import time
import zlib

import pytest
import zstandard

import cudatrace_cmd
import perfetto_check
import toolkit

SCHEMA = "cudatrace.report/1"
DEVICE_NAME = "cudatrace CPU double"
DOUBLE_RUNTIME_VERSION = 13000  # the double's cudaRuntimeGetVersion
DOUBLE_DRIVER_VERSION = 13000  # its cudaDriverGetVersion unless CT_DOUBLE_DRIVER_VERSION is set
DEVICE_COUNTER = "CUDA device memory (live bytes)"
SUMMARY = re.compile(r"cudatrace: trace (.+): (\d+) calls recorded, (\d+) dropped, (\d+) bytes")
MS = 1_000_000
GZIP_WBITS = 16 + zlib.MAX_WBITS

# The function sets docs/report-schema.md names, spelled out here rather than taken from the
# families in functions.h, so a family put on the wrong function shows as a failure.
SYNC_FUNCTIONS = ("cudaDeviceSynchronize", "cudaStreamSynchronize",
                  "cudaStreamSynchronize_ptsz", "cudaEventSynchronize")
DEVICE_ALLOCS = ("cudaMalloc", "cudaMallocManaged", "cudaMallocPitch", "cudaMallocAsync",
                 "cudaMallocAsync_ptsz")
DEVICE_FREES = ("cudaFree", "cudaFreeAsync", "cudaFreeAsync_ptsz")
KERNEL_LAUNCHERS = ("cudaLaunchKernel", "cudaLaunchKernel_ptsz", "__cudaLaunchKernel",
                    "__cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
                    "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel_ptsz")


# --------------------------------------------------------------------------
# Helpers


def trace_path(proc):
    return proc.run_dir / "trace.pftrace.zst"


def summary(stderr):
    """(path, calls, dropped, bytes) from the one summary line the preload prints at exit."""
    found = [m for m in map(SUMMARY.fullmatch, stderr.splitlines()) if m]
    assert len(found) == 1, f"expected one summary line on stderr, got:\n{stderr}"
    path, calls, dropped, size = found[0].groups()
    return path, int(calls), int(dropped), int(size)


def instants(trace, name):
    return [i for i in trace.instants if i["name"] == name]


def thread_totals(trace):
    """{function: (calls, errors, total_ns)} from the threads' cudatrace.calls instants."""
    totals = collections.defaultdict(lambda: (0, 0, 0))
    for i in instants(trace, "cudatrace.calls"):
        a = i["args"]
        c, e, t = totals[a["function"]]
        totals[a["function"]] = (c + a["calls"], e + a["errors"], t + a["total_ns"])
    return totals


def expected_from_trace(trace):
    """What docs/report-schema.md says the one process of `trace` reports, computed from the
    trace as perfetto_check decodes it (closed slices only; exit "unknown" without an end). A
    function whose slices were dropped is counted from the threads' own totals."""
    by_name = collections.defaultdict(list)
    for s in trace.slices:
        by_name[s["name"]].append(s)
    totals = thread_totals(trace)

    def ok(s):
        return s["args"]["result"] == 0

    def api_entry(name):
        found = by_name.get(name, [])
        calls, errors, total_ns = totals[name]
        if calls > len(found):
            return {"calls": calls, "errors": errors, "total_ns": total_ns,
                    "dropped_slices": calls - len(found)}
        return {"calls": len(found), "errors": sum(not ok(s) for s in found),
                "total_ns": sum(s["dur"] for s in found), "dropped_slices": 0}

    api = {name: api_entry(name) for name in set(by_name) | set(totals)}

    def total(names):
        return sum(api[n]["total_ns"] for n in names if n in api)

    def count(names, succeeded=True, failed=False):
        return sum((api[n]["calls"] - api[n]["errors"]) * succeeded + api[n]["errors"] * failed
                   for n in names if n in api)

    device = sorted(trace.counters.get(DEVICE_COUNTER, []), key=lambda tv: tv[0])
    versions = instants(trace, "cuda.versions")
    runtime = versions[0]["args"]["runtime_version"] if versions else 0
    driver = versions[0]["args"]["driver_version"] if versions else 0
    end = instants(trace, "cudatrace.end")
    return {
        "api": api,
        "launches": {"count": count(KERNEL_LAUNCHERS)},
        "sync": {"count": count(SYNC_FUNCTIONS, failed=True), "total_ns": total(SYNC_FUNCTIONS)},
        "memory": {
            "peak_bytes": int(max((v for _, v in device), default=0)),
            "final_bytes": int(device[-1][1]) if device else 0,
            "allocs": count(DEVICE_ALLOCS),
            "frees": count(DEVICE_FREES),
            "failed_allocs": count(DEVICE_ALLOCS, succeeded=False, failed=True),
            "late_events": end[0]["args"].get("memory_events_late", 0) if end else 0,
            "by_source": {"allocations": {"peak_bytes": int(max((v for _, v in device), default=0)),
                                          "final_bytes": int(device[-1][1]) if device else 0},
                          "vmm": {"peak_bytes": 0, "final_bytes": 0},
                          "graphs": {"peak_bytes": 0, "final_bytes": 0}},
            # the programs allocate for themselves, and no NVML is loaded
            "by_library": [], "nvml": [], "pools": pool_figures(by_name),
        },
        "versions": {"runtime": runtime if runtime > 0 else None,
                     "driver": driver if driver > 0 else None},
        "devices": [i["args"]["name"] for i in instants(trace, "cuda.device")],
        "dropped_events": end[0]["args"]["dropped"] if end else 0,
        "exit": end[0]["args"]["exit"] if end else "unknown",
    }


def assert_matches_trace(process, trace):
    """Every field of a reported process that the trace alone determines, exactly."""
    expected = expected_from_trace(trace)
    assert {k: process[k] for k in expected} == expected
    (pid,) = trace.processes
    assert process["pid"] == pid
    assert process["cmdline"] == trace.processes[pid]["cmdline"]
    # The library inventory is the trace's cuda.library instants, in order; a
    # runtime's version is what its own API reported (cuda.library.version),
    # and how each was requested and found is the first cuda.library.load of
    # its file (the preload's loader view: no audit module here).
    api = {i["args"]["realpath"]: i["args"]["api_version"]
           for i in instants(trace, "cuda.library.version")}
    loads = {}
    for i in instants(trace, "cuda.library.load"):
        assert i["args"]["seen_by"] == "preload"
        loads.setdefault(i["args"]["realpath"], i)

    def version(args):
        v = api.get(args["realpath"])
        return {"version": f"{v // 1000}.{v % 1000 // 10}", "version_from": "api"} if v else {
            "version": args["version"], "version_from": args["version_from"]}

    def loader(args):
        load = loads[args["realpath"]]
        return {**{k: load["args"][k] for k in ("requested_as", "requested_by", "found_via",
                                                "seen_by")},
                "loaded_ns": load["ts"], "unloaded_ns": None, "rolled_back_by": None}

    assert process["libraries"] == [
        {**{k: i["args"][k] for k in ("path", "realpath", "family", "soname")},
         **version(i["args"]), **loader(i["args"]),
         "build_id": i["args"]["build_id"], "size": i["args"]["size"]}
        for i in sorted(instants(trace, "cuda.library"), key=lambda i: i["args"]["order"])]
    assert [(f["requested_as"], f["requested_by"], f["error"], ":".join(f["searched"]))
            for f in process["failed_loads"]] == [
        tuple(i["args"][k] for k in ("requested_as", "requested_by", "error", "searched"))
        for i in instants(trace, "cuda.library.failed")]


def pool_figures(by_name):
    """What the pools held as the trace's reads of ReservedMemCurrent (5) said, each pool's
    latest reading summed in time order, and the trims."""
    reads = sorted((s for s in by_name.get("cudaMemPoolGetAttribute", [])
                    if s["args"]["result"] == 0 and s["args"].get("attribute") == 5),
                   key=lambda s: s["ts"] + s["dur"])
    latest, peak = {}, 0
    for s in reads:
        latest[s["args"]["handle"]] = s["args"]["value"]
        peak = max(peak, sum(latest.values()))
    trims = sum(s["args"]["result"] == 0 for s in by_name.get("cudaMemPoolTrimTo", []))
    return {"readings": len(reads), "pools": len(latest), "trims": trims,
            "reserved_peak_bytes": peak, "reserved_final_bytes": sum(latest.values())}


def truth_counts(truth, names, key="calls"):
    return sum(truth[key].get(n, 0) for n in names)


def assert_matches_truth(process, truth, hooked):
    """The reported process against the double's own statistics."""
    called = {n for n in hooked if truth["calls"].get(n, 0) > 0}
    assert set(process["api"]) == called
    assert ({n: (s["calls"], s["errors"]) for n, s in process["api"].items()}
            == {n: (truth["calls"][n], truth["errors"][n]) for n in called})
    assert process["launches"] == {"count": truth["launches"]}
    assert process["sync"]["count"] == truth_counts(truth, SYNC_FUNCTIONS)
    allocs = truth_counts(truth, DEVICE_ALLOCS)
    failed = truth_counts(truth, DEVICE_ALLOCS, "errors")
    frees = truth_counts(truth, DEVICE_FREES) - truth_counts(truth, DEVICE_FREES, "errors")
    assert process["memory"] == {
        "peak_bytes": truth["peak_device_bytes"], "final_bytes": truth["final_device_bytes"],
        "allocs": allocs - failed, "frees": frees, "failed_allocs": failed, "late_events": 0,
        "by_source": {"allocations": {"peak_bytes": truth["peak_device_bytes"],
                                      "final_bytes": truth["final_device_bytes"]},
                      "vmm": {"peak_bytes": 0, "final_bytes": 0},
                      "graphs": {"peak_bytes": 0, "final_bytes": 0}},
        "by_library": [], "nvml": [],
        # the double keeps no count of pool readings: the trace's check holds them
        "pools": process["memory"]["pools"]}


def varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def packet_ends(plain):
    """The offset just past each TracePacket of a plain trace, in order."""
    ends, i = [], 0
    while i < len(plain):
        assert plain[i] == 0x0A, f"byte {i}: not a Trace.packet field"
        size, i = perfetto_check.read_varint(plain, i + 1)
        i += size
        assert i <= len(plain), "the last packet runs past the end"
        ends.append(i)
    return ends


def new_zstd_decoder():
    return zstandard.ZstdDecompressor().decompressobj()


def new_gzip_decoder():
    return zlib.decompressobj(GZIP_WBITS)


def compressed_units(data, new_decoder):
    """[(compressed bytes, decompressed bytes)] of each zstd frame or gzip member of a
    complete file."""
    units = []
    while data:
        d = new_decoder()
        plain = d.decompress(data)
        assert d.eof, "the file ends inside a frame or member"
        units.append((data[:len(data) - len(d.unused_data)], plain))
        data = d.unused_data
    return units


def decodable(data, new_decoder):
    """Every byte a streaming decoder gets out of `data`, complete frames or members or not."""
    out = []
    while data:
        d = new_decoder()
        out.append(d.decompress(data))
        if not d.eof:
            break
        data = d.unused_data
    return b"".join(out)


def middle_packet_end(plain):
    """The packet boundary nearest the middle of a plain trace, neither end excluded."""
    ends = packet_ends(plain)[:-1]
    return min(ends, key=lambda e: abs(e - len(plain) // 2))


# --------------------------------------------------------------------------
# 1. The report agrees exactly with the trace and the ground truth


USAGE_FINDINGS = {"launch-overhead", "sync-stall", "pageable-memcpy", "small-copy-storm",
                  "memory-growth", "oom", "slow-alloc"}


@pytest.mark.parametrize("program, args, driver", [
    ("api_mix", [3], None),
    ("train_loop", [10], None),
    ("leak_loop", [20], 13020),  # a driver version unlike the runtime's, to tell them apart
])
def test_report_agrees_with_trace_and_truth(trace_run, program_truth, build_dir, hooked_functions,
                                            program, args, driver):
    assert set(SYNC_FUNCTIONS + DEVICE_ALLOCS + DEVICE_FREES + KERNEL_LAUNCHERS) <= set(
        hooked_functions)
    env = {"CT_DOUBLE_DRIVER_VERSION": driver} if driver else None
    started = time.monotonic_ns()
    proc, trace, _ = trace_run(program, *args, env=env)
    elapsed_ns = time.monotonic_ns() - started
    assert proc.returncode == 0, proc.stderr
    truth = program_truth(program, *args, env=env)

    report = cudatrace_cmd.report(build_dir, trace_path(proc), quiet=True)
    assert report["schema"] == SCHEMA
    assert report["trace"] == {"packets": len(trace.packets), "tail": "complete",
                               "unclosed_slices": 0}
    # The CUDA stack is healthy. (How the loops use it depends on timing here; the usage
    # findings have tests of their own, tests/test_report_usage_findings.py.)
    assert [f for f in report["findings"] if f["id"] not in USAGE_FINDINGS] == []
    assert len(report["processes"]) == 1
    process = report["processes"][0]

    assert process["pid"] == proc.pid
    assert process["cmdline"] == proc.args
    assert_matches_truth(process, truth, hooked_functions)
    assert_matches_trace(process, trace)  # total_ns per function and sync, among others
    assert process["versions"] == {"runtime": DOUBLE_RUNTIME_VERSION,
                                   "driver": driver or DOUBLE_DRIVER_VERSION}
    assert process["devices"] == [DEVICE_NAME]
    assert process["dropped_events"] == 0
    assert process["exit"] == "normal"

    # Wall time runs from the preload's start to the process's end: it covers every call the
    # trace holds, and fits in the time the whole run took as seen from here.
    first = min(s["ts"] for s in trace.slices)
    last = max(s["ts"] + s["dur"] for s in trace.slices)
    assert 0 < last - first <= process["wall_ns"] <= elapsed_ns


# --------------------------------------------------------------------------
# 2. Time in synchronisation


def test_sync_time_is_the_time_waited(trace_run, build_dir):
    steps, wait_ns = 5, 10 * MS
    # The double sleeps wait_ns in each cudaDeviceSynchronize, so no call is shorter; 15 ms
    # more per call is allowed because a loaded 2-core machine can be slow to wake a sleeper.
    tolerance_ns = 15 * MS
    proc, trace, truth = trace_run("leak_loop", steps, env={"CT_DOUBLE_SYNC_NS": wait_ns})
    assert proc.returncode == 0, proc.stderr
    process = cudatrace_cmd.report(build_dir, trace_path(proc), quiet=True)["processes"][0]
    assert truth["calls"]["cudaDeviceSynchronize"] == steps
    assert process["sync"]["count"] == steps
    assert steps * wait_ns <= process["sync"]["total_ns"] <= steps * (wait_ns + tolerance_ns)
    assert process["sync"]["total_ns"] == process["api"]["cudaDeviceSynchronize"]["total_ns"]
    assert process["sync"]["total_ns"] == sum(
        s["dur"] for s in trace.slices if s["name"] == "cudaDeviceSynchronize")


# --------------------------------------------------------------------------
# 3. Dropped records


def test_dropped_records_show(trace_run, program_truth, build_dir, hooked_functions):
    launches = 100000
    proc, trace, _ = trace_run("launch_loop", launches,
                               env={"CUDATRACE_RING_RECORDS": 64, "CUDATRACE_SPILL_MB": 0})
    assert proc.returncode == 0, proc.stderr
    issued = truth_counts(program_truth("launch_loop", launches), hooked_functions)
    assert issued == launches + 1  # launch_loop ends with one cudaDeviceSynchronize

    process = cudatrace_cmd.report(build_dir, trace_path(proc), quiet=True)["processes"][0]
    _, recorded, dropped, _ = summary(proc.stderr)
    assert process["dropped_events"] == dropped > 0
    assert recorded == len(trace.slices) and recorded + dropped == issued
    # The counts are whole (the threads' own totals); what the rings dropped
    # is the detail, said per function.
    assert {n: (s["calls"], s["dropped_slices"]) for n, s in process["api"].items()} == {
        "cudaLaunchKernel": (launches, launches - (recorded - 1)), "cudaDeviceSynchronize": (1, 0)}
    assert process["launches"]["count"] == launches
    assert process["tracer"]["calls_recorded"] == recorded
    assert_matches_trace(process, trace)


# --------------------------------------------------------------------------
# 4. The real runtime, without a driver


def test_real_runtime_without_driver(trace_run, build_dir):
    toolkit.no_driver()
    toolkit.cached("libcudart.so.13")  # the runtime the test programs are linked against
    proc, trace, _ = trace_run("driverless", double=False)
    assert proc.returncode == 3, proc.stderr  # driverless: some call failed
    process = cudatrace_cmd.report(build_dir, trace_path(proc), quiet=True)["processes"][0]

    runtime = instants(trace, "cuda.versions")[0]["args"]["runtime_version"]
    assert runtime == toolkit.RUNTIME_VERSION
    assert process["versions"] == {"runtime": runtime, "driver": None}
    assert process["devices"] == []
    # Each call the program printed ("name -> code") was made once, and every one failed.
    printed = [line.split(" -> ")[0] for line in proc.stdout.splitlines() if " -> " in line]
    assert {n: (s["calls"], s["errors"]) for n, s in process["api"].items()} == {
        n: (1, 1) for n in printed}
    assert process["launches"] == {"count": 0}
    assert process["sync"]["count"] == 1
    assert {k: process["memory"][k] for k in ("allocs", "frees", "failed_allocs")} == {
        "allocs": 0, "frees": 0, "failed_allocs": 1}
    assert process["exit"] == "normal"
    # The runtime looked for the driver and did not find it.
    (driver,) = process["failed_loads"]
    assert driver["requested_as"] == "libcuda.so.1"
    assert os.path.basename(driver["requested_by"]) == "libcudart.so.13"
    assert_matches_trace(process, trace)


# --------------------------------------------------------------------------
# 5. Input formats and several traces


def test_every_format_gives_the_same_report(trace_run, build_dir, tmp_path):
    proc, _, _ = trace_run("train_loop", 10)
    assert proc.returncode == 0, proc.stderr
    original = trace_path(proc).read_bytes()
    plain = b"".join(p for _, p in compressed_units(original, new_zstd_decoder))
    split = middle_packet_end(plain)
    ends = set(packet_ends(plain))
    # A point inside a packet, so the two zstd frames below split one.
    half = next(i for i in range(len(plain) // 2, len(plain)) if i not in ends)
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    variants = {
        "plain": plain,
        "gzip": gzip.compress(plain),
        "gzip-2-members": gzip.compress(plain[:split]) + gzip.compress(plain[split:]),
        "zstd-2-frames-mid-packet": (compressor.compress(plain[:half])
                                     + compressor.compress(plain[half:])),
    }

    expected = cudatrace_cmd.run(build_dir, "report", "--json", trace_path(proc), text=False)
    assert json.loads(expected.stdout)["trace"]["tail"] == "complete"
    for name, data in variants.items():
        path = tmp_path / f"trace.{name}"
        path.write_bytes(data)
        done = cudatrace_cmd.run(build_dir, "report", "--json", path, text=False, quiet=True)
        assert done.stdout == expected.stdout, name


def test_several_traces_report_each_process_in_order(trace_run, build_dir):
    """By job, host, rank and pid, whatever order the traces are given in: no launcher
    here, one host, so by pid."""
    runs = [trace_run("api_mix", 1), trace_run("leak_loop", 3)]
    for proc, _, _ in runs:
        assert proc.returncode == 0, proc.stderr
    paths = [trace_path(proc) for proc, _, _ in runs]
    alone = [cudatrace_cmd.report(build_dir, path, quiet=True) for path in paths]
    by_pid = sorted(range(2), key=lambda i: runs[i][0].pid)

    for order in ([0, 1], [1, 0]):
        both = cudatrace_cmd.report(build_dir, *(paths[i] for i in order), quiet=True)
        assert [p["pid"] for p in both["processes"]] == [runs[i][0].pid for i in by_pid]
        assert both["processes"] == [alone[i]["processes"][0] for i in by_pid]
        assert both["trace"] == {"packets": sum(r["trace"]["packets"] for r in alone),
                                 "tail": "complete", "unclosed_slices": 0}
    for (proc, trace, _), report in zip(runs, alone):
        assert_matches_trace(report["processes"][0], trace)


# --------------------------------------------------------------------------
# 6. The text form


def human_bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def test_text_report_shows_the_key_lines(trace_run, build_dir):
    steps = 10
    proc, _, truth = trace_run("train_loop", steps, env={"CT_DOUBLE_SYNC_NS": 2000000})
    assert proc.returncode == 0, proc.stderr
    done = cudatrace_cmd.run(build_dir, "report", trace_path(proc), text=False, quiet=True)
    lines = done.stdout.decode().splitlines()

    def one_line(pattern):
        found = [line for line in lines if re.fullmatch(pattern, line)]
        assert len(found) == 1, f"{len(found)} lines match {pattern!r} in:\n" + "\n".join(lines)

    launches = truth["launches"]
    assert launches == truth["calls"]["cudaLaunchKernel"] == steps * 201
    one_line(re.escape(f"process {proc.pid} {' '.join(proc.args)}"))
    one_line(rf"\s+cudaLaunchKernel\s+{launches}\s+0\s+\S+ \S+\s+\S+ \S+")
    one_line(rf"\s+launches\s+{launches}")
    allocs = truth["calls"]["cudaMalloc"]
    frees = truth["calls"]["cudaFree"]
    one_line(rf"\s+device memory\s+peak {re.escape(human_bytes(truth['peak_device_bytes']))}, "
             rf"final {re.escape(human_bytes(truth['final_device_bytes']))}, "
             rf"{allocs} allocs, {frees} frees, 0 failed")
    # The costliest finding first, then the line of the loop that causes it.
    one_line(r"\s+findings\s+warning sync-stall: the host waits on the GPU \d+% of the run .*")
    source = open(os.path.join(os.path.dirname(__file__), "..", "examples", "train_loop.c")).read()
    sync_line = next(n for n, text in enumerate(source.splitlines(), 1)
                     if "cudaDeviceSynchronize()" in text)
    one_line(rf"\s+at train_loop\.c:{sync_line} in main: \d+% \(10 calls, .*\)")


# --------------------------------------------------------------------------
# 7. Bad input and bad usage


def bad_inputs(tmp_path):
    """{case: argv after `cudatrace`} for each input the report must refuse."""
    rng = random.Random(20240607)
    noise = rng.randbytes(4096)
    assert noise[0] not in (0x0A, 0x1F, 0x28)  # not a plain, gzip or zstd start

    def file(name, data):
        path = tmp_path / name
        path.write_bytes(data)
        return path

    packets = perfetto_check.pb.Trace(packet=[
        perfetto_check.pb.TracePacket(timestamp=1, trusted_packet_sequence_id=1)
    ]).SerializeToString()
    (tmp_path / "dir").mkdir()
    return {
        "no trace file": ["report"],
        "only --json": ["report", "--json"],
        "unknown option": ["report", "--frobnicate", file("ok.pftrace", packets)],
        "missing file": ["report", tmp_path / "absent.pftrace"],
        "directory": ["report", tmp_path / "dir"],
        "empty file": ["report", file("empty", b"")],
        "random bytes": ["report", file("random", noise)],
        "0x0A then garbage": ["report", file("tag-then-garbage", b"\x0a" + noise[1:])],
        "zstd magic then garbage": ["report", file("bad-frame.zst",
                                                   perfetto_check.ZSTD_MAGIC + noise[4:])],
        "zstd frame of random data": ["report", file("random.zst",
                                                     zstandard.ZstdCompressor().compress(noise))],
        "zstd of hello": ["report", file("hello.zst",
                                         zstandard.ZstdCompressor().compress(b"hello"))],
        "gzip of hello": ["report", file("hello.gz", gzip.compress(b"hello"))],
        "packet of 2^40 bytes": ["report", "--json",
                                 file("huge.pftrace", b"\x0a" + varint(1 << 40) + noise)],
        "packet of 2^40 bytes after a good one": [
            "report", file("huge2.pftrace", packets + b"\x0a" + varint(1 << 40) + noise)],
        # An 11-byte varint is no protobuf varint at all (10 bytes hold 64 bits), and bytes
        # follow it: the file is malformed, not cut short.
        "packet length varint of 11 bytes": [
            "report", file("long-varint.pftrace",
                           packets + b"\x0a" + b"\xff" * 10 + b"\x01" + noise)],
        "a good trace, then a bad one": ["report", "--json", file("good.pftrace", packets),
                                         file("bad", noise)],
    }


BAD_CASES = ["no trace file", "only --json", "unknown option", "missing file", "directory",
             "empty file", "random bytes", "0x0A then garbage", "zstd magic then garbage",
             "zstd frame of random data", "zstd of hello", "gzip of hello",
             "packet of 2^40 bytes", "packet of 2^40 bytes after a good one",
             "packet length varint of 11 bytes",
             "a good trace, then a bad one"]


def assert_refused(done, what):
    assert 0 < done.returncode < 128, f"{what}: status {done.returncode}"
    assert done.stdout == b"", what
    lines = done.stderr.decode(errors="replace").splitlines()
    # An option getopt refused is followed by the usage lines.
    usage = lines[1:] and lines[1].startswith("usage: cudatrace report")
    assert (usage or len(lines) == 1) and lines[0].startswith("cudatrace: "), f"{what}: {lines}"


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_input_is_refused_in_one_line(build_dir, tmp_path, case):
    args = bad_inputs(tmp_path)
    assert sorted(args) == sorted(BAD_CASES)
    assert_refused(cudatrace_cmd.run(build_dir, *args[case], text=False, status=None), case)


@pytest.mark.parametrize("args", [[], ["frobnicate"], ["--json"]])
def test_bad_command_is_a_usage_error(build_dir, args):
    done = cudatrace_cmd.run(build_dir, *args, text=False, status=2)
    assert_refused(done, args)


# --------------------------------------------------------------------------
# 8. A trace whose tail was cut off


def two_parts(trace_file, compression):
    """[(compressed, plain)] of a real trace in at least two frames (zstd) or members (gzip).

    A zstd trace that is one frame (the run was too short for the collector to end one: it
    does every 4 MiB or every second) is re-compressed as two frames, checksummed as the
    collector writes them, split at a packet boundary; gzip is always two such members.
    """
    frames = compressed_units(trace_file.read_bytes(), new_zstd_decoder)
    if compression == "zstd" and len(frames) >= 2:
        return frames
    plain = b"".join(p for _, p in frames)
    split = middle_packet_end(plain)
    if compression == "zstd":
        compress = zstandard.ZstdCompressor(write_checksum=True).compress
    else:
        compress = gzip.compress
    return [(compress(part), part) for part in (plain[:split], plain[split:])]


@pytest.mark.parametrize("compression", ["zstd", "gzip"])
def test_cut_tail_reports_the_packets_before_the_cut(trace_run, build_dir, tmp_path, compression):
    proc, full, _ = trace_run("train_loop", 50)
    assert proc.returncode == 0, proc.stderr
    parts = two_parts(trace_path(proc), compression)
    plain = b"".join(p for _, p in parts)
    head = b"".join(c for c, _ in parts[:-1])
    last = parts[-1][0]
    cut_file = tmp_path / f"cut.pftrace.{compression}"
    cut_file.write_bytes(head + last[:len(last) // 2])

    # What a streaming decoder gets out of the cut file, up to the last whole packet in it.
    new_decoder = new_zstd_decoder if compression == "zstd" else new_gzip_decoder
    decoded = decodable(cut_file.read_bytes(), new_decoder)
    assert plain.startswith(decoded)
    boundary = max(e for e in [0, *packet_ends(plain)] if e <= len(decoded))
    assert boundary >= len(plain) - len(parts[-1][1])  # all frames but the last are whole
    before = perfetto_check.parse(plain[:boundary], check=False)
    assert not instants(before, "cudatrace.end")  # the end instant is in what was cut off
    assert len(before.slices) < len(full.slices)

    report = cudatrace_cmd.report(build_dir, cut_file, quiet=True)
    assert report["trace"] == {"packets": len(before.packets), "tail": "cut",
                               "unclosed_slices": len(before.unclosed)}
    (process,) = report["processes"]
    assert process["pid"] == proc.pid
    assert_matches_trace(process, before)
    assert process["exit"] == "unknown"
    # With no end, wall time runs to the last event: at least the span of the whole slices,
    # at most the span of every event there.
    times = ([s["ts"] for s in before.slices] + [s["ts"] + s["dur"] for s in before.slices]
             + [i["ts"] for i in before.instants]
             + [t for values in before.counters.values() for t, _ in values])
    first = min(s["ts"] for s in before.slices)
    last_end = max(s["ts"] + s["dur"] for s in before.slices)
    assert last_end - first <= process["wall_ns"] <= max(times) - min(times)

    # The text form says so too.
    done = cudatrace_cmd.run(build_dir, "report", cut_file, text=False, quiet=True)
    text = done.stdout.decode()
    assert text.startswith("note: the trace ends in a cut frame")
    assert "(trace has no end: cut short)" in text


def test_trace_ending_at_a_frame_boundary_is_complete_without_an_end(trace_run, build_dir,
                                                                    tmp_path):
    # A collector killed between two frames leaves whole frames only: nothing is cut, but the
    # process's end is not there.
    proc, _, _ = trace_run("train_loop", 50)
    assert proc.returncode == 0, proc.stderr
    parts = two_parts(trace_path(proc), "zstd")
    head = tmp_path / "head.pftrace.zst"
    head.write_bytes(b"".join(c for c, _ in parts[:-1]))
    before = perfetto_check.parse(b"".join(p for _, p in parts[:-1]), check=False)
    assert not instants(before, "cudatrace.end")

    report = cudatrace_cmd.report(build_dir, head, quiet=True)
    assert report["trace"] == {"packets": len(before.packets), "tail": "complete",
                               "unclosed_slices": len(before.unclosed)}
    (process,) = report["processes"]
    assert_matches_trace(process, before)
    assert process["exit"] == "unknown"

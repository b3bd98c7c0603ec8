"""Tests of `build/cudatrace export TRACE --format html`: one self-contained page.

This file owns what the page holds and how it renders:

* the file: no URL and no src/href anywhere (it works with no network), the report embedded
  exactly as `cudatrace report --json` gives it, and the plotted series, which add up to the
  report (time in sync, peak and final device memory, launches) and stay within their bucket
  budget on a long trace, with nothing lost in the merging;
* in headless Chromium (Debian's chromium; these tests skip, saying so, where it is not
  installed): the page draws with no script error (its own status marker, and no console
  message), the findings and the library rows are there with the right texts, the rows
  highlighted are exactly the libraries the findings name, the CUDA graphs section (a row a
  graph, its top kernels under it by capture line) only where the process made graphs, the
  step times plot only where the program marks steps (its data each of the report's steps; the
  slow steps in red, step 1 in violet, no red where no step is slow), and a screenshot shows
  each plot with data drawn in colour, and no colour in a plot without data.
  A page broken on purpose is caught by the same checks, so they can fail;
* a trace cut short exports with what it holds, as the other formats do; bad input is
  refused and leaves nothing; memory stays small on a large trace; `export --help` lists html.

Traces come from the trace_run fixture (conftest.py): the built programs under the preload on
the CPU double of the CUDA runtime, and one synthetic trace written here.
"""

import html
import json
import os
import pathlib
import re
import shutil
import statistics
import struct
import subprocess
import zlib

import pytest

import cudatrace_cmd
import perfetto_check
import toolkit
from test_export_formats import (EXPORT_TIMEOUT_S, LARGE_LAUNCHES, assert_cut_noted, assert_refused,
                         bad_inputs, cut_trace, export, large_trace, limit_address_space,
                         trace_path)
from test_collector_runtimes import wheel_runtime
from test_preload_cupti import with_gpu
from test_report_cuda_graphs import at, where

CHROMIUM = shutil.which("chromium")
CHROMIUM_TIMEOUT_S = 90
# Tall enough that every plot lies in the screenshot with room to spare: the page's height
# depends on the fonts the machine has (CI's drew it 30 px taller than 1600 allowed).
WINDOW = (1200, 3000)
SYNC_NS = 300_000  # CT_DOUBLE_SYNC_NS: each synchronising call waits 0.3 ms
SERIES_BUCKETS = 2048  # html.c
SYNC_WIDTH_NS = 100_000_000
LAUNCH_BUCKET_NS = 100_000_000  # the collector's launch-rate buckets
MEMORY_TRACK = "CUDA device memory (live bytes)"
MIB = 1 << 20
MS = 1_000_000


def embedded(page, block):
    """The JSON in the page's <script type="application/json" id=block>."""
    found = re.findall(rf'<script type="application/json" id="{block}">\n(.*?)</script>',
                       page.read_text(), re.S)
    assert len(found) == 1, f"{len(found)} {block} blocks"
    return json.loads(found[0])


def html_of(build_dir, trace, tmp_path):
    return pathlib.Path(export(build_dir, trace, "html", tmp_path / "page.html"))


def train_loop_page(trace_run, build_dir, tmp_path, steps=20):
    """(page, trace): train_loop traced with synchronising calls that take time."""
    proc, _, _ = trace_run("train_loop", steps, env={"CT_DOUBLE_SYNC_NS": SYNC_NS})
    assert proc.returncode == 0, proc.stderr
    return html_of(build_dir, trace_path(proc), tmp_path), trace_path(proc)


# --------------------------------------------------------------------------
# 1. What the file holds


def test_page_is_self_contained_and_embeds_the_report(trace_run, build_dir, tmp_path):
    page, trace = train_loop_page(trace_run, build_dir, tmp_path)
    data = page.read_bytes()
    assert data.startswith(b"<!DOCTYPE html>\n") and data.endswith(b"</html>\n")
    assert not re.search(rb"(?i)\b[a-z][a-z0-9+.-]*://", data), "a URL in the page"
    assert not re.search(rb"(?i)\b(?:src|href|action)\s*=", data), "an outside resource"
    assert b"Content-Security-Policy" in data
    assert embedded(page, "report-data") == cudatrace_cmd.report(build_dir, trace)
    plots = embedded(page, "plot-data")
    assert plots["file"] == str(trace)


def test_embedded_json_cannot_close_its_script(trace_run, build_dir, tmp_path):
    # A command line is in the report as it was typed: a '<' in it is written \u003c.
    proc, _, _ = trace_run("train_loop", 2, "</script><b>x</b>")
    page = html_of(build_dir, trace_path(proc), tmp_path)
    text = page.read_text()
    assert text.count("</script>") == text.count("<script")
    assert "\\u003c/script>\\u003cb>x\\u003c/b>" in text
    (process,) = embedded(page, "report-data")["processes"]
    assert process["cmdline"][-1] == "</script><b>x</b>"


def series_values(series):
    """The points without their times: (min, max, last), or (ns,) for sync."""
    return [tuple(p[1:]) for p in series["points"]]


def test_series_add_up_to_the_report(trace_run, build_dir, tmp_path):
    page, _ = train_loop_page(trace_run, build_dir, tmp_path, steps=40)
    report = embedded(page, "report-data")
    (process,) = report["processes"]
    (plots,) = embedded(page, "plot-data")["processes"]
    assert plots["pid"] == process["pid"]
    sync = plots["sync"]
    assert sync["width_ns"] == SYNC_WIDTH_NS  # a short run: no bucket merged
    assert process["sync"]["count"] == 40 and process["sync"]["total_ns"] >= 40 * SYNC_NS
    # The report's time is the threads' own total, its ticks converted at the
    # clock's rate: the slices' sum to within a nanosecond a call.
    assert abs(sum(ns for (ns,) in series_values(sync)) - process["sync"]["total_ns"]) <= 40
    memory = series_values(plots["memory"])
    assert max(hi for _, hi, _ in memory) == process["memory"]["peak_bytes"]
    assert memory[-1][2] == process["memory"]["final_bytes"]
    # Each launch-rate sample (launches per second over 100 ms) in a bucket of its own.
    rates = series_values(plots["launch_rate"])
    assert all(lo == hi == last for lo, hi, last in rates)
    assert sum(r for r, _, _ in rates) * LAUNCH_BUCKET_NS / 1e9 == process["launches"]["count"]
    times = [p[0] for s in ("memory", "launch_rate", "sync") for p in plots[s]["points"]]
    assert 0 <= min(times) and max(times) <= plots["span_ns"]


def event(ts, type, track, **fields):
    pb = perfetto_check.pb
    return pb.TracePacket(timestamp=ts, trusted_packet_sequence_id=1,
                          track_event=pb.TrackEvent(type=type, track_uuid=track, **fields))


def long_trace(write_trace):
    """(path, facts): a synthetic process of 1000 s, far more than the buckets hold at their
    first width: a memory sample every 100 ms (a sawtooth with one spike), a sync call every
    10 s lasting 3 s, a cudaMalloc that is no sync call, and a sync call that began before
    the process's first event (it ends after it, so it comes later in the file)."""
    pb = perfetto_check.pb
    process, thread, memory, pid, start = 1, 2, 3, 4242, 10**12
    packets = [pb.TracePacket(trusted_packet_sequence_id=1, track_descriptor=d) for d in [
        pb.TrackDescriptor(uuid=process, process=pb.ProcessDescriptor(pid=pid)),
        pb.TrackDescriptor(uuid=thread, parent_uuid=process,
                           thread=pb.ThreadDescriptor(pid=pid, tid=pid)),
        pb.TrackDescriptor(uuid=memory, parent_uuid=process, name=MEMORY_TRACK,
                           counter=pb.CounterDescriptor()),
    ]]
    packets.append(event(start, perfetto_check.INSTANT, process, name="start"))
    samples = []
    for i in range(10_000):
        ts, value = start + i * 100_000_000, (i % 50) << 20
        value = 10 << 30 if i == 7777 else value
        samples.append(value)
        packets.append(event(ts, perfetto_check.COUNTER, memory, double_counter_value=value))
    sync_ns = 0
    for name, begin, end in ([("cudaDeviceSynchronize", start - 5_000_000, start + 5_000_000),
                              ("cudaMalloc", start + 1, start + 10**9)] +
                             [("cudaStreamSynchronize", start + k * 10**10,
                               start + k * 10**10 + 3 * 10**9) for k in range(100)]):
        packets.append(event(begin, perfetto_check.BEGIN, thread, name=name))
        packets.append(event(end, perfetto_check.END, thread))
        sync_ns += end - begin if name != "cudaMalloc" else 0
    return write_trace(packets, "zstd"), {"samples": samples, "sync_ns": sync_ns, "pid": pid}


def test_long_trace_keeps_series_bounded(write_trace, build_dir, tmp_path):
    trace, facts = long_trace(write_trace)
    page = html_of(build_dir, trace, tmp_path)
    (process,) = embedded(page, "report-data")["processes"]
    (plots,) = embedded(page, "plot-data")["processes"]
    assert plots["pid"] == process["pid"] == facts["pid"]
    for name in ("memory", "sync"):
        series = plots[name]
        assert 0 < len(series["points"]) <= SERIES_BUCKETS, name
        width = series["width_ns"]
        assert plots["span_ns"] / width <= SERIES_BUCKETS, name  # widened to fit
        assert [p[0] % width for p in series["points"]] == [0] * len(series["points"])
    memory = series_values(plots["memory"])
    assert plots["memory"]["width_ns"] > 1_000_000  # merged from 1 ms
    assert max(hi for _, hi, _ in memory) == max(facts["samples"]) == 10 << 30
    assert min(lo for lo, _, _ in memory) == 0
    assert memory[-1][2] == facts["samples"][-1]
    assert sum(ns for (ns,) in series_values(plots["sync"])) == facts["sync_ns"]
    assert process["sync"]["total_ns"] == facts["sync_ns"]


def test_memory_stays_bounded_on_a_large_trace(trace_run, build_dir, tmp_path):
    # As test_export_formats.py bounds the other formats: an address space smaller than the trace.
    big = large_trace(trace_run, build_dir, tmp_path)
    out = tmp_path / "big.html"
    cudatrace_cmd.run(build_dir, "export", big, "--format", "html", "-o", out, quiet=True,
                      preexec_fn=limit_address_space, timeout=EXPORT_TIMEOUT_S)
    (process,) = embedded(out, "report-data")["processes"]
    assert process["launches"]["count"] == LARGE_LAUNCHES


# --------------------------------------------------------------------------
# 2. In headless Chromium


class Rendered:
    """The page as Chromium drew it: the DOM after the script ran, the console, a screenshot."""

    def __init__(self, dom, log, png):
        self.dom, self.log, self.png = dom, log, png

    def status(self):
        (found,) = re.findall(r'<p id="render-status" data-render="(\w+)">([^<]*)</p>', self.dom)
        return found[0], html.unescape(found[1])

    def console(self):
        """Every console message and uncaught error (Chromium logs them as CONSOLE)."""
        return [line for line in self.log.splitlines() if ":CONSOLE" in line]

    def assert_drawn(self):
        assert self.status()[0] == "done", self.status()
        assert self.console() == []

    def rows(self, table):
        """[(class, [cell texts])] of a table's body rows."""
        (body,) = re.findall(rf'<table class="{table}">.*?<tbody>(.*?)</tbody>', self.dom, re.S)
        rows = re.findall(r'<tr(?: class="(\w*)")?>(.*?)</tr>', body, re.S)
        return [(cls, [html.unescape(re.sub(r"<[^>]*>", "", c))
                       for c in re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S)])
                for cls, cells in rows]

    def findings(self):
        """[(id, severity, message)] of the findings listed."""
        items = re.findall(r'<li class="finding (\w+)" data-id="([\w-]+)">'
                           r'<span class="severity">\w+</span><code class="id">[\w-]+</code>'
                           r'<span class="message">(.*?)</span></li>', self.dom, re.S)
        return [(fid, severity, html.unescape(message)) for severity, fid, message in items]

    def plots(self):
        """[(segments, colour pixels)] of each plot, in page order; colour pixels are None
        for a plot outside the screenshot."""
        png = png_rows(self.png)
        found = []
        for segments, rect in re.findall(r'<canvas [^>]*data-segments="(\d+)" '
                                         r'data-rect="([\d,]+)"', self.dom):
            x, y, w, h = map(int, rect.split(","))
            inside = y + h <= len(png[2]) and x + w <= png[0]
            found.append((int(segments), colour_pixels(png, x, y, w, h) if inside else None))
        return found


def render(page, tmp_path):
    if not CHROMIUM:
        pytest.skip("chromium is not installed (Debian package chromium; `make test` "
                    "installs it): the page is not loaded in a browser")
    png = tmp_path / "shot.png"
    done = subprocess.run(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", f"--user-data-dir={tmp_path / 'chromium-profile'}",
         "--window-size={},{}".format(*WINDOW), "--force-device-scale-factor=1",
         "--hide-scrollbars", "--virtual-time-budget=5000", f"--screenshot={png}",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    assert done.returncode == 0 and png.exists(), done.stderr[-3000:]
    return Rendered(done.stdout, done.stderr, png)


def png_rows(path):
    """(width, bytes per pixel, [pixel bytes per row]) of an 8-bit RGB or RGBA PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, []
    while i < len(data):
        length, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + length]
        i += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    assert (depth, interlace) == (8, 0) and color in (2, 6), (depth, color, interlace)
    bpp = 3 if color == 2 else 4
    stride, raw = width * bpp, zlib.decompress(b"".join(idat))
    rows = [bytearray(stride)]
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1:start + 1 + stride])
        rows.append(unfilter(raw[start], line, rows[-1], bpp))
    return width, bpp, rows[1:]


def unfilter(kind, line, prev, bpp):
    """A PNG row with its filter (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth) undone."""
    if kind == 2:
        return bytearray((x + b) & 255 for x, b in zip(line, prev))
    for x in range(len(line)) if kind else ():
        a = line[x - bpp] if x >= bpp else 0
        if kind == 1:
            line[x] = (line[x] + a) & 255
            continue
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predicted = a if pa <= pb and pa <= pc else b if pb <= pc else c
        else:
            predicted = (a + b) >> 1
        line[x] = (line[x] + predicted) & 255
    return line


def colour_pixels(png, x, y, w, h):
    """Pixels in the rectangle that are neither grey nor white: the plotted data (axes,
    grid and text are drawn in greys)."""
    _, bpp, rows = png
    count = 0
    for row in rows[y:y + h]:
        for k in range(bpp * x, bpp * (x + w), bpp):
            r, g, b = row[k], row[k + 1], row[k + 2]
            count += max(r, g, b) - min(r, g, b) > 20
    return count


def test_page_draws_in_chromium(trace_run, build_dir, tmp_path):
    page, trace = train_loop_page(trace_run, build_dir, tmp_path)
    shown = render(page, tmp_path)
    shown.assert_drawn()
    report = cudatrace_cmd.report(build_dir, trace)
    assert f'<section class="process" data-pid="{report["processes"][0]["pid"]}">' in shown.dom
    assert ("No GPU timings: CUPTI recorded no GPU work (no CUDA driver (libcuda.so.1) is "
            "loaded in this process), so no kernel table.") in shown.dom
    # The loop waits on every step's sync: its findings, and the lines they name.
    assert shown.findings() == [(f["id"], f["severity"], f["message"])
                                for f in report["findings"]]
    assert "sync-stall" in [f["id"] for f in report["findings"]]
    assert [cells[:4] for _, cells in shown.rows("sites")] == [
        [f["id"], s["site"], f"{round(100 * s['share'])}%", str(s["calls"])]
        for f in report["findings"] for s in f["evidence"]["sites"]]
    (row,) = shown.rows("libraries")
    assert row == ("", ["cudart", report["processes"][0]["libraries"][0]["path"], "13.0",
                        "LD_LIBRARY_PATH (asked for as libcudart.so.13 by "
                        f"{report['processes'][0]['cmdline'][0]})", ""])
    steps, *plots = shown.plots()  # the steps found in the loop's calls, then the others
    assert steps[0] == report["processes"][0]["steps"]["count"], steps
    assert len(plots) == 3
    for segments, colour in plots:  # memory, launches per second, time in sync
        assert segments > 0 and colour is not None and colour > 2000, plots


def test_findings_and_libraries_in_chromium(trace_run, build_dir, tmp_path):
    # The program's runtime (the double) and a wheel's: duplicate-library names both.
    proc, _, _ = trace_run("load_libs", wheel_runtime(build_dir, "nvidia_cuda_runtime_cu12-12.9.*"))
    assert proc.returncode == 0, proc.stderr
    page = html_of(build_dir, trace_path(proc), tmp_path)
    report = embedded(page, "report-data")
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert shown.findings() == [(f["id"], f["severity"], f["message"])
                                for f in report["findings"]]
    (finding,) = report["findings"]
    assert finding["id"] == "duplicate-library"
    named = {lib["path"] for lib in finding["evidence"]["libraries"]}
    rows = shown.rows("libraries")
    assert len(rows) == len(report["processes"][0]["libraries"]) >= 2
    for cls, cells in rows:
        assert (cls == "flagged") == (cells[1] in named), cells
        assert cells[-1] == ("duplicate-library" if cells[1] in named else ""), cells
    assert {cells[1] for _, cells in rows} >= named
    # One allocation, no launch, no sync: only the memory plot has colour.
    (memory, launches, sync) = shown.plots()
    assert memory[0] > 0 and memory[1] > 100, memory
    assert launches[0] == 0 and launches[1] is not None and launches[1] < 20, launches
    assert sync[0] == 0 and sync[1] in (None, 0), sync


def test_probes_and_queries_on_the_page(trace_run, build_dir, tmp_path):
    """cuDNN's probes for its sub-library's longer names show with the library that loaded, and
    RTLD_NOLOAD queries in a table of their own; neither is a failed load (the real toolkit's
    cuDNN, as tests/test_preload_loader_view.py has it)."""
    cudnn, missing = toolkit.path("cudnn"), toolkit.missing("cudnn_graph")
    proc, _, _ = trace_run("dlopen_only", "--call", "cudnnGetVersion", "--query", missing, cudnn,
                           double=False)
    assert proc.returncode == 0, proc.stderr
    page = html_of(build_dir, trace_path(proc), tmp_path)
    (p,) = embedded(page, "report-data")["processes"]
    graph = next(lib for lib in p["libraries"] if lib["family"] == "cudnn_graph")
    assert len(graph["probes"]) == 2 and not p["failed_loads"]
    shown = render(page, tmp_path)
    shown.assert_drawn()
    (row,) = [cells for _, cells in shown.rows("libraries") if cells[0] == "cudnn_graph"]
    assert row[3].endswith("; probed for in vain first as " +
                           ", ".join(probe["requested_as"] for probe in graph["probes"]))
    assert shown.rows("queries") == [
        ("", [missing, os.path.join(build_dir, "tests", "dlopen_only"), "1"])]
    assert 'class="failed-loads"' not in shown.dom


def test_virtual_memory_has_a_plot_of_its_own(trace_run, build_dir, tmp_path):
    """An allocator that grows through cuMemCreate (tests/programs/vmm_allocator.c): its
    physical memory is a series beside the allocations' and a fourth plot, with the
    report's peak and final; the allocations' plot says it is theirs. (The train loop above,
    which makes none, has three.)"""
    env = {"LD_LIBRARY_PATH": f"{build_dir}/double:{build_dir}/driver", "CT_DOUBLE_DRIVER": "1"}
    proc, _, _ = trace_run("vmm_allocator", "leak", "20", env=env)
    assert proc.returncode == 0, proc.stderr
    page = html_of(build_dir, trace_path(proc), tmp_path)
    (process,) = embedded(page, "report-data")["processes"]
    (plots,) = embedded(page, "plot-data")["processes"]
    vmm = series_values(plots["vmm_memory"])
    assert max(hi for _, hi, _ in vmm) == process["memory"]["by_source"]["vmm"]["peak_bytes"]
    assert vmm[-1][2] == process["memory"]["final_bytes"] == 20 * 2 * 1024 * 1024
    assert plots["memory"]["points"] == []
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert ("Device memory through the virtual-memory API (cuMemCreate, physical): peak "
            "40 MiB, final 40 MiB") in shown.dom
    assert "Live device memory, allocations: peak 0 B, final 0 B" in shown.dom
    (steps, allocations, physical, launches, sync) = shown.plots()  # steps: the leak's loop
    assert physical[0] > 0 and physical[1] > 100, physical
    assert allocations[0] == 0, allocations


def graph_rows(shown):
    """[(graph cells, [its kernel rows' cells])] of the CUDA graphs table, in page order."""
    graphs = []
    for cls, cells in shown.rows("graphs"):
        assert cls in ("", "kernel"), cls
        if cls == "kernel":
            graphs[-1][1].append(cells)
        else:
            graphs.append((cells, []))
    return graphs


def test_cuda_graphs_on_the_page(trace_run, build_dir, tmp_path):
    """tests/programs/graph_steps.c captures one graph of 40 kernels from three lines, a memset,
    an allocation and its free, replays it 10 times, then captures 3 more at one line, each
    launched once: the page sums them up, has a row a graph, the replayed one first with its
    nodes by kind and its top kernels, each with the line that captured it, and the
    re-capture finding."""
    proc, _, _ = trace_run("graph_steps", "--replays", 10, "--rebuild", 3,
                           env=with_gpu(build_dir, tmp_path))
    assert proc.returncode == 0, proc.stderr
    page = html_of(build_dir, trace_path(proc), tmp_path)
    report = embedded(page, "report-data")
    (process,) = report["processes"]
    g = process["graphs"]
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert "<h3>CUDA graphs</h3>" in shown.dom
    (summary,) = re.findall(r'<p class="graphs-summary">(.*?)</p>', shown.dom)
    # All the GPU work the doubles did was a graph's replay.
    assert re.fullmatch(r"4 graphs; [\d.]+ [mun]?s of GPU time ran from them \(100% of all GPU "
                        r"time\); 73 calls captured\.", html.unescape(summary)), summary
    assert g["replayed_share"] == 1.0
    assert g["captured_calls"] == 43 + 3 * 10
    graphs = graph_rows(shown)
    assert len(graphs) == 4
    (first, kernels) = graphs[0]
    (graph_id, made_by, line, nodes, instantiations, launches, gpu, median, worst,
     building) = first
    assert (graph_id, made_by, at(line)) == (str(g["graphs"][0]["graph_id"]), "capture",
                                             where("P"))
    assert (nodes, instantiations, launches) == ("40 kernel, 1 memset, 1 alloc, 1 free", "1",
                                                 "10")
    assert all(re.fullmatch(r"[\d.]+ [mun]?s", t) for t in (gpu, median, worst, building)), first
    # In the report's order (GPU time, which the doubles make up); the kernels as the program
    # captured them.
    top = [(at(k[2]), k[3], k[5]) for k in kernels]
    assert top == [(at(k["capture_site"]), f"{k['nodes']} {k['name']}", f"{k['runs']} runs")
                   for k in g["graphs"][0]["top_kernels"]]
    assert sorted(top) == sorted([
        (where("A"), "20 graph_step_a", "200 runs"), (where("B"), "15 graph_step_b", "150 runs"),
        (where("C"), "5 graph_step_c", "50 runs"), (where("S"), "1 memset", "10 runs")])
    for cells, _ in graphs[1:]:  # the rebuilt graphs, launched once each
        assert (cells[1], at(cells[2]), cells[3], cells[5]) == ("capture", where("Q"),
                                                                "10 kernel", "1")
    assert "re-capture" in [fid for fid, _, _ in shown.findings()]


def test_healthy_twin_a_page_without_graphs_has_no_graphs_section(trace_run, build_dir,
                                                                   tmp_path):
    page, _ = train_loop_page(trace_run, build_dir, tmp_path)
    (process,) = embedded(page, "report-data")["processes"]
    assert "graphs" not in process
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert "<h3>CUDA graphs</h3>" not in shown.dom
    assert 'class="graphs' not in shown.dom


def test_a_broken_page_is_caught(trace_run, build_dir, tmp_path):
    page, _ = train_loop_page(trace_run, build_dir, tmp_path)
    broken = tmp_path / "broken.html"
    text = page.read_text()
    broken.write_text(re.sub(r'<script type="application/json" id="plot-data">.*?</script>',
                             "", text, flags=re.S))
    shown = render(broken, tmp_path)
    state, message = shown.status()
    assert state == "error" and "TypeError" in message, (state, message)
    assert any("Uncaught TypeError" in line for line in shown.console()), shown.console()


# --------------------------------------------------------------------------
# 3. Damaged input, bad input, help


def test_cut_trace_exports_what_it_holds(trace_run, build_dir, tmp_path):
    cut, before = cut_trace(trace_run, tmp_path)
    out = tmp_path / "out.html"
    done = cudatrace_cmd.run(build_dir, "export", cut, "--format", "html", "-o", out, text=False)
    assert_cut_noted(done, cut, before)
    report = embedded(out, "report-data")
    assert report == cudatrace_cmd.report(build_dir, cut)
    assert report["trace"]["tail"] == "cut"
    assert report["trace"]["packets"] == len(before.packets)
    shown = render(out, tmp_path)
    shown.assert_drawn()
    assert "the trace was cut short mid-write" in shown.dom


def test_bad_input_is_refused_and_leaves_nothing(build_dir, tmp_path):
    for case, path in bad_inputs(tmp_path).items():
        before = set(os.listdir(tmp_path))
        done = cudatrace_cmd.run(build_dir, "export", path, "--format", "html", "-o",
                                 tmp_path / "out", text=False, status=1)
        assert_refused(done, 1)
        assert done.stderr.decode().startswith(f"cudatrace: {path}: "), case
        assert set(os.listdir(tmp_path)) == before, case


def test_help_lists_html(build_dir):
    done = cudatrace_cmd.run(build_dir, "export", "--help", text=False)
    assert re.search(r"^ +html +one self-contained page.*\(\.html\)$", done.stdout.decode(), re.M)


def test_memory_by_source_and_the_pools_on_the_page(trace_run, build_dir, tmp_path):
    """tests/programs/pool_reserve.c asks its pool 8 times (the reserve peaks at 12 MiB, ends
    at 0): the page has the pools' reserve counter as a series and a plot with the report's
    peak and final, and the memory table names each source with its peak and final."""
    proc, trace, _ = trace_run("pool_reserve")
    assert proc.returncode == 0, proc.stderr
    page = html_of(build_dir, trace_path(proc), tmp_path)
    (process,) = embedded(page, "report-data")["processes"]
    (plots,) = embedded(page, "plot-data")["processes"]
    reserved = series_values(plots["pool_reserved"])
    assert max(hi for _, hi, _ in reserved) == 12 * MIB and reserved[-1][2] == 0
    assert plots["graph_reserved"]["points"] == []
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert shown.rows("memory") == [
        ("", ["Allocations (cudaMalloc*, cuMemAlloc*)", "12 MiB", "0 B"]),
        ("", ["All of them", "12 MiB", "0 B"]),
        ("", ["cudaMallocAsync pools, their allocations included, as the runtime said when "
              "asked (8 readings of 1 pool)", "12 MiB", "0 B"])]
    assert ("Memory pools reserved, as the runtime said when asked: peak 12 MiB, final 0 B"
            in shown.dom)
    (_, pools, _, _) = shown.plots()
    assert pools[0] > 0 and pools[1] > 100, pools


def test_graphs_memory_on_the_page(trace_run, build_dir, tmp_path):
    """tests/programs/graph_memory.c: the graphs' reserve (16 MiB at most, 0 at the end) is a
    source in the memory table, a series and a plot of its own."""
    proc, _, _ = trace_run("graph_memory")
    assert proc.returncode == 0, proc.stderr
    page = html_of(build_dir, trace_path(proc), tmp_path)
    (plots,) = embedded(page, "plot-data")["processes"]
    reserved = series_values(plots["graph_reserved"])
    assert max(hi for _, hi, _ in reserved) == 16 * MIB and reserved[-1][2] == 0
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert shown.rows("memory") == [
        ("", ["Allocations (cudaMalloc*, cuMemAlloc*)", "0 B", "0 B"]),
        ("", ["CUDA graphs' allocator (memory nodes), as the runtime said when asked",
              "16 MiB", "0 B"]),
        ("", ["All of them", "16 MiB", "0 B"])]
    assert "Live device memory, allocations: peak 0 B, final 0 B" in shown.dom
    assert len(shown.plots()) == 4


def test_healthy_twin_a_page_without_pools_or_graphs_has_neither(trace_run, build_dir,
                                                                 tmp_path):
    page, _ = train_loop_page(trace_run, build_dir, tmp_path)
    (plots,) = embedded(page, "plot-data")["processes"]
    assert plots["pool_reserved"]["points"] == plots["graph_reserved"]["points"] == []
    shown = render(page, tmp_path)
    (allocations, total) = shown.rows("memory")
    assert allocations[1][0] == "Allocations (cudaMalloc*, cuMemAlloc*)"
    assert total[1][0] == "All of them" and total[1][1:] == allocations[1][1:]
    assert len(shown.plots()) == 4  # steps, memory, launches, sync: no reserve plots


STEP_COLOURS = {"step": (0x25, 0x63, 0xeb), "slow": (0xdc, 0x26, 0x26),
                "warm-up": (0x8b, 0x5c, 0xf6)}  # html_page.c, stepSpec


def step_loop_page(trace_run, build_dir, tmp_path, *args):
    """(page, the program's own {step: ns}): tests/programs/step_loop.c traced."""
    proc, _, _ = trace_run("step_loop", *args)
    assert proc.returncode == 0, proc.stderr
    own = {int(w[1]): int(w[2]) for w in (line.split() for line in proc.stdout.splitlines())
           if w and w[0] == "step"}
    return html_of(build_dir, trace_path(proc), tmp_path), own


def step_plot_pixels(shown):
    """{colour name: pixels of exactly that colour} in the page's first plot, the steps'."""
    (rect,) = re.findall(r'<canvas [^>]*data-rect="([\d,]+)"', shown.dom)[:1]
    x, y, w, h = map(int, rect.split(","))
    _, bpp, rows = png_rows(shown.png)
    pixels = [tuple(row[k:k + 3]) for row in rows[y:y + h]
              for k in range(bpp * x, bpp * (x + w), bpp)]
    return {name: pixels.count(rgb) for name, rgb in STEP_COLOURS.items()}


def test_step_times_on_the_page(trace_run, build_dir, tmp_path):
    """20 marked steps, a 30 ms warm-up and every fifth step 40 ms slower: the plot's data is
    each of the report's steps, in order, with the report's step 1, median, worst and slow
    steps, the median within 5% of the program's own; the plot comes first, one bar a step,
    the slow steps in red and step 1 in violet."""
    page, own = step_loop_page(trace_run, build_dir, tmp_path, "--nvtx", "--steps", 20,
                               "--warmup-ms", 30, "--slow-every", 5, "--slow-ms", 40)
    (process,) = embedded(page, "report-data")["processes"]
    (plots,) = embedded(page, "plot-data")["processes"]
    s, points = process["steps"], plots["steps"]
    assert len(points) == s["count"] == 20
    starts, times = [t for t, _ in points], [ns for _, ns in points]
    assert starts == sorted(starts) and 0 <= starts[0]
    assert all(t + ns <= plots["span_ns"] for t, ns in points)
    # The program's steps in its order: 10 ms, the warm-up 40 ms, the slow ones 50 ms.
    assert [n for n, ns in enumerate(times, 1) if ns > 25 * MS] == [1, 5, 10, 15, 20]
    own_median = statistics.median_low(own[n] for n in range(2, 21))
    assert abs(s["median_ns"] - own_median) < 0.05 * own_median
    rest = sorted(times[1:])
    assert (times[0], rest[(len(rest) - 1) // 2], rest[-1]) == (s["first_ns"], s["median_ns"],
                                                               s["max_ns"])
    assert times[s["max_step"] - 1] == s["max_ns"]
    assert [(t["step"], times[t["step"] - 1]) for t in s["slow"]] == [
        (t["step"], t["ns"]) for t in s["slow"]]
    assert sorted(t["step"] for t in s["slow"]) == [5, 10, 15, 20]
    shown = render(page, tmp_path)
    shown.assert_drawn()
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", shown.dom)
    assert captions[0].startswith("Step times (nvtx:train_step): 20 steps, median ")
    assert captions[0].endswith("; slow steps (red): 5, 10, 15, 20")
    assert [segments for segments, _ in shown.plots()][0] == 20
    pixels = step_plot_pixels(shown)
    assert all(pixels[name] > 500 for name in STEP_COLOURS), pixels


def test_healthy_twin_steady_steps_have_none_in_red(trace_run, build_dir, tmp_path):
    # 30 ms steps: a sanitizer's or a loaded machine's hiccup of a few ms makes none slow
    page, _ = step_loop_page(trace_run, build_dir, tmp_path, "--nvtx", "--steps", 12,
                             "--wait-ms", 30)
    (plots,) = embedded(page, "plot-data")["processes"]
    assert len(plots["steps"]) == 12
    shown = render(page, tmp_path)
    shown.assert_drawn()
    pixels = step_plot_pixels(shown)
    assert pixels["slow"] == 0 and pixels["step"] > 500 and pixels["warm-up"] > 0, pixels


def test_healthy_twin_a_loop_too_short_for_steps_has_no_step_plot(trace_run, build_dir,
                                                                   tmp_path):
    page, _ = step_loop_page(trace_run, build_dir, tmp_path, "--steps", 2)
    (process,) = embedded(page, "report-data")["processes"]
    (plots,) = embedded(page, "plot-data")["processes"]
    assert "steps" not in process and "steps" not in plots
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert not [c for c in re.findall(r"<figcaption>(.*?)</figcaption>", shown.dom)
                if c.startswith("Step times")]
    assert len(shown.plots()) == 3  # memory, launches, sync

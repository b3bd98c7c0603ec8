"""The loader's view under a bare LD_PRELOAD: a process that only
loads (or fails to load) CUDA libraries leaves a trace saying what loaded,
who asked, how it was found and what failed; the same files load as
untraced; where the audit module also ran (`cudatrace run`) both views
agree; and processes that never touch CUDA leave nothing. Real toolkit
libraries and NVIDIA's runtime wheels throughout, no double."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import cudatrace_cmd
import toolkit



def only_process(build_dir, completed):
    r = cudatrace_cmd.report(build_dir, completed.run_dir / "trace.pftrace.zst")
    (p,) = r["processes"]
    return p, r["findings"]


def instants(trace, name, seen_by=None):
    return [i for i in trace.instants if i["name"] == name and
            (seen_by is None or i["args"].get("seen_by") == seen_by)]


def wheel_runtime(build_dir, major_minor):
    (path,) = glob.glob(os.path.join(build_dir, "wheels", f"*cu{major_minor[:2]}-{major_minor}*",
                                     "nvidia", "cuda_runtime", "lib", "libcudart.so.*"))
    return path


def test_dlopen_of_a_missing_library_is_traced(trace_run, build_dir):
    completed, trace, _ = trace_run("dlopen_only", toolkit.missing("cudnn"), double=False)
    assert completed.returncode == 0
    (line,) = completed.stdout.splitlines()
    glibc_error = line.split(" ", 2)[2]
    assert glibc_error.startswith(f"{toolkit.missing('cudnn')}: cannot open shared object file")
    p, findings = only_process(build_dir, completed)
    (failed,) = p["failed_loads"]
    assert failed["requested_as"] == toolkit.missing("cudnn")
    assert failed["requested_by"] == os.path.join(build_dir, "tests", "dlopen_only")
    assert failed["error"] == glibc_error  # what dlerror() told the program
    assert failed["seen_by"] == "preload"
    assert failed["searched"][-2:] == ["/lib", "/usr/lib"]
    assert "/usr/lib/x86_64-linux-gnu" in failed["searched"]
    (finding,) = findings
    assert finding["id"] == "library-load-failed"
    assert finding["evidence"]["failed_loads"] == [failed]


def test_a_failed_load_by_absolute_path_says_it_was_not_searched(trace_run, build_dir):
    path = os.path.join(toolkit.LIB, toolkit.missing("cudnn"))
    completed, _, _ = trace_run("dlopen_only", path, double=False)
    p, findings = only_process(build_dir, completed)
    (failed,) = p["failed_loads"]
    assert (failed["requested_as"], failed["searched"]) == (path, [])
    text = cudatrace_cmd.run(build_dir, "report", completed.run_dir / "trace.pftrace.zst").stdout
    requester = os.path.join(build_dir, "tests", "dlopen_only")
    assert f"  failed load    {path} (asked for by {requester}; absolute path, not searched)\n" \
        in text
    (finding,) = findings
    assert "; absolute path, not searched. Install it" in finding["message"]


def test_failed_dlopen_without_dlerror_is_settled_at_exit(trace_run, build_dir):
    completed, _, _ = trace_run("dlopen_only", "--no-dlerror", toolkit.missing("cudnn"), double=False)
    p, findings = only_process(build_dir, completed)
    (failed,) = p["failed_loads"]
    assert failed["error"] == "not found in the directories searched"
    assert [f["id"] for f in findings] == ["library-load-failed"]


def test_healthy_twin_dlopen_of_an_installed_library(trace_run, build_dir):
    toolkit.cached(toolkit.soname("cudnn"))
    completed, _, _ = trace_run("dlopen_only", toolkit.soname("cudnn"), double=False)
    assert completed.stdout == f"dlopen_only: {toolkit.soname('cudnn')} loaded\n"
    p, findings = only_process(build_dir, completed)
    assert p["failed_loads"] == [] and findings == []
    (cudnn,) = [lib for lib in p["libraries"] if lib["family"] == "cudnn"]
    assert (cudnn["requested_as"], cudnn["requested_by"], cudnn["found_via"],
            cudnn["seen_by"]) == (toolkit.soname("cudnn"), os.path.join(build_dir, "tests",
                                                                "dlopen_only"),
                                  "ld.so.cache", "preload")


def test_runtime_and_device_count_without_a_driver(trace_run, build_dir):
    """torch.cuda.is_available() as a C program sees it: the real driverless
    runtime, cudaGetDeviceCount through a dlopen'ed libcudart."""
    toolkit.no_driver()
    runtime = toolkit.path("cudart")
    completed, trace, _ = trace_run("dlopen_only", "--call", "cudaGetDeviceCount", runtime,
                                    double=False)
    untraced, _, _ = trace_run("dlopen_only", "--call", "cudaGetDeviceCount", runtime,
                               double=False, preload=False)
    assert completed.stdout == untraced.stdout
    code = int(completed.stdout.splitlines()[-1].rsplit(" ", 1)[1])
    assert code != 0
    p, findings = only_process(build_dir, completed)
    failed = {f["requested_as"]: f for f in p["failed_loads"]}
    libcuda = failed["libcuda.so.1"]
    assert os.path.realpath(libcuda["requested_by"]) == os.path.realpath(runtime)
    assert "/usr/lib/x86_64-linux-gnu" in libcuda["searched"]
    assert "driver-missing" in {f["id"] for f in findings}


def test_two_runtimes_dlopened_local(trace_run, build_dir):
    other = wheel_runtime(build_dir, "12.4")
    completed, _, _ = trace_run("dlopen_only", toolkit.path("cudart"), other,
                                double=False)
    p, findings = only_process(build_dir, completed)
    (duplicate,) = [f for f in findings if f["id"] == "duplicate-library"]
    named = sorted(lib["realpath"] for lib in duplicate["evidence"]["libraries"])
    assert named == sorted([os.path.realpath(toolkit.path("cudart")),
                            os.path.realpath(other)])


def test_healthy_twin_one_runtime(trace_run, build_dir):
    completed, _, _ = trace_run("dlopen_only", toolkit.path("cudart"),
                                double=False)
    p, findings = only_process(build_dir, completed)
    assert findings == []
    (cudart,) = [lib for lib in p["libraries"] if lib["family"] == "cudart"]
    assert cudart["found_via"] == "absolute path"


def test_load_and_unload_within_milliseconds(trace_run, build_dir):
    toolkit.cached(toolkit.soname("cufft"))
    completed, trace, _ = trace_run("dlopen_only", "--close", toolkit.soname("cufft"), double=False)
    p, _ = only_process(build_dir, completed)
    (cufft,) = [lib for lib in p["libraries"] if lib["family"] == "cufft"]
    assert cufft["loaded_ns"] and cufft["unloaded_ns"]
    assert 0 < cufft["unloaded_ns"] - cufft["loaded_ns"] < 2_000_000_000
    (unload,) = instants(trace, "cuda.library.unload")
    assert unload["args"]["realpath"] == cufft["realpath"]


def loader_accounts(trace, seen_by):
    loads = {(i["args"]["requested_as"], i["args"]["requested_by"], i["args"]["found_via"],
              i["args"]["realpath"])
             for i in instants(trace, "cuda.library.load", seen_by)
             if i["args"]["found_via"] != "already loaded"}
    failed = {(i["args"]["requested_as"], i["args"]["requested_by"], i["args"]["searched"])
              for i in instants(trace, "cuda.library.failed", seen_by)}
    return loads, failed


def run_both(build_dir, tmp_path, library_path, *argv):
    trace_path = tmp_path / "trace.pftrace.zst"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k not in ("LD_PRELOAD",
                                                                          "LD_AUDIT")}
    env["LD_LIBRARY_PATH"] = library_path
    cudatrace_cmd.run(build_dir, "run", "-q", "-o", trace_path, "--", *argv, cwd=tmp_path,
                      env=env)
    import perfetto_check
    return perfetto_check.load(trace_path)


def test_bare_preload_and_audit_module_agree(build_dir, tmp_path):
    toolkit.cached(toolkit.soname("cublas")), toolkit.cached(toolkit.soname("cufft"))
    trace = run_both(build_dir, tmp_path, str(tmp_path), os.path.join(build_dir, "tests",
                                                                        "dlopen_only"),
                     toolkit.soname("cublas"), toolkit.path("cudnn"),
                     toolkit.missing("cudnn"), toolkit.soname("cufft"))
    audit = loader_accounts(trace, "audit")
    preload = loader_accounts(trace, "preload")
    assert len(audit[0]) == 4  # cublas, cublasLt (its DT_NEEDED), cudnn, cufft
    # libcudnn.so.8 is missing; cuBLASLt looks for the driver as it loads.
    assert {a[0] for a in audit[1]} == {toolkit.missing("cudnn"), "libcuda.so.1"}
    assert preload == audit


@pytest.mark.parametrize("shadowed", [True, False])
def test_shadowing_seen_without_the_audit_module(trace_run, build_dir, tmp_path, shadowed,
                                                 runpath_layout):
    own, other = runpath_layout
    env = {"LD_LIBRARY_PATH": str(other) if shadowed else str(tmp_path)}
    args = ("dlopen_only", "--maps", own / "librunpath_user.so")
    completed, _, _ = trace_run(*args, double=False, env=env)
    untraced, _, _ = trace_run(*args, double=False, env=env, preload=False)
    assert completed.stdout == untraced.stdout  # the same files mapped
    p, findings = only_process(build_dir, completed)
    (cudnn,) = [lib for lib in p["libraries"] if lib["family"] == "cudnn"]
    assert cudnn["requested_by"] == str(own / "librunpath_user.so")
    if shadowed:
        assert cudnn["realpath"] == str(other / toolkit.soname("cudnn"))
        assert cudnn["found_via"] == "LD_LIBRARY_PATH"
        (finding,) = findings
        assert finding["id"] == "shadowed-library"
        assert finding["evidence"]["runpath_copy"] == str(own / toolkit.soname("cudnn"))
    else:
        assert cudnn["realpath"] == str(own / toolkit.soname("cudnn"))
        assert cudnn["found_via"] == "DT_RUNPATH"
        assert findings == []


def test_pip_wheel_runtime_from_python_ctypes(trace_run, build_dir):
    """A framework's pip-wheel runtime, loaded from Python through ctypes, asked
    whether CUDA is available: the answer and why, under a bare LD_PRELOAD."""
    runtime = wheel_runtime(build_dir, "12.4")
    script = ("import ctypes\n"
              f"rt = ctypes.CDLL({runtime!r})\n"
              "n = ctypes.c_int(-1)\n"
              "print('count', rt.cudaGetDeviceCount(ctypes.byref(n)), n.value)\n"
              f"try:\n    ctypes.CDLL({toolkit.missing('cudnn')!r})\n"
              "except OSError as e:\n    print('error', e)\n")
    completed, _, _ = trace_run(sys.executable, "-c", script, double=False)
    untraced, _, _ = trace_run(sys.executable, "-c", script, double=False, preload=False)
    assert completed.stdout == untraced.stdout and completed.returncode == 0
    p, findings = only_process(build_dir, completed)
    (cudart,) = [lib for lib in p["libraries"] if lib["family"] == "cudart"]
    assert cudart["realpath"] == os.path.realpath(runtime)
    # Looked up through ctypes (dlsym on the handle), cudaGetDeviceCount still
    # reaches our hook, so the runtime's own API gives its version.
    assert cudart["version"] == "12.4"
    assert p["api"]["cudaGetDeviceCount"]["calls"] == 1
    failed = {f["requested_as"]: f for f in p["failed_loads"]}
    assert failed[toolkit.missing("cudnn")]["error"] == completed.stdout.splitlines()[1][len("error "):]
    assert "libcuda.so.1" in failed
    ids = {f["id"] for f in findings}
    assert {"driver-missing", "library-load-failed"} <= ids


FRAMEWORK = """import ctypes, sys


def load_optional(name):
    try:
        ctypes.CDLL(name)
    except OSError as e:
        print("error", e)


ctypes.CDLL(sys.argv[1])
load_optional(sys.argv[2])
"""


@pytest.mark.parametrize("view", ["preload", "audit"])
def test_ctypes_loads_name_the_python_line_that_asked(trace_run, build_dir, tmp_path, view):
    """A framework loads its CUDA libraries through ctypes: the native requester is ctypes'
    own extension, true and of no use to a person; the Python line that called ctypes.CDLL
    is named beside it, for a load and for a failed one, under a bare LD_PRELOAD and under
    `cudatrace run` (whose audit module's account is kept, the line taken from the
    preload's). cuBLASLt, which cuBLAS's DT_NEEDED brought in, and libcuda.so.1, which
    cuBLASLt looks for itself while that CDLL runs, were asked for by no Python line."""
    toolkit.no_driver()
    script = tmp_path / "framework.py"
    script.write_text(FRAMEWORK)
    missing = toolkit.missing("cudnn")
    argv = (sys.executable, script, toolkit.path("cublas"), missing)
    if view == "preload":
        completed, _, _ = trace_run(*map(str, argv), double=False)
        assert completed.returncode == 0, completed.stderr
        trace_path = completed.run_dir / "trace.pftrace.zst"
    else:
        run_both(build_dir, tmp_path, "", *argv)
        trace_path = tmp_path / "trace.pftrace.zst"
    (p,) = cudatrace_cmd.report(build_dir, trace_path)["processes"]
    assert {lib["seen_by"] for lib in p["libraries"]} == {view}
    libs = {lib["family"]: lib for lib in p["libraries"]}
    cublas = libs["cublas"]
    line = {text.strip(): n for n, text in enumerate(FRAMEWORK.splitlines(), 1)}
    assert cublas["requested_from"] == f"{script}:{line['ctypes.CDLL(sys.argv[1])']} in <module>"
    assert os.path.basename(cublas["requested_by"]).startswith("_ctypes")
    assert "requested_from" not in libs["cublasLt"]
    failed = {f["requested_as"]: f for f in p["failed_loads"]}
    asked = f"{script}:{line['ctypes.CDLL(name)']} in load_optional"
    assert failed[missing]["requested_from"] == asked
    assert "requested_from" not in failed["libcuda.so.1"]
    text = cudatrace_cmd.run(build_dir, "report", trace_path).stdout
    assert (f"  failed load    {missing} (asked for by {asked} (through "
            f"{failed[missing]['requested_by']}); searched ") in text


def report_of_view(trace_run, build_dir, tmp_path, view, args, library_path=""):
    """(process, findings, text report) of dlopen_only ARGS under a bare LD_PRELOAD
    ("preload") or under `cudatrace run` ("audit"), with LD_LIBRARY_PATH=library_path."""
    if view == "preload":
        completed, _, _ = trace_run("dlopen_only", *args, double=False,
                                    env={"LD_LIBRARY_PATH": library_path})
        assert completed.returncode == 0, completed.stderr
        trace_path = completed.run_dir / "trace.pftrace.zst"
    else:
        run_both(build_dir, tmp_path, library_path, os.path.join(build_dir, "tests", "dlopen_only"),
                 *args)
        trace_path = tmp_path / "trace.pftrace.zst"
    (p,) = (r := cudatrace_cmd.report(build_dir, trace_path))["processes"]
    text = cudatrace_cmd.run(build_dir, "report", trace_path).stdout
    return p, r["findings"], text


def failed_load_lines(text):
    return [line for line in text.splitlines() if line.startswith("  failed load ")]


@pytest.mark.parametrize("view", ["preload", "audit"])
@pytest.mark.parametrize("twin", [False, True])
def test_cudnn_probes_for_its_sub_library_are_no_failures(trace_run, build_dir, tmp_path, view,
                                                          twin):
    """cudnnGetVersion makes cuDNN 9 dlopen libcudnn_graph.so.MAJOR.MINOR.PATCH, then
    .MAJOR.MINOR, then .MAJOR, the first name that loads winning: with only .MAJOR
    installed, the first two are probes, folded under the library that loaded, never a
    failed load or a finding. The twin also asks for a major of libcudnn_graph that is
    installed nowhere: that one is a failure, reported as before, though another
    object loaded a libcudnn_graph."""
    cudnn, graph_name = toolkit.path("cudnn"), toolkit.soname("cudnn_graph")
    missing = toolkit.missing("cudnn_graph")
    requester = os.path.join(build_dir, "tests", "dlopen_only")
    args = ["--call", "cudnnGetVersion", cudnn] + ([missing] if twin else [])
    p, findings, text = report_of_view(trace_run, build_dir, tmp_path, view, args)
    assert [(f["requested_as"], f["requested_by"], f["seen_by"], f["attempts"])
            for f in p["failed_loads"]] == ([(missing, requester, view, 1)] if twin else [])
    assert [f["id"] for f in findings] == (["library-load-failed"] if twin else [])
    assert [line.split(" (")[0] for line in failed_load_lines(text)] == (
        [f"  failed load    {missing}"] if twin else [])
    graph = next(lib for lib in p["libraries"] if lib["family"] == "cudnn_graph")
    assert (graph["requested_as"], graph["requested_by"]) == (graph_name, cudnn)
    version = cudnn_version()
    probed = [f"libcudnn_graph.so.{version[0]}.{version[1]}.{version[2]}",
              f"libcudnn_graph.so.{version[0]}.{version[1]}"]
    # In the order the trace has them: the preload writes unsettled requests at exit.
    assert sorted(graph["probes"], key=lambda probe: probe["requested_as"]) == [
        {"requested_as": name, "requested_by": cudnn, "seen_by": view, "attempts": 1,
         "found_as": graph_name} for name in sorted(probed)]
    lines = text.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("  library        cudnn_graph "))
    assert sorted(lines[at + 1:at + 3]) == [
        f"  probe          {name} (asked for by {cudnn}, which got this library as {graph_name})"
        for name in sorted(probed)]
    if twin:
        (failed,) = p["failed_loads"]
        (finding,) = findings
        assert finding["message"].startswith(
            f"{missing} could not be loaded (asked for by {requester}): {failed['error']}; "
            "searched ")
        assert finding["evidence"]["failed_loads"] == [failed]
        assert failed_load_lines(text)[0].startswith(
            f"  failed load    {missing} (asked for by {requester}; searched ")


def cudnn_version():
    """cuDNN's (MAJOR, MINOR, PATCH) as the toolkit's cudnn_version.h defines it."""
    header = os.path.join(toolkit.HOME, "include", "cudnn_version.h")
    if not os.path.exists(header):
        pytest.skip(f"the toolkit has no {header}")
    with open(header) as f:
        text = f.read()
    return tuple(int(re.search(rf"#define CUDNN_{part} (\d+)", text).group(1))
                 for part in ("MAJOR", "MINOR", "PATCHLEVEL"))


@pytest.mark.parametrize("view", ["preload", "audit"])
@pytest.mark.parametrize("twin", [False, True])
def test_rtld_noload_queries_are_no_failures(trace_run, build_dir, tmp_path, view, twin):
    """A framework asks with RTLD_NOLOAD whether a library is loaded before it loads it:
    a query loads nothing by design, so a name it does not find (one installed nowhere,
    one installed but not loaded yet) is counted as a query, never a failed load or a
    finding; a query that finds its library is nothing to report. The audit module
    cannot tell a query from a load, so its failed searches are matched with the
    preload's queries. The twin then loads the name installed nowhere: one failure,
    one attempt, besides the query."""
    cudnn, missing = toolkit.soname("cudnn"), toolkit.missing("cudnn_graph")
    args = ["--query", missing, "--query", cudnn, cudnn, "--query", cudnn] + (
        [missing] if twin else [])
    p, findings, text = report_of_view(trace_run, build_dir, tmp_path, view, args,
                                       library_path=toolkit.LIB)
    requester = os.path.join(build_dir, "tests", "dlopen_only")
    assert [(f["requested_as"], f["requested_by"], f["seen_by"], f["attempts"])
            for f in p["failed_loads"]] == ([(missing, requester, view, 1)] if twin else [])
    assert [f["id"] for f in findings] == (["library-load-failed"] if twin else [])
    assert len(failed_load_lines(text)) == twin
    assert p["queries"] == [{"requested_as": name, "requested_by": requester,
                             "seen_by": "preload", "attempts": 1} for name in (missing, cudnn)]
    assert [line for line in text.splitlines() if line.startswith("  query ")] == [
        f"  query          {name} (asked for by {requester} with RTLD_NOLOAD, which loads "
        "nothing)" for name in (missing, cudnn)]


def test_queries_alone_do_not_touch_cuda(trace_run, build_dir, tmp_path):
    """Asking whether CUDA libraries are loaded, and being told no, loads nothing: the
    process leaves no trace, as one that never touched CUDA."""
    output = tmp_path / "queried.pftrace.zst"
    completed, _, _ = trace_run("dlopen_only", "--query", toolkit.soname("cudnn"), "--query",
                                toolkit.missing("cudnn_graph"), double=False,
                                env={"LD_LIBRARY_PATH": toolkit.LIB, "CUDATRACE_OUTPUT": output})
    assert completed.returncode == 0 and completed.stdout.count(" queried: ") == 2
    assert not output.exists()


def test_processes_that_never_touch_cuda_leave_nothing(build_dir, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDATRACE_")}
    env["LD_PRELOAD"] = os.path.join(build_dir, "libcudatrace.so")
    env["CUDATRACE_OUTPUT"] = str(tmp_path / "trace-%p.pftrace.zst")
    subprocess.run(["/bin/sh", "-c", "i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); "
                    "done"], env=env, check=True, timeout=120)
    done = subprocess.run([sys.executable, "-c", "import json, zlib, ctypes; "
                           "ctypes.CDLL('libz.so.1'); print('ok')"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout == "ok\n" and done.stderr == ""
    assert os.listdir(tmp_path) == []


def private_cudnn(tmp_path):
    """A framework's private cuDNN 9: libcudnn.so.9 (RUNPATH $ORIGIN) and the
    sub-library it dlopens by bare name, copied into one directory."""
    private = tmp_path / "site-packages" / "nvidia" / "cudnn" / "lib"
    private.mkdir(parents=True)
    for name in (toolkit.soname("cudnn"), toolkit.soname("cudnn_graph")):
        shutil.copy(os.path.join(toolkit.LIB, name), private)
    return private


# A framework loading its wheel's cuDNN from Python: ctypes, then the list
# of CUDA files mapped, as dlopen_only --maps prints it.
PYTHON_CUDNN = """import ctypes, sys
print("cudnnGetVersion ->", ctypes.CDLL(sys.argv[1]).cudnnGetVersion())
seen = []
for line in open("/proc/self/maps"):
    path = line[line.find("/"):].strip() if "/" in line else ""
    base = path.rsplit("/", 1)[-1]
    if base.startswith(("libcu", "libnccl")) and not base.startswith("libcudatrace") \\
            and path not in seen:
        seen.append(path)
        print("mapped", path)
"""


@pytest.mark.parametrize("launcher", ["c", "python"])
@pytest.mark.parametrize("conda", [False, True])
def test_private_cudnn_sublibraries(trace_run, build_dir, tmp_path, conda, launcher):
    """cudnnGetVersion makes cuDNN dlopen libcudnn_graph.so.9 by bare name: its
    own RUNPATH ($ORIGIN) must find the private copy, exactly as untraced,
    unless a conda-style LD_LIBRARY_PATH puts another copy first. From a C
    program and from Python (ctypes) alike; the same account and findings as
    under `cudatrace run`."""
    private = private_cudnn(tmp_path)
    conda_lib = tmp_path / "conda" / "lib"
    conda_lib.mkdir(parents=True)
    if conda:
        shutil.copy(toolkit.path("cudnn_graph"), conda_lib)
    if launcher == "c":
        args = (os.path.join(build_dir, "tests", "dlopen_only"), "--maps", "--call",
                "cudnnGetVersion", private / toolkit.soname("cudnn"))
    else:
        args = (sys.executable, "-c", PYTHON_CUDNN, private / toolkit.soname("cudnn"))
    env = {"LD_LIBRARY_PATH": str(conda_lib)}
    completed, _, _ = trace_run(*args, double=False, env=env)
    untraced, _, _ = trace_run(*args, double=False, env=env, preload=False)
    assert completed.stdout == untraced.stdout  # the same files mapped
    graph_dir = conda_lib if conda else private
    assert f"mapped {graph_dir / toolkit.soname('cudnn_graph')}\n" in completed.stdout
    p, findings = only_process(build_dir, completed)
    (graph,) = [lib for lib in p["libraries"] if lib["family"] == "cudnn_graph"]
    assert graph["requested_by"] == str(private / toolkit.soname("cudnn"))
    assert graph["seen_by"] == "preload"
    if conda:
        assert (graph["realpath"], graph["found_via"]) == (str(conda_lib / toolkit.soname("cudnn_graph")),
                                                           "LD_LIBRARY_PATH")
        assert [f["id"] for f in findings] == ["shadowed-library"]
    else:
        assert (graph["realpath"], graph["found_via"]) == (str(private / toolkit.soname("cudnn_graph")),
                                                           "DT_RUNPATH")
        assert findings == []
    # The same under `cudatrace run`, where the audit module is the witness.
    trace = run_both(build_dir, tmp_path, str(conda_lib), *args)
    assert loader_accounts(trace, "preload") == loader_accounts(trace, "audit")
    audited = cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")
    assert [f["id"] for f in audited["findings"]] == [f["id"] for f in findings]


def test_threads_loading_at_once(trace_run, build_dir):
    """Eight threads dlopen and dlclose CUDA libraries (and a missing one,
    reading dlerror) at once: no hang, the program's output unchanged, a valid
    trace whose every unload follows a load of the same file, and the missing
    library reported with glibc's error."""
    toolkit.cached(toolkit.soname("cufft")), toolkit.cached(toolkit.soname("cudnn"))
    args = ("dlopen_threads", 8, 20, toolkit.soname("cufft"), toolkit.soname("cudnn"), toolkit.missing("curand"))
    completed, trace, _ = trace_run(*args, double=False)
    untraced, _, _ = trace_run(*args, double=False, preload=False)
    assert completed.stdout == untraced.stdout and completed.returncode == 0
    assert f"{toolkit.soname('cufft')} loaded 160 times" in completed.stdout
    live = {}
    for i in sorted(instants(trace, "cuda.library.load") + instants(trace, "cuda.library.unload"),
                    key=lambda i: i["ts"]):
        path = i["args"]["realpath"]
        if i["name"] == "cuda.library.load":
            live[path] = live.get(path, 0) + 1
        else:
            assert live.get(path, 0) > 0, f"{path} unloaded before it was loaded"
            live[path] -= 1
    p, findings = only_process(build_dir, completed)
    (failed,) = p["failed_loads"]
    assert (failed["requested_as"], failed["attempts"]) == (toolkit.missing("curand"), 160)
    assert failed["error"].startswith(f"{toolkit.missing('curand')}: cannot open shared object file")
    assert [f["id"] for f in findings] == ["library-load-failed"]


def test_version_and_count_on_the_driverless_runtime(trace_run, build_dir):
    """The calls torch.cuda.is_available() makes, on the real runtime without a
    driver: both as slices with their results, the runtime's failed search for
    libcuda.so.1 with the directories searched, and driver-missing."""
    toolkit.no_driver()
    toolkit.cached("libcudart.so.13")  # the runtime the test programs are linked against
    completed, trace, _ = trace_run("version_and_count", double=False)
    untraced, _, _ = trace_run("version_and_count", double=False, preload=False)
    assert (completed.stdout, completed.returncode) == (untraced.stdout, untraced.returncode)
    printed = dict(line.split(" -> ") for line in completed.stdout.splitlines())
    slices = [(s["name"], s["args"]["result"]) for s in trace.slices]
    assert slices == [(name, int(printed[name].split()[0])) for name in
                      ("cudaRuntimeGetVersion", "cudaGetDeviceCount")]
    assert slices[1][1] != 0
    p, findings = only_process(build_dir, completed)
    (driver,) = p["failed_loads"]
    assert driver["requested_as"] == "libcuda.so.1"
    assert os.path.basename(driver["requested_by"]) == toolkit.soname("cudart")
    assert driver["searched"][-4:] == ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                       "/lib", "/usr/lib"]
    assert [f["id"] for f in findings] == ["driver-missing"]
    assert "; 1 calls failed with cudaErrorInsufficientDriver. Install" \
        in findings[0]["message"]


def test_a_version_query_alone_does_not_start_the_driver(trace_run, build_dir):
    """cudaRuntimeGetVersion does not initialise CUDA: the preload's own device
    queries must not either, so the runtime never looks for libcuda.so.1. The
    version the program was told is the report's, and the runtime file's own
    (its getter loads nothing), not the file name's major."""
    toolkit.cached("libcudart.so.13")
    completed, trace, _ = trace_run("version_and_count", "--version-only", double=False)
    assert [s["name"] for s in trace.slices] == ["cudaRuntimeGetVersion"]
    p, findings = only_process(build_dir, completed)
    assert p["failed_loads"] == [] and findings == []
    assert p["versions"] == {"runtime": toolkit.RUNTIME_VERSION, "driver": None}
    (cudart,) = [lib for lib in p["libraries"] if lib["family"] == "cudart"]
    assert (cudart["version"], cudart["version_from"]) == (toolkit.VERSION, "api")


def cublas_header_version():
    """cuBLAS's MAJOR.MINOR.PATCH as the toolkit's header defines it."""
    with open(os.path.join(toolkit.HOME, "include", "cublas_api.h")) as f:
        text = f.read()
    return ".".join(re.search(rf"#define CUBLAS_VER_{part} (\d+)", text).group(1)
                    for part in ("MAJOR", "MINOR", "PATCH"))


def test_a_later_failure_of_another_library_keeps_its_error(trace_run, build_dir):
    """cuBLASLt looks for libcuda.so.1 itself and fails without telling anyone; the
    framework then probes a library that is not CUDA's and reads that error. It is
    that load's, not the driver's. cuBLASLt's version is its own getter's, though the
    process made no CUDA call (asked at exit)."""
    toolkit.no_driver()
    script = ("import ctypes\n"
              f"ctypes.CDLL({toolkit.path('cublasLt')!r})\n"
              "try:\n    ctypes.CDLL('libnot-cuda-at-all.so')\n"
              "except OSError as e:\n    print('error', e)\n")
    completed, _, _ = trace_run(sys.executable, "-c", script, double=False)
    untraced, _, _ = trace_run(sys.executable, "-c", script, double=False, preload=False)
    assert completed.stdout == untraced.stdout and completed.returncode == 0
    assert completed.stdout.startswith("error libnot-cuda-at-all.so: cannot open")
    p, findings = only_process(build_dir, completed)
    (driver,) = p["failed_loads"]
    assert (driver["requested_as"], driver["requested_by"], driver["error"]) == (
        "libcuda.so.1", toolkit.path("cublasLt"), "not found in the directories searched")
    assert "libnot-cuda-at-all" not in json.dumps(findings)
    # No runtime call was hooked (cuBLASLt's own runtime is linked in statically): the
    # finding says so rather than counting zero failed calls.
    (missing,) = findings
    assert missing["id"] == "driver-missing"
    assert "; no call into a shared CUDA runtime was seen (a runtime linked statically" in \
        missing["message"]
    (lt,) = [lib for lib in p["libraries"] if lib["family"] == "cublasLt"]
    assert (lt["version"], lt["version_from"]) == (cublas_header_version(), "api")

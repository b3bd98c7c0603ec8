"""A load that fails on a dependency, as on a machine with another CUDA
major than a library was built for: the report names every dependency that
cannot be found (not only the first, where ld.so stops), the other majors of
them the machine has, and the files the failed load mapped and unmapped
again. Libraries built here whose DT_NEEDED names the real toolkit's
libraries and their absent other majors; under a bare LD_PRELOAD (the
collector works it out from the files) and under `cudatrace run` (the audit
module saw it)."""
import os
import shutil
import subprocess

import cudatrace_cmd
import perfetto_check
import toolkit


def build_library(folder, name, needed):
    """A library whose DT_NEEDED lists `needed` in that order, linked against
    empty stand-ins that are removed again: a name the toolkit lacks stays
    absent, one it has resolves to the toolkit's file."""
    stubs = folder / "stubs"
    stubs.mkdir(parents=True, exist_ok=True)
    for soname in needed:
        subprocess.run(["gcc", "-shared", "-o", str(stubs / soname), "-x", "c", "/dev/null",
                        f"-Wl,-soname,{soname}"], check=True)
    path = folder / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(path), "-x", "c", "/dev/null",
                    f"-L{stubs}", "-Wl,--no-as-needed", *[f"-l:{s}" for s in needed]],
                   check=True)
    shutil.rmtree(stubs)
    return str(path)


def traced(trace_run, build_dir, library, audit, tmp_path):
    """Runs dlopen_only on `library` under a bare LD_PRELOAD or under
    `cudatrace run`: (what it printed, the report's process, its findings)."""
    program = os.path.join(build_dir, "tests", "dlopen_only")
    if not audit:
        done, _, _ = trace_run("dlopen_only", library, double=False)
        trace_path = done.run_dir / "trace.pftrace.zst"
    else:
        trace_path = tmp_path / "audit.pftrace.zst"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and
               k not in ("LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH")}
        done = cudatrace_cmd.run(build_dir, "run", "-q", "-o", trace_path, "--", program, library,
                                 cwd=tmp_path, env=env)
        perfetto_check.load(trace_path)
    report = cudatrace_cmd.report(build_dir, trace_path)
    (p,) = report["processes"]
    return done.stdout, p, report["findings"]


def in_toolkit(soname):
    return os.path.join(toolkit.LIB, soname)


def test_every_missing_cuda12_library_and_the_cuda13_ones_installed(trace_run, build_dir,
                                                                    tmp_path):
    families = ["cublasLt", "cublas", "cufft", "cudart"]
    absent = [toolkit.missing(f) for f in families]  # libcublasLt.so.12, ...
    installed = [in_toolkit(toolkit.soname(f)) for f in families]  # libcublasLt.so.13, ...
    library = build_library(tmp_path / "lib", "libprovider_cu12.so", absent)
    built_for, has = int(toolkit.missing("cudart").rsplit(".", 1)[1]), toolkit.VERSION[:2]
    for audit in (False, True):
        stdout, p, findings = traced(trace_run, build_dir, library, audit, tmp_path)
        error = f"{absent[0]}: cannot open shared object file: No such file or directory"
        assert stdout == f"dlopen_only: {library} {error}\n"
        (failed,) = p["failed_loads"]
        assert (failed["requested_as"], failed["requested_by"]) == (absent[0], library)
        assert failed["seen_by"] == ("audit" if audit else "preload")
        assert failed["missing"] == absent
        assert failed["other_majors"] == installed
        assert failed["rolled_back"] == []
        (finding,) = findings
        assert finding["id"] == "library-load-failed"
        assert finding["evidence"]["failed_loads"] == [failed]
        searched = ":".join(failed["searched"])
        assert finding["message"] == (
            f"{absent[0]} could not be loaded (asked for by {library}): "
            f"{failed['error']}; searched {searched}. {library} needs 4 libraries that cannot be "
            f"found (the loader stops at the first): {', '.join(absent)}. "
            + release_fix(built_for, has, installed))


def release_fix(built_for, has, installed):
    """The fix library-load-failed gives when the names show the CUDA releases."""
    return (f"It was built for CUDA {built_for}; this machine has CUDA {has}'s "
            f"({', '.join(installed)}): install the CUDA {built_for} runtime wheels or a build "
            f"for CUDA {has}.")


def test_healthy_twin_all_cuda13_dependencies_load(trace_run, build_dir, tmp_path):
    families = ["cublasLt", "cublas", "cufft", "cudart"]
    names = [toolkit.soname(f) for f in families]
    library = build_library(tmp_path / "lib", "libprovider_cu13.so", names)
    for audit in (False, True):
        stdout, p, findings = traced(trace_run, build_dir, library, audit, tmp_path)
        assert stdout == f"dlopen_only: {library} loaded\n"
        # Without a GPU driver the runtime says so; nothing else is wrong.
        assert [f["id"] for f in findings if f["id"] != "driver-missing"] == []
        # cuBLASLt probes for the driver with dlopen: no dependency of anything is missing.
        assert {f["requested_as"] for f in p["failed_loads"]} <= {"libcuda.so.1"}
        assert all(f["missing"] == [] and f["rolled_back"] == [] for f in p["failed_loads"])
        assert {lib["family"] for lib in p["libraries"]} >= set(families)
        assert all(lib["rolled_back_by"] is None and lib["unloaded_ns"] is None
                   for lib in p["libraries"])


def test_load_failing_on_its_third_dependency_rolls_back_two(trace_run, build_dir, tmp_path):
    mapped = [toolkit.soname("cublas"), toolkit.soname("cufft")]  # found, mapped, unmapped
    absent = toolkit.missing("cudart")
    library = build_library(tmp_path / "lib", "libprovider_rollback.so", [*mapped, absent])
    built_for, has = int(absent.rsplit(".", 1)[1]), toolkit.VERSION[:2]
    for audit in (False, True):
        stdout, p, findings = traced(trace_run, build_dir, library, audit, tmp_path)
        view = "audit" if audit else "preload"
        (failed,) = p["failed_loads"]
        assert (failed["requested_as"], failed["requested_by"], failed["seen_by"]) == (
            absent, library, view)
        assert failed["missing"] == [absent]
        assert failed["other_majors"] == [in_toolkit(toolkit.soname("cudart"))]
        rolled = [lib for lib in p["libraries"] if lib["rolled_back_by"]]
        # ld.so maps breadth first: cuBLAS's own libcublasLt was never mapped.
        assert [lib["realpath"] for lib in rolled] == [os.path.realpath(in_toolkit(n))
                                                       for n in mapped]
        assert failed["rolled_back"] == [lib["realpath"] for lib in rolled]
        for lib, name in zip(rolled, mapped):
            assert (lib["requested_as"], lib["requested_by"], lib["found_via"],
                    lib["seen_by"], lib["rolled_back_by"]) == (name, library, "ld.so.cache",
                                                              view, absent)
            assert 0 < lib["loaded_ns"] <= lib["unloaded_ns"]
        assert [lib["family"] for lib in p["libraries"]] == ["cublas", "cufft"]
        (finding,) = findings
        assert finding["id"] == "library-load-failed"
        assert finding["evidence"]["failed_loads"] == [failed]
        assert finding["evidence"]["libraries"] == rolled
        searched = ":".join(failed["searched"])
        assert finding["message"] == (
            f"{absent} could not be loaded (asked for by {library}): {failed['error']}; "
            f"searched {searched}. The failed load had mapped "
            f"{', '.join(lib['realpath'] for lib in rolled)} and unmapped them again. "
            + release_fix(built_for, has, [in_toolkit(toolkit.soname("cudart"))]))

"""The loader's view of CUDA library loads, under `cudatrace run` (which adds
the rtld-audit module): which name each library was asked for as, by which
object, and through which search list the file was found; the loads that
failed and the directories searched. Also: the same files load with and
without the tracer. Real toolkit libraries throughout (libcublas has
RUNPATH $ORIGIN and pulls in libcublasLt through it)."""
import os
import shutil
import subprocess

import cudatrace_cmd
import toolkit



def run_traced(build_dir, tmp_path, *libs, traced=True):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k not in ("LD_PRELOAD",
                                                                          "LD_AUDIT")}
    env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    program = [os.path.join(build_dir, "tests", "load_libs"), *map(str, libs)]
    if traced:
        return cudatrace_cmd.run(build_dir, "run", "-q", "-o", tmp_path / "trace.pftrace.zst",
                                 "--", *program, cwd=tmp_path, env=env)
    done = subprocess.run(program, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_how_each_library_was_found(build_dir, tmp_path):
    run_traced(build_dir, tmp_path, toolkit.cached(toolkit.soname("cublas")), toolkit.path("cudnn"))
    r = cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")
    program = os.path.join(build_dir, "tests", "load_libs")
    libs = {lib["family"]: lib for lib in r["processes"][0]["libraries"]}
    assert (libs["cudart"]["requested_as"], libs["cudart"]["requested_by"],
            libs["cudart"]["found_via"]) == ("libcudart.so.13", program, "LD_LIBRARY_PATH")
    assert (libs["cublas"]["requested_as"], libs["cublas"]["requested_by"],
            libs["cublas"]["found_via"]) == (toolkit.cached(toolkit.soname("cublas")), program, "ld.so.cache")
    assert libs["cublasLt"]["requested_as"] == toolkit.soname("cublasLt")
    assert os.path.realpath(libs["cublasLt"]["requested_by"]) == libs["cublas"]["realpath"]
    assert libs["cublasLt"]["found_via"] == "DT_RUNPATH"
    assert libs["cudnn"]["found_via"] == "absolute path"
    assert r["findings"] == []


def test_failed_load_names_what_was_searched(build_dir, tmp_path):
    run_traced(build_dir, tmp_path, toolkit.missing("cudnn"))
    r = cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")
    failed = {f["requested_as"]: f for f in r["processes"][0]["failed_loads"]}
    missing = failed[toolkit.missing("cudnn")]
    assert missing["requested_by"] == os.path.join(build_dir, "tests", "load_libs")
    assert missing["searched"][0] == os.path.join(build_dir, "double")  # LD_LIBRARY_PATH first
    assert "/usr/lib/x86_64-linux-gnu" in missing["searched"]
    (finding,) = r["findings"]
    assert finding["id"] == "library-load-failed"
    assert finding["evidence"]["failed_loads"] == [missing]
    assert toolkit.missing("cudnn") in finding["message"]


def test_healthy_twin_of_the_failed_load(build_dir, tmp_path):
    run_traced(build_dir, tmp_path, toolkit.cached(toolkit.soname("cudnn")))
    r = cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")
    assert r["processes"][0]["failed_loads"] == []
    assert r["findings"] == []


def test_same_files_load_with_and_without_the_tracer(build_dir, tmp_path):
    # Including the libraries whose own version getters the tracer calls
    # (cudart, cublas, nccl): those must load nothing either.
    libs = (toolkit.cached(toolkit.soname("cublas")), toolkit.cached(toolkit.soname("cudnn")), toolkit.cached(toolkit.soname("cufft")),
            toolkit.path("nccl"))
    plain = run_traced(build_dir, tmp_path, *libs, traced=False)
    traced = run_traced(build_dir, tmp_path, *libs)
    mapped = [l for l in plain.stdout.splitlines() if l.startswith("load_libs: mapped ")]
    assert len(mapped) >= 6  # cudart, cublas, cublasLt, cudnn, cufft, nccl
    assert traced.stdout == plain.stdout


def run_with_path(build_dir, tmp_path, library_path, *libs):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k not in ("LD_PRELOAD",
                                                                          "LD_AUDIT")}
    env["LD_LIBRARY_PATH"] = library_path
    cudatrace_cmd.run(build_dir, "run", "-q", "-o", tmp_path / "trace.pftrace.zst", "--",
                      os.path.join(build_dir, "tests", "load_libs"), *libs, cwd=tmp_path, env=env)
    return cudatrace_cmd.report(build_dir, tmp_path / "trace.pftrace.zst")


def test_ld_library_path_shadows_a_runpath_copy(build_dir, tmp_path, runpath_layout):
    own, other = runpath_layout
    double = os.path.join(build_dir, "double")
    r = run_with_path(build_dir, tmp_path, f"{double}:{other}", own / "librunpath_user.so")
    (finding,) = r["findings"]
    assert finding["id"] == "shadowed-library" and finding["severity"] == "warning"
    (lib,) = finding["evidence"]["libraries"]
    assert lib["realpath"] == str(other / "libcudnn.so.9")
    assert lib["found_via"] == "LD_LIBRARY_PATH"
    assert lib["requested_by"] == str(own / "librunpath_user.so")
    assert finding["evidence"]["runpath_copy"] == str(own / "libcudnn.so.9")


def test_runpath_copy_used_is_healthy(build_dir, tmp_path, runpath_layout):
    own, _ = runpath_layout
    r = run_with_path(build_dir, tmp_path, os.path.join(build_dir, "double"),
                      own / "librunpath_user.so")
    assert r["findings"] == []
    (cudnn,) = [l for l in r["processes"][0]["libraries"] if l["family"] == "cudnn"]
    assert cudnn["realpath"] == str(own / "libcudnn.so.9")
    assert cudnn["found_via"] == "DT_RUNPATH"


def test_runtime_from_another_toolkit(build_dir, tmp_path):
    # A stale toolkit directory (named as NVIDIA installs them) on the search
    # path: a real runtime file, under another toolkit's version.
    stale = tmp_path / "cuda-12.4" / "lib64"
    stale.mkdir(parents=True)
    shutil.copy(toolkit.path("cudart"), stale / "libcudart.so.12")
    r = run_with_path(build_dir, tmp_path, f"{os.path.join(build_dir, 'double')}:{stale}",
                      "libcudart.so.12")
    ids = sorted(f["id"] for f in r["findings"])
    assert ids == ["duplicate-library", "toolkit-mismatch"]
    (mismatch,) = [f for f in r["findings"] if f["id"] == "toolkit-mismatch"]
    (lib,) = mismatch["evidence"]["libraries"]
    assert lib["realpath"] == str(stale / "libcudart.so.12")
    assert "CUDA 12.4" in mismatch["message"] and f"CUDA {toolkit.VERSION}" in mismatch["message"]


def test_loads_carry_their_time_in_load_order(build_dir, tmp_path):
    import perfetto_check
    run_traced(build_dir, tmp_path, toolkit.cached(toolkit.soname("cublas")))
    trace = perfetto_check.load(tmp_path / "trace.pftrace.zst")
    loads = sorted((i for i in trace.instants if i["name"] == "cuda.library.load" and
                    i["args"]["seen_by"] == "audit"), key=lambda i: i["ts"])
    assert [i["args"]["requested_as"] for i in loads] == [
        "libcudart.so.13", toolkit.cached(toolkit.soname("cublas")), toolkit.soname("cublasLt")]
    (end,) = [i for i in trace.instants if i["name"] == "cudatrace.end"]
    # The runtime is the program's DT_NEEDED: loaded before the preload's
    # constructor took the process start time; libcublas was dlopen'ed after.
    assert loads[0]["ts"] < end["args"]["process_start_ns"] < loads[1]["ts"] < end["ts"]


def test_failed_load_of_a_file_that_exists(build_dir, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "libcudnn.so.8").write_text("not a shared object\n")
    r = run_with_path(build_dir, tmp_path, f"{os.path.join(build_dir, 'double')}:{broken}",
                      "libcudnn.so.8")
    (failed,) = [f for f in r["processes"][0]["failed_loads"]
                 if f["requested_as"] == "libcudnn.so.8"]
    assert failed["error"].startswith(f"{broken / 'libcudnn.so.8'} exists but could not be loaded")
    assert str(broken) in failed["searched"]
    (finding,) = r["findings"]
    assert finding["id"] == "library-load-failed" and failed["error"] in finding["message"]

"""`cudatrace run`: runs the program under the preload beside the binary,
maps its options onto CUDATRACE_* variables, and keeps the program's exit
status; bad usage is one line and status 2."""
import collections
import os
import re
import shlex
import shutil
import sys

import cudatrace_cmd
import perfetto_check

SUMMARY = re.compile(r"cudatrace: trace (.+): (\d+) calls recorded, (\d+) dropped, (\d+) bytes\n")


def run_cli(build_dir, cwd, *args, double=True, status=0, **extra):
    """cudatrace_cmd.run of `run ARGS` in `cwd`, on the runtime double unless double=False,
    with the variables `extra` and no CUDATRACE_* setting of the caller's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k != "LD_PRELOAD"}
    env["CUDATRACE_SAMPLE_HZ"] = "0"  # their slices are all calls (conftest.SAMPLE_HZ)
    env.update({k: str(v) for k, v in extra.items()})
    if double:
        env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    return cudatrace_cmd.run(build_dir, "run", *args, cwd=cwd, env=env, status=status)


def the_process(trace, argv):
    """The trace's one process, which must be the program run (`run` execs it), and its
    closing instant's args."""
    (process,) = trace.processes.values()
    assert process["cmdline"] == argv
    (end,) = [i["args"] for i in trace.instants if i["name"] == "cudatrace.end"]
    return process, end


def audit_saw_runtime_load(trace):
    """The rtld-audit module `run` sets as LD_AUDIT reported the runtime's load."""
    return any(i["name"] == "cuda.library.load" and i["args"]["seen_by"] == "audit"
               and i["args"]["requested_as"] == "libcudart.so.13" for i in trace.instants)


def test_run_traces_into_the_named_file_quietly(build_dir, tmp_path, program_calls):
    argv = [os.path.join(build_dir, "tests", "api_mix"), "2"]
    done = run_cli(build_dir, tmp_path, "-o", "out.pftrace.zst", "-q", "--", *argv)
    assert done.stderr == ""
    assert done.stdout == "api_mix: 2 reps\n"
    assert os.listdir(tmp_path) == ["out.pftrace.zst"]
    trace = perfetto_check.load(tmp_path / "out.pftrace.zst")
    process, end = the_process(trace, argv)
    # Every call the program made, by the double's count of an untraced run, and nothing more.
    assert collections.Counter(s["name"] for s in trace.slices) == program_calls("api_mix", 2)
    assert {(s["pid"], s["tid"]) for s in trace.slices} == {(process["pid"], process["pid"])}
    assert (end["exit"], end["calls"], end["dropped"]) == ("normal", len(trace.slices), 0)
    assert audit_saw_runtime_load(trace)


def test_run_keeps_the_programs_exit_status(build_dir, tmp_path):
    argv = [os.path.join(build_dir, "tests", "driverless")]
    done = run_cli(build_dir, tmp_path, "--output", "t.pftrace.zst", "--", *argv, double=False,
                   status=3)
    assert "cudaMalloc -> 35" in done.stdout
    trace = perfetto_check.load(tmp_path / "t.pftrace.zst")
    _, end = the_process(trace, argv)
    # Each call the program made, in its order, with the code the program was given.
    printed = [line.split(" -> ") for line in done.stdout.splitlines() if " -> " in line]
    assert len(printed) == 6
    assert [(s["name"], s["args"]["result"]) for s in trace.slices] == [
        (name, int(code)) for name, code in printed]
    assert (end["exit"], end["calls"], end["dropped"]) == ("normal", 6, 0)
    assert audit_saw_runtime_load(trace)


def test_run_ring_records_option_reaches_the_preload(build_dir, tmp_path, program_calls):
    launches = 100000
    argv = [os.path.join(build_dir, "tests", "launch_loop"), str(launches)]
    done = run_cli(build_dir, tmp_path, "--ring-records", "64", "-o", "t.pftrace.zst", "--",
                   *argv, CUDATRACE_SPILL_MB=0)  # full rings drop: what is counted
    path, recorded, dropped, size = SUMMARY.fullmatch(done.stderr).groups()
    recorded, dropped = int(recorded), int(dropped)
    assert (path, int(size)) == ("t.pftrace.zst", os.path.getsize(tmp_path / path))
    # Every call the program made is recorded or counted as dropped, by the double's count.
    issued = sum(program_calls("launch_loop", launches).values())
    assert issued == launches + 1  # and one cudaDeviceSynchronize
    assert recorded + dropped == issued
    # 100000 back-to-back calls into a 64-record ring outrun the collector.
    assert dropped > 0
    trace = perfetto_check.load(tmp_path / path)
    _, end = the_process(trace, argv)
    assert len(trace.slices) == end["calls"] == recorded
    assert end["dropped"] == trace.counters["cudatrace dropped records"][-1][1] == dropped


def test_run_bad_usage(build_dir, tmp_path):
    for args, status in ((("--bogus", "--", "true"), 2), ((), 2), (("-o",), 2),
                         (("--", "/nonexistent/program"), 127)):
        done = run_cli(build_dir, tmp_path, *args, status=status)
        line, *usage = done.stderr.splitlines()
        assert line.startswith("cudatrace: ") and all(u.startswith(("usage: ", " ")) for u in usage)
        assert done.stdout == ""


NO_TRACE = "cudatrace: no trace: nothing in this run loaded a CUDA library or called CUDA"
CPU_TORCH = ("; PyTorch was loaded without its CUDA part ({}): a CPU-only build, as "
             "torch.version.cuda being None shows")


def python(code):
    return [sys.executable, "-c", code]


def fake_torch(build_dir, tmp_path):
    """A library named as PyTorch's CPU part (the name is what the tracer goes by)."""
    lib = tmp_path / "torch" / "lib"
    lib.mkdir(parents=True)
    shutil.copy(os.path.join(build_dir, "tests", "libpython_frames_probe.so"),
                lib / "libtorch_cpu.so")
    return str(lib / "libtorch_cpu.so")


def test_run_says_in_one_line_when_nothing_touched_cuda(build_dir, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    done = run_cli(build_dir, work, "--", *python("print(1); raise SystemExit(3)"), status=3)
    assert (done.returncode, done.stdout, done.stderr) == (3, "1\n", NO_TRACE + "\n")
    assert os.listdir(work) == []
    quiet = run_cli(build_dir, work, "-q", "--", *python("print(1)"))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "1\n", "")


def test_run_names_a_cpu_only_pytorch_and_hidden_gpus_in_the_program_or_a_child(build_dir,
                                                                               tmp_path):
    torch = fake_torch(build_dir, tmp_path)
    load = python(f"import ctypes; ctypes.CDLL({torch!r})")
    alone = run_cli(build_dir, tmp_path, "--", *load)
    assert (alone.returncode, alone.stderr) == (0, NO_TRACE + CPU_TORCH.format(torch) + "\n")
    # The same from a child that subprocess started with its descriptors closed, under a
    # shell, and with every GPU hidden.
    child = python(f"import subprocess; subprocess.run({load!r}, check=True)")
    for visible in ("", "-1"):
        done = run_cli(build_dir, tmp_path, "--", "sh", "-c", " ".join(map(shlex.quote, child)),
                       CUDA_VISIBLE_DEVICES=visible)
        assert (done.returncode, done.stderr) == (
            0, NO_TRACE + CPU_TORCH.format(torch) +
            f"; CUDA_VISIBLE_DEVICES={visible} hides every GPU\n")
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".zst")]


def test_run_stays_silent_when_a_child_touched_cuda(build_dir, tmp_path):
    """The twins: a grandchild (started by subprocess, descriptors closed) that calls CUDA
    writes its trace, and the run says nothing more, PyTorch's CPU part loaded or not."""
    torch = fake_torch(build_dir, tmp_path)
    api_mix = [os.path.join(build_dir, "tests", "api_mix"), "1"]
    code = (f"import ctypes, subprocess; ctypes.CDLL({torch!r}); "
            f"subprocess.run({api_mix!r}, check=True)")
    done = run_cli(build_dir, tmp_path, "--", "sh", "-c",
                   " ".join(map(shlex.quote, python(code))))
    assert SUMMARY.fullmatch(done.stderr)
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".pftrace.zst")]) == 1

"""`cudatrace run`: runs the program under the preload beside the binary,
maps its options onto CUDATRACE_* variables, and keeps the program's exit
status; bad usage is one line and status 2."""
import os
import subprocess


def run_cli(build_dir, cwd, *args, double=True):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDATRACE_", "CT_DOUBLE")) and k != "LD_PRELOAD"}
    if double:
        env["LD_LIBRARY_PATH"] = os.path.join(build_dir, "double")
    return subprocess.run([os.path.join(build_dir, "cudatrace"), "run", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60)


def test_run_traces_into_the_named_file_quietly(build_dir, tmp_path):
    done = run_cli(build_dir, tmp_path, "-o", "out.pftrace.zst", "-q", "--",
                   os.path.join(build_dir, "tests", "api_mix"), "2")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == "api_mix: 2 reps\n"
    assert os.listdir(tmp_path) == ["out.pftrace.zst"]


def test_run_keeps_the_programs_exit_status(build_dir, tmp_path):
    done = run_cli(build_dir, tmp_path, "--output", "t.pftrace.zst", "--",
                   os.path.join(build_dir, "tests", "driverless"), double=False)
    assert done.returncode == 3
    assert "cudaMalloc -> 35" in done.stdout
    assert (tmp_path / "t.pftrace.zst").exists()


def test_run_ring_records_option_reaches_the_preload(build_dir, tmp_path):
    done = run_cli(build_dir, tmp_path, "--ring-records", "64", "-o", "t.pftrace.zst", "--",
                   os.path.join(build_dir, "tests", "launch_loop"), "100000")
    assert done.returncode == 0
    dropped = int(done.stderr.split(" dropped")[0].rsplit(" ", 1)[1])
    assert dropped > 0, done.stderr


def test_run_bad_usage(build_dir, tmp_path):
    for args, status in ((("--bogus", "--", "true"), 2), ((), 2), (("-o",), 2),
                         (("--", "/nonexistent/program"), 127)):
        done = run_cli(build_dir, tmp_path, *args)
        assert done.returncode == status, (args, done.stderr)
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("cudatrace: ")
        assert done.stdout == ""

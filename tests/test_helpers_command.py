"""tests/cudatrace_cmd.py, the one way the tests run the `cudatrace` command: a command that
exits with another status than the test expects, writes to stderr where it must not, runs over
its time or prints no JSON fails the test with its command line, status and what it said; the
JSON it prints is read; and no other test file spells out running the built command itself."""
import ast
import glob
import os
import re

import pytest

import cudatrace_cmd
from test_contract_trace_format import process_trace

PID = 42  # process_trace's


def failure(call, *args, **options):
    """The message a test fails with when call(*args, **options) fails it."""
    with pytest.raises(pytest.fail.Exception) as failed:
        call(*args, **options)
    return str(failed.value)


def test_an_unexpected_status_names_the_command_line_and_its_stderr(build_dir, tmp_path):
    missing = tmp_path / "absent.pftrace.zst"
    message = failure(cudatrace_cmd.run, build_dir, "report", "--json", missing)
    command, said = message.split("\n", 1)
    assert command == f"{cudatrace_cmd.path(build_dir)} report --json {missing}"
    assert said.startswith("exited with status 1, not 0; stderr:\ncudatrace: "), said
    assert str(missing) in said.split("stderr:", 1)[1]


def test_the_status_expected_passes_and_none_takes_any(build_dir, tmp_path):
    missing = tmp_path / "absent.pftrace.zst"
    assert cudatrace_cmd.run(build_dir, "report", missing, status=1).returncode == 1
    assert cudatrace_cmd.run(build_dir, "report", missing, status=None).returncode == 1
    assert "exited with status 1, not 2" in failure(cudatrace_cmd.run, build_dir, "report",
                                                    missing, status=2)


def test_quiet_fails_on_anything_on_stderr(build_dir, tmp_path):
    args = ("run", "-q", "--", "sh", "-c", "echo on stderr >&2")
    assert cudatrace_cmd.run(build_dir, *args, cwd=tmp_path).stderr == "on stderr\n"
    message = failure(cudatrace_cmd.run, build_dir, *args, cwd=tmp_path, quiet=True)
    assert message.endswith("\nwrote to stderr; stderr:\non stderr\n"), message


def test_a_command_over_its_time_is_ended_and_says_so(build_dir, write_trace):
    trace = write_trace(process_trace(1))
    message = failure(cudatrace_cmd.run, build_dir, "open", "--no-browser", "--port", "0",
                      "--timeout", "60", trace, timeout=1)
    assert message.split("\n")[1].startswith("ran over 1 s"), message


def test_a_long_stderr_shows_its_end(build_dir, tmp_path):
    message = failure(cudatrace_cmd.run, build_dir, "run", "-q", "--", "sh", "-c",
                      "seq 100000 >&2; exit 3", cwd=tmp_path)
    assert "exited with status 3, not 0; stderr:\n..." in message
    assert message.endswith("\n99999\n100000\n") and "\n1\n2\n" not in message
    assert len(message) < cudatrace_cmd.SHOWN_CHARS + 1000


def test_the_json_printed_is_read(build_dir, write_trace):
    trace = write_trace(process_trace(1))
    report = cudatrace_cmd.report(build_dir, trace)
    assert report["schema"] == "cudatrace.report/1"
    assert [p["pid"] for p in report["processes"]] == [PID]
    assert cudatrace_cmd.json_of(build_dir, "report", "--json", trace) == report


def test_output_that_is_no_json_says_what_it_was(build_dir, write_trace):
    trace = write_trace(process_trace(1))
    message = failure(cudatrace_cmd.json_of, build_dir, "report", trace)
    command, said = message.split("\n", 1)
    assert command == f"{cudatrace_cmd.path(build_dir)} report {trace}"
    assert said.startswith("printed no JSON document ("), said
    assert f"stdout:\nprocess {PID}" in said


def spelled_out(source):
    """The line numbers where `source` spells out running the built command itself: its path
    joined from a build folder and "cudatrace" (os.path.join, pathlib's /, an f-string or a
    literal), or cudatrace_cmd.path handed to subprocess."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "os.path.join":
            parts = node.args
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = [node.left, node.right]
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
        else:
            parts = []
        if (len(parts) > 1 and isinstance(parts[-1], ast.Constant)
                and re.fullmatch(r"/?cudatrace", str(parts[-1].value))
                and "build" in " ".join(ast.unparse(p) for p in parts[:-1])):
            found.add(node.lineno)
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and re.fullmatch(r"(.*/)?build[\w-]*/cudatrace", node.value)):
            found.add(node.lineno)
        if (isinstance(node, ast.Call) and ast.unparse(node.func).startswith("subprocess.")
                and "cudatrace_cmd.path(" in ast.unparse(node)):
            found.add(node.lineno)
    return sorted(found)


@pytest.mark.parametrize("line", [
    'subprocess.run([os.path.join(build_dir, "cudatrace"), "report", path])',
    'binary = os.path.join(self.build_dir, "cudatrace")',
    'argv = [build / "cudatrace", "export"]',
    'subprocess.run([f"{build_dir}/cudatrace", "diff", a, b])',
    'subprocess.run(["build/cudatrace", "report"])',
    'subprocess.Popen([cudatrace_cmd.path(build_dir), "open", trace])',
])
def test_the_command_spelled_out_is_found(line):
    assert spelled_out(line) == [1]


@pytest.mark.parametrize("line", [
    'cudatrace_cmd.run(build_dir, "report", path)',
    'folder = os.path.join(runtime, "cudatrace")',
    'path = os.path.join(repo_root, "include", "cudatrace", "functions.h")',
    'subprocess.run([os.path.join(build_dir, "tests", "launch_loop")])',
    'open(cudatrace_cmd.path(build_dir), "rb")',
    '"""Tests of `build/cudatrace export TRACE`."""',
])
def test_other_paths_and_the_helper_are_not_taken_for_it(line):
    assert spelled_out(line) == []


def test_only_the_helper_runs_the_command(repo_root):
    tests = os.path.join(repo_root, "tests")
    helper = os.path.join(tests, "cudatrace_cmd.py")
    sources = [p for p in glob.glob(os.path.join(tests, "**", "*.py"), recursive=True)
               if p != helper]
    assert len(sources) > 50  # the suite itself, not a folder that would pass with none
    spelled = {}
    for path in sources:
        with open(path) as f:
            lines = spelled_out(f.read())
        if lines:
            spelled[os.path.relpath(path, repo_root)] = lines
    assert spelled == {}, ("these lines run the built command themselves; run it through "
                           "tests/cudatrace_cmd.py (run, json_of, report, start) instead")

"""Running the built `cudatrace` command, the one way every test does.

This module owns how a test runs build/cudatrace, any subcommand (report, export, diff, run,
doctor, ctl, open, recover, ...), and reads the JSON it prints: with a time limit and the exit
status the test expects, so that a command that exits otherwise, runs over its time or prints
no JSON fails the test with its command line, exit status and stderr. A test that means to see
a refusal names the status it expects. The traced programs themselves run through conftest's
trace_run; this is for the command only (tests/test_helpers_command.py keeps it the only one).

    done = cudatrace_cmd.run(build_dir, "export", trace, "--format", "html", "-o", page)
    bad = cudatrace_cmd.run(build_dir, "report", "--frobnicate", trace, status=2)
    report = cudatrace_cmd.report(build_dir, trace)  # `cudatrace report --json TRACE`, parsed
    facts = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
"""

import json
import os
import shlex
import subprocess

import pytest

# A hang guard, long enough for the slowest command a test runs (a job's report, doctor) on a
# loaded machine or a sanitizer build; a test that bounds a command more tightly says so.
TIMEOUT_S = 120
SHOWN_CHARS = 4000  # of stdout or stderr in a failure message: their ends say most


def path(build):
    """The command in the build folder `build`."""
    return os.path.join(build, "cudatrace")


def run(build, *args, status=0, quiet=False, timeout=TIMEOUT_S, text=True, **popen):
    """The completed `cudatrace ARGS`, its stdout and stderr captured (as text unless
    text=False) where popen does not send them elsewhere.

    It fails the test unless the command ends within `timeout` s with exit status `status`
    (None: any, for a test that reads the status itself, such as one polling a trace still being
    written) and, with quiet=True, nothing on stderr. popen: env, cwd, input, preexec_fn,
    stdout, stderr, ..., as subprocess.run takes them."""
    __tracebackhide__ = True  # a failure points at the test's line that ran the command
    argv = [path(build), *map(str, args)]
    popen = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **popen}
    try:
        done = subprocess.run(argv, text=text, timeout=timeout, **popen)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{shlex.join(argv)}\nran over {timeout} s{said(e.stderr)}")
    if status is not None and done.returncode != status:
        pytest.fail(f"{shlex.join(argv)}\nexited with status {done.returncode}, not {status}"
                    f"{said(done.stderr)}")
    if quiet and done.stderr:
        pytest.fail(f"{shlex.join(argv)}\nwrote to stderr{said(done.stderr)}")
    return done


def json_of(build, *args, **options):
    """The JSON document `cudatrace ARGS` prints on stdout; `options` as run takes them."""
    __tracebackhide__ = True
    done = run(build, *args, **options)
    try:
        return json.loads(done.stdout)
    except ValueError as e:
        pytest.fail(f"{shlex.join(done.args)}\nprinted no JSON document ({e}); stdout:\n"
                    f"{shown(done.stdout)}{said(done.stderr)}")


def report(build, *args, **options):
    """The parsed `cudatrace report --json ARGS`: ARGS are the options and paths, in order."""
    __tracebackhide__ = True
    return json_of(build, "report", "--json", *args, **options)


def start(build, *args, **popen):
    """`cudatrace ARGS` started and left running (a server such as `open`), as a Popen."""
    return subprocess.Popen([path(build), *map(str, args)], **popen)


def shown(output):
    """stdout or stderr, text or bytes, as a failure message shows it: its end if long."""
    if isinstance(output, bytes):
        output = output.decode(errors="replace")
    output = output or ""
    return output if len(output) <= SHOWN_CHARS else "..." + output[-SHOWN_CHARS:]


def said(stderr):
    """What a failure message says of the command's stderr (nothing where a test sent it
    elsewhere than to a pipe)."""
    if stderr is None:
        return ""
    return f"; stderr:\n{shown(stderr)}" if stderr else "; nothing on stderr"

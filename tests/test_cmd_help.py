"""`--help` for every cudatrace command, and `cudatrace help [COMMAND]`: a usage line,
what the command does, its options and examples, on stdout with status 0 and nothing
on stderr. Unknown options stay a one-line usage error with status 2."""
import os
import re

import pytest

import cudatrace_cmd

COMMANDS = ["run", "report", "diff", "open", "export", "recover", "doctor"]
TIMEOUT_S = 30


@pytest.fixture
def cli(build_dir):
    """cli(*args, **options) -> cudatrace_cmd.run of ARGS with no desktop to open a page on."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}

    def run(*args, **options):
        return cudatrace_cmd.run(build_dir, *args, env=env, timeout=TIMEOUT_S, **options)

    return run


def command_help(cli, command):
    done = cli(command, "--help", status=None)
    # export is another part of the same issue; its --help may land later.
    if command == "export" and done.returncode == 2:
        pytest.skip("cudatrace export --help is not implemented yet")
    return done


def usage_text(text):
    """The usage line with its continuation lines (those indented under it)."""
    lines = text.splitlines()
    usage = [lines[0]]
    for line in lines[1:]:
        if not line.startswith(" "):
            break
        usage.append(line)
    return " ".join(usage)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(cli, command):
    done = command_help(cli, command)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    text = done.stdout
    assert text.startswith(f"usage: cudatrace {command}"), text
    assert "\nexamples:\n" in text, text
    examples = text.split("\nexamples:\n", 1)[1].splitlines()
    assert any(re.search(rf"\bcudatrace {command}\b", line) for line in examples), examples
    usage = usage_text(text)
    rest = text[len(usage):]
    for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage):
        assert option in rest, f"{command}: {option} is in the usage line but not explained"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_command_is_the_same_text(cli, command):
    own = command_help(cli, command)
    done = cli("help", command)
    assert (done.returncode, done.stdout, done.stderr) == (0, own.stdout, "")


@pytest.mark.parametrize("args", [["help"], ["--help"]])
def test_general_help_lists_every_command(cli, args):
    done = cli(*args)
    assert done.returncode == 0 and done.stderr == ""
    text = done.stdout
    assert text.startswith("usage: cudatrace COMMAND")
    listed = set(re.findall(r"^  ([a-z]+) ", text.split("\ncommands:\n", 1)[1], re.M))
    assert set(COMMANDS) - {"export"} <= listed, listed
    assert "help" in listed
    examples = text.split("\nexamples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith("  cudatrace ") for line in examples)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_is_still_a_usage_error(cli, command):
    done = cli(command, "--bogus", status=2)
    assert done.stdout == ""
    line, *usage = done.stderr.splitlines()
    assert line == f"cudatrace: {command}: unknown option --bogus"
    assert usage and usage[0].startswith(f"usage: cudatrace {command}")


# Each command with an operand in place, then an option: GNU getopt's users
# expect the option to count wherever it stands.
OPERANDS = {"report": ["traces"], "open": ["t.pftrace"], "export": ["t.pftrace"],
            "recover": ["a.pftrace", "b.pftrace"], "doctor": [], "ctl": ["1", "status"]}


@pytest.mark.parametrize("command", sorted(OPERANDS))
@pytest.mark.parametrize("where", ["before", "after"])
def test_an_unknown_option_is_one_before_or_after_the_operands(cli, tmp_path, command, where):
    operands = OPERANDS[command]
    args = ["--bogus", *operands] if where == "before" else [*operands, "--bogus"]
    done = cli(command, *args, cwd=tmp_path, status=2)
    assert "cannot open" not in done.stderr
    assert done.stderr.startswith(f"cudatrace: {command}: unknown option --bogus\nusage: ")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", sorted(OPERANDS))
def test_help_after_the_operands_is_help(cli, command):
    done = cli(command, *OPERANDS[command], "--help")
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.startswith(f"usage: cudatrace {command}")


def test_report_takes_its_options_after_the_paths(cli, tmp_path):
    (tmp_path / "traces").mkdir()
    before = cli("report", "--summary", "-o", "S.json", "traces/", cwd=tmp_path, status=None)
    after = cli("report", "--summary", "traces/", "-o", "S.json", cwd=tmp_path, status=None)
    assert (after.returncode, after.stderr) == (before.returncode, before.stderr)
    assert "holds no trace" in after.stderr


def test_after_a_double_dash_an_option_is_a_path(cli, tmp_path):
    done = cli("report", "--", "--json", cwd=tmp_path, status=1)
    assert done.returncode == 1 and "--json" in done.stderr and "unknown option" not in done.stderr


def test_run_takes_options_only_before_the_program(cli, tmp_path):
    done = cli("run", "-q", "sh", "-c", 'echo "$@"', "sh", "-o", "x", "--bogus", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "-o x --bogus\n", "")
    assert os.listdir(tmp_path) == []


def test_an_unknown_command_has_no_help(cli):
    done = cli("help", "frobnicate", status=2)
    assert done.returncode == 2 and done.stdout == ""
    assert "frobnicate" in done.stderr


def test_run_hands_help_after_the_program_to_the_program(cli, tmp_path):
    done = cli("run", "-q", "--", "sh", "-c", 'echo "$1"', "sh", "--help", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "--help\n", "")
    assert os.listdir(tmp_path) == []


def test_general_help_names_every_export_format(cli):
    """`cudatrace help` lists what export writes, as export's own help does."""
    own = cli("export", "--help").stdout
    formats = re.findall(r"^    ([a-z][a-z-]+)  +.*\(\.[a-z.]+\)$", own, re.M)
    assert len(formats) >= 4, own
    export_line = cli("help").stdout.split("  export ", 1)[1].split("\n  recover", 1)[0]
    for name in formats:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", export_line), (name, export_line)

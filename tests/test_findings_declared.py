"""Every finding is declared once, in viewer-export/findings/finding_list.h, and held here to what
makes a finding one to trust: a rule test that makes it fire and a healthy twin that differs in
the fact its rule turns on and gets none, its section in docs/findings.md (the heading is the
id, so docs/findings.md#ID is its anchor) naming each of its thresholds, its line in `cudatrace
report --help`, and no other place in the command's code that spells its id.

Tests say what they cover with markers (registered in conftest.py), read here from the test
files' source without running them:
    @pytest.mark.finding("oom")       the test makes oom fire and checks what it says;
    @pytest.mark.twin("oom")          the test is oom's healthy twin: oom must not fire.
A test whose parameters take both sides of a rule carries both. A marker names findings by their
ids as string literals, on a test function (or in its parameters' marks).
"""
import ast
import glob
import os
import re

import pytest

import cudatrace_cmd

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIST = os.path.join(REPO, "viewer-export", "findings", "finding_list.h")
DOCS = os.path.join(REPO, "docs", "findings.md")
MARKS = ("finding", "twin")
TIMEOUT_S = 30


def list_text():
    with open(LIST) as f:
        return f.read().replace("\\\n", " ")


def declared_findings():
    """{id: (severity, other severity)} in the list's order."""
    found = re.findall(r'\bX\(\w+,\s*"([a-z-]+)",\s*\w+,\s*(\w+),\s*(\w+),\s*[01],', list_text())
    assert found, f"no X(NAME, id, ...) lines in {LIST}"
    return {id: (severity.lower(), other.lower()) for id, severity, other in found}


def declared_thresholds():
    """{name: the id of its finding}."""
    names = {m.group(1): m.group(2) for m in
             re.finditer(r"\bX\((\w+),\s*\"([a-z-]+)\"", list_text())}
    found = re.findall(r"\bT\((\w+),\s*([A-Z_]+),", list_text())
    assert found, f"no T(name, finding, ...) lines in {LIST}"
    return {name: names[finding] for name, finding in found}


def mark_of(node):
    """"finding" or "twin" for a call of pytest.mark.finding/twin, else None."""
    f = node.func if isinstance(node, ast.Call) else None
    if (isinstance(f, ast.Attribute) and f.attr in MARKS and isinstance(f.value, ast.Attribute)
            and f.value.attr == "mark" and isinstance(f.value.value, ast.Name)
            and f.value.value.id == "pytest"):
        return f.attr
    return None


def marked_tests():
    """({(mark, id): [file::test]}, [where a marker is misplaced or names no literal id])."""
    covered, wrong = {}, []
    for path in sorted(glob.glob(os.path.join(REPO, "tests", "test_*.py"))):
        name = os.path.basename(path)
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        on_tests = set()
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            for decorator in node.decorator_list:
                for call in ast.walk(decorator):
                    mark = mark_of(call)
                    if not mark:
                        continue
                    on_tests.add(id(call))
                    ids = [a.value for a in call.args if isinstance(a, ast.Constant)
                           and isinstance(a.value, str)]
                    if not ids or len(ids) != len(call.args) or call.keywords:
                        wrong.append(f"{name}::{node.name}: {ast.unparse(call)}")
                    for finding in ids:
                        covered.setdefault((mark, finding), []).append(f"{name}::{node.name}")
        wrong += [f"{name}:{call.lineno}: {ast.unparse(call)} is not on a test function"
                  for call in ast.walk(tree) if mark_of(call) and id(call) not in on_tests]
    return covered, wrong


def github_anchor(heading):
    """The anchor GitHub gives a heading: lower case, punctuation but '-' dropped, spaces '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def doc_sections():
    """{anchor: the section's text, to the next heading of its level or above}."""
    with open(DOCS) as f:
        lines = f.read().splitlines()
    headings = [(i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines)
                for m in [re.match(r"(#+) (.*)", line)] if m]
    sections = {}
    for k, (start, level, text) in enumerate(headings):
        end = next((i for i, lv, _ in headings[k + 1:] if lv <= level), len(lines))
        sections[github_anchor(text)] = "\n".join(lines[start:end])
    return sections


def test_the_list_is_read():
    findings, thresholds = declared_findings(), declared_thresholds()
    assert len(findings) >= 40 and len(thresholds) >= 30
    assert set(thresholds.values()) <= set(findings)
    assert all(s in ("error", "warning", "info") and o in ("error", "warning", "info", "none")
               and o != s for s, o in findings.values())


def test_every_finding_has_a_rule_test_and_a_healthy_twin():
    covered, _ = marked_tests()
    missing = [f"{finding}: no test marked {mark}" for finding in declared_findings()
               for mark in MARKS if (mark, finding) not in covered]
    assert not missing, "\n".join(missing)


def test_markers_name_declared_findings_on_tests():
    covered, wrong = marked_tests()
    findings = declared_findings()
    wrong += [f"{', '.join(tests)}: {mark}({finding!r}) is not a declared finding"
              for (mark, finding), tests in covered.items() if finding not in findings]
    assert not wrong, "\n".join(wrong)


def test_every_finding_has_its_section_in_the_docs():
    sections = doc_sections()
    missing = [finding for finding in declared_findings() if finding not in sections]
    assert not missing, f"docs/findings.md has no section headed by {missing}"


def test_each_section_gives_the_severity_and_names_the_thresholds():
    sections = doc_sections()
    wrong = []
    for finding, (severity, other) in declared_findings().items():
        text = sections.get(finding, "")
        said = re.search(r"\*\*Severity\*\*: ([^.\n]*)", text)
        named = re.findall(r"\b(error|warning|info)\b", said.group(1)) if said else []
        if set(named) != {severity, other} - {"none"}:
            wrong.append(f"{finding}: severity {severity}/{other}, the docs say {said and said[1]}")
    for name, finding in declared_thresholds().items():
        if f"`{name}`" not in sections.get(finding, ""):
            wrong.append(f"{finding}: its section does not name its threshold `{name}`")
    assert not wrong, "\n".join(wrong)


def test_report_help_lists_every_finding_and_threshold(build_dir):
    done = cudatrace_cmd.run(build_dir, "report", "--help", quiet=True, timeout=TIMEOUT_S)
    findings = done.stdout.split("\nfindings, by family", 1)[1].split("\nthresholds", 1)[0]
    for finding, (severity, other) in declared_findings().items():
        said = severity if other == "none" else f"{severity} or {other}"
        assert re.search(rf"^    {finding} +{said}: \w", findings, re.M), finding
    thresholds = done.stdout.split("\nthresholds (--threshold NAME=VALUE)", 1)[1]
    for name, finding in declared_thresholds().items():
        assert re.search(rf"^  {name}=[\d.]+ +{finding}: \w", thresholds, re.M), name


def test_every_threshold_is_set_by_its_name(build_dir, tmp_path):
    """All at once, before the empty directory is read; a name not declared is refused."""
    args = [a for name in declared_thresholds() for a in ("--threshold", f"{name}=1")]
    done = cudatrace_cmd.run(build_dir, "report", *args, tmp_path, status=1, timeout=TIMEOUT_S)
    assert "holds no trace" in done.stderr, done.stderr
    done = cudatrace_cmd.run(build_dir, "report", "--threshold", "launch_shares=1", tmp_path,
                             status=2, timeout=TIMEOUT_S)
    assert "no threshold named launch_shares" in done.stderr


def test_no_finding_id_is_spelled_outside_the_list():
    """The command names a finding by its constant: an id as a string literal anywhere else in
    its code would be a second declaration that could drift from the list."""
    literals = re.compile(r'"(%s)"' % "|".join(map(re.escape, declared_findings())))
    spelled = []
    for path in sorted(glob.glob(os.path.join(REPO, "viewer-export", "**", "*.[ch]"),
                                 recursive=True)):
        if os.path.samefile(path, LIST):
            continue
        with open(path) as f:
            spelled += [f"{os.path.relpath(path, REPO)}:{n}: {line.strip()}"
                        for n, line in enumerate(f, 1) if literals.search(line)]
    assert not spelled, "\n".join(spelled)

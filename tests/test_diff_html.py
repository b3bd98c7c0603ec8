"""`cudatrace diff --html FILE BEFORE AFTER`: one self-contained page, its data the very document
`diff --json` prints, drawn in headless Chromium (skipped, saying so, where it is not installed)
with no script error: the headline first, the slower kernel of test_diff.py's pair in the kernels
table, and for two runs of the same program, no significant change. The runs are test_diff.py's
(its module-scoped `runs` fixture, imported here, makes each once)."""
import html
import json
import re

import cudatrace_cmd
from test_diff import baseline, runs, slower_kernel, LOOP
from test_export_html import embedded, render

assert runs  # a fixture, used by name


def page_of(build_dir, before, after, tmp_path, name="diff.html"):
    page = tmp_path / name
    done = cudatrace_cmd.run(build_dir, "diff", "--html", page, before, after)
    assert done.stdout.startswith(("step time ", "no s")), done.stdout
    return page


def headline(shown):
    (found,) = re.findall(r'<p class="headline" id="headline">(.*?)</p>', shown.dom, re.S)
    return html.unescape(found)


def test_a_slower_kernel_on_the_page(runs, build_dir, tmp_path):
    before, after = baseline(runs), slower_kernel(runs)
    page = page_of(build_dir, before, after, tmp_path)
    data = page.read_bytes()
    assert data.startswith(b"<!DOCTYPE html>\n") and data.endswith(b"</html>\n")
    assert not re.search(rb"(?i)\b[a-z][a-z0-9+.-]*://", data), "a URL in the page"
    assert not re.search(rb"(?i)\b(?:src|href|action)\s*=", data), "an outside resource"
    expected = cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)
    assert embedded(page, "diff-data") == expected
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert headline(shown) == expected["headline"]
    assert shown.dom.index('id="headline"') < shown.dom.index("<table")
    ((cls, cells),) = shown.rows("kernels")
    assert cls == "moved" and cells[0] == "step_kernel", cells
    steps = dict((c[0], (cls, c)) for cls, c in shown.rows("steps"))
    assert steps["median step"][0] == "moved" and steps["GPU busy"][0] == "moved", steps


def test_the_same_program_twice_on_the_page(runs, build_dir, tmp_path):
    page = page_of(build_dir, baseline(runs), runs.run("again", *LOOP), tmp_path)
    shown = render(page, tmp_path)
    shown.assert_drawn()
    assert headline(shown).startswith("no significant change (step time ")
    assert '<p class="none">No significant change.</p>' in shown.dom
    assert "<table" not in shown.dom


def test_the_page_alone_on_standard_output(runs, build_dir):
    before, after = baseline(runs), runs.run("again", *LOOP)
    done = cudatrace_cmd.run(build_dir, "diff", "--json", "--html", "-", before, after)
    assert done.returncode == 0 and done.stdout.startswith("<!DOCTYPE html>\n"), done.stderr
    (block,) = re.findall(r'<script type="application/json" id="diff-data">\n(.*?)</script>',
                          done.stdout, re.S)
    assert json.loads(block) == cudatrace_cmd.json_of(build_dir, "diff", "--json", before, after)


def test_an_existing_file_is_refused(runs, build_dir, tmp_path):
    page = tmp_path / "taken.html"
    page.write_text("mine")
    done = cudatrace_cmd.run(build_dir, "diff", "--html", page, baseline(runs),
                             runs.run("again", *LOOP), status=1)
    assert done.returncode == 1 and done.stderr.startswith(f"cudatrace: {page}: "), done.stderr
    assert page.read_text() == "mine"


def test_without_steps_the_page_says_so(runs, build_dir, tmp_path):
    before = runs.run("launches", "2000", program="launch_loop")
    after = runs.run("more_launches", "4000", program="launch_loop")
    shown = render(page_of(build_dir, before, after, tmp_path), tmp_path)
    shown.assert_drawn()
    assert ('<p class="note">No steps on one side or both: the figures below are per second of '
            'the CUDA part of the run.</p>') in shown.dom
    assert 'class="steps"' not in shown.dom

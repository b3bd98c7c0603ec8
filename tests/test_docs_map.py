"""The repository's own map and its boundaries.

* docs/design.md, "The tree", names every folder that holds source, by its
  full path, and no folder that is gone: a reader finds each part there.
* No file points outside the repository (a sibling folder such as
  ../shared, or an absolute path of the machine it was written on): a
  reader who clones it has nothing else.

Both read the tracked files (`git ls-files`), or walk the tree where there is
no git (an exported copy)."""
import os
import re
import subprocess

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DESIGN = os.path.join(REPO_ROOT, "docs", "design.md")
SOURCE_SUFFIXES = (".c", ".h", ".py", ".sh", ".S", ".cu")
# What a walk skips where git cannot say what is tracked: build output, the
# test venv and caches.
UNTRACKED_DIRS = {".git", ".venv", ".cache", "__pycache__", ".pytest_cache"}


def tracked_files(root=REPO_ROOT):
    """Paths relative to `root`, '/'-separated: git's list, else a walk."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                             check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in UNTRACKED_DIRS and not d.startswith("build")]
        rel = os.path.relpath(folder, root)
        files += [n if rel == "." else f"{rel}/{n}".replace(os.sep, "/") for n in names]
    return files


def source_folders(files):
    """Every folder that directly holds a source file ('.' for the root)."""
    return {os.path.dirname(f) or "." for f in files if f.endswith(SOURCE_SUFFIXES)}


def mapped_folders(text):
    """The folders "The tree" gives an entry: list items that begin with a
    folder's full path in backquotes, `like/this/`."""
    section = text.split("\n## The tree", 1)[1].split("\n## ", 1)[0]
    return {m.group(1).rstrip("/")
            for m in re.finditer(r"^\s*- `([^`\s]+/)`", section, re.MULTILINE)}


def missing_and_stale(files, text):
    folders = source_folders(files)
    mapped = mapped_folders(text)
    return sorted(folders - mapped), sorted(mapped - folders)


def test_design_names_every_source_folder():
    with open(DESIGN) as f:
        missing, stale = missing_and_stale(tracked_files(), f.read())
    assert not missing, ("docs/design.md, \"The tree\", has no entry for these source folders "
                         "(add one that says what each owns): " + ", ".join(missing))
    assert not stale, ("docs/design.md, \"The tree\", names folders that hold no source: "
                       + ", ".join(stale))


def test_the_folder_check_can_fail():
    """A folder the map lacks is reported, and an entry for a folder that is
    gone too, so the test above is not vacuous."""
    text = "# d\n\n## The tree\n\n- `a/`: the a part.\n- `gone/`: was here.\n\n## Next\n- `b/`: x\n"
    files = ["a/one.c", "a/b/two.h", "b/three.py", "docs/readme.md"]
    assert missing_and_stale(files, text) == (["a/b", "b"], ["gone"])


# A sibling folder outside the repository (../shared, ../../shared, or shared/
# named as if it were at the top of this one), or an absolute path of one
# machine: a work area, a home directory. System paths (/usr/local/cuda,
# /proc, /tmp, /dev, /etc, /opt) are what the code reads anywhere and are not
# pointers out of the repository; tests/doubles/shared/ is a folder of ours.
OUTSIDE = re.compile(r"(?:\.\./)+shared\b|(?<![\w/.-])shared/|(?<![\w.~-])/(?:work|home|root|Users)/")


def outside_pointers(files, read):
    """(path, line number, line) for each line that points outside."""
    found = []
    for path in files:
        data = read(path)
        if data is None or b"\0" in data:
            continue  # binary (images, compressed corpora)
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append((path, number, line.strip()))
    return found


def read_tracked(path):
    try:
        with open(os.path.join(REPO_ROOT, path), "rb") as f:
            return f.read()
    except OSError:
        return None  # deleted in the work tree, not yet in the index


def test_no_file_points_outside_the_repository():
    this_file = os.path.relpath(__file__, REPO_ROOT).replace(os.sep, "/")  # its examples
    found = outside_pointers([f for f in tracked_files() if f != this_file], read_tracked)
    assert not found, "these lines point outside the repository:\n" + "\n".join(
        f"  {path}:{number}: {line[:160]}" for path, number, line in found)


def test_the_outside_check_can_fail():
    texts = {
        "a.md": b"see ../shared/DESIGN.md\n",
        "b.c": b"/* from /work/main/tests */\n",
        "c.py": b'PY = "/root/.pyenv/versions/3.11/bin/python3"\n',
        "d.c": b'open("/usr/local/cuda/include/cuda.h"); open("/proc/self/maps");\n',
        "e.py": b'"/tmp/pytest-of-root/x", "~/.pyenv", "/opt/venv/lib"\n',
        "f.png": b"\x89PNG\0/work/\n",
        "g.proto": b"// from the facts in shared/PERFETTO-FACTS.md\n",
        "h.c": b'#include "tests/doubles/shared/double_gpu.h"\n',
    }
    found = outside_pointers(sorted(texts), texts.get)
    assert [(path, number) for path, number, _ in found] == [
        ("a.md", 1), ("b.c", 1), ("c.py", 1), ("g.proto", 1)]


def hooked_functions(header_text):
    """The functions CT_FOR_EACH_FUNCTION lists before CT_FN_FIRST_DRIVER."""
    first_driver = re.search(r"#define CT_FN_FIRST_DRIVER CT_FN_(\w+)", header_text).group(1)
    names = re.findall(r"^\s*X\((\w+),", header_text, re.MULTILINE)
    return names[:names.index(first_driver)]


def test_the_documented_listing_gives_the_hooked_functions():
    """docs/hooked-functions.md lists no function by hand: it gives a command
    that reads functions.h. That command must list exactly the hooked ones,
    in order, however the list grows."""
    with open(os.path.join(REPO_ROOT, "docs", "hooked-functions.md")) as f:
        command = re.search(r"```sh\n(.*?)\n```", f.read(), re.DOTALL).group(1)
    listed = subprocess.run(["sh", "-c", command], cwd=REPO_ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    with open(os.path.join(REPO_ROOT, "include", "cudatrace", "functions.h")) as f:
        hooked = hooked_functions(f.read())
    assert len(hooked) > 50
    assert listed == hooked, (
        "the command in docs/hooked-functions.md no longer lists the hooked functions: "
        f"missing {sorted(set(hooked) - set(listed))}, extra {sorted(set(listed) - set(hooked))}")


def heading_anchors(text):
    """The anchors GitHub gives a page's headings: lower case, punctuation
    dropped, spaces as hyphens (a repeated heading's -1, -2 too)."""
    anchors, seen = set(), {}
    for heading in re.findall(r"^#+\s+(.*?)\s*$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def broken_links(files, read):
    """(page, link) for each relative Markdown link whose file is not in
    `files` or whose #anchor is no heading of it."""
    broken = []
    for page in (f for f in files if f.endswith(".md")):
        text = read(page).decode()
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", link):
                continue  # https:, mailto:
            target, _, anchor = link.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), target)) if target else page
            if path not in files:
                broken.append((page, link))
            elif anchor and path.endswith(".md") and anchor not in heading_anchors(read(path).decode()):
                broken.append((page, link))
    return broken


def test_every_relative_link_resolves():
    files = set(tracked_files())
    broken = broken_links(files, read_tracked)
    assert not broken, "links to no file or heading: " + ", ".join(f"{p}: {l}" for p, l in broken)


def test_the_link_check_can_fail():
    texts = {
        "README.md": b"[a](docs/a.md) [b](docs/a.md#two-words) [c](docs/gone.md) [d](docs/a.md#nope)"
                     b" [e](https://x.org/y.md)\n",
        "docs/a.md": b"# A\n## Two words\n[up](../README.md) [self](#a)\n",
    }
    assert broken_links(set(texts), texts.get) == [("README.md", "docs/gone.md"),
                                                  ("README.md", "docs/a.md#nope")]

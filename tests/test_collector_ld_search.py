"""The library-search reconstruction (collector/libraries/ld_search.c, through
build/unit/ld_search_check) against glibc itself. Each case builds real files
in tmp_path: a main program that dlopens a requester library by path, whose
constructor (tests/runpath/runpath_user.c) dlopens a name by bare name, with
DT_RPATH/DT_RUNPATH/DF_1_NODEFLIB as the case needs. The same process runs
with LD_DEBUG=libs, and glibc's own account of that search (the lists, the
files tried, the file taken) is what the reconstruction must match: the file
taken, the list it came from, the directories searched (glibc's hwcaps and
legacy capability subdirectories folded into their directory), and the file
that could not be loaded."""
import os
import re
import shutil
import subprocess

import pytest

MAIN_SOURCE = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    if (argc == 2 && dlopen(argv[1], RTLD_NOW))
        return 0;
    fprintf(stderr, "main: %s\n", dlerror());
    return 1;
}
"""

PAYLOAD_SOURCE = "int ct_payload(void) { return 7; }\n"

LISTS = {"LD_LIBRARY_PATH": "LD_LIBRARY_PATH", "RPATH": "DT_RPATH", "RUNPATH": "DT_RUNPATH",
         "system search path": "default directories"}
# The capability subdirectories glibc 2.36 tries in every directory on x86-64.
CAPABILITY_SUBDIR = re.compile(r"(?:/glibc-hwcaps/[^/]+|(?:/(?:tls|x86_64|haswell|xeon_phi|"
                               r"avx512_1))+)$")
RUNS_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def check_program(build_dir):
    path = os.path.join(build_dir, "unit", "ld_search_check")
    if not os.path.exists(path):
        pytest.fail(f"missing {path}; run `make all test-programs` first", pytrace=False)
    return path


@pytest.fixture(scope="module")
def payload(tmp_path_factory):
    """A small shared library to copy wherever a case needs the name to be."""
    folder = tmp_path_factory.mktemp("payload")
    (folder / "payload.c").write_text(PAYLOAD_SOURCE)
    compile_c(folder / "payload.c", folder / "libpayload.so", "-shared", "-fPIC")
    return folder / "libpayload.so"


def compile_c(source, output, *flags):
    subprocess.run(["gcc", "-std=c11", "-O1", "-o", str(output), str(source), *flags, "-ldl"],
                   check=True, timeout=RUNS_TIMEOUT_S)


def main_program(tmp_path, *flags):
    source = tmp_path / "main.c"
    source.write_text(MAIN_SOURCE)
    compile_c(source, tmp_path / "main", *flags)
    return tmp_path / "main"


def requester(repo_root, folder, *flags):
    folder.mkdir(parents=True, exist_ok=True)
    compile_c(os.path.join(repo_root, "tests", "runpath", "runpath_user.c"),
              folder / "librequester.so", "-shared", "-fPIC", *flags)
    return folder / "librequester.so"


def place(source, folder, name="libpayload.so"):
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, folder / name)
    return folder / name


def fold(path, cwd):
    """The directory of a tried file, as ld_search reports it: absolute, capability
    subdirectories folded into their directory."""
    directory = os.path.dirname(os.path.join(str(cwd), path))
    return CAPABILITY_SUBDIR.sub("", directory)


def parse_ld_debug(stderr, name):
    """glibc's account of the search for `name`: [(list, tried file)] in order, and the
    object each RPATH/RUNPATH came from."""
    tried, sources, current, inside = [], [], None, False
    for line in stderr.splitlines():
        text = line.split(":\t", 1)[1] if re.match(r"^\s*\d+:\t", line) else None
        if text is None:
            continue
        if text.startswith(f"find library={name} "):
            inside = True
            continue
        if not inside:
            continue
        path_line = re.match(r"^ search path=\S*\t+\((.*)\)$", text)
        if path_line:
            what = path_line.group(1)
            current = LISTS[what.split(" from file ")[0]]
            sources.append(what)
        elif text.startswith(" search cache="):
            current = "ld.so.cache"
        elif text.startswith("  trying file="):
            tried.append((current, text[len("  trying file="):]))
        else:
            break
    return tried, sources


def distinct(items):
    return list(dict.fromkeys(items))


def glibc_search(main, argument, name, cwd, ld_library_path=None):
    """Runs `main argument` (a requester library to dlopen, or the name itself when the main
    program is the requester) under LD_DEBUG=libs."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LD_", "CUDATRACE_", "CT_DOUBLE_", "GLIBC_TUNABLES"))}
    env.update(LD_DEBUG="libs", RUNPATH_USER_LOADS=name)
    if ld_library_path is not None:
        env["LD_LIBRARY_PATH"] = ld_library_path
    done = subprocess.run([str(main), str(argument)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=RUNS_TIMEOUT_S)
    tried, sources = parse_ld_debug(done.stderr, name)
    failed = re.search(r"^(?:runpath_user|main): (.*)$", done.stderr, re.M)
    assert tried or failed, done.stderr[-3000:]
    found_in, path = ("unknown", "") if failed else tried[-1]
    return {"found_in": found_in,
            "path": os.path.realpath(os.path.join(cwd, path)) if path else "",
            "searched": distinct(fold(p, cwd) for _, p in tried),
            "error": failed.group(1) if failed else "", "sources": sources}


def our_search(check_program, main, requester_path, name, cwd, ld_library_path=None,
               loaded=None):
    argv = [check_program] + (["--ld-library-path", ld_library_path]
                              if ld_library_path is not None else [])
    argv += [str(main), str(requester_path), name] + ([str(loaded)] if loaded else [])
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True,
                          timeout=RUNS_TIMEOUT_S)
    lines = dict(line.partition(" ")[::2] for line in done.stdout.splitlines())
    lines["searched"] = lines["searched"].split(":") if lines["searched"] else []
    return lines


def compare(check_program, main, requester_path, name, cwd, ld_library_path=None):
    """Runs both, checks that they agree, and returns (glibc's, ours)."""
    argument = name if requester_path == main else requester_path
    truth = glibc_search(main, argument, name, cwd, ld_library_path)
    ours = our_search(check_program, main, requester_path, name, cwd, ld_library_path)
    assert ours["found_in"] == truth["found_in"]
    assert (os.path.realpath(os.path.join(cwd, ours["path"])) if ours["path"] else "") == \
        truth["path"]
    assert ours["searched"] == truth["searched"]
    return truth, ours


def found_via(check_program, main, requester_path, name, cwd, loaded, ld_library_path=None):
    return our_search(check_program, main, requester_path, name, cwd, ld_library_path,
                      loaded)["found_via"]


def test_found_through_ld_library_path(check_program, repo_root, payload, tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    copy = place(payload, tmp_path / "llp")
    llp = f"{tmp_path}/empty:{tmp_path}/llp"
    (tmp_path / "empty").mkdir()
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path, llp)
    assert (truth["found_in"], truth["path"]) == ("LD_LIBRARY_PATH", str(copy))
    assert ours["searched"] == [f"{tmp_path}/empty", f"{tmp_path}/llp"]
    assert ours["unloadable"] == ""
    assert found_via(check_program, main, req, "libpayload.so", tmp_path, copy,
                     llp) == "LD_LIBRARY_PATH"


def test_found_through_runpath_origin(check_program, repo_root, payload, tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN")
    copy = place(payload, tmp_path / "req")
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path)
    assert (truth["found_in"], truth["path"]) == ("DT_RUNPATH", str(copy))
    assert truth["sources"] == [f"RUNPATH from file {req}"]
    assert found_via(check_program, main, req, "libpayload.so", tmp_path, copy) == "DT_RUNPATH"


def test_found_through_requester_rpath(check_program, repo_root, payload, tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req", "-Wl,--disable-new-dtags",
                    f"-Wl,-rpath,{tmp_path}/none:{tmp_path}/rpath")
    (tmp_path / "none").mkdir()
    copy = place(payload, tmp_path / "rpath")
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path)
    assert (truth["found_in"], truth["path"]) == ("DT_RPATH", str(copy))
    assert truth["sources"] == [f"RPATH from file {req}"]
    assert ours["searched"] == [f"{tmp_path}/none", f"{tmp_path}/rpath"]


def test_found_through_main_program_rpath(check_program, repo_root, payload, tmp_path):
    main = main_program(tmp_path, "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/mrp")
    req = requester(repo_root, tmp_path / "req")
    copy = place(payload, tmp_path / "mrp")
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path)
    assert (truth["found_in"], truth["path"]) == ("DT_RPATH", str(copy))
    assert truth["sources"] == [f"RPATH from file {main}"]
    assert found_via(check_program, main, req, "libpayload.so", tmp_path, copy) == "DT_RPATH"


def test_main_program_rpath_ignored_when_requester_has_runpath(check_program, repo_root,
                                                               payload, tmp_path):
    main = main_program(tmp_path, "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/mrp")
    req = requester(repo_root, tmp_path / "req", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN")
    place(payload, tmp_path / "mrp")
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path)
    assert truth["found_in"] == "unknown"
    assert ours["searched"][0] == str(tmp_path / "req")
    assert str(tmp_path / "mrp") not in ours["searched"]


def test_ld_library_path_shadows_runpath_copy(check_program, repo_root, payload, tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN")
    own = place(payload, tmp_path / "req")
    shadow = place(payload, tmp_path / "llp")
    llp = str(tmp_path / "llp")
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path, llp)
    assert (truth["found_in"], truth["path"]) == ("LD_LIBRARY_PATH", str(shadow))
    assert found_via(check_program, main, req, "libpayload.so", tmp_path, shadow,
                     llp) == "LD_LIBRARY_PATH"
    assert found_via(check_program, main, req, "libpayload.so", tmp_path, own,
                     llp) == "DT_RUNPATH"


def test_empty_ld_library_path_entry_is_the_working_directory(check_program, repo_root,
                                                               payload, tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    cwd = tmp_path / "cwd"
    copy = place(payload, cwd)
    llp = f":{tmp_path}/req"
    truth, ours = compare(check_program, main, req, "libpayload.so", cwd, llp)
    assert (truth["found_in"], truth["path"]) == ("LD_LIBRARY_PATH", str(copy))
    assert ours["searched"] == [str(cwd)]


def cache_entries():
    done = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True,
                          timeout=RUNS_TIMEOUT_S)
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^\s+(\S+) \(libc6,x86-64[^)]*\) => (\S+)$", done.stdout, re.M)}


@pytest.mark.parametrize("name", ["libz.so.1", "libcublas.so.13"])
def test_found_through_ld_so_cache(check_program, repo_root, tmp_path, name):
    entries = cache_entries()
    if name not in entries:
        pytest.skip(f"`ldconfig -p` has no x86-64 entry for {name} on this machine")
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    truth, ours = compare(check_program, main, req, name, tmp_path)
    assert (truth["found_in"], truth["path"]) == ("ld.so.cache",
                                                  os.path.realpath(entries[name]))
    assert ours["path"] == entries[name]
    assert found_via(check_program, main, req, name, tmp_path, entries[name]) == "ld.so.cache"


def test_found_in_default_directories(check_program, repo_root, tmp_path):
    # The file a soname links to (libz.so.1.2.13) is in /lib/x86_64-linux-gnu but has no
    # cache entry of its own.
    entries = cache_entries()
    assert "libz.so.1" in entries, "zlib1g is one of the packages `make deps` installs"
    name = os.path.basename(os.path.realpath(entries["libz.so.1"]))
    assert name not in entries
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    truth, ours = compare(check_program, main, req, name, tmp_path)
    assert truth["found_in"] == "default directories"
    assert ours["searched"][0] == "/lib/x86_64-linux-gnu"


def test_nodeflib_refuses_cache_entries_in_default_directories(check_program, repo_root,
                                                               tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req", "-Wl,-z,nodefaultlib")  # DF_1_NODEFLIB
    truth = glibc_search(main, req, "libz.so.1", tmp_path)
    ours = our_search(check_program, main, req, "libz.so.1", tmp_path)
    assert truth["found_in"] == ours["found_in"] == "unknown"
    # LD_DEBUG prints the cache's answer, which ld.so then refuses without opening it (the
    # rtld-audit module is not shown it either): nothing was searched.
    assert truth["searched"] == [os.path.dirname(cache_entries()["libz.so.1"])]
    assert (ours["searched"], ours["path"], ours["unloadable"]) == ([], "", "")


def test_nodeflib_keeps_cache_entries_elsewhere(check_program, repo_root, tmp_path):
    entries = cache_entries()
    if "libcublas.so.13" not in entries:
        pytest.skip("`ldconfig -p` has no x86-64 entry for libcublas.so.13 on this machine")
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req", "-Wl,-z,nodefaultlib")
    truth, ours = compare(check_program, main, req, "libcublas.so.13", tmp_path)
    assert (truth["found_in"], ours["path"]) == ("ld.so.cache", entries["libcublas.so.13"])


def test_main_program_as_requester(check_program, payload, tmp_path):
    main = main_program(tmp_path, "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/mrp")
    copy = place(payload, tmp_path / "mrp")
    truth, ours = compare(check_program, main, main, "libpayload.so", tmp_path)
    assert (truth["found_in"], truth["path"]) == ("DT_RPATH", str(copy))
    assert ours["searched"] == [str(tmp_path / "mrp")]


def test_missing_name_lists_every_directory_searched(check_program, repo_root, tmp_path):
    main = main_program(tmp_path, "-Wl,--disable-new-dtags", "-Wl,-rpath,$ORIGIN/mrp")
    req = requester(repo_root, tmp_path / "req", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN:$ORIGIN/../more:${ORIGIN}/$LIB:/x/$PLATFORM/p/")
    for folder in ("llp1", "llp2", "more", "mrp"):
        (tmp_path / folder).mkdir()
    # ';' separates LD_LIBRARY_PATH entries too, and $ORIGIN there is the main program's.
    llp = f"{tmp_path}/llp1;$ORIGIN/llp2"
    truth, ours = compare(check_program, main, req, "libct-missing.so.7", tmp_path, llp)
    assert truth["found_in"] == "unknown"
    assert ours["searched"][:5] == [f"{tmp_path}/llp1", f"{tmp_path}/llp2", f"{tmp_path}/req",
                                    f"{tmp_path}/req/../more",
                                    f"{tmp_path}/req/lib/x86_64-linux-gnu"]
    assert re.fullmatch(r"/x/[a-z0-9_]+/p", ours["searched"][5])  # $PLATFORM, from the CPU
    assert ours["searched"][6:] == ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                    "/lib", "/usr/lib"]
    assert (ours["path"], ours["unloadable"]) == ("", "")


def test_non_elf_candidate_ends_the_search(check_program, repo_root, payload, tmp_path):
    # ld.so refuses a file that is not ELF ("invalid ELF header") and fails the load there,
    # although a good copy follows.
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "libpayload.so").write_text("INPUT ( libpayload.so.1 )\n" * 4)
    place(payload, tmp_path / "good")
    llp = f"{tmp_path}/text:{tmp_path}/good"
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path, llp)
    assert truth["error"] == f"{tmp_path}/text/libpayload.so: invalid ELF header"
    assert ours["searched"] == [f"{tmp_path}/text"]
    assert ours["unloadable"] == f"{tmp_path}/text/libpayload.so"


def test_other_class_or_machine_is_skipped(check_program, repo_root, payload, tmp_path):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    data = payload.read_bytes()
    wrong_class = bytearray(data)
    wrong_class[4] = 1  # EI_CLASS: ELFCLASS32
    wrong_machine = bytearray(data)
    wrong_machine[18:20] = (183).to_bytes(2, "little")  # e_machine: EM_AARCH64
    for folder, contents in (("class", wrong_class), ("machine", wrong_machine)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "libpayload.so").write_bytes(bytes(contents))
    copy = place(payload, tmp_path / "good")
    llp = f"{tmp_path}/class:{tmp_path}/machine:{tmp_path}/good"
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path, llp)
    assert (truth["found_in"], truth["path"]) == ("LD_LIBRARY_PATH", str(copy))
    assert ours["unloadable"] == f"{tmp_path}/class/libpayload.so"


@pytest.mark.parametrize("subdirs", [("glibc-hwcaps/x86-64-v2", "tls", "x86_64"),
                                     ("tls/x86_64", "tls", "x86_64"), ("x86_64",)])
def test_capability_subdirectory_is_preferred_and_folded(check_program, repo_root, payload,
                                                         tmp_path, subdirs):
    main = main_program(tmp_path)
    req = requester(repo_root, tmp_path / "req")
    base = tmp_path / "llp"
    for sub in subdirs + ("",):
        place(payload, base / sub)
    truth, ours = compare(check_program, main, req, "libpayload.so", tmp_path, str(base))
    assert truth["found_in"] == "LD_LIBRARY_PATH"
    assert truth["path"] != str(base / "libpayload.so")
    assert ours["searched"] == [str(base)]

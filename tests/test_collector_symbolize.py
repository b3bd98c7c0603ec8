"""The symboliser (collector/elf/symbolize.c and collector/elf/dwarf_lines.c, through
build/unit/symbolize_check) against addr2line. Each case compiles a small
program and a shared library it calls into (gcc and clang, DWARF 2 to 5, -O0
and -O2, PIE and not, and stripped copies), runs it, has it print the return
addresses of known call sites with its own load bias (from the dynamic
linker's link map), and asks the checker about those addresses in the live
process. Function and line must equal what `addr2line -f` says for the same
file and address, the module and module offset what the dynamic linker says;
a stripped file must still give the module and its exported functions, and
no line. The process then loads another library (the cached maps must be
read again) and exits (what was cached must still answer). Without a
process (`--file`), every few bytes of the programs' functions are compared
with addr2line too, hand-made line tables cover the encodings compilers here
do not emit, and truncated or corrupt files must give "unknown" and never
crash the checker."""
import os
import random
import re
import select
import shutil
import struct
import subprocess
import time

import pytest

from test_report_cli import varint as uleb  # LEB128 is protobuf's varint

RUNS_TIMEOUT_S = 60

PROGRAM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

void lib_entry(void (*report)(const char *));

/* Touched after every call that reports, so that no such call is a tail call. */
volatile int after;

/* Prints the caller's return address and the load bias of the object holding it. */
KEEP void report(const char *tag)
{
    void *ra = __builtin_return_address(0);
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(ra, &info, (void **)&map, RTLD_DL_LINKMAP))
        map = NULL;
    printf("%s %p %#lx\n", tag, ra, map ? (unsigned long)map->l_addr : 0ul);
    fflush(stdout);
}

KEEP static int helper(int n)
{
    report("helper"); /* @helper */
    after++;
    return n + 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    report("main_first"); /* @main_first */
    after++;
    if (helper(argc) > 1) {
        report("main_branch"); /* @main_branch */
        after++;
    }
    lib_entry(report);
    printf("ready\n");
    fflush(stdout);
    /* Each line of stdin names a library to load late and call. */
    char path[4096];
    while (fgets(path, sizeof path, stdin)) {
        path[strcspn(path, "\n")] = 0;
        void *late = dlopen(path, RTLD_NOW);
        void (*entry)(void (*)(const char *)) = late ? (void (*)(void (*)(const char *)))dlsym(
                                                            late, "late_entry")
                                                      : NULL;
        if (entry)
            entry(report);
        printf("done\n");
        fflush(stdout);
    }
    return 0;
}
"""

LIBRARY_SOURCE = r"""
#ifdef __clang__
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

volatile int after_lib;

KEEP static void lib_helper(void (*report)(const char *))
{
    report("lib_static"); /* @lib_static */
    after_lib++;
}

void lib_entry(void (*report)(const char *))
{
    report("lib_exported"); /* @lib_exported */
    after_lib++;
    lib_helper(report);
    after_lib++;
}
"""

LATE_SOURCE = r"""
volatile int after_late;

void late_entry(void (*report)(const char *))
{
    report("late"); /* @late */
    after_late++;
}
"""

# The function each tag's call site is in, and the object it is in.
FUNCTIONS = {"main_first": "main", "helper": "helper", "main_branch": "main",
             "lib_exported": "lib_entry", "lib_static": "lib_helper", "late": "late_entry"}
OBJECTS = {"main_first": "prog", "helper": "prog", "main_branch": "prog",
           "lib_exported": "libsymlib.so", "lib_static": "libsymlib.so", "late": "libsymlate.so"}
SOURCES = {"prog": ("prog.c", PROGRAM_SOURCE), "libsymlib.so": ("symlib.c", LIBRARY_SOURCE),
           "libsymlate.so": ("symlate.c", LATE_SOURCE)}

# (compiler, flags) for each build; PIE unless the flags say -no-pie.
VARIANTS = {
    "gcc-dwarf4-O0-pie": ("gcc", ["-gdwarf-4", "-O0"]),
    "gcc-dwarf4-O2-pie": ("gcc", ["-gdwarf-4", "-O2"]),
    "gcc-dwarf4-O0-nopie": ("gcc", ["-gdwarf-4", "-O0", "-no-pie"]),
    "gcc-dwarf4-O2-nopie": ("gcc", ["-gdwarf-4", "-O2", "-no-pie"]),
    "gcc-dwarf5-O0-pie": ("gcc", ["-gdwarf-5", "-O0"]),
    "gcc-dwarf5-O2-pie": ("gcc", ["-gdwarf-5", "-O2"]),
    "gcc-dwarf5-O0-nopie": ("gcc", ["-gdwarf-5", "-O0", "-no-pie"]),
    "gcc-dwarf5-O2-nopie": ("gcc", ["-gdwarf-5", "-O2", "-no-pie"]),
    "gcc-dwarf2-O2-pie": ("gcc", ["-gdwarf-2", "-O2"]),  # a version 3 line table
    "gcc-dwarf5-64bit-O2-pie": ("gcc", ["-gdwarf-5", "-gdwarf64", "-O2"]),
    "clang-dwarf2-O2-pie": ("clang", ["-gdwarf-2", "-O2"]),
    "clang-dwarf4-O0-pie": ("clang", ["-gdwarf-4", "-O0"]),
    "clang-dwarf4-O2-nopie": ("clang", ["-gdwarf-4", "-O2", "-no-pie"]),
    "clang-dwarf5-O0-nopie": ("clang", ["-gdwarf-5", "-O0", "-no-pie"]),
    "clang-dwarf5-O2-pie": ("clang", ["-gdwarf-5", "-O2"]),
}
# addr2line (binutils 2.40) misreads the 64-bit .debug_line_str offsets of a DWARF64 line
# table ("DWARF error: offset ... greater than or equal to .debug_line_str size"), so
# llvm-symbolizer, in addr2line's output style, is the reference there.
ORACLES = {"gcc-dwarf5-64bit-O2-pie": "llvm-symbolizer"}


@pytest.fixture(scope="module")
def check_program(build_dir):
    path = os.path.join(build_dir, "unit", "symbolize_check")
    if not os.path.exists(path):
        pytest.fail(f"missing {path}; run `make all test-programs` first", pytrace=False)
    return path


def build(folder, compiler, flags, strip=False, rdynamic=False):
    """Compiles the program and both libraries into `folder`; returns {object: path}."""
    if shutil.which(compiler) is None:
        pytest.fail(f"{compiler} is not installed", pytrace=False)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (source_name, text) in SOURCES.items():
        (folder / source_name).write_text(text)
    pic = ["-fPIC"] if "-no-pie" in flags else []
    common = [compiler, "-std=gnu11", *flags]
    steps = [
        common + ["-fPIC", "-shared", "-o", "libsymlib.so", "symlib.c"],
        common + ["-fPIC", "-shared", "-o", "libsymlate.so", "symlate.c"],
        common + pic + ["-o", "prog", "prog.c", "-L.", "-lsymlib", "-Wl,-rpath,$ORIGIN", "-ldl"]
        + (["-rdynamic"] if rdynamic else []),
    ]
    for step in steps:
        subprocess.run(step, cwd=folder, check=True, timeout=RUNS_TIMEOUT_S)
    paths = {name: str(folder / name) for name in SOURCES}
    if strip:
        for path in paths.values():
            subprocess.run(["strip", path], check=True, timeout=RUNS_TIMEOUT_S)
    return paths


def marker_lines(text):
    """{tag: line} of the /* @tag */ markers in a source."""
    return {m.group(1): text.count("\n", 0, m.start()) + 1
            for m in re.finditer(r"/\* @(\w+) \*/", text)}


MARKERS = {tag: line for _, text in SOURCES.values() for tag, line in marker_lines(text).items()}


class Lines:
    """Reads lines from a process's stdout with a deadline."""

    def __init__(self, process):
        self.process, self.buffer = process, b""

    def read(self, timeout=RUNS_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            assert ready, f"no line from {self.process.args} in {timeout}s"
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, f"{self.process.args} ended early: {self.buffer!r}"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


def start(argv, cwd=None):
    process = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    return process, Lines(process)


def send(process, text):
    process.stdin.write(text.encode() + b"\n")
    process.stdin.flush()


def parse_report(line):
    """(tag, pc, load bias) from a `tag return_address l_addr` line; pc is the call's own
    instruction (the return address - 1), as the collector passes it."""
    tag, address, bias = line.split()
    return tag, int(address, 16) - 1, int(bias, 16)


def parse_ours(line):
    """(module, function, file, line, module offset) from a checker line; None for ??."""
    module, function, location, offset = line.split()
    file, _, number = location.rpartition(":")
    module, function, file = (None if text == "??" else text for text in (module, function, file))
    return module, function, file, int(number), int(offset, 16)


def addr2line(path, addresses, oracle="addr2line"):
    """[(function, file, line)] as addr2line -f (or `oracle`, in addr2line's output style)
    says for `addresses` of the file at `path`; None for ??, line 0 when unknown."""
    argv = ["addr2line", "-f", "-e", path]
    if oracle == "llvm-symbolizer":
        argv = ["llvm-symbolizer", "--output-style=GNU", "--no-inlines", "-f", "-e", path]
    done = subprocess.run(argv, input="".join(
        f"{a:#x}\n" for a in addresses), capture_output=True, text=True, check=True,
        timeout=RUNS_TIMEOUT_S)
    lines = done.stdout.splitlines()
    assert len(lines) == 2 * len(addresses), done.stdout
    answers = []
    for function, location in zip(lines[0::2], lines[1::2]):
        location = location.split(" (discriminator")[0]
        file, _, number = location.rpartition(":")
        answers.append((None if function == "??" else function, None if file == "??" else file,
                        int(number) if number.isdigit() else 0))
    return answers


def same_file(ours, theirs):
    """The checker gives the name as recorded, addr2line joins it with its directory."""
    return ours is not None and theirs is not None and \
        os.path.basename(ours) == os.path.basename(theirs)


def check_against_addr2line(answer, path, offset, oracle):
    module, function, file, line, module_offset = answer
    truth_function, truth_file, truth_line = addr2line(path, [offset], oracle)[0]
    assert (function, line) == (truth_function, truth_line), (answer, path, hex(offset))
    if truth_line:
        assert same_file(file, truth_file), (answer, truth_file)


def run_case(check_program, paths, stripped=False, exported=(), oracle="addr2line"):
    """Runs the program, checks every reported call site, then a late library and the
    process's exit. `exported`: the tags whose function must be named even when stripped."""
    folder = os.path.dirname(paths["prog"])
    program, program_lines = start([paths["prog"]], cwd=folder)
    checker = None
    try:
        reports = []
        while (line := program_lines.read()) != "ready":
            reports.append(parse_report(line))
        assert [tag for tag, _, _ in reports] == ["main_first", "helper", "main_branch",
                                                 "lib_exported", "lib_static"]
        checker, checker_lines = start([check_program, str(program.pid)])

        def ask(tag, pc, bias):
            send(checker, f"{pc:x}")
            answer = parse_ours(checker_lines.read())
            path = os.path.realpath(paths[OBJECTS[tag]])
            assert answer[0] == path, (tag, answer)
            assert answer[4] == pc - bias, (tag, answer, hex(pc - bias))
            if not stripped:
                check_against_addr2line(answer, path, pc - bias, oracle)
                assert (answer[1], answer[3]) == (FUNCTIONS[tag], MARKERS[tag]), (tag, answer)
            elif tag in exported:
                check_against_addr2line(answer, path, pc - bias, oracle)
                assert answer[1:4] == (FUNCTIONS[tag], None, 0), (tag, answer)
            else:
                # Not in .dynsym. addr2line names the nearest exported function below the
                # address even when the address lies past that function's end; the
                # symboliser says it does not know.
                assert answer[1:4] == (None, None, 0), (tag, answer)
            return answer

        answers = [ask(*report) for report in reports]
        send(program, paths["libsymlate.so"])
        late = parse_report(program_lines.read())
        assert late[0] == "late" and program_lines.read() == "done"
        ask(*late)
        program.stdin.close()
        assert program.wait(timeout=RUNS_TIMEOUT_S) == 0
        # Gone: the maps read while it ran still answer.
        assert [ask(*report) for report in reports] == answers
        checker.stdin.close()
        assert checker.wait(timeout=RUNS_TIMEOUT_S) == 0
    finally:
        for process in (program, checker):
            if process and process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_call_sites_match_addr2line(check_program, tmp_path, variant):
    compiler, flags = VARIANTS[variant]
    run_case(check_program, build(tmp_path, compiler, flags),
             oracle=ORACLES.get(variant, "addr2line"))


@pytest.mark.parametrize("variant", ["gcc-dwarf5-O2-pie", "gcc-dwarf4-O0-nopie",
                                     "clang-dwarf5-O2-pie"])
@pytest.mark.parametrize("rdynamic", [False, True], ids=["plain", "rdynamic"])
def test_stripped_gives_module_and_exported_functions(check_program, tmp_path, variant,
                                                      rdynamic):
    compiler, flags = VARIANTS[variant]
    paths = build(tmp_path, compiler, flags, strip=True, rdynamic=rdynamic)
    exported = {"lib_exported", "late"} | ({"main_first", "main_branch"} if rdynamic else set())
    run_case(check_program, paths, stripped=True, exported=exported)


def function_symbols(path):
    """[(address, size)] of the sized functions defined in the file (from readelf)."""
    done = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True, check=True,
                          timeout=RUNS_TIMEOUT_S)
    found = set()
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[3] == "FUNC" and fields[6] != "UND" and \
                int(fields[2], 0) > 0:
            found.add((int(fields[1], 16), int(fields[2], 0)))
    return sorted(found)


def ask_file(check_program, path, addresses):
    done = subprocess.run([check_program, "--file", path, *(f"{a:x}" for a in addresses)],
                          capture_output=True, text=True, timeout=RUNS_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return [parse_ours(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("variant", ["gcc-dwarf4-O0-pie", "gcc-dwarf5-O2-nopie",
                                     "gcc-dwarf5-64bit-O2-pie", "clang-dwarf2-O2-pie",
                                     "clang-dwarf5-O2-pie"])
def test_every_few_bytes_match_addr2line(check_program, tmp_path, variant):
    compiler, flags = VARIANTS[variant]
    paths = build(tmp_path, compiler, flags)
    for name in ("prog", "libsymlib.so"):
        addresses = [a for start, size in function_symbols(paths[name])
                     for a in range(start, start + size, 2)]
        assert len(addresses) > 30
        ours = ask_file(check_program, paths[name], addresses)
        theirs = addr2line(paths[name], addresses, ORACLES.get(variant, "addr2line"))
        for address, answer, (function, file, line) in zip(addresses, ours, theirs):
            where = (name, hex(address), answer, (function, file, line))
            assert answer[0] == paths[name] and answer[4] == address, where
            assert answer[1] == function and answer[3] == line, where
            assert not line or same_file(answer[2], file), where


# ---- hand-made files: the encodings GCC and clang do not emit here -----------------------

def sleb(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


def extended(opcode, operands=b""):
    return b"\0" + uleb(1 + len(operands)) + bytes([opcode]) + operands


def set_address(address):
    return extended(2, address.to_bytes(8, "little"))


END_SEQUENCE = extended(1)
COPY = b"\x01"


def advance_pc(n):
    return b"\x02" + uleb(n)


def advance_line(n):
    return b"\x03" + sleb(n)


def set_file(n):
    return b"\x04" + uleb(n)


def special(address_advance, line_advance, line_base=-5, line_range=14, opcode_base=13):
    opcode = (line_advance - line_base) + line_range * address_advance + opcode_base
    assert opcode_base <= opcode <= 255
    return bytes([opcode])


def line_header(version, tables, min_inst=1, max_ops=1, line_base=-5, line_range=14,
                opcode_lengths=(0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1)):
    """The header fields after header_length, then the directory and file tables."""
    fields = bytes([min_inst]) + (bytes([max_ops]) if version >= 4 else b"")
    fields += bytes([1, line_base & 0xFF, line_range, len(opcode_lengths) + 1])
    return fields + bytes(opcode_lengths) + tables


def line_unit(version, header, program, dwarf64=False):
    size = 8 if dwarf64 else 4
    body = version.to_bytes(2, "little") + (b"\x08\x00" if version >= 5 else b"")
    body += len(header).to_bytes(size, "little") + header + program
    length = (b"\xff\xff\xff\xff" + len(body).to_bytes(8, "little")) if dwarf64 else \
        len(body).to_bytes(4, "little")
    return length + body


def v4_tables(directories, files):
    out = b"".join(d.encode() + b"\0" for d in directories) + b"\0"
    out += b"".join(f.encode() + b"\0" + uleb(d) + uleb(0) + uleb(0) for f, d in files)
    return out + b"\0"


def elf_file(sections, symbols):
    """A minimal x86-64 ELF executable: `sections` [(name, type, flags, address, data, link,
    entsize)] after the null section, `symbols` [(name, address, size, binding)] defined in
    section 1. Adds .symtab, .strtab and .shstrtab; section offsets follow the headers."""
    strtab, symtab = b"\0", struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0)
    for name, address, size, binding in symbols:
        symtab += struct.pack("<IBBHQQ", len(strtab), (binding << 4) | 2, 0, 1, address, size)
        strtab += name.encode() + b"\0"
    count = len(sections)
    sections = sections + [(".symtab", 2, 0, 0, symtab, count + 2, 24),
                           (".strtab", 3, 0, 0, strtab, 0, 0)]
    names = b"\0" + b"".join(s[0].encode() + b"\0" for s in sections) + b".shstrtab\0"
    sections.append((".shstrtab", 3, 0, 0, names, 0, 0))
    data, offset, headers, name_at = b"", 64 + 56, [b"\0" * 64], 1
    for name, kind, flags, address, content, link, entsize in sections:
        if name == ".shstrtab":
            name_at = names.index(b".shstrtab\0")
        headers.append(struct.pack("<IIQQQQIIQQ", name_at, kind, flags, address,
                                   offset + len(data), len(content), link, 0, 1, entsize))
        name_at += len(name) + 1
        data += content
    shoff = offset + len(data)
    header = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 2, 62, 1,
                         0x401000, 64, shoff, 0, 64, 56, 1, 64, len(headers), len(headers) - 1)
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, 0x400000, 0x400000, shoff, shoff, 0x1000)
    return header + load + data + b"".join(headers)


def hand_made_lines():
    """(.debug_line, .debug_line_str, .debug_str) and {address: (file, line) or None}."""
    line_str = b"\0/src\0include\0"
    debug_str = b"\0a.c\0b.h\0"
    expect = {}
    # DWARF 5: paths through .debug_line_str and .debug_str, and MD5, vendor-block, udata,
    # data1 and data4 columns to step over.
    directories = bytes([1]) + uleb(1) + uleb(0x1F) + uleb(2) + \
        (1).to_bytes(4, "little") + (6).to_bytes(4, "little")
    files = bytes([6]) + b"".join(uleb(c) + uleb(f) for c, f in [
        (1, 0x0E), (2, 0x0F), (5, 0x1E), (0x2001, 0x09), (4, 0x0B), (3, 0x06)])
    files += uleb(3) + b"".join(offset.to_bytes(4, "little") + uleb(directory) + b"\x11" * 16
                                + uleb(3) + b"abc" + b"\x07" + b"\0\0\0\0"
                                for offset, directory in [(1, 0), (1, 0), (5, 1)])
    program = set_address(0x401000) + advance_line(9) + COPY + special(0x10, 2) + set_file(2) \
        + special(0x10, -5) + advance_pc(0x10) + END_SEQUENCE
    units = line_unit(5, line_header(5, directories + files), program)
    expect.update({0x401000: ("a.c", 10), 0x40100F: ("a.c", 10), 0x401010: ("a.c", 12),
                   0x401025: ("b.h", 7), 0x401030: None, 0x400FFF: None})
    # DWARF 5, 64-bit: an 8-byte .debug_line_str offset, inline strings, data2, block1, data8
    # and data16 columns, file 0, const_add_pc, fixed_advance_pc.
    directories = bytes([1]) + uleb(1) + uleb(0x1F) + uleb(1) + (1).to_bytes(8, "little")
    files = bytes([5]) + b"".join(uleb(c) + uleb(f) for c, f in [
        (1, 0x08), (2, 0x05), (0x2002, 0x0A), (3, 0x07), (5, 0x1E)])
    files += uleb(1) + b"c.c\0" + b"\0\0" + b"\x02xy" + b"\x08" * 8 + b"\x16" * 16
    program = set_file(0) + set_address(0x402000) + advance_line(99) + COPY + b"\x08" + COPY \
        + advance_line(1) + b"\x09" + (0x20).to_bytes(2, "little") + COPY + advance_pc(1) \
        + END_SEQUENCE
    units += line_unit(5, line_header(5, directories + files), program, dwarf64=True)
    expect.update({0x402000: ("c.c", 100), 0x402030: ("c.c", 100), 0x402031: ("c.c", 101),
                   0x402032: None})
    # DWARF 2: opcode base 10 (so 10 to 12 are special), DW_LNE_define_file.
    v2 = dict(line_base=-3, line_range=12, opcode_base=10)
    program = set_address(0x403000) + extended(3, b"e.c\0\0\0\0") + advance_line(19) + COPY \
        + special(4, -2, **v2) + special(0, -1, **v2) + set_file(2) + special(4, 1, **v2) \
        + advance_pc(4) + END_SEQUENCE
    assert special(0, -1, **v2) == bytes([12])  # DW_LNS_set_isa's number, special here
    header = line_header(2, v4_tables([], [("d.c", 0)]), line_base=-3, line_range=12,
                         opcode_lengths=(0, 1, 1, 1, 1, 0, 0, 0, 1))
    units += line_unit(2, header, program)
    expect.update({0x403000: ("d.c", 20), 0x403004: ("d.c", 17), 0x403008: ("e.c", 18),
                   0x40300C: None})
    # DWARF 4: 4-byte instructions, an unknown standard opcode (13, two operands), an unknown
    # extended opcode, a discriminator.
    program = set_address(0x404000) + COPY + b"\x0d" + uleb(300) + uleb(5) \
        + extended(0x80, b"\1\2\3") + extended(4, uleb(7)) + special(2, 4, opcode_base=14) \
        + advance_pc(1) + END_SEQUENCE
    header = line_header(4, v4_tables(["/src"], [("f.c", 1)]), min_inst=4,
                         opcode_lengths=(0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2))
    units += line_unit(4, header, program)
    expect.update({0x404007: ("f.c", 1), 0x404008: ("f.c", 5), 0x40400C: None})
    # Left out: a unit with line_range 0, code the linker discarded (at address 0), a
    # sequence overlapping the first one, a sequence never ended, and a truncated unit.
    plain = line_header(4, v4_tables([], [("g.c", 0)]))
    units += line_unit(4, line_header(4, v4_tables([], [("g.c", 0)]), line_range=0),
                       set_address(0x405000) + COPY + advance_pc(4) + END_SEQUENCE)
    units += line_unit(4, plain, set_address(0) + COPY + advance_pc(0x20) + END_SEQUENCE)
    units += line_unit(4, plain, set_address(0x401008) + advance_line(40) + COPY
                       + advance_pc(0x40) + END_SEQUENCE)
    units += line_unit(4, plain, set_address(0x406000) + COPY + advance_pc(4) + COPY)
    units += line_unit(4, plain, set_address(0x407000) + COPY + advance_pc(4) + END_SEQUENCE)[:-3]
    expect.update({0x405000: None, 0x10: None, 0x406000: None, 0x407000: None})
    return (units, line_str, debug_str), expect


def hand_made_elf(line, line_str, debug_str):
    text = b"\xcc" * 0x8000
    return elf_file([(".text", 1, 6, 0x401000, text, 0, 0),
                     (".debug_line", 1, 0, 0, line, 0, 0),
                     (".debug_line_str", 1, 0x30, 0, line_str, 0, 1),
                     (".debug_str", 1, 0x30, 0, debug_str, 0, 1)],
                    [("alias_local", 0x401000, 0x30, 0), ("fa", 0x401000, 0x30, 1),
                     ("fb", 0x402000, 0, 1), ("fd", 0x403000, 0x10, 2)])


def test_hand_made_line_tables(check_program, tmp_path):
    (line, line_str, debug_str), expect = hand_made_lines()
    path = tmp_path / "hand.elf"
    path.write_bytes(hand_made_elf(line, line_str, debug_str))
    addresses = sorted(expect)
    for address, answer in zip(addresses, ask_file(check_program, str(path), addresses)):
        got = (answer[2], answer[3]) if answer[3] else None
        assert got == expect[address], (hex(address), answer)
    functions = {0x401010: "fa", 0x40102F: "fa", 0x401030: None, 0x402031: "fb",
                 0x403008: "fd", 0x403010: None, 0x400000: None}
    answers = ask_file(check_program, str(path), list(functions))
    assert [a[1] for a in answers] == list(functions.values())


# ---- truncated and corrupt files -------------------------------------------------------

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An -O2 DWARF 5 PIE program, and [(address, function, line)] at call sites in it."""
    folder = tmp_path_factory.mktemp("reference")
    paths = build(folder, "gcc", ["-gdwarf-5", "-O2"])
    addresses = [a for start, size in function_symbols(paths["prog"])
                 for a in range(start, start + size, 5)]
    return paths["prog"], addresses


def section_headers(data):
    """{name: (header offset, section offset, size)} of an ELF file's sections."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    count, names = struct.unpack_from("<HH", data, 0x3C)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(count)]
    names_offset = headers[names][4]
    found = {}
    for i, h in enumerate(headers):
        end = data.index(b"\0", names_offset + h[0])
        found[data[names_offset + h[0]:end].decode()] = (shoff + 64 * i, h[4], h[5])
    return found


def check_survives(check_program, path, addresses):
    """The checker answers every address of a damaged file, module always."""
    answers = ask_file(check_program, str(path), addresses)
    assert len(answers) == len(addresses)
    assert all(a[0] == str(path) for a in answers)
    return answers


def test_truncated_copies_give_unknown(check_program, reference, tmp_path):
    prog, addresses = reference
    data = open(prog, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    cuts = sorted({0, 1, 16, 63, 64, 200, 4096, len(data) // 4, len(data) // 2, shoff - 1,
                   shoff, shoff + 64, len(data) - 64, len(data) - 1})
    for cut in cuts:
        path = tmp_path / f"cut{cut}"
        path.write_bytes(data[:cut])
        # The section headers come last: any cut loses them, and with them every name.
        for answer in check_survives(check_program, path, addresses):
            assert answer[1:4] == (None, None, 0), (cut, answer)


def test_lying_section_headers_give_unknown(check_program, reference, tmp_path):
    prog, addresses = reference
    data = open(prog, "rb").read()
    sections = section_headers(data)
    intact = ask_file(check_program, prog, addresses)
    assert sum(1 for a in intact if a[3]) > len(addresses) // 2

    def patched(name, field_offset, fmt, value):
        copy = bytearray(data)
        struct.pack_into(fmt, copy, sections[name][0] + field_offset, value)
        return copy

    cases = {
        "line_size_huge": (patched(".debug_line", 0x20, "<Q", 1 << 62), "lines"),
        "line_size_past_end": (patched(".debug_line", 0x20, "<Q", len(data)), "lines"),
        "line_offset_past_end": (patched(".debug_line", 0x18, "<Q", len(data) + 10), "lines"),
        "line_compressed": (patched(".debug_line", 0x08, "<Q", 0x800), "lines"),
        "line_str_past_end": (patched(".debug_line_str", 0x18, "<Q", 1 << 40), "files"),
        "symtab_link_bad": (patched(".symtab", 0x28, "<I", 5000), "symtab"),
        "symtab_size_huge": (patched(".symtab", 0x20, "<Q", 1 << 62), "symtab"),
    }
    header = bytearray(data)
    struct.pack_into("<H", header, 0x3C, 0xFFFF)  # e_shnum
    cases["shnum_huge"] = (header, "all")
    header = bytearray(data)
    struct.pack_into("<H", header, 0x3E, 0xFFF0)  # e_shstrndx
    cases["shstrndx_bad"] = (header, "names")
    for name, (content, lost) in cases.items():
        path = tmp_path / name
        path.write_bytes(bytes(content))
        for address, before, after in zip(addresses, intact,
                                          check_survives(check_program, path, addresses)):
            where = (name, hex(address), before, after)
            if lost in ("lines", "all", "names"):
                assert after[3] == 0, where
            if lost == "files":
                assert after[2] is None and after[3] == before[3], where
            if lost in ("all",):
                assert after[1] is None, where
            if lost == "symtab":  # .dynsym still names the exported functions
                assert after[1] in (before[1], None) and after[3] == before[3], where
            if lost in ("lines", "files"):
                assert after[1] == before[1], where


def test_corrupt_line_tables_do_not_crash(check_program, reference, tmp_path):
    prog, addresses = reference
    data = open(prog, "rb").read()
    _, start, size = section_headers(data)[".debug_line"]
    rng = random.Random(1234)
    variants = []
    for _ in range(12):  # random bytes over a random stretch
        copy = bytearray(data)
        at = start + rng.randrange(size)
        length = rng.randrange(1, 200)
        copy[at:at + length] = bytes(rng.randrange(256) for _ in range(min(length, size)))
        copy = copy[:len(data)]
        variants.append(copy)
    for at in range(start, start + min(size, 120)):  # each header byte at its extremes
        for value in (0x00, 0xFF):
            copy = bytearray(data)
            copy[at] = value
            variants.append(copy)
    path = tmp_path / "corrupt"
    for copy in variants:
        path.write_bytes(bytes(copy))
        answers = check_survives(check_program, path, addresses[::4])
        # Functions come from the symbol table, which is intact.
        assert all(a[1] is not None for a in answers[:3]), answers[:3]

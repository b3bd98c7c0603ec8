"""The pure parts of the code, those that compute only from what they are given,
each checked on its own by a program in tests/unit/ (NAME_check.c, built by
tests/unit/unit.mk into build/unit/ and linked with only the sources it checks),
so that none needs a traced program. Each program prints a line per failed check
and ends with "N checks passed" when none failed; this file runs each of PROGRAMS
and holds it to that, under whatever sanitizers the build was made with."""
import os
import re
import subprocess

import pytest

PROGRAMS = ["string_table_check", "u64_map_check", "clock_map_check", "timeline_check",
            "dwarf_lines_check", "time_order_check", "vmm_ledger_check",
            "entry_list_check", "json_reader_check", "holders_check", "drain_order_check",
            "python_lines_check", "call_cost_check", "writer_cache_check", "cpu_list_check",
            "capture_windows_check", "memory_counters_check"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_pure_part(build_dir, program):
    done = subprocess.run([os.path.join(build_dir, "unit", program)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(r"[1-9]\d* checks passed\n", done.stdout), done.stdout + done.stderr
    # The programs write nothing else: anything on stderr is a sanitizer's report, and UBSan's
    # do not end the program.
    assert done.stderr == "", done.stderr

"""The ring protocol under concurrency: tests/unit/ring_stress.c runs the
preload's producer code and the collector's consumer code in one process
(built with SANITIZE=thread in CI, so the thread sanitizer checks every
access). Records arrive in order per thread, and recorded + dropped equals
issued, exactly, with more threads than rings and rings reused by new
threads."""
import os
import re
import subprocess

import pytest


@pytest.mark.parametrize("waves,threads,records,rings", [(4, 16, 20000, 8), (3, 64, 5000, 256)])
def test_rings_lose_nothing_uncounted(build_dir, waves, threads, records, rings):
    done = subprocess.run([os.path.join(build_dir, "unit", "ring_stress"), str(waves),
                           str(threads), str(records), str(rings)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    numbers = dict(re.findall(r"(issued|received|dropped|out of order|threads) (\d+)", done.stdout))
    assert int(numbers["issued"]) == waves * threads * records
    assert int(numbers["received"]) + int(numbers["dropped"]) == int(numbers["issued"])
    assert int(numbers["received"]) > 0
    assert numbers["out of order"] == "0"
    assert "WARNING: ThreadSanitizer" not in done.stderr

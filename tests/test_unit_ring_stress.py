"""The ring protocol under concurrency: tests/unit/ring_stress.c runs the
preload's producer code and the collector's consumer code in one process
(built with SANITIZE=thread in CI, so the thread sanitizer checks every
access), with more threads than rings and rings reused by new threads.

Each producer thread keeps its own account of its calls (published when its
ring's head moved, with a hash of the sequence numbers it published; dropped
by its ring's own counter; made while it had no ring), the consumer its
account per producer, and the rings and the session their totals: every
thread's records arrive exactly as published, in order, on the thread's own
ring, and its published, dropped and ringless calls add up to what it
issued."""
import os
import re
import subprocess

import pytest

PRODUCER = re.compile(r"ring_stress: producer (\d+) tid (\d+) published (\d+) hash (\d+)"
                      r" ring-dropped (\d+) without-ring (\d+); tid (\d+) received (\d+)"
                      r" hash (\d+) out-of-order (\d+) foreign (\d+)")
TOTAL = re.compile(r"ring_stress: total ring-dropped (\d+) without-ring (\d+) threads (\d+)"
                   r" spilled (\d+)")


@pytest.mark.parametrize("waves,threads,records,rings,spill", [
    (4, 16, 20000, 8, 0), (3, 64, 5000, 256, 0),
    # Full rings spill into a shared pool of 3 segments, which runs out: records go to the
    # ring, the chain, or are dropped, and arrive in order all the same.
    (4, 16, 60000, 8, 3)])
def test_rings_lose_nothing_uncounted(build_dir, waves, threads, records, rings, spill):
    done = subprocess.run([os.path.join(build_dir, "unit", "ring_stress"), str(waves),
                           str(threads), str(records), str(rings), str(spill)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING: ThreadSanitizer" not in done.stderr
    *lines, last = done.stdout.splitlines()
    producers = [tuple(map(int, PRODUCER.fullmatch(line).groups())) for line in lines]
    assert [p[0] for p in producers] == list(range(waves * threads))
    for (ident, tid, published, published_hash, ring_dropped, without_ring, ring_tid, received,
         received_hash, out_of_order, foreign) in producers:
        # What the consumer got on this thread's ring is what the thread saw itself publish,
        # under the thread's own tid.
        assert (received, received_hash) == (published, published_hash), ident
        assert ring_tid == (tid if published else 0), ident
        assert (out_of_order, foreign) == (0, 0), ident
        assert published + ring_dropped + without_ring == records, ident
    ring_dropped, without_ring, threads_seen, spilled = map(int, TOTAL.fullmatch(last).groups())
    assert (spilled > 0) == (spill > 0)
    # The rings' and the session's own counters, against the producers' sums.
    assert ring_dropped == sum(p[4] for p in producers)
    assert without_ring == sum(p[5] for p in producers)
    assert threads_seen == sum(p[2] > 0 for p in producers)
    # More threads at once than rings, or rings too small for a thread's burst.
    assert ring_dropped + without_ring > 0

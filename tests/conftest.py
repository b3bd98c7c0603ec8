"""Shared pytest setup for tests/.

Each part of the test suite keeps its fixtures in its own marked section below.
"""

import gzip
import os
import sys

import pytest

# tests/ holds helper modules (perfetto_check) that the tests import.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# ==========================================================================
# perfetto_check fixtures (tests/perfetto_check.py): writing small traces
# ==========================================================================


def encode_trace(packets, compress=None):
    """Serialize TracePackets (or raw Trace bytes) as a file's bytes.

    compress: None (plain protobuf), "gzip", or "zstd" (two frames, to cover
    readers that would stop after the first).
    """
    from perfetto_check import pb

    data = packets if isinstance(packets, bytes) else pb.Trace(packet=packets).SerializeToString()
    if compress == "gzip":
        return gzip.compress(data)
    if compress == "zstd":
        import zstandard

        c = zstandard.ZstdCompressor()
        half = len(data) // 2
        return c.compress(data[:half]) + c.compress(data[half:])
    assert compress is None, compress
    return data


@pytest.fixture
def write_trace(tmp_path):
    """write_trace(packets_or_bytes, compress=None) -> path of a new trace file."""
    count = [0]

    def write(packets, compress=None):
        count[0] += 1
        path = tmp_path / f"trace{count[0]}.pftrace"
        path.write_bytes(encode_trace(packets, compress))
        return path

    return write


# ==========================================================================
# (end of perfetto_check fixtures)
# ==========================================================================

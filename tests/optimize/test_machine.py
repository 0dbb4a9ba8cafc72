"""The machine the model plans for: read from the OS, overridable."""

from __future__ import annotations

import pytest

from affine_lsp.transforms.performance import Machine, machine, parse_caches
from affine_lsp.transforms.performance.machine import read_caches, read_vector, size_text


def _cache(root, index, level, kind, size, line="64"):
    folder = root / f"index{index}"
    folder.mkdir()
    for name, value in (("level", level), ("type", kind), ("size", size)):
        (folder / name).write_text(value + "\n")
    (folder / "coherency_line_size").write_text(line + "\n")


def test_data_caches_are_read_by_level_and_instruction_caches_left_out(tmp_path):
    _cache(tmp_path, 0, "1", "Data", "48K")
    _cache(tmp_path, 1, "1", "Instruction", "32K")
    _cache(tmp_path, 2, "2", "Unified", "1024K")
    _cache(tmp_path, 3, "3", "Unified", "32768K", "128")
    assert read_caches(tmp_path) == ((48 * 1024, 1024 * 1024, 32 * 1024 * 1024), 128)
    assert read_caches(tmp_path / "missing") == ((), None)


def test_the_vector_width_comes_from_the_cpu_flags(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n")
    assert read_vector(info) == (32, 16)
    info.write_text("flags\t\t: sse2 avx2 avx512f avx512bw\n")
    assert read_vector(info) == (64, 32)
    info.write_text("flags\t\t: sse2\n")
    assert read_vector(info) == (16, 16)
    assert read_vector(tmp_path / "none") is None


def test_this_machine_has_caches_and_vectors():
    found = machine()
    assert len(found.caches) >= 1 and found.vector_bytes in (16, 32, 64)
    assert "L1" in found.describe()


def test_sizes_and_overrides():
    assert parse_caches("48K, 1M,32M") == (48 * 1024, 1024 * 1024, 32 * 1024 * 1024)
    assert parse_caches("4096") == (4096,)
    with pytest.raises(ValueError, match="not a cache size: 'lots'"):
        parse_caches("48K,lots")
    assert size_text(48 * 1024) == "48K" and size_text(1000) == "1000"
    changed = Machine().with_overrides((1024,), 64)
    assert changed.caches == (1024,) and changed.vector_bytes == 64 and changed.registers == 32
    assert changed.cache(2) == 1024 and changed.lanes(8) == 8
    assert Machine().with_overrides() == Machine()

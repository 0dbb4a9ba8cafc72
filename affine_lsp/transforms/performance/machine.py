"""The machine the cost model plans for: cache sizes, the vector width, registers.

Read from the operating system once (`machine()`): the data caches of cpu0 from
`/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,coherency_line_size}`,
the widest vector extension from the `flags` of `/proc/cpuinfo` (avx512f: 64
bytes and 32 vector registers, avx/avx2: 32 bytes and 16, otherwise 16 bytes and
16). Anything missing falls back to `FALLBACK` (a common desktop core). Every
figure can be overridden (`Machine.with_overrides`, from the CLI's `--cache` /
`--vector-bytes` or the editor's settings), so that a plan made for another
machine, or in a test, does not depend on this one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from affine_lsp.ir import FloatType, IndexType, IntegerType, Type

_CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
_CPUINFO = Path("/proc/cpuinfo")
_SIZE = re.compile(r"^\s*(\d+)\s*([KMG]?)B?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


@dataclass(frozen=True)
class Machine:
    """Data cache sizes in bytes (L1 first), the cache line, the vector width in
    bytes and the number of vector registers."""

    caches: tuple[int, ...] = (32 * 1024, 1024 * 1024, 32 * 1024 * 1024)
    line_bytes: int = 64
    vector_bytes: int = 32
    registers: int = 16
    source: str = "defaults"  # where the figures come from, for messages

    def lanes(self, element_bytes: int) -> int:
        """Elements of `element_bytes` in one vector register."""
        return max(1, self.vector_bytes // max(1, element_bytes))

    def cache(self, level: int) -> int:
        """The size of cache `level` (1-based; the last level for deeper ones)."""
        return self.caches[min(level, len(self.caches)) - 1]

    def with_overrides(
        self, caches: tuple[int, ...] | None = None, vector_bytes: int | None = None
    ) -> Machine:
        """This machine with the given figures instead (None: keep)."""
        changed = replace(self)
        if caches:
            changed = replace(changed, caches=tuple(caches), source="settings")
        if vector_bytes:
            registers = 32 if vector_bytes >= 64 else 16
            changed = replace(
                changed, vector_bytes=vector_bytes, registers=registers, source="settings"
            )
        return changed

    def describe(self) -> str:
        levels = ", ".join(f"L{k + 1} {size_text(s)}" for k, s in enumerate(self.caches))
        return f"{levels}; {self.vector_bytes * 8}-bit vectors ({self.source})"


FALLBACK = Machine()


def element_bytes(type_: Type | None) -> int:
    """Bytes of one element (8 for index, 4 when unknown)."""
    if isinstance(type_, IndexType):
        return 8
    if isinstance(type_, IntegerType):
        return max(1, type_.width // 8)
    if isinstance(type_, FloatType):
        digits = "".join(c for c in type_.name if c.isdigit())
        return max(1, int(digits) // 8) if digits else 4
    return 4


def parse_size(text: str) -> int | None:
    """'48K' -> 49152, '1M', '1024', '32 MB'; None when not a size."""
    match = _SIZE.match(text)
    if match is None:
        return None
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def size_text(size: int) -> str:
    """49152 -> '48K', 1048576 -> '1M'."""
    for unit in ("G", "M", "K"):
        if size >= _UNITS[unit] and size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)


def human_size(size: int) -> str:
    """12058624 -> '11.5 MB', 49152 -> '48 KB', 100 -> '100 bytes'."""
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            value = size / scale
            return (
                f"{value:.0f} {unit}"
                if value >= 100 or value == int(value)
                else (f"{value:.1f} {unit}")
            )
    return f"{size} bytes"


def parse_caches(text: str) -> tuple[int, ...]:
    """'48K,1M,32M' -> the sizes in bytes; ValueError naming a bad part."""
    sizes = []
    for part in text.split(","):
        size = parse_size(part)
        if size is None or size <= 0:
            raise ValueError(f"not a cache size: {part.strip()!r} (e.g. 48K, 1M)")
        sizes.append(size)
    return tuple(sizes)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def read_caches(root: Path = _CACHE_DIR) -> tuple[tuple[int, ...], int | None]:
    """(data cache sizes by level, line size) as the OS lists them for cpu0."""
    found: dict[int, int] = {}
    line = None
    for index in sorted(root.glob("index*")):
        kind = _read(index / "type") or ""
        level = _read(index / "level") or ""
        size = parse_size(_read(index / "size") or "")
        if kind == "Instruction" or not level.isdigit() or size is None:
            continue
        found[int(level)] = size
        line_text = _read(index / "coherency_line_size") or ""
        if line_text.isdigit():
            line = int(line_text)
    return tuple(found[level] for level in sorted(found)), line


def read_vector(cpuinfo: Path = _CPUINFO) -> tuple[int, int] | None:
    """(vector bytes, vector registers) from the CPU flags, None if unknown."""
    text = _read(cpuinfo)
    if text is None:
        return None
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
            break
    if "avx512f" in flags:
        return 64, 32
    if "avx2" in flags or "avx" in flags:
        return 32, 16
    if flags:
        return 16, 16
    return None


@cache
def machine() -> Machine:
    """This machine, as the OS describes it (read once)."""
    caches, line = read_caches()
    vector = read_vector()
    found = FALLBACK
    if caches:
        found = replace(found, caches=caches, source="this machine")
    if line:
        found = replace(found, line_bytes=line)
    if vector is not None:
        found = replace(found, vector_bytes=vector[0], registers=vector[1], source="this machine")
    return found

"""isl names for SSA values.

Two styles: `pretty` names are the source names without `%` (for hovers:
`[N] -> { [i, j] : ... }`); `exact` names encode the source name injectively,
so that two models of the same function (before and after a rewrite) give every
symbol the same isl name and never confuse two different ones.
"""

from __future__ import annotations

import re

from affine_lsp.ir import Value

_ISL_KEYWORDS = frozenset(
    {"and", "or", "not", "mod", "floor", "ceil", "min", "max", "exists", "true", "false"}
    | {"infty", "NaN", "nan", "rat", "implies"}
)
_INVALID = re.compile(r"[^A-Za-z0-9_]")


def pretty_identifier(source_name: str) -> str:
    """`%arg0` -> `arg0`, `%0` -> `_0`, `%x#1` -> `x_1`, `%max` -> `max_`."""
    base = _INVALID.sub("_", source_name.lstrip("%")) or "_"
    if base[0].isdigit():
        base = "_" + base
    if base in _ISL_KEYWORDS:
        base += "_"
    return base


def exact_identifier(source_name: str) -> str:
    """An injective encoding: `_` doubles, other invalid characters become `_xx` (hex)."""
    out = []
    for char in source_name.lstrip("%"):
        if char == "_":
            out.append("__")
        elif char.isascii() and char.isalnum():
            out.append(char)
        else:
            out.append(f"_{ord(char):x}_")
    base = "".join(out) or "_e_"
    if base[0].isdigit():
        base = "_" + base
    if base in _ISL_KEYWORDS:
        base += "_k"
    return base


_ESCAPE = re.compile(r"__|_([0-9a-f]+)_")


def exact_to_source(name: str) -> str:
    """Undo `exact_identifier` (without the `%`), for messages."""
    if name.endswith("_k") and name[:-2] in _ISL_KEYWORDS:
        name = name[:-2]
    if name.startswith("_") and name[1:2].isdigit():
        name = name[1:]
    return _ESCAPE.sub(lambda m: "_" if m.group(0) == "__" else chr(int(m.group(1), 16)), name)


class NameTable:
    """Names values for isl. Symbols (values that stay fixed over the analysed
    code) are named after their source name; loop ivs get pretty source names
    (`pretty` style) or positional names `_d0, _d1, ...` (`exact` style)."""

    def __init__(self, style: str = "pretty") -> None:
        self.style = style
        self._by_key: dict[object, str] = {}
        self._values: dict[str, Value | None] = {}

    def symbol(self, value: Value) -> str:
        """The isl name of a value used as a parameter."""
        if self.style == "exact":
            key: object = ("symbol", value.display_name)
            base = exact_identifier(value.display_name)
        else:
            key = id(value)
            base = pretty_identifier(value.display_name)
        return self._named(key, base, value)

    def dimension(self, value: Value, position: int) -> str:
        """The isl name of a loop iv at `position` in its statement's iteration vector."""
        if self.style == "exact":
            return f"_d{position}"
        return self._named(id(value), pretty_identifier(value.display_name), value)

    def _named(self, key: object, base: str, value: Value | None) -> str:
        found = self._by_key.get(key)
        if found is not None:
            return found
        name = base
        counter = 1
        while name in self._values:
            name = f"{base}_{counter}"
            counter += 1
        self._by_key[key] = name
        self._values[name] = value
        return name

    def value(self, name: str) -> Value | None:
        return self._values.get(name)

"""Fresh SSA names that cannot clash with any name used in a function."""

from __future__ import annotations

import re

from affine_lsp.ir import Operation, split_use_name

_NUMBERED = re.compile(r"^(%.+?)_\d+$")


def names_in(root: Operation, excluding: Operation | None = None) -> set[str]:
    """Every value name defined or used under `root` (group suffixes stripped), except
    under `excluding`."""
    names: set[str] = set()
    stack = [root]
    while stack:
        op = stack.pop()
        if op is excluding:
            continue
        stack.extend(o for region in op.regions for o in region.operations())
        for value in op.results:
            names.add(value.name)
        for region in op.regions:
            for block in region.blocks:
                names.update(argument.name for argument in block.arguments)
        for use in op.operands:
            names.add(split_use_name(use.name)[0])
    return names


class FreshNames:
    """Hands out `%stem_N` names unused in the function (and by each other)."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def fresh(self, like: str) -> str:
        match = _NUMBERED.match(like)
        stem = match.group(1) if match else like
        if stem[1:2].isdigit():  # `%0_1` is not a valid name: `%v0_1` is
            stem = "%v" + stem[1:]
        counter = 1
        while f"{stem}_{counter}" in self.taken:
            counter += 1
        name = f"{stem}_{counter}"
        self.taken.add(name)
        return name

    def reuse(self, name: str) -> str:
        """`name` itself if nothing else uses it, else a fresh one."""
        if name not in self.taken:
            self.taken.add(name)
            return name
        return self.fresh(name)

"""The layers of ARCHITECTURE.md, checked on the source (every import statement,
those inside functions and under TYPE_CHECKING included):

- a layer imports only from the layers below it (`LAYERS`, bottom first);
- it imports another layer only through that layer's face: its `__init__`, and only
  the names of its `__all__`; a module of the face's `__all__` (a public submodule,
  as the editor features of `ide` are) may be imported by its path instead;
- no module imports a `_private` name from another module;
- a face's docstring names everything its `__all__` exports, and exports only
  what it binds;
- modules do not import each other in a cycle.

Inside a layer, modules import each other directly; `transforms.schedule`,
`transforms.performance`, `transforms.loops`, `transforms.fusion` and
`transforms.optimize` are layers of their own that also use the shared modules of
`transforms` directly.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "affine_lsp"

# Bottom first: each layer may import only from the layers before it.
LAYERS = (
    "syntax",
    "ir",
    "checks",
    "poly",
    "transforms",
    "transforms.schedule",
    "transforms.performance",
    "transforms.loops",
    "transforms.fusion",
    "transforms.optimize",
    "ide",
    "server",
    "cli",
    "testing",
)
# Outside every layer: the package's root (`__version__`), `python -m affine_lsp`,
# and the compiled grammar, which only the syntax layer loads.
ROOT_MODULES = {"affine_lsp", "affine_lsp.__main__"}
GRAMMAR_BINDING = "affine_lsp._binding"
# Cycles allowed, each with its reason (pairs of modules that import each other).
KNOWN_CYCLES: set[frozenset[str]] = set()


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    target: str  # the module imported from
    names: tuple[str, ...]  # () for `import target`

    def __str__(self) -> str:
        names = f" import {', '.join(self.names)}" if self.names else ""
        return f"{self.module}:{self.line}: from {self.target}{names}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@cache
def syntax_tree(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text(encoding="utf-8"))


def layer_of(module: str) -> str | None:
    """The innermost layer holding `module` (None outside every layer)."""
    found = None
    for layer in LAYERS:
        face = f"affine_lsp.{layer}"
        if module == face or module.startswith(face + "."):
            if found is None or len(layer) > len(found):
                found = layer
    return found


def imports() -> list[Import]:
    found = []
    for module in modules():
        package = module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(syntax_tree(module)):
            if isinstance(node, ast.ImportFrom):
                target = node.module or ""
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    target = f"{base}.{target}" if target else base
                if target.split(".")[0] == "affine_lsp":
                    names = tuple(alias.name for alias in node.names)
                    found.append(Import(module, node.lineno, target, names))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "affine_lsp":
                        found.append(Import(module, node.lineno, alias.name, ()))
    return found


def encloses(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer + ".")


def face_all(layer: str) -> list[str]:
    """The names of the face's `__all__` (read from the source, not imported)."""
    for node in syntax_tree(f"affine_lsp.{layer}").body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list), f"affine_lsp.{layer}: __all__ must be a list"
            return value
    return []


def public_submodules(layer: str) -> set[str]:
    face = f"affine_lsp.{layer}"
    return {f"{face}.{name}" for name in face_all(layer) if f"{face}.{name}" in modules()}


def bound_names(module: str) -> set[str]:
    """Names a module binds at its top level (imports, definitions, assignments)."""
    names = set()
    for node in syntax_tree(module).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_every_module_is_in_a_layer():
    outside = [m for m in modules() if layer_of(m) is None and m not in ROOT_MODULES]
    assert not outside, f"modules in no layer of LAYERS: {outside}"


def test_layers_import_only_layers_below_them():
    wrong = []
    for found in imports():
        source, target = layer_of(found.module), layer_of(found.target)
        if found.target == GRAMMAR_BINDING or found.names == ("_binding",):
            if source != "syntax":
                wrong.append(f"{found}  (only the syntax layer loads the grammar)")
            continue
        if source is None or target is None or encloses(target, source):
            continue
        if LAYERS.index(target) > LAYERS.index(source):
            wrong.append(f"{found}  ({source} is below {target})")
    assert not wrong, "imports of a layer above:\n" + "\n".join(wrong)


def test_other_layers_are_imported_through_their_face():
    wrong = []
    for found in imports():
        source, target = layer_of(found.module), layer_of(found.target)
        if source is None or target is None or encloses(target, source):
            continue
        face = f"affine_lsp.{target}"
        if found.target == face:
            exported = set(face_all(target))
            missing = [n for n in found.names if n not in exported]
            if missing:
                wrong.append(f"{found}  ({', '.join(missing)} not in {face}.__all__)")
        elif found.target not in public_submodules(target):
            wrong.append(
                f"{found}  (import it from {face}, adding it to its __all__ and docstring)"
            )
    assert not wrong, (
        "imports that bypass a layer's face (`python -m tests.test_layers` rewrites them,"
        " then `ruff check --fix` merges the imports):\n" + "\n".join(wrong)
    )


def test_no_private_name_is_imported_from_another_module():
    wrong = []
    for found in imports():
        if found.target == "affine_lsp" and found.names == ("_binding",):
            continue  # the compiled grammar (see test_layers_import_only_layers_below_them)
        private = [n for n in found.names if n.startswith("_") and not n.startswith("__")]
        parts = found.target.split(".")
        if private or any(p.startswith("_") and not p.startswith("__") for p in parts):
            wrong.append(str(found))
    assert not wrong, "private names imported from another module:\n" + "\n".join(wrong)


def test_faces_document_and_bind_what_they_export():
    wrong = []
    for layer in LAYERS:
        face = f"affine_lsp.{layer}"
        docstring = ast.get_docstring(syntax_tree(face)) or ""
        bound = bound_names(face)
        for name in face_all(layer):
            if name not in bound and f"{face}.{name}" not in modules():
                wrong.append(f"{face}: exports {name}, which it does not bind")
            if not re.search(rf"\b{re.escape(name)}\b", docstring):
                wrong.append(f"{face}: its docstring does not name {name}")
    assert not wrong, "\n".join(wrong)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycles():
    """`from package import name` depends on the submodule `name` when there is one,
    else on the package; a module's own package is not counted (Python loads it
    first anyway)."""
    graph: dict[str, set[str]] = {module: set() for module in modules()}
    for found in imports():
        for name in found.names or ("",):
            submodule = f"{found.target}.{name}"
            target = submodule if submodule in modules() else found.target
            if target in modules() and not encloses(target, found.module):
                graph[found.module].add(target)
    cycles = [c for c in _cycles(graph) if frozenset(c) not in KNOWN_CYCLES]
    assert not cycles, f"modules that import each other: {cycles}"


def rewrite_imports() -> list[str]:
    """Make every import of another layer's module go through that layer's face (the
    names stay as they are); returns the names the faces still have to export."""
    missing = []
    by_module: dict[str, list[Import]] = {}
    for found in imports():
        source, target = layer_of(found.module), layer_of(found.target)
        if source is None or target is None or encloses(target, source) or not found.names:
            continue
        face = f"affine_lsp.{target}"
        if found.target in public_submodules(target):
            continue
        if found.target != face:
            by_module.setdefault(found.module, []).append(found)
        exported = set(face_all(target))
        missing += [f"{face}: {n}" for n in found.names if n not in exported]
    for module, found_here in by_module.items():
        path = modules()[module]
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for found in found_here:
            face = f"affine_lsp.{layer_of(found.target)}"
            old, new = f"from {found.target} import", f"from {face} import"
            lines[found.line - 1] = lines[found.line - 1].replace(old, new, 1)
        path.write_text("".join(lines), encoding="utf-8")
    return sorted(set(missing))


if __name__ == "__main__":
    for line in rewrite_imports():
        print(f"not exported yet: {line}")

"""ARCHITECTURE.md's code map names every module of the package in the section of its
layer, and every file it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "affine_lsp"
DOC = ROOT / "ARCHITECTURE.md"
# `### ir`, `#### transforms.loops`: a layer's section, up to the next heading.
SECTION = re.compile(r"^#{3,4} ([a-z_.]+)\n(.*?)(?=^#{2,4} )", re.MULTILINE | re.DOTALL)
FILE_NAME = re.compile(r"`([\w/.]+\.(?:py|c))`")


def sections() -> dict[str, str]:
    code_map = DOC.read_text().split("## Code map", 1)[1].split("\n## ", 1)[0] + "\n## "
    return {name: text for name, text in SECTION.findall(code_map)}


def section_of(module: Path) -> str:
    """The section of a module's layer: `transforms/loops/band.py` -> transforms.loops,
    `checks/rules/ssa.py` -> checks."""
    parts = module.relative_to(PACKAGE).parts[:-1]
    if parts[0] == "transforms" and len(parts) > 1:
        return f"transforms.{parts[1]}"
    return parts[0]


def test_every_module_is_named_in_its_layer_section():
    known = sections()
    missing = []
    for module in sorted(PACKAGE.rglob("*.py")):
        if module.name == "__init__.py" or module.parent == PACKAGE:
            continue
        section = section_of(module)
        assert section in known, f"ARCHITECTURE.md has no section for {section}"
        if f"`{module.name}`" not in known[section] and not re.search(
            rf"`[\w/]*{re.escape(module.name)}`", known[section]
        ):
            missing.append(f"{module.relative_to(ROOT)} (section {section})")
    assert not missing, "modules ARCHITECTURE.md does not name:\n" + "\n".join(missing)


def test_every_file_named_in_the_code_map_exists():
    known = sections()
    wrong = []
    for section, text in known.items():
        layer = ROOT / "grammar" if section == "grammar" else PACKAGE.joinpath(*section.split("."))
        for name in FILE_NAME.findall(text):
            candidates = [ROOT / name, PACKAGE / name, layer / name]
            if "/" not in name:
                candidates += list(layer.rglob(name)) if layer.is_dir() else []
            if not any(path.is_file() for path in candidates):
                wrong.append(f"{name} (section {section})")
    assert not wrong, "ARCHITECTURE.md names files that do not exist:\n" + "\n".join(wrong)

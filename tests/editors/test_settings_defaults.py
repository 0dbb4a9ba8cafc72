"""The editors repeat the server's settings, their defaults and allowed values: the
VS Code manifest and its TypeScript, the Neovim plugin's Lua. They must say what the
server says (`affine_lsp.ide.settings`, whose defaults are the layers' own)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from affine_lsp.ide.settings import LOG_LEVELS, SECTION, SEVERITIES, client_defaults

EDITORS = Path(__file__).resolve().parents[2] / "editors"
ENUMS = {"legacySyntax.severity": list(SEVERITIES), "logLevel": list(LOG_LEVELS)}


def _dotted(nested: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in nested.items():
        if isinstance(value, dict):
            flat.update(_dotted(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def _block(text: str, opening: str) -> str:
    """The balanced `{...}` that starts at the end of `opening`."""
    start = text.index(opening) + len(opening) - 1
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start : index + 1]
    raise AssertionError(f"unbalanced block after {opening!r}")


def _literal(source: str) -> dict:
    """A TypeScript object literal or Lua table of keys, numbers, strings, booleans
    and lists of numbers, as JSON."""
    as_json = re.sub(r"\{\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\}", r"[\1]", source)  # Lua lists
    as_json = re.sub(r"([A-Za-z_]\w*)\s*[:=]\s", r'"\1": ', as_json)
    as_json = re.sub(r",(\s*})", r"\1", as_json)
    return json.loads(as_json)


def _manifest() -> dict:
    package = json.loads((EDITORS / "vscode" / "package.json").read_text())
    properties = package["contributes"]["configuration"]["properties"]
    return {
        key[len(SECTION) + 1 :]: value
        for key, value in properties.items()
        if key.startswith(SECTION + ".")
    }


def _typescript() -> tuple[dict, dict]:
    source = (EDITORS / "vscode" / "src" / "settings.ts").read_text()
    defaults = _dotted(_literal(_block(source, "DEFAULT_SERVER_SETTINGS: ServerSettings = {")))
    enums = {}
    for key, name in (("legacySyntax.severity", "SEVERITIES"), ("logLevel", "LOG_LEVELS")):
        found = re.search(rf"export const {name} = (\[[^\]]*\]) as const;", source)
        assert found, name
        enums[key] = json.loads(found.group(1))
    return defaults, enums


def _lua() -> dict:
    source = (EDITORS / "neovim" / "lua" / "affine_lsp" / "init.lua").read_text()
    return _dotted(_literal(_block(source, f"{SECTION} = {{")))


def test_the_vscode_manifest_has_the_servers_defaults_and_values():
    manifest = _manifest()
    for key, default in client_defaults().items():
        assert key in manifest, f"package.json has no setting {SECTION}.{key}"
        assert manifest[key]["default"] == default, key
    for key, allowed in ENUMS.items():
        assert manifest[key]["enum"] == allowed, key
    assert manifest["fusion.tolerance"]["minimum"] == 0


def test_the_vscode_extension_code_has_the_manifests_defaults():
    manifest = _manifest()
    defaults, enums = _typescript()
    assert set(defaults) == set(client_defaults()) | {"logLevel"}, "DEFAULT_SERVER_SETTINGS"
    for key, value in defaults.items():
        assert manifest[key]["default"] == value, key
    assert enums == ENUMS


def test_the_neovim_plugin_has_the_same_defaults():
    typescript_defaults, _ = _typescript()
    assert _lua() == typescript_defaults, "init.lua's settings differ from settings.ts's"

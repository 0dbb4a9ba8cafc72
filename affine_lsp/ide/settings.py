"""User settings (section `affineLsp`) as plain data.

Settings arrive as JSON from `workspace/configuration` or `initializationOptions`,
either nested (`{"fusion": {"tolerance": 0.5}}`, optionally under an `affineLsp`
key) or with dotted keys (`{"affineLsp.fusion.tolerance": 0.5}` or
`{"fusion.tolerance": 0.5}`). Unknown keys are ignored; a bad value keeps the
previous value and is reported as a problem.

The defaults are those of the layers that use them (`CheckOptions`, `FusionOptions`,
`LoopOptions`);
the editors repeat them (`editors/vscode/package.json` and `src/settings.ts`,
`editors/neovim/lua/affine_lsp/init.lua`), and `tests/editors/test_settings_defaults.py`
checks that they agree with `client_defaults()`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from affine_lsp.checks import CheckOptions, Severity
from affine_lsp.transforms.fusion import FusionOptions
from affine_lsp.transforms.loops import LoopOptions
from affine_lsp.transforms.optimize import OptimizeOptions

SECTION = "affineLsp"
LOG_LEVELS = ("error", "warning", "info", "debug")
SEVERITIES = tuple(s.label for s in Severity)
_CHECKS = CheckOptions()
_FUSION = FusionOptions()
_LOOPS = LoopOptions()
HOVER_PICTURES = ("auto", "always", "never")
IMAGE_MARKDOWN_PARSERS = frozenset({"marked"})
"""Markdown renderers (LSP `general.markdown.parser`) known to show images in hovers:
VS Code's (and other Monaco-based editors')."""


@dataclass(frozen=True)
class Settings:
    fusion_tolerance: float = _FUSION.tolerance
    legacy_severity: Severity = _CHECKS.legacy_severity
    lints: bool = _CHECKS.lints
    log_level: str | None = None  # None: as the server was started
    tile_sizes: tuple[int, ...] = _LOOPS.tile_sizes
    unroll_factor: int = _LOOPS.unroll_factor
    unroll_jam_factor: int = _LOOPS.unroll_jam_factor
    hover_pictures: str = "auto"  # auto | always | never
    plan_in_background: bool = True  # plan refactorings before they are asked for
    performance_hints: bool = _CHECKS.performance_hints
    optimize_tune: bool = False  # "Optimize nest" compiles and times candidates
    optimize_offered: bool = True  # "Optimize nest" in the lightbulb at every nest

    def check_options(self) -> CheckOptions:
        return CheckOptions(
            legacy_severity=self.legacy_severity,
            lints=self.lints,
            performance_hints=self.performance_hints,
        )

    def loop_options(self) -> LoopOptions:
        return LoopOptions(self.tile_sizes, self.unroll_factor, self.unroll_jam_factor)

    def optimize_options(self) -> OptimizeOptions:
        return OptimizeOptions(tune=self.optimize_tune)


def hover_pictures(setting: str, markdown_parser: str | None) -> bool:
    """Whether loop hovers carry a picture: `always`, `never`, or with `auto` when the
    client's Markdown renderer (`general.markdown.parser` of its capabilities) shows
    images. Other clients get the text alone."""
    if setting == "always":
        return True
    if setting == "never":
        return False
    return markdown_parser in IMAGE_MARKDOWN_PARSERS


def _flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys for every leaf of a nested mapping (iterative)."""
    flat: dict[str, Any] = {}
    stack: list[tuple[str, Mapping[str, Any]]] = [(prefix, raw)]
    while stack:
        base, mapping = stack.pop()
        for key, value in mapping.items():
            if not isinstance(key, str):
                continue
            dotted = f"{base}.{key}" if base else key
            if isinstance(value, Mapping):
                stack.append((dotted, value))
            else:
                flat[dotted] = value
    return flat


class _Invalid(str):
    """What a validator returns for a bad value: the reason."""


def _tolerance(value: Any) -> float | _Invalid:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return _Invalid("must be a number")
    if not math.isfinite(value) or value < 0:
        return _Invalid("must be a finite number >= 0")
    return float(value)


def _severity(value: Any) -> Severity | _Invalid:
    if isinstance(value, str) and value.strip().lower() in SEVERITIES:
        return Severity.parse(value)
    return _Invalid(f"must be one of {', '.join(SEVERITIES)}")


def _boolean(value: Any) -> bool | _Invalid:
    return value if isinstance(value, bool) else _Invalid("must be true or false")


def _log_level(value: Any) -> str | _Invalid:
    if isinstance(value, str) and value.strip().lower() in LOG_LEVELS:
        return value.strip().lower()
    return _Invalid(f"must be one of {', '.join(LOG_LEVELS)}")


def _tile_sizes(value: Any) -> tuple[int, ...] | _Invalid:
    values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(values, list | tuple)
        or not values
        or len(values) > 8
        or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values)
    ):
        return _Invalid("must be a positive integer or a list of 1 to 8 positive integers")
    return tuple(values)


def _factor(value: Any) -> int | _Invalid:
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 64:
        return _Invalid("must be an integer from 2 to 64")
    return value


def _hover_pictures(value: Any) -> str | _Invalid:
    if isinstance(value, bool):
        return "always" if value else "never"
    if isinstance(value, str) and value.strip().lower() in HOVER_PICTURES:
        return value.strip().lower()
    return _Invalid(f"must be one of {', '.join(HOVER_PICTURES)}")


# dotted key (relative to the section) -> (Settings field, validator)
_KEYS = {
    "fusion.tolerance": ("fusion_tolerance", _tolerance),
    "legacySyntax.severity": ("legacy_severity", _severity),
    "lints.enabled": ("lints", _boolean),
    "logLevel": ("log_level", _log_level),
    "transforms.tileSizes": ("tile_sizes", _tile_sizes),
    "transforms.unrollFactor": ("unroll_factor", _factor),
    "transforms.unrollJamFactor": ("unroll_jam_factor", _factor),
    "hover.pictures": ("hover_pictures", _hover_pictures),
    "refactorings.planInBackground": ("plan_in_background", _boolean),
    "performanceHints.enabled": ("performance_hints", _boolean),
    "optimize.tune": ("optimize_tune", _boolean),
    "optimize.enabled": ("optimize_offered", _boolean),
}


def client_defaults() -> dict[str, Any]:
    """The default of each setting the server reads, by dotted key as clients send it
    (JSON values; `logLevel` has none: the server keeps its `--log-level`)."""
    defaults = Settings()
    values: dict[str, Any] = {}
    for key, (name, _validate) in _KEYS.items():
        value = getattr(defaults, name)
        if isinstance(value, Severity):
            values[key] = value.label
        elif isinstance(value, tuple):
            values[key] = list(value)
        elif value is not None:
            values[key] = value
    return values


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from client JSON on top of `base`, and a message per bad value."""
    settings = base or Settings()
    if raw is None:
        return settings, []
    if not isinstance(raw, Mapping):
        return settings, [f"{SECTION}: settings must be an object (got {raw!r})"]
    problems: list[str] = []
    changes: dict[str, Any] = {}
    for key, value in sorted(_flatten(raw).items()):
        relative = key[len(SECTION) + 1 :] if key.startswith(SECTION + ".") else key
        if relative not in _KEYS or value is None:
            continue
        name, validate = _KEYS[relative]
        checked = validate(value)
        if isinstance(checked, _Invalid):
            problems.append(
                f"{SECTION}.{relative} {checked} (got {value!r}); keeping the previous value"
            )
            continue
        changes[name] = checked
    return replace(settings, **changes), problems

"""The VS Code extension builds, lints, passes its tests and packages to a .vsix
(editors/vscode/scripts/check.sh; needs Node.js and npm), without writing into
the source tree."""

from __future__ import annotations

import json
import zipfile

import pytest


@pytest.mark.slow
def test_vscode_extension_check_script(vscode_extension_build):
    build = vscode_extension_build
    assert build.returncode == 0, build.output
    assert build.vsix.is_file(), "no .vsix produced"
    assert build.created_in_source == [], "the build wrote into editors/vscode"


@pytest.mark.slow
def test_vsix_holds_the_bundle_and_its_assets_only(vscode_extension_build):
    build = vscode_extension_build
    if not build.ok:
        pytest.fail("the .vsix did not build:\n" + build.output)
    with zipfile.ZipFile(build.vsix) as archive:
        names = sorted(
            name.removeprefix("extension/")
            for name in archive.namelist()
            if name.startswith("extension/")
        )
        manifest = json.loads(archive.read("extension/package.json"))
    assert manifest["main"] == "./dist/extension.js"
    assert names == [
        "dist/extension.js",
        "language-configuration.json",
        "package.json",
        "readme.md",
        "syntaxes/mlir.markdown.tmLanguage.json",
        "syntaxes/mlir.tmLanguage.json",
    ]

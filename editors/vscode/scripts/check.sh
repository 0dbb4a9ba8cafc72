#!/usr/bin/env bash
# Builds, lints, tests and packages the VS Code extension from a clean install.
# CI calls this; it exits non-zero as soon as a step fails.
#
# The work happens in a copy of the extension under the repository's build/
# folder (ignored by git; $VSCODE_BUILD_DIR overrides it), so node_modules/,
# out/ and dist/ are never created in the source tree. The .vsix goes to
# $VSIX_OUT (default: build/vscode).
set -euo pipefail

source_dir="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$source_dir/../.." && pwd)"
# Same depth below the repository as editors/vscode, so the tests find ../shared the same way.
work="${VSCODE_BUILD_DIR:-$repo/build/vscode-extension}"
out="${VSIX_OUT:-$repo/build/vscode}"

run() {
  echo "==> $*"
  "$@"
}

echo "==> copying $source_dir to $work"
rm -rf "$work"
mkdir -p "$work" "$out"
tar -C "$source_dir" --exclude=./node_modules --exclude=./out --exclude=./dist --exclude='*.vsix' -cf - . |
  tar -C "$work" -xf -
cd "$work"

run npm ci --no-audit --no-fund
run npm run compile
run npm run lint
run npm test
vsix="$out/affine-lsp.vsix"
# `vsce package` runs vscode:prepublish (type check and esbuild bundle) first.
run npx vsce package --out "$vsix"
echo "==> packaged $vsix ($(du -k "$vsix" | cut -f1) KiB)"

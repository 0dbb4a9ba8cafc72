#!/usr/bin/env bash
# Builds, lints, tests and packages the VS Code extension from a clean install.
# CI calls this; it exits non-zero as soon as a step fails.
set -euo pipefail

cd "$(dirname "$0")/.."

run() {
  echo "==> $*"
  "$@"
}

run npm ci --no-audit --no-fund
run npm run compile
run npm run lint
run npm test
# The .vsix goes to $VSIX_OUT (default: the repository's build/ folder, ignored by git).
out="${VSIX_OUT:-$(cd ../.. && pwd)/build/vscode}"
mkdir -p "$out"
vsix="$out/affine-lsp.vsix"
run npm run package -- --out "$vsix"
echo "==> packaged $vsix ($(du -k "$vsix" | cut -f1) KiB)"

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
run npm run package

vsix=$(ls -t ./*.vsix | head -n 1)
echo "==> packaged $vsix ($(du -k "$vsix" | cut -f1) KiB)"

#!/usr/bin/env bash
# Installs what the end-to-end test in a real VS Code (tests/editors/test_vscode_e2e.py)
# needs: Debian's Chromium, ripgrep and code-server's build dependencies (apt-get,
# when run as root), Playwright into the active Python environment (pip), and
# code-server itself into ~/.cache (install-code-server.sh). Nothing goes into the
# source tree. Exits non-zero if something could not be installed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

missing=()
for package in chromium ripgrep build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup-e2e: not root, cannot apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python3 -c "import playwright" 2>/dev/null || python3 -m pip install -q playwright
command -v node >/dev/null 2>&1 || { echo "setup-e2e: Node.js (20 or later) is not installed" >&2; exit 1; }
"$here/install-code-server.sh" >/dev/null
echo "setup-e2e: ready"

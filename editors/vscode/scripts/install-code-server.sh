#!/usr/bin/env bash
# Installs code-server (VS Code's browser build, from npm) for the end-to-end
# test into a cache folder outside the source tree, and prints its entry point.
#
#   CODE_SERVER_CACHE   where to install (default: ~/.cache/affine-lsp/code-server)
#   CODE_SERVER_VERSION the npm version (default below: the newest that runs on Node 20)
#
# An install that completed is reused (a marker file records it), so CI pays the
# 3-5 minutes once per machine. Needs node/npm, ripgrep and, to rebuild the
# native modules, a C++ toolchain with pkg-config and the krb5, X11, xkbfile and
# libsecret headers (Debian: build-essential pkg-config libkrb5-dev libx11-dev
# libxkbfile-dev libsecret-1-dev ripgrep). Progress goes to stderr; the only
# line on stdout is the path of code-server's entry.js.
set -euo pipefail

version="${CODE_SERVER_VERSION:-4.100.3}"
cache="${CODE_SERVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/affine-lsp/code-server}"
prefix="$cache/$version"
entry="$prefix/node_modules/code-server/out/node/entry.js"
marker="$prefix/.installed"

if [ -f "$marker" ] && [ -f "$entry" ]; then
  echo "$entry"
  exit 0
fi

say() { echo "==> $*" >&2; }
missing=()
for tool in node npm rg pkg-config c++ make; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cannot install code-server: missing ${missing[*]}" >&2
  exit 2
fi

npm_quiet=(--no-audit --no-fund --loglevel=error)
rm -rf "$prefix"
mkdir -p "$prefix"
cd "$prefix"
echo '{"name": "affine-lsp-code-server", "private": true}' >package.json

# Its install script downloads prebuilt files, which fails offline: skip every
# script and rebuild the native modules from source instead.
say "npm install code-server@$version"
npm install "${npm_quiet[@]}" --ignore-scripts "code-server@$version" >&2
vscode="$prefix/node_modules/code-server/lib/vscode"
say "VS Code's own dependencies"
(cd "$vscode" && npm install "${npm_quiet[@]}" --omit=dev --ignore-scripts >&2)
say "rebuilding native modules"
# node-pty's install script runs `npx node-gyp`, which must not stop to ask.
(cd "$vscode" && npm_config_yes=true npm rebuild "${npm_quiet[@]}" kerberos @parcel/watcher @vscode/deviceid @vscode/spdlog \
  native-watchdog node-pty >&2)
mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
cp "$(command -v rg)" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
ln -sfn node_modules "$vscode/node_modules.asar"
say "built-in extensions' dependencies"
(cd "$vscode/extensions" && npm install "${npm_quiet[@]}" --omit=dev --ignore-scripts >&2)
(cd "$prefix" && npm rebuild "${npm_quiet[@]}" argon2 >&2)

node "$entry" --config "$prefix/config.yaml" --version >&2
touch "$marker"
echo "$entry"

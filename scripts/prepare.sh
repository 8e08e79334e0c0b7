#!/usr/bin/env bash
# Source this file (scripts/up.sh and scripts/test.sh do): Node >= 22.18 on PATH, PostgreSQL,
# Redis and NATS installed and running (scripts/ensure-infra.sh), the settings it chose
# (.tools/infra.env) exported, and the dependencies installed unless the last successful
# install here was of this same package-lock.json.
_tog_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$_tog_root" || return 1
# shellcheck source=ensure-node.sh
source scripts/ensure-node.sh || return 1
bash scripts/ensure-infra.sh || return 1
# Node's on-disk code cache for every process started from here (services, tests, CLIs): a
# service start compiles a third less JavaScript once the cache is warm (docs/contributing.md
# "Tests"). Node keeps it consistent itself (an entry is used only for the same source and Node).
export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE:-$_tog_root/.tools/compile-cache}"
_tog_infra_env="${TOG_INFRA_DIR:-.tools/infra}.env"
if [ -f "$_tog_infra_env" ]; then
  set -a
  # shellcheck disable=SC1090
  source "$_tog_infra_env"
  set +a
fi
# Installed = the last `npm ci` run from here succeeded (postinstall generated the clients) for
# this very package-lock.json; an install interrupted or refused (old Node) leaves no mark.
_tog_lock="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -d node_modules ] || [ "$(cat .tools/installed-lock 2>/dev/null)" != "$_tog_lock" ]; then
  echo "[prepare] installing dependencies (npm ci)" >&2
  rm -f .tools/installed-lock
  npm ci --no-audit --no-fund --loglevel=error || return 1
  echo "$_tog_lock" > .tools/installed-lock
fi

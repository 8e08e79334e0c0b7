#!/usr/bin/env bash
# Source this file (scripts/up.sh and scripts/test.sh do): Node >= 22.18 on PATH, PostgreSQL,
# Redis and NATS installed and running (scripts/ensure-infra.sh), the settings it chose
# (.tools/infra.env) exported, and the dependencies installed when package-lock.json changed
# since the last install.
_tog_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$_tog_root" || return 1
# shellcheck source=ensure-node.sh
source scripts/ensure-node.sh || return 1
bash scripts/ensure-infra.sh || return 1
if [ -f .tools/infra.env ]; then
  set -a
  # shellcheck disable=SC1091
  source .tools/infra.env
  set +a
fi
# npm writes node_modules/.package-lock.json last; older than package-lock.json = stale.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[prepare] installing dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error || return 1
fi

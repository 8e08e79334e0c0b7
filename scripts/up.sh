#!/usr/bin/env bash
# README's first command: the whole system on this machine, from a fresh clone. Provisions
# Node 24 when the system Node is older (or missing), installs and starts PostgreSQL, Redis and
# NATS when they are missing and this user may (root or passwordless sudo), installs the
# dependencies, then runs `npm start` (migrations, NATS streams, every service behind one base
# URL, http://localhost:8080/api/v1 unless PUBLIC_PORT says otherwise). Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=prepare.sh
source scripts/prepare.sh
exec npm start

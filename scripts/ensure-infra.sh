#!/usr/bin/env bash
# Makes sure PostgreSQL, Redis and NATS (JetStream) answer on their local ports, and that nginx
# (the public router) is installed:
#  - a missing server is installed from the distribution's packages (postgresql, redis-server,
#    nats-server) when this user may (root or passwordless sudo); otherwise one line says what
#    to install;
#  - a stopped one is started (Redis and NATS keep their data under .tools/infra/, or under
#    TOG_INFRA_DIR; a relative one is taken from the repository root);
#  - PostgreSQL access: when the default URL (postgres@127.0.0.1, no password) is refused, a
#    role and database `tog` (password `tog`, CREATEDB for the tests' own databases) are
#    created and .tools/infra.env (<TOG_INFRA_DIR>.env; scripts/prepare.sh reads the default
#    one) points DATABASE_URL and TEST_DATABASE_ADMIN_URL at them.
#    No existing database, role or pg_hba.conf line is changed.
# Each server's host and port come from its URL (DATABASE_URL, else TEST_DATABASE_ADMIN_URL;
# REDIS_URL, else TEST_REDIS_URL; NATS_URL, else TEST_NATS_URL): 127.0.0.1 and 5432, 6379, 4222
# when unset. Where the servers run elsewhere (a URL naming another host) nothing is installed
# or started. Decision and tests: docs/decisions.md ("A fresh machine").
set -u
cd "$(dirname "$0")/.."
log() { echo "[ensure-infra] $*" >&2; }
answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
wait_port() { for _ in $(seq 1 60); do answers "$1" "$2" && return 0; sleep 0.5; done; return 1; }
is_local() { case "${1:-}" in "" | *@127.0.0.1* | *//127.0.0.1* | *@localhost* | *//localhost*) return 0 ;; *) return 1 ;; esac; }
# "host port" of the first URL of a list (scheme://[user[:password]@]host[:port][/path][?query]),
# 127.0.0.1 and the given default port where it names none.
endpoint() {
  local rest="${1#*://}"
  rest="${rest%%,*}" && rest="${rest%%/*}" && rest="${rest%%\?*}" && rest="${rest##*@}"
  local host="${rest%:*}" port="$2"
  [ "$host" = "$rest" ] || port="${rest##*:}"
  echo "${host:-127.0.0.1} $port"
}
# The server a pair of variables names: the service's, else the tests'. Two local ports cannot
# both be ensured by this script: it says which one it takes.
server_of() {
  local service="$1" tests="$2" default_port="$3" service_url="${!1:-}" tests_url="${!2:-}"
  if [ -n "$service_url" ] && [ -n "$tests_url" ] && is_local "$service_url" && is_local "$tests_url" &&
    [ "$(endpoint "$service_url" "$default_port" | cut -d' ' -f2)" != "$(endpoint "$tests_url" "$default_port" | cut -d' ' -f2)" ]; then
    log "$service and $tests name different ports; ensuring the one of $service"
  fi
  endpoint "${service_url:-$tests_url}" "$default_port"
}

SUDO=""
may_install=0
if [ "$(id -u)" = 0 ]; then
  may_install=1
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO="sudo -n"
  may_install=1
fi
command -v apt-get >/dev/null 2>&1 || may_install=0

apt_updated=0
install_packages() {
  if [ "$may_install" != 1 ]; then
    log "missing: $* - install them (e.g. sudo apt-get install $*) or point the *_URL variables at running servers"
    return 1
  fi
  log "installing $* with apt-get"
  if [ "$apt_updated" = 0 ]; then
    apt_updated=1
    $SUDO apt-get -o DPkg::Lock::Timeout=120 -qq update >/dev/null 2>&1 || true
  fi
  # policy-rc.d-less containers may fail to start services from postinst; we start them below.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 -y -qq --no-install-recommends install "$@" >/dev/null ||
    { log "apt-get install $* failed"; return 1; }
}

data_dir="${TOG_INFRA_DIR:-.tools/infra}"
data_dir="${data_dir%/}"
env_file="$data_dir.env"
mkdir -p "$data_dir"
case "$data_dir" in /*) ;; *) data_dir="$PWD/$data_dir" ;; esac
status=0
# A server that is not installed and could not be has been reported: nothing to wait for.
pg_missing=0 redis_missing=0 nats_missing=0

# --- PostgreSQL -----------------------------------------------------------------------------
read -r pg_host pg_port < <(server_of DATABASE_URL TEST_DATABASE_ADMIN_URL 5432)
if is_local "${DATABASE_URL:-}" && is_local "${TEST_DATABASE_ADMIN_URL:-}"; then
  if ! answers "$pg_host" "$pg_port"; then
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then install_packages postgresql postgresql-client || status=1; fi
    if command -v pg_ctlcluster >/dev/null 2>&1; then
      version="$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n1)"
      if [ -z "$version" ]; then
        version="$(ls /usr/lib/postgresql | sort -V | tail -n1)"
        log "creating PostgreSQL $version cluster main"
        # An existing cluster keeps its port: a URL naming another one then reports it does not answer.
        port_option=()
        [ "$pg_port" = 5432 ] || port_option=(-p "$pg_port")
        $SUDO pg_createcluster "${port_option[@]}" "$version" main >/dev/null || status=1
      fi
      log "starting PostgreSQL $version"
      $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    else
      pg_missing=1
    fi
  fi
  if [ "$pg_missing" = 0 ] && wait_port "$pg_host" "$pg_port" && command -v psql >/dev/null 2>&1; then
    # -w: a server that wants a password must not stop the script at a prompt (psql asks on the
    # terminal, or reads standard input when there is none).
    if PGCONNECT_TIMEOUT=5 psql -w "postgresql://postgres@$pg_host:$pg_port/postgres" -Atqc 'select 1' >/dev/null 2>&1; then
      rm -f "$env_file"
    elif [ -z "${DATABASE_URL:-}" ]; then
      # Debian's default: peer auth on the socket, passwords on TCP. Our own role, nothing else.
      as_postgres=""
      if [ "$(id -u)" = 0 ]; then as_postgres="runuser -u postgres --"; elif [ -n "$SUDO" ]; then as_postgres="sudo -n -u postgres"; fi
      if [ -n "$as_postgres" ]; then
        log "postgres@$pg_host needs a password here; using role and database tog instead"
        $as_postgres psql -p "$pg_port" -Atqc "DO \$\$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tog') THEN CREATE ROLE tog LOGIN CREATEDB PASSWORD 'tog'; END IF; END\$\$" >/dev/null &&
          { $as_postgres psql -p "$pg_port" -Atqc "SELECT 1 FROM pg_database WHERE datname = 'tog'" | grep -q 1 || $as_postgres createdb -p "$pg_port" -O tog tog; } &&
          printf 'DATABASE_URL=postgresql://tog:tog@%s:%s/tog\nTEST_DATABASE_ADMIN_URL=postgresql://tog:tog@%s:%s/tog\n' "$pg_host" "$pg_port" "$pg_host" "$pg_port" > "$env_file" ||
          { log "could not create role tog"; status=1; }
      else
        log "postgres@$pg_host needs a password: set DATABASE_URL (and TEST_DATABASE_ADMIN_URL for the tests)"
        status=1
      fi
    fi
  fi
fi

# --- Redis ----------------------------------------------------------------------------------
read -r redis_host redis_port < <(server_of REDIS_URL TEST_REDIS_URL 6379)
if is_local "${REDIS_URL:-}" && is_local "${TEST_REDIS_URL:-}" && ! answers "$redis_host" "$redis_port"; then
  command -v redis-server >/dev/null 2>&1 || install_packages redis-server || status=1
  if command -v redis-server >/dev/null 2>&1; then
    log "starting Redis"
    mkdir -p "$data_dir/redis"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$redis_port" --save "" --appendonly no \
      --dir "$data_dir/redis" --logfile "$data_dir/redis/redis.log" || true
  else
    redis_missing=1
  fi
fi

# --- NATS with JetStream ----------------------------------------------------------------------
nats_bin() { command -v nats-server 2>/dev/null || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; }; }
read -r nats_host nats_port < <(server_of NATS_URL TEST_NATS_URL 4222)
if is_local "${NATS_URL:-}" && is_local "${TEST_NATS_URL:-}" && ! answers "$nats_host" "$nats_port"; then
  [ -n "$(nats_bin)" ] || install_packages nats-server || status=1
  if [ -n "$(nats_bin)" ]; then
    log "starting NATS with JetStream"
    mkdir -p "$data_dir/nats"
    nohup "$(nats_bin)" -a 127.0.0.1 -p "$nats_port" -js -sd "$data_dir/nats" -l "$data_dir/nats/nats.log" >/dev/null 2>&1 &
  else
    nats_missing=1
  fi
fi

# --- nginx (the public router of `npm start`; docs/decisions.md "nginx on the public port") ----
# Only the binary: each stack runs its own nginx with its own configuration. Optional: without it
# `npm start` falls back to the Node router, so a machine that cannot install it still starts
# (the router tests need it and say so).
nginx_bin() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; }; }
if [ -z "$(nginx_bin)" ]; then
  install_packages nginx || log "no nginx: npm start serves the public port with its Node router"
  # the package's own service (port 80) is not ours
  if [ -n "$(nginx_bin)" ] && [ -f /run/nginx.pid ]; then $SUDO "$(nginx_bin)" -s quit 2>/dev/null || true; fi
fi

servers=() # "host port"
is_local "${DATABASE_URL:-}" && is_local "${TEST_DATABASE_ADMIN_URL:-}" && [ "$pg_missing" = 0 ] && servers+=("$pg_host $pg_port")
is_local "${REDIS_URL:-}" && is_local "${TEST_REDIS_URL:-}" && [ "$redis_missing" = 0 ] && servers+=("$redis_host $redis_port")
is_local "${NATS_URL:-}" && is_local "${TEST_NATS_URL:-}" && [ "$nats_missing" = 0 ] && servers+=("$nats_host $nats_port")
for server in "${servers[@]}"; do
  read -r host p <<<"$server"
  if wait_port "$host" "$p"; then log "port $p answers"; else log "port $p does not answer"; status=1; fi
done
exit $status

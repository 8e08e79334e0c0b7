#!/usr/bin/env bash
# Makes sure PostgreSQL, Redis and NATS (JetStream) answer on their local ports:
#  - a missing server is installed from the distribution's packages (postgresql, redis-server,
#    nats-server) when this user may (root or passwordless sudo); otherwise one line says what
#    to install;
#  - a stopped one is started (Redis and NATS keep their data under .tools/infra/);
#  - PostgreSQL access: when the default URL (postgres@127.0.0.1, no password) is refused, a
#    role and database `tog` (password `tog`, CREATEDB for the tests' own databases) are
#    created and .tools/infra.env points DATABASE_URL and TEST_DATABASE_ADMIN_URL at them.
#    No existing database, role or pg_hba.conf line is changed.
# Where the servers run elsewhere (DATABASE_URL / REDIS_URL / NATS_URL or TEST_* naming another
# host) nothing is installed or started. Decision: docs/decisions.md ("A fresh machine").
set -u
cd "$(dirname "$0")/.."
log() { echo "[ensure-infra] $*" >&2; }
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { for _ in $(seq 1 60); do answers "$1" && return 0; sleep 0.5; done; return 1; }
is_local() { case "${1:-}" in "" | *@127.0.0.1* | *//127.0.0.1* | *@localhost* | *//localhost*) return 0 ;; *) return 1 ;; esac; }

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

data_dir=".tools/infra"
mkdir -p "$data_dir"
status=0

# --- PostgreSQL -----------------------------------------------------------------------------
if is_local "${DATABASE_URL:-}" && is_local "${TEST_DATABASE_ADMIN_URL:-}"; then
  if ! answers 5432; then
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then install_packages postgresql postgresql-client || status=1; fi
    if command -v pg_ctlcluster >/dev/null 2>&1; then
      version="$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n1)"
      if [ -z "$version" ]; then
        version="$(ls /usr/lib/postgresql | sort -V | tail -n1)"
        log "creating PostgreSQL $version cluster main"
        $SUDO pg_createcluster "$version" main >/dev/null || status=1
      fi
      log "starting PostgreSQL $version"
      $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
    fi
  fi
  if wait_port 5432 && command -v psql >/dev/null 2>&1; then
    if PGCONNECT_TIMEOUT=5 psql "postgresql://postgres@127.0.0.1:5432/postgres" -Atqc 'select 1' >/dev/null 2>&1; then
      rm -f .tools/infra.env
    elif [ -z "${DATABASE_URL:-}" ]; then
      # Debian's default: peer auth on the socket, passwords on TCP. Our own role, nothing else.
      as_postgres=""
      if [ "$(id -u)" = 0 ]; then as_postgres="runuser -u postgres --"; elif [ -n "$SUDO" ]; then as_postgres="sudo -n -u postgres"; fi
      if [ -n "$as_postgres" ]; then
        log "postgres@127.0.0.1 needs a password here; using role and database tog instead"
        $as_postgres psql -Atqc "DO \$\$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tog') THEN CREATE ROLE tog LOGIN CREATEDB PASSWORD 'tog'; END IF; END\$\$" >/dev/null &&
          { $as_postgres psql -Atqc "SELECT 1 FROM pg_database WHERE datname = 'tog'" | grep -q 1 || $as_postgres createdb -O tog tog; } &&
          printf 'DATABASE_URL=postgresql://tog:tog@127.0.0.1:5432/tog\nTEST_DATABASE_ADMIN_URL=postgresql://tog:tog@127.0.0.1:5432/tog\n' > .tools/infra.env ||
          { log "could not create role tog"; status=1; }
      else
        log "postgres@127.0.0.1 needs a password: set DATABASE_URL (and TEST_DATABASE_ADMIN_URL for the tests)"
        status=1
      fi
    fi
  fi
fi

# --- Redis ----------------------------------------------------------------------------------
if is_local "${REDIS_URL:-}" && is_local "${TEST_REDIS_URL:-}" && ! answers 6379; then
  command -v redis-server >/dev/null 2>&1 || install_packages redis-server || status=1
  if command -v redis-server >/dev/null 2>&1; then
    log "starting Redis"
    mkdir -p "$data_dir/redis"
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir "$PWD/$data_dir/redis" --logfile "$PWD/$data_dir/redis/redis.log" || true
  fi
fi

# --- NATS with JetStream ----------------------------------------------------------------------
nats_bin() { command -v nats-server 2>/dev/null || { [ -x /usr/sbin/nats-server ] && echo /usr/sbin/nats-server; }; }
if is_local "${NATS_URL:-}" && is_local "${TEST_NATS_URL:-}" && ! answers 4222; then
  [ -n "$(nats_bin)" ] || install_packages nats-server || status=1
  if [ -n "$(nats_bin)" ]; then
    log "starting NATS with JetStream"
    mkdir -p "$data_dir/nats"
    nohup "$(nats_bin)" -a 127.0.0.1 -p 4222 -js -sd "$PWD/$data_dir/nats" -l "$PWD/$data_dir/nats/nats.log" >/dev/null 2>&1 &
  fi
fi

ports=()
is_local "${DATABASE_URL:-}" && is_local "${TEST_DATABASE_ADMIN_URL:-}" && ports+=(5432)
is_local "${REDIS_URL:-}" && is_local "${TEST_REDIS_URL:-}" && ports+=(6379)
is_local "${NATS_URL:-}" && is_local "${TEST_NATS_URL:-}" && ports+=(4222)
for p in "${ports[@]}"; do
  if wait_port "$p"; then log "port $p answers"; else log "port $p does not answer"; status=1; fi
done
exit $status

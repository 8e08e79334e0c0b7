#!/usr/bin/env bash
# Makes sure PostgreSQL, Redis and NATS (JetStream) answer on their local ports, starting
# each with this machine's documented command when it does not. Where they run elsewhere
# (TEST_* / *_URL variables pointing at other hosts) nothing is started.
set -u
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() { for _ in $(seq 1 60); do answers "$1" && return 0; sleep 0.5; done; return 1; }

if ! answers 5432; then
  echo "[ensure-infra] starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
fi
if ! answers 6379; then
  echo "[ensure-infra] starting Redis" >&2
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi
if ! answers 4222; then
  echo "[ensure-infra] starting NATS" >&2
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log || true
fi
ok=0
for p in 5432 6379 4222; do
  if wait_port "$p"; then echo "[ensure-infra] port $p answers" >&2; else echo "[ensure-infra] port $p does not answer" >&2; ok=1; fi
done
exit $ok

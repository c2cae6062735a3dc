#!/usr/bin/env bash
# Installs and starts what the test suite talks to: PostgreSQL, Redis and Chromium, and
# bubblewrap, which makes the sandbox every system's process runs in.
# Each step is skipped when the thing is already there.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> installing ${missing[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "==> starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
    --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi

installed_postgres=0
for package in "${missing[@]}"; do [ "$package" = postgresql ] && installed_postgres=1; done
if [ $installed_postgres = 1 ]; then
  # A cluster this script just installed is for the tests alone: let local TCP
  # connections in without a password, as the tests' postgresql://postgres@127.0.0.1 expects.
  for hba in /etc/postgresql/*/main/pg_hba.conf; do
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
  done
fi
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "==> starting PostgreSQL"
  for version in $(ls /etc/postgresql); do
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
fi
for _ in $(seq 1 30); do
  pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && exit 0
  sleep 1
done
echo "PostgreSQL or Redis did not come up on 127.0.0.1" >&2
exit 1

#!/usr/bin/env bash
# Sets up .venv, records the example history (three releases of the support bot with
# their gates) and serves the dashboard with a worker on the embedded default.
# Extra arguments go to `oloproof demo` (e.g. --port 8080). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# The sandbox each system's process runs in (docs/isolation.md): installed where this
# machine's package manager can, else the runs say they are not protected.
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }
  echo "==> installing bubblewrap"
  (as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    as_root apt-get install -y -qq bubblewrap >/dev/null) \
    || echo "bubblewrap could not be installed: runs will say they are not protected" >&2
fi
bash scripts/setup.sh
exec .venv/bin/oloproof demo "$@"

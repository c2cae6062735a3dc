#!/usr/bin/env bash
# Sets up .venv, records the example history (three releases of the support bot with
# their gates) and serves the dashboard with a worker on the embedded default.
# Extra arguments go to `oloproof demo` (e.g. --port 8080). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
exec .venv/bin/oloproof demo "$@"

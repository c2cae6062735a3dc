#!/usr/bin/env bash
# Creates .venv and installs oloproof into it, with the extras named by the first
# argument (e.g. `dev,dspy`; none by default: what the embedded default runs on).
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=${1:-}
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "oloproof needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.oloproof-installed${extras:+-${extras//,/-}}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "==> installing oloproof${extras:+ with $extras} into .venv"
  target="."
  [ -n "$extras" ] && target=".[$extras]"
  # pip's output goes to a log shown only when it fails: its notices about package
  # indexes and build back-ends are not the user's to act on. No bytecode is compiled at
  # install time (Python compiles what it imports, once): compiling every module of
  # every package, plotly's thousands included, took most of the install's time.
  # The pip that comes with Python 3.11+ installs this project as it is (PEP 660).
  log=$(mktemp)
  if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile \
       -e "$target" >"$log" 2>&1; then
    cat "$log" >&2
    echo "installing oloproof into .venv failed (above)" >&2
    exit 1
  fi
  rm -f "$log"
  touch "$stamp"
fi

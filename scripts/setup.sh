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
  # Bytecode for what sandboxed processes import. They see the environment and this
  # tree read-only, so a module not compiled here is compiled again by every one of them:
  # the model client took 0.9 - 1.0 s to import that way, 0.5 s compiled. plotly's
  # thousands of modules are left out: only the dashboard's own process imports them.
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  .venv/bin/python -m compileall -q -j 0 -x '/site-packages/plotly/' "$site" >/dev/null 2>&1 || true
  touch "$stamp"
fi
.venv/bin/python -m compileall -q -j 0 oloproof oloproof_core runs metrics evalsite skynet.py \
  >/dev/null 2>&1 || true

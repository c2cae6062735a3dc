#!/usr/bin/env bash
# Sets up everything the tests need, then runs lint, type checks and the whole test
# suite: on SQLite, and the database tests again on PostgreSQL.
#
#   bash scripts/test.sh          the full run (what CI runs)
#   bash scripts/test.sh --quick  while working: lint and the tests not marked slow or
#                                 browser, on SQLite only (every module is still run)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: bash scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

bash scripts/services.sh
bash scripts/setup.sh dev,dspy

echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "==> import rules"
.venv/bin/lint-imports --no-cache
if [ $quick = 0 ]; then
  echo "==> mypy"
  .venv/bin/mypy
fi

export OLOPROOF_TEST_DATABASE_URL_PG=${OLOPROOF_TEST_DATABASE_URL_PG:-postgresql://postgres@127.0.0.1:5432/oloproof}

run_pytest() {
  # pytest exits 5 when it collected no test: that must fail, never pass quietly.
  set +e
  .venv/bin/pytest "$@"
  local code=$?
  set -e
  if [ $code -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi
  [ $code -eq 0 ] || exit $code
}

# Two processes, each test file kept in one (its Redis database, its worker processes):
# most of the suite waits on child processes, and two processes overlap those waits.
# More were measured no faster on two cores: the rest of the time is CPU.
PARALLEL=(-n "${OLOPROOF_TEST_PROCESSES:-2}" --dist loadfile)

if [ $quick = 1 ]; then
  echo "==> quick tests (SQLite; not slow, not browser)"
  run_pytest -q -p no:cacheprovider --durations=20 "${PARALLEL[@]}" -m "not slow and not browser"
  exit 0
fi

echo "==> tests (SQLite)"
run_pytest -q -p no:cacheprovider --durations=20 "${PARALLEL[@]}"
echo "==> database tests (PostgreSQL)"
DATABASE_URL=$OLOPROOF_TEST_DATABASE_URL_PG run_pytest -q -p no:cacheprovider --durations=20 \
  "${PARALLEL[@]}" -m "not browser and not one_database" tests/runs tests/metrics

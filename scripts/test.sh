#!/usr/bin/env bash
# Sets up everything the tests need, then runs lint, type checks and the whole test
# suite: on SQLite, and the database tests again on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/services.sh
bash scripts/setup.sh dev,dspy

echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "==> import rules"
.venv/bin/lint-imports --no-cache
echo "==> mypy"
.venv/bin/mypy

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
PARALLEL=(-n "${OLOPROOF_TEST_PROCESSES:-2}" --dist loadfile)

echo "==> tests (SQLite)"
run_pytest -q -p no:cacheprovider --durations=20 "${PARALLEL[@]}"
echo "==> database tests (PostgreSQL)"
DATABASE_URL=$OLOPROOF_TEST_DATABASE_URL_PG run_pytest -q -p no:cacheprovider --durations=20 "${PARALLEL[@]}" -m "not browser" tests/runs tests/metrics

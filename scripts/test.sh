#!/usr/bin/env bash
# Runs the built tests (dist/test) with node:test, one file at a time, with TXGATE_CHECK_REASONS=1
# (a stage answering with a reason it does not declare fails the request). Build first
# (`npm run build`); `npm test` and `npm run test:<tier>` do.
#   bash scripts/test.sh                      every tier
#   bash scripts/test.sh e2e chain            the tiers named (unit, property, e2e, chain, store)
#   bash scripts/test.sh test/unit/fast-log-line.test.ts   one file (or several)
# Every test file lives in a tier folder (docs/architecture.md "Tests"): one anywhere else
# would run in no tier, so it fails the run.
# The tests get a temporary directory of their own (TMPDIR) for the run: a `txgate-*` folder a
# test leaves in it fails the run, named (a test removes what it makes: test/support/temp-dir.ts),
# and the directory is removed either way. After a run of more than one file, the slowest files.
set -euo pipefail
cd "$(dirname "$0")/.."
TIERS=(unit property e2e chain store)
stray=$(find test -name '*.test.ts' | grep -vE "^test/($(IFS='|'; echo "${TIERS[*]}"))/" || true)
if [ -n "$stray" ]; then
  echo "test: in no tier folder (test/unit, property, e2e, chain or store):" $stray >&2
  exit 1
fi
[ $# -gt 0 ] || set -- "${TIERS[@]}"
files=()
for arg in "$@"; do
  if [[ " ${TIERS[*]} " == *" $arg "* ]]; then
    mapfile -t found < <(find "dist/test/$arg" -name '*.test.js' 2>/dev/null | sort)
    [ ${#found[@]} -gt 0 ] || { echo "test: no built tests in dist/test/$arg (run npm run build)" >&2; exit 1; }
    files+=("${found[@]}")
  else
    f=$arg
    [[ $f == dist/* ]] || f="dist/${f%.ts}.js"
    [ -f "$f" ] || { echo "test: $arg is neither a tier (${TIERS[*]}) nor a built test file ($f)" >&2; exit 1; }
    files+=("$f")
  fi
done
run=$(mktemp -d "${TMPDIR:-/tmp}/txgate-test-run.XXXXXX")
trap 'rm -rf "$run"' EXIT
# A run stopped by a signal still removes its directory (bash runs the EXIT trap only on exit).
trap 'exit 130' INT
trap 'exit 143' TERM
# Open as /tmp is: a test may run a tool as another user (PostgreSQL's initdb as postgres).
mkdir "$run/tmp"
chmod 755 "$run"
chmod 1777 "$run/tmp"
# The console's reporter as node:test chooses it (spec on a terminal, else TAP), and the timing one.
reporter=tap
[ -t 1 ] && reporter=spec
set +e
TMPDIR="$run/tmp" TXGATE_CHECK_REASONS=1 node --test --test-concurrency=1 \
  --test-reporter="$reporter" --test-reporter-destination=stdout \
  --test-reporter=./dist/scripts/test-timing.js --test-reporter-destination="$run/timing" "${files[@]}"
code=$?
set -e
if [ ${#files[@]} -gt 1 ] && [ -s "$run/timing" ]; then
  total=$(awk -F'\t' '{ s += $1 } END { printf "%.0f", s / 1000 }' "$run/timing")
  echo "# slowest test files (of ${#files[@]}, ${total} s in all):"
  sort -t$'\t' -k1,1nr "$run/timing" | head -10 | awk -F'\t' '{ printf "#   %6.1f s  %s\n", $1 / 1000, $2 }'
fi
mapfile -t left < <(find "$run/tmp" -mindepth 1 -maxdepth 1 -name 'txgate-*' -printf '%f\n' | sort)
if [ ${#left[@]} -gt 0 ]; then
  echo "test: the tests left ${#left[@]} txgate-* folder(s) in the temporary directory (remove what a test makes: test/support/temp-dir.ts): ${left[*]}" >&2
  [ "$code" -ne 0 ] || code=1
fi
exit "$code"

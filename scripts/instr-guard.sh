#!/usr/bin/env bash
# CI's guard on the hot path's instruction counts (docs/performance.md, "The guard"): the
# base commit bench/results/guard.json names is built into a temporary directory (with this
# checkout's node_modules when the lockfiles are the same, else its own npm ci), then
# bench:guard counts both builds under callgrind in one run and fails (exit 1) when a scenario
# is dearer than the base beyond its tolerance. Extra arguments go to bench:guard.
# GUARD_BASE=REV counts against REV instead (the noise study: GUARD_BASE=HEAD, a tree against itself).
# Usage: [GUARD_BASE=REV] bash scripts/instr-guard.sh [bench:guard options]
# --if-asked (npm test's last step): runs only in CI (CI=true) or when TXGATE_GUARD=1, else says
# how to run it and passes; where it runs, a missing valgrind fails it (a real part, not a skip).
set -euo pipefail
cd "$(dirname "$0")/.."
asked=()
if [ "${1:-}" = "--if-asked" ]; then
  shift
  GUARD_TEST_RUN=1
  if [ "${CI:-}" != "true" ] && [ "${TXGATE_GUARD:-}" != "1" ]; then
    echo "instr-guard: not run (CI=true or TXGATE_GUARD=1 runs it: about 4 minutes, valgrind needed; docs/performance.md, \"The guard\")"
    exit 0
  fi
fi
case " $* " in *" --help "* | *" -h "* | *" --noise-from "*) exec bash scripts/built.sh bench/entry/guard "$@" ;; esac
command -v valgrind >/dev/null || { echo "instr-guard: valgrind is not installed (Debian: apt-get install -y valgrind)" >&2; exit 1; }
base=$(git rev-parse "${GUARD_BASE:-$(node -p 'require("./bench/results/guard.json").commit')}")
git cat-file -e "$base^{commit}" 2>/dev/null || { echo "instr-guard: the base commit $base (bench/results/guard.json) is not in this clone" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$base" | tar -x -C "$work"
if cmp -s package-lock.json "$work/package-lock.json"; then
  ln -s "$PWD/node_modules" "$work/node_modules"
else
  (cd "$work" && npm ci --no-audit --no-fund >/dev/null)
fi
# The base's own type errors against this checkout's packages would not change its server: its
# build is what is counted, so a type error is reported and the emitted JavaScript used.
(cd "$work" && { node node_modules/typescript/bin/tsc -p tsconfig.json >/dev/null || echo "instr-guard: the base ${base:0:12} built with type errors" >&2; } && bash scripts/prune-dist.sh)
[ -f "$work/dist/src/cli.js" ] || { echo "instr-guard: the base ${base:0:12} did not build" >&2; exit 1; }
npm run build --silent
# As npm test's step, its results go in the temporary directory (removed on exit; the verdict is on stdout).
[ -n "${GUARD_TEST_RUN:-}" ] && asked=(--out "$work/run")
node dist/bench/entry/guard.js --base-cli "$work/dist/src/cli.js" --base-commit "$base" "${asked[@]}" "$@"

#!/usr/bin/env bash
# CI's guard on the hot path's instruction counts (docs/performance.md, "The guard"): the
# profiler's verdict. bench:profile --guard builds the base commit bench/results/guard.json names
# (kept under node_modules/.cache), counts both builds under callgrind in one run, stage by stage,
# and fails (exit 1) when a guarded scenario's total or bytes allocated is dearer than the base
# beyond its tolerance, or one of its stages is flagged dearer. Extra arguments go to
# bench:profile (--base REV counts against REV instead: --base . is a tree against itself).
# Usage: bash scripts/instr-guard.sh [bench:profile options]
# --if-asked (npm test's last step): runs only in CI (CI=true) or when TXGATE_GUARD=1, else says
# how to run it and passes; where it runs, a missing valgrind fails it (a real part, not a skip).
set -euo pipefail
cd "$(dirname "$0")/.."
asked=()
if [ "${1:-}" = "--if-asked" ]; then
  shift
  if [ "${CI:-}" != "true" ] && [ "${TXGATE_GUARD:-}" != "1" ]; then
    echo "instr-guard: not run (CI=true or TXGATE_GUARD=1 runs it: about 4 minutes, valgrind needed; docs/performance.md, \"The guard\")"
    exit 0
  fi
  # As npm test's step its results go to a temporary directory (the verdict is on stdout).
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  asked=(--out "$out")
fi
case " $* " in *" --help "* | *" -h "*) exec bash scripts/built.sh bench/entry/profile --help ;; esac
command -v valgrind >/dev/null || { echo "instr-guard: valgrind is not installed (Debian: apt-get install -y valgrind)" >&2; exit 1; }
exec bash scripts/built.sh bench/entry/profile --guard "${asked[@]}" "$@"

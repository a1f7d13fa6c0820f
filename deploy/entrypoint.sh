#!/bin/sh
# The container's entrypoint: txgate replaces this shell (exec), so the container's stop signal
# (SIGTERM) reaches txgate itself, which drains and exits 0. The configuration is
# $TXGATE_CONFIG (default /etc/txgate/txgate.json, mounted); extra arguments (e.g. --pretty)
# are passed on.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exec node --no-memory-reducer "$here/../dist/src/cli.js" --config "${TXGATE_CONFIG:-/etc/txgate/txgate.json}" "$@"

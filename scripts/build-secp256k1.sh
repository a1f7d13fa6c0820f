#!/usr/bin/env bash
# Builds the optional signature-recovery binding against the system's libsecp256k1, for
# `crypto.secp256k1: "system"` in the configuration. Needs a C compiler, Node's headers and
# libsecp256k1 0.2 or later with its recovery module (Debian 12: apt-get install -y libsecp256k1-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
inc=$(node -p "require('node:path').join(process.execPath, '..', '..', 'include', 'node')")
if [ ! -f "$inc/node_api.h" ]; then
  echo "build-secp256k1: Node's headers are not in $inc" >&2
  exit 1
fi
if ! printf '#include <secp256k1_recovery.h>\n' | cc -E -x c - >/dev/null 2>&1; then
  echo "build-secp256k1: libsecp256k1 headers not found (Debian: apt-get install -y libsecp256k1-dev)" >&2
  exit 1
fi
mkdir -p build
cc -O2 -Wall -Wextra -shared -fPIC -I"$inc" native/secp256k1-system.c -o build/secp256k1-system.node -lsecp256k1
node -e "const a = require('./build/secp256k1-system.node'); if (typeof a.ecdsaRecover !== 'function') process.exit(1)"
echo "built build/secp256k1-system.node"

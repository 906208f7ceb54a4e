#!/bin/bash
# usage: harness/oracle/setup.sh DIR
# Makes DIR (outside the tree) an installed oracle: the agent scripts, upstream's published packages
# (from deps/package-lock.json: the dsh 0.1.0-rc.8 plugin set, dsh-acp, dsh-llm-replay, the
# snapshot harness dsh-acp-snapshot and the SDK's JSON-RPC server, client and protocol) and node 22
# (npm ci from node22/). Nothing is written in the tree.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
src=$(cd "$(dirname "$0")" && pwd)
dir=$1
mkdir -p "$dir/dsh08" "$dir/node22"
cp -r "$src/agent" "$dir/"
cp "$src/deps/package.json" "$src/deps/package-lock.json" "$dir/dsh08/"
cp "$src/node22/package.json" "$src/node22/package-lock.json" "$dir/node22/"
# npm install, not npm ci: the lock pins the versions, but npm ci refuses it for optional platform packages it lacks
(cd "$dir/dsh08" && npm install --legacy-peer-deps --no-audit --no-fund --loglevel=error)
(cd "$dir/node22" && npm ci --no-audit --no-fund --loglevel=error)
ln -sfn ../dsh08/node_modules "$dir/agent/node_modules"
echo "oracle ready in $dir: export DSHSIM_ORACLE=$dir; go run ./harness/oracle/cmd/dsh-oracle -h"

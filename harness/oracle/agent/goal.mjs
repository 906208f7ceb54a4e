// Drive one goal scenario through upstream's own snapshot harness as goal.snapshot.ts does: runScenario
// against our reconstructed ACP agent (bin.mjs + cordis.snapshot.yml) with the goal domain, its round
// driver and the goal tools mounted (PROBE_GOAL=1). Runs under vitest (probe.test.mjs, PROBE_SCRIPT):
// the goal input steps wait with vi.waitFor.
// usage: PROBE_ARGS='["<scenarioDir>","--refresh","--env","K=V"]' PROBE_SCRIPT=./goal.mjs vitest run probe.test.mjs
// The scenario is laid out as upstream's goal-snapshots: session.jsonl a header alone, the model script
// replay.override.json, input.json the steps. --refresh writes session.expected.jsonl (the persisted log,
// normalised as the goal test does: the shared scrubbers, then goal timestamps zeroed) and
// stdout.expected.jsonl. Either way it prints the verdicts run.mjs prints: "stdout:" (the normalised
// stdout against stdout.expected.jsonl, and an empty stderr, which the goal test requires) and
// "session.jsonl:" (the whole normalised log against session.expected.jsonl).
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scenarioArgs, acpAgent } from "./args.mjs";
import { runScenario, normalizeStdout, normalizeSessionLog, scrubRequestHeaders } from "@deepseek-ai/dsh-acp-snapshot";
process.env.DSH_EXAMPLE_MODE ??= "lib";
process.env.PROBE_GOAL = "1";
// The goal steps wait for a persisted open turn (waitForTurnStart polls every 10 ms): an unpaced replay
// opens and closes a goal round between two polls. llm-replay's pacing (100 ms a chunk, unless the
// settings give PROBE_PACE_MS) keeps it open; pacing changes no event.
process.env.PROBE_PACE_MS ??= "100";
const { dir, refresh, env } = scenarioArgs();
const agent = acpAgent;
const input = JSON.parse(await readFile(join(dir, "input.json"), "utf8"));
const result = await runScenario(input, { agent, mode: "replay", fixtureFile: join(dir, "session.jsonl"), env,
  overrideFile: join(dir, "replay.override.json"),
  ...(existsSync(join(dir, "workspace")) ? { workspaceDir: join(dir, "workspace") } : {}) });
const outDir = process.env.PROBE_OUT ?? join(dir, ".probe-out"); await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, "stderr.txt"), result.stderr ?? "");
await writeFile(join(outDir, "raw-stdout.txt"), result.rawStdout ?? "");
for (const [i, l] of result.sessionLogs.entries()) await writeFile(join(outDir, `raw-session.${i}.jsonl`), l.content);
if (result.sessionLogs.length !== 1) console.log(`goal: ${result.sessionLogs.length} session logs persisted (the goal test requires one)`);
const log = result.sessionLogs[0];
const ctx = { sessionIds: [result.sessionId, log?.id].filter((id) => id !== undefined), cwd: result.cwd };

// The goal test's normalisation: the shared scrubbers, then durable goal timestamps zeroed.
function zeroGoalTimes(value) {
  if (typeof value === "string") return value.replace(/("(?:createdAt|updatedAt|clearedAt)":)\d+/g, "$10");
  if (Array.isArray(value)) return value.map(zeroGoalTimes);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k,
    ["createdAt", "updatedAt", "clearedAt"].includes(k) && typeof v === "number" ? 0 : zeroGoalTimes(v)]));
  return value;
}
const normalizeGoalLog = (content, c) => scrubRequestHeaders(normalizeSessionLog(content, c)).split("\n")
  .filter((l) => l.trim().length > 0).map((l) => JSON.stringify(zeroGoalTimes(JSON.parse(l)))).join("\n") + "\n";
const stdout = normalizeStdout(result.rawStdout, ctx);
const session = log === undefined ? "" : normalizeGoalLog(log.content, ctx);
if (refresh) {
  await writeFile(join(dir, "stdout.expected.jsonl"), stdout);
  await writeFile(join(dir, "session.expected.jsonl"), session);
  console.log(`refreshed ${dir}: ${result.sessionLogs.length} log(s)`);
}
const expStdout = await readFile(join(dir, "stdout.expected.jsonl"), "utf8").catch(() => "");
const expSession = await readFile(join(dir, "session.expected.jsonl"), "utf8").catch(() => "");
if (result.stderr) console.log(`goal: stderr is not empty (the goal test requires it empty)`);
console.log("stdout:", stdout === expStdout && !result.stderr ? "MATCH" : "DIFF");
if (stdout !== expStdout) await writeFile(join(outDir, "stdout.norm.jsonl"), stdout);
await writeFile(join(outDir, "harvest.norm.jsonl"), session); await writeFile(join(outDir, "fixture.norm.jsonl"), expSession);
console.log("session.jsonl:", session === expSession && session !== "" && result.sessionLogs.length === 1 ? "MATCH" : "DIFF",
  `(${session.split("\n").length} vs ${expSession.split("\n").length} lines)`);

// Drive one scenario dir through upstream's own snapshot harness (runScenario from
// @deepseek-ai/dsh-acp-snapshot) against our reconstructed agent (bin.mjs + cordis.snapshot.yml).
// usage: node run.mjs <scenarioDir> [--refresh] [--env K=V ...]
// Replay: compares stdout + session.jsonl with the fixture (same normalisation as suite.ts).
// --refresh: rewrites session.jsonl/stdout.expected.jsonl in <scenarioDir> from the run (suite.ts refresh path).
import { readFile, writeFile, readdir, mkdir } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { scenarioArgs, acpAgent, here } from "./args.mjs";
import { runScenario, normalizeStdout, normalizeSessionLog, scrubRequestHeaders, tokenizeSessionFixtureCwd,
  stabilizeFixtureMessageIds, stabilizeRefreshLog, refreshFixtureReplacements } from "@deepseek-ai/dsh-acp-snapshot";
process.env.DSH_EXAMPLE_MODE ??= "lib";
const { dir, refresh, env } = scenarioArgs();
const agent = acpAgent;
const input = JSON.parse(await readFile(join(dir, "input.json"), "utf8"));
const fixtureFile = join(dir, "session.jsonl");
// child logs session.<n>.jsonl: their scripts, then the logs compared (upstream's suite passes them as childFiles)
const childNames = [];
for (let n = 1; existsSync(join(dir, `session.${n}.jsonl`)); n++) childNames.push(`session.${n}.jsonl`);
const overrideFile = join(dir, "replay.override.json");
const result = await runScenario(input, { agent, mode: "replay", fixtureFile, env,
  ...(childNames.length > 0 ? { childFiles: childNames.map((f) => join(dir, f)) } : {}),
  ...(existsSync(overrideFile) ? { overrideFile } : {}),
  ...(existsSync(join(dir, "workspace")) ? { workspaceDir: join(dir, "workspace") } : {}) });
const ctx = { sessionIds: [...(result.sessionId ? [result.sessionId] : []), ...result.sessionLogs.map((l) => l.id)], cwd: result.cwd, cwdAliases: result.cwdAliases };
const outDir = process.env.PROBE_OUT ?? join(dir, ".probe-out"); await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, "stderr.txt"), result.stderr ?? "");
await writeFile(join(outDir, "raw-stdout.txt"), result.rawStdout ?? "");
for (const [i, l] of result.sessionLogs.entries()) await writeFile(join(outDir, `raw-session.${i}.jsonl`), l.content);
const stdout = normalizeStdout(result.rawStdout, ctx, {});
const names = ["session.jsonl", ...childNames];
if (refresh) {
  if (result.sessionLogs.length !== names.length) console.log(`refresh: ${result.sessionLogs.length} log(s) harvested, ${names.length} script(s) given`);
  const logs = result.sessionLogs.slice(0, names.length);
  const existing = await Promise.all(names.map(async (f) => existsSync(join(dir, f)) ? readFile(join(dir, f), "utf8") : ""));
  const repl = refreshFixtureReplacements(logs, existing.slice(0, logs.length));
  const out = stabilizeFixtureMessageIds(logs.map((log, i) => scrubRequestHeaders(tokenizeSessionFixtureCwd(stabilizeRefreshLog(log.content, existing[i], repl, ctx)))), existing.slice(0, logs.length));
  await writeFile(fixtureFile, out[0] ?? existing[0]); // no session (a refused session/new): the header stays
  for (const [i, o] of out.entries()) if (i > 0) await writeFile(join(dir, names[i]), o);
  await writeFile(join(dir, "stdout.expected.jsonl"), stdout);
  console.log(`refreshed ${dir}: ${result.sessionLogs.length} log(s)`);
}
const expStdout = await readFile(join(dir, "stdout.expected.jsonl"), "utf8");
console.log("stdout:", stdout === expStdout ? "MATCH" : "DIFF");
if (stdout !== expStdout) { await writeFile(join(outDir, "stdout.norm.jsonl"), stdout); }
const fixture = scrubRequestHeaders(await readFile(fixtureFile, "utf8"));
const a = normalizeSessionLog(scrubRequestHeaders(result.sessionLogs[0]?.content ?? ""), ctx);
const b = normalizeSessionLog(fixture, { sessionIds: [JSON.parse(fixture.split("\n")[0]).id], cwd: JSON.parse(fixture.split("\n")[0]).cwd });
await writeFile(join(outDir, "harvest.norm.jsonl"), a); await writeFile(join(outDir, "fixture.norm.jsonl"), b);
console.log("session.jsonl:", a === b ? "MATCH" : "DIFF", `(${a.split("\n").length} vs ${b.split("\n").length} lines)`);
for (const [i, f] of childNames.entries()) {
  const fx = scrubRequestHeaders(await readFile(join(dir, f), "utf8"));
  const got = normalizeSessionLog(scrubRequestHeaders(result.sessionLogs[i + 1]?.content ?? ""), ctx);
  const want = normalizeSessionLog(fx, { sessionIds: [JSON.parse(fx.split("\n")[0]).id], cwd: JSON.parse(fx.split("\n")[0]).cwd });
  await writeFile(join(outDir, `harvest.${i + 1}.norm.jsonl`), got);
  console.log(`${f}:`, got === want ? "MATCH" : "DIFF");
}

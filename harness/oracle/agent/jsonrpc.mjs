// Drive one scenario through upstream's JSON-RPC SDK front end as sdk.snapshot.ts does: the published
// SDK client (@deepseek-ai/dsh-sdk-client's DeepSeekHarness) spawns the JSON-RPC agent bin
// (jsonrpc-bin.mjs, the published demo's bin) over jsonrpc.cordis.yml, llm-replay as the model, and
// runs one turn over stdio.
// usage: node jsonrpc.mjs <scenarioDir> [--refresh] [--env K=V ...]
// dshsim.replay.json's profile minimal selects the suite's minimal composition (jsonrpc-minimal.cordis.yml).
// The prompt is dshsim.replay.json's (else input.json's first prompt step), the SDK session id the
// header id of session.jsonl; session.jsonl and session.<n>.jsonl are the model scripts, as the
// suite hydrates them ({{cwd}} replaced). --refresh rewrites the logs (the suite's refresh path),
// notifications.expected.jsonl and result.expected.json. Either way it prints the verdicts run.mjs
// prints: "stdout:" (the normalised notifications and result against the expected files),
// "session.jsonl:" and "session.<n>.jsonl:" (each normalised log against its fixture).
import { readFile, writeFile, readdir, mkdir, mkdtemp, cp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { scenarioArgs, here } from "./args.mjs";
import { tmpdir } from "node:os";
import { normalizeSessionLog, normalizeStdout, refreshFixtureReplacements, scrubRequestHeaders, stabilizeFixtureMessageIds,
  stabilizeRefreshLog, tokenizeSessionFixtureCwd } from "@deepseek-ai/dsh-acp-snapshot";
import { DeepSeekHarness } from "@deepseek-ai/dsh-sdk-client";

const { dir, refresh, env } = scenarioArgs();
const outDir = process.env.PROBE_OUT ?? join(dir, ".probe-out"); await mkdir(outDir, { recursive: true });

const settingsFile = join(dir, "dshsim.replay.json");
const settings = existsSync(settingsFile) ? JSON.parse(await readFile(settingsFile, "utf8")) : {};
// Profile minimal is the suite's persistent-tools composition, with its system prompt.
const minimal = settings.profile === "minimal";
async function prompt() {
  if (typeof settings.prompt === "string") return settings.prompt;
  const input = JSON.parse(await readFile(join(dir, "input.json"), "utf8"));
  const p = input.steps?.find((st) => st.op === "prompt")?.text;
  if (typeof p !== "string") throw new Error(`${dir}: no prompt (dshsim.replay.json's prompt or input.json's prompt step)`);
  return p;
}
const headerOf = (content) => JSON.parse(content.slice(0, content.indexOf("\n")));
const files = ["session.jsonl"];
for (let n = 1; existsSync(join(dir, `session.${n}.jsonl`)); n++) files.push(`session.${n}.jsonl`);
let expected = await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")));
const sessionId = headerOf(expected[0]).id;

const cwd = await mkdtemp(join(tmpdir(), "sdk-snapshot-oracle-"));
if (existsSync(join(dir, "workspace"))) await cp(join(dir, "workspace"), cwd, { recursive: true });
const sessionsRoot = join(cwd, ".sessions");
const fixtures = join(cwd, ".replay-fixtures"); await mkdir(fixtures, { recursive: true });
const hydrated = await Promise.all(files.map(async (f, i) => { const d = join(fixtures, f); await writeFile(d, expected[i].replaceAll("{{cwd}}", cwd)); return d; }));
const [parentFixture, ...childFixtures] = hydrated;
const runEnv = {
  ...process.env, DSH_CORDIS_CONFIG: join(here, minimal ? "jsonrpc-minimal.cordis.yml" : "jsonrpc.cordis.yml"),
  ...(minimal ? { DSH_SYSTEM_PROMPT: "You are the environment-selected minimal software engineer." } : {}), DSH_SESSION_ROOT: sessionsRoot, DSH_CWD: cwd,
  DSH_SNAPSHOT: "replay", NODE_OPTIONS: "--disable-warning=ExperimentalWarning", DSH_SNAPSHOT_FILE: parentFixture,
  ...(childFixtures.length > 0 ? { DSH_SNAPSHOT_CHILD_FILES: childFixtures.join(delimiter) } : {}), ...env,
};
const harness = new DeepSeekHarness({ launch: { command: process.execPath, args: [join(here, "jsonrpc-bin.mjs")], cwd, env: runEnv, requestTimeoutMs: 110000 },
  cwd, provider: "deepseek-official", model: "deepseek-v4-flash" });
const notifications = [];
let result, failure;
try {
  result = await harness.run((await prompt()).replaceAll("{{cwd}}", cwd), { sessionId, onNotification: (n) => { notifications.push(n); } });
} catch (e) { failure = e; }
await harness.close().catch((e) => { failure ??= e; });
const logs = [];
for (const f of (await readdir(sessionsRoot, { recursive: true }).catch(() => [])).filter((f) => f.endsWith(".jsonl")).sort()) {
  const content = await readFile(join(sessionsRoot, f), "utf8");
  logs.push({ content, header: headerOf(content) });
}
await rm(cwd, { recursive: true, force: true });
if (failure !== undefined) console.log(`jsonrpc: the run failed: ${failure?.stack ?? failure}`);
// parent first, children by creation time (the fixture layout's order)
const ordered = [...logs.filter((l) => typeof l.header.parentSession !== "string"),
  ...logs.filter((l) => typeof l.header.parentSession === "string").sort((a, b) => Number(a.header.createdAt) - Number(b.header.createdAt))];
for (const [i, l] of ordered.entries()) await writeFile(join(outDir, `raw-session.${i}.jsonl`), l.content);
if (ordered.length !== files.length) console.log(`jsonrpc: ${ordered.length} session log(s) persisted, ${files.length} script(s) given`);
const actual = { sessionIds: ordered.map((l) => l.header.id).filter((id) => typeof id === "string"), cwd };

function normalizeNotifications(ns, ctx) {
  const events = ns.filter((n) => n.method === "session.event").map((n) => n.params.event);
  const normalized = events.length === 0 ? [] : scrubRequestHeaders(normalizeSessionLog(`${events.map((e) => JSON.stringify(e)).join("\n")}\n`, ctx))
    .trimEnd().split("\n").map((l) => JSON.parse(l));
  let k = 0;
  const records = ns.map((n) => n.method !== "session.event" ? { method: n.method, params: n.params } : { method: n.method, params: { ...n.params, event: normalized[k++] } });
  return normalizeStdout(`${records.map((r) => JSON.stringify(r)).join("\n")}\n`, ctx);
}
const gotNotifications = normalizeNotifications(notifications, actual);
const gotResult = result === undefined ? "" : normalizeStdout(`${JSON.stringify({ sessionId: result.sessionId, finalResponse: result.finalResponse })}\n`, actual);
if (refresh && ordered.length === files.length) {
  const harvested = ordered.map((l) => ({ id: String(l.header.id), createdAt: Number(l.header.createdAt),
    ...(typeof l.header.parentSession === "string" ? { parentSession: l.header.parentSession } : {}), content: l.content }));
  const repl = refreshFixtureReplacements(harvested, expected);
  const refreshed = ordered.map((l, i) => scrubRequestHeaders(tokenizeSessionFixtureCwd(stabilizeRefreshLog(l.content, expected[i], repl, actual))));
  expected = stabilizeFixtureMessageIds(refreshed, expected);
  for (const [i, f] of files.entries()) await writeFile(join(dir, f), expected[i]);
  await writeFile(join(dir, "notifications.expected.jsonl"), gotNotifications);
  await writeFile(join(dir, "result.expected.json"), gotResult);
  console.log(`refreshed ${dir}: ${ordered.length} log(s)`);
}
const wantNotifications = await readFile(join(dir, "notifications.expected.jsonl"), "utf8").catch(() => "");
const wantResult = await readFile(join(dir, "result.expected.json"), "utf8").catch(() => "");
await writeFile(join(outDir, "stdout.norm.jsonl"), gotNotifications + gotResult);
const idle = notifications.at(-1)?.method === "session.status" && notifications.at(-1)?.params?.status === "idle";
console.log("stdout:", gotNotifications === wantNotifications && gotResult === wantResult && idle && failure === undefined ? "MATCH" : "DIFF");
const ctxOf = (c) => ({ sessionIds: c.map((x) => headerOf(x).id).filter((id) => typeof id === "string"), cwd: headerOf(c[0]).cwd ?? "\0no-cwd\0" });
const want = ctxOf(expected);
for (const [i, f] of files.entries()) {
  const got = ordered[i] === undefined ? "" : scrubRequestHeaders(normalizeSessionLog(ordered[i].content, actual));
  const exp = scrubRequestHeaders(normalizeSessionLog(expected[i], want));
  await writeFile(join(outDir, i === 0 ? "harvest.norm.jsonl" : `harvest.${i}.norm.jsonl`), got);
  if (i === 0) await writeFile(join(outDir, "fixture.norm.jsonl"), exp);
  console.log(`${f}:`, got === exp && got !== "" ? "MATCH" : "DIFF", ...(i === 0 ? [`(${got.split("\n").length} vs ${exp.split("\n").length} lines)`] : []));
}

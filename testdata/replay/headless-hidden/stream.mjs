// Write a headless run's stream-json.expected.jsonl from its session log, as upstream's
// headless.snapshot.ts does (normalizeHeadlessStream over dsh-loader-smoke's runFixtureTurn): one
// {type: "session_event", sessionId, event} record per event from the splice that delivered the task
// on, each normalised (normalizeSessionLog) and header-scrubbed (scrubRequestHeaders) by upstream's
// published @deepseek-ai/dsh-acp-snapshot, then the {type: "result"} record runFixtureTurn returns
// (the last assistant text; the usage summed over the steps, each step's last report).
// usage: DSHSIM_ORACLE=DIR node stream.mjs SESSION_LOG TASK > stream-json.expected.jsonl
import { readFileSync } from "node:fs";
import { join } from "node:path";

const oracle = process.env.DSHSIM_ORACLE;
if (!oracle) throw new Error("DSHSIM_ORACLE is not set");
const snap = await import(join(oracle, "agent", "node_modules", "@deepseek-ai", "dsh-acp-snapshot", "lib", "index.js"));
const [file, task] = process.argv.slice(2);
const rows = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
const header = rows[0];
const events = rows.slice(1);
const from = events.findIndex((e) => e.type === "agent/inbox/spliced" && e.data.inserted?.some((m) => m.source?.kind === "user"
  && m.content?.some((b) => b.type === "text" && b.text === task)));
if (from < 0) throw new Error(`${file}: no splice delivers the task`);
const streamed = events.slice(from);
let output = "";
const usage = new Map();
for (const e of streamed) {
  if (e.type === "assistant/chunk" && e.data.chunk.type === "usage") usage.set(`${e.data.turn}/${e.data.step}`, e.data.chunk.usage);
  if (e.type === "assistant/message") {
    const texts = e.data.message.content.filter((b) => b.type === "text");
    if (texts.length > 0) output = texts.map((b) => b.text).join("");
    if (e.data.usage !== undefined) usage.set(`${e.data.turn}/${e.data.step}`, e.data.usage);
  }
}
let total;
for (const u of usage.values()) {
  const next = { inputTokens: (total?.inputTokens ?? 0) + u.inputTokens, outputTokens: (total?.outputTokens ?? 0) + u.outputTokens };
  for (const k of ["cacheReadTokens", "cacheWriteTokens", "reasoningTokens"]) {
    if (total?.[k] !== undefined || u[k] !== undefined) next[k] = (total?.[k] ?? 0) + (u[k] ?? 0);
  }
  total = next;
}
const ctx = { sessionIds: [header.id], cwd: header.cwd };
const normalized = snap.scrubRequestHeaders(snap.normalizeSessionLog(`${streamed.map((e) => JSON.stringify(e)).join("\n")}\n`, ctx))
  .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
const records = normalized.map((event) => ({ type: "session_event", sessionId: header.id, event }));
records.push({ type: "result", sessionId: header.id, output, ...(total === undefined ? {} : { usage: total }) });
process.stdout.write(snap.normalizeStdout(`${records.map((r) => JSON.stringify(r)).join("\n")}\n`, ctx));

// Run upstream's resumed headless scenarios (workspace-context-resume.snapshot.ts's two cases,
// subagent-diagnostic.snapshot.ts's descriptorless-child and session-format-guard.snapshot.ts's two) through upstream's published rc.8 packages:
// the sessions are seeded exactly as the test's seedVisibleBaseline (seedDescriptorlessChild) seeds them (dsh-session, dsh-session-persistence-jsonl, dsh-agent-instructions' renderWorkspaceContext),
// the workspace prepared as its prepare does, then the product CLI's headless profile boots with its
// runner replaced by one that resumes the seeded session (as the suite's resumed-agent fixture does)
// and drives the task through dsh-loader-smoke's runFixtureTurn (as the suite's headless-driver.ts
// does), llm-replay playing OVERRIDE. The example composition (dsh-agent-spine-demo) was not published.
// Writes OUT/session.0.jsonl (normalised by upstream's normalizeSessionLog) and OUT/stdout.txt.
// usage: DSHSIM_ORACLE=DIR node resume.mjs OUT offline-edit|precedence-change|descriptorless-child|newer-format|unknown-event OVERRIDE
import { writeFile, readFile, readdir, mkdir, mkdtemp, rm } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import { tmpdir } from "node:os";

const [out, which, override] = process.argv.slice(2);
const modules = join(process.env.DSHSIM_ORACLE, "agent", "node_modules", "@deepseek-ai");
const lib = (p) => join(modules, p, "lib", "index.js");
const { Context } = await import(lib("cordis"));
const { default: SessionStore, SESSION_FORMAT_VERSION } = await import(lib("dsh-session"));
const { default: JsonlSessionPersistence } = await import(lib("dsh-session-persistence-jsonl"));
const { createUserMessage } = await import(lib("dsh-llm"));
const { renderWorkspaceContext } = await import(lib("dsh-agent-instructions"));
const snap = await import(lib("dsh-acp-snapshot"));
const diagnostic = which === "descriptorless-child";
// session-format-guard.snapshot.ts's two cases: a closed turn under a newer format, or with an unknown event.
const guard = which === "newer-format" || which === "unknown-event";
const sessionId = diagnostic ? "subagent-diagnostic-parent" : "workspace-context-resume";
const childId = "subagent-diagnostic-child";
const task = diagnostic ? "Call list_agents once and report what it shows." : guard ? "Try to resume." : "Acknowledge the current workspace instruction.";

const base = await mkdtemp(join(tmpdir(), "headless-hidden-resume-"));
const cwd = join(base, "ws"), home = join(base, "dsh"), profile = join(home, "profiles", "headless");
await mkdir(diagnostic ? cwd : join(cwd, ".git"), { recursive: true });
await mkdir(join(profile, "oracle"), { recursive: true });
let files = [{ name: "AGENTS.md", content: "Old workspace instruction." }], candidates;
if (which === "offline-edit") {
  await writeFile(join(cwd, "AGENTS.md"), "New workspace instruction after offline edit.\n");
} else if (which === "precedence-change") {
  await writeFile(join(cwd, "AGENTS.md"), "Current AGENTS rule.\n");
  await writeFile(join(cwd, "CLAUDE.md"), "Current CLAUDE rule.\n");
  files = [{ name: "CLAUDE.md", content: "Old CLAUDE rule." }, { name: "AGENTS.md", content: "Old AGENTS rule." }];
  candidates = ["CLAUDE.md", "AGENTS.md"];
}
// seedVisibleBaseline, with the product profile's persistence root and its agent-instructions config
// (maxBytes 65536, the default dshHome): workspaceBaselineIdentity of that config, spelled out as
// upstream's lib computes it (JSON.stringify of these fields).
const identity = JSON.stringify({
  projectRoot: relative(cwd, cwd), projectRootMarkers: [".git"], maxBytes: 65536, maxSourceBytes: 1048576,
  instructionFileCandidates: candidates ?? ["AGENTS.md", "CLAUDE.md"], localInstructionFileCandidates: ["AGENTS.local.md", "CLAUDE.local.md"],
});
const ctx = new Context();
await ctx.plugin(SessionStore);
await ctx.plugin(JsonlSessionPersistence, { root: join(home, "sessions"), compression: "none" });
const baseline = renderWorkspaceContext(files.map((f) => ({ absolutePath: join(cwd, f.name), displayPath: f.name, content: f.content })), { maxBytes: 65536 });
const userMessage = (text) => createUserMessage({ content: [{ type: "text", text }], source: { kind: "user" } });
const closedTurn = [
  { type: "turn/start", seq: 0, time: 1, data: { turn: 1 } },
  { type: "turn/end", seq: 1, time: 2, data: { turn: 1, reason: { kind: "completed" } } },
];
const events = guard ? (which === "unknown-event" ? [...closedTurn, { type: "future/event", seq: 2, time: 3, data: { payload: 1 } }] : closedTurn) : diagnostic ? [
  { type: "turn/start", seq: 0, time: 10, data: { turn: 1 } },
  { type: "user/message", seq: 1, time: 11, data: userMessage("Start a background job."), surfaceOp: "append" },
  { type: "turn/end", seq: 2, time: 12, data: { turn: 1, reason: { kind: "completed" } } },
] : [
  { type: "turn/start", seq: 0, time: 10, data: { turn: 1 } },
  { type: "user/message", seq: 1, time: 11, data: createUserMessage({ content: [{ type: "text", text: "Remember the workspace instruction." }], source: { kind: "user" } }), surfaceOp: "append" },
  { type: "user/message", seq: 2, time: 12, data: createUserMessage({ content: [{ type: "text", text: baseline.text }], source: {
    kind: "agent-instructions", form: "instructions", baseline: true, baselineIdentity: identity,
    changes: files.map((f) => ({ action: "set", scope: `.\0${f.name}`, path: f.name, digest: createHash("sha1").update(f.content).digest("hex") })),
  } }), surfaceOp: "append" },
  { type: "turn/end", seq: 3, time: 13, data: { turn: 1, reason: { kind: "completed" } } },
];
await ctx.sessionPersistence.create(guard
  ? { version: SESSION_FORMAT_VERSION + (which === "newer-format" ? 99 : 0), id: sessionId, createdAt: 1, cwd }
  : { version: SESSION_FORMAT_VERSION, id: sessionId, createdAt: 1, cwd, delegationDepth: 0 });
await ctx.sessionPersistence.append(sessionId, events);
if (diagnostic) {
  // seedDescriptorlessChild's cold child: classified a subagent (origin) but no descriptor event.
  await ctx.sessionPersistence.create({ version: SESSION_FORMAT_VERSION, id: childId, createdAt: 2, cwd, parentSession: sessionId, origin: "subagent", delegationDepth: 1 });
  await ctx.sessionPersistence.append(childId, [
    { type: "turn/start", seq: 0, time: 20, data: { turn: 1 } },
    { type: "turn/end", seq: 1, time: 21, data: { turn: 1, reason: { kind: "interrupted" } } },
  ]);
}
await ctx.fiber.dispose();

await writeFile(join(profile, "oracle", "llm-replay.mjs"), `export * from ${JSON.stringify(lib("dsh-llm-replay"))};\n`);
await writeFile(join(profile, "oracle", "hmr.mjs"), [
  'export const name = "oracle-hmr";',
  'export function apply(ctx) { ctx.provide("hmr"); ctx.set("hmr", { registerConfig: async () => async () => {} }); }', ""].join("\n"));
await writeFile(join(profile, "oracle", "resume-runner.mjs"), `
import { runFixtureTurn } from ${JSON.stringify(lib("dsh-loader-smoke"))};
export const name = "resume-runner";
export const inject = ["agents", "sessionPersistence", "sessions"];
export async function apply(ctx) {
  const handle = await ctx.agents.resume({ resumeSessionId: ${JSON.stringify(sessionId)}, agentOptions: { provider: "deepseek-official", model: "deepseek-v4-flash" } });
  setTimeout(async () => {
    try {
      const result = await runFixtureTurn(ctx, { task: process.env.RESUME_TASK, onEvent: () => {} });
      process.stdout.write(JSON.stringify(result) + "\\n");
    } catch (e) { process.stderr.write(String(e?.stack ?? e) + "\\n"); }
    await handle.dispose();
    process.exit(0);
  }, 0);
}
`);
const overlay = join(base, "overlay.cordis.yml");
await writeFile(overlay, [
  "- id: llm-deepseek", "  disabled: true", "- id: session-title-llm", "  disabled: true",
  "- id: headless-runner", "  disabled: true",
  "- id: session-persistence-jsonl", "  config:", "    root: !!js dshHomePath('sessions')", "    compression: none",
  "- insert:", "    - id: llm-replay", "      name: './oracle/llm-replay.mjs'",
  "    - id: oracle-hmr", "      name: './oracle/hmr.mjs'",
  "    - id: resume-runner", "      name: './oracle/resume-runner.mjs'", ""].join("\n"));
const run = spawnSync(process.execPath, [join(modules, "dsh", "lib", "bin.js"), "--profile", "headless", "--patch", overlay, task], {
  cwd, input: "", encoding: "utf8", timeout: 120000, killSignal: "SIGKILL",
  env: {
    PATH: process.env.PATH, HOME: base, DSH_HOME: home, DSH_AGENTS_HOME: join(base, "agents"), DSH_TELEMETRY_DISABLED: "1",
    DSH_PERMISSION_MODE: "workspace-write", NODE_OPTIONS: "--disable-warning=ExperimentalWarning",
    DSH_SNAPSHOT_FILE: join(out, "replay.jsonl"), DSH_SNAPSHOT_OVERRIDE: override, RESUME_TASK: task,
  },
});
await mkdir(out, { recursive: true });
await writeFile(join(out, "stdout.txt"), run.stdout ?? "");
await writeFile(join(out, "stderr.txt"), run.stderr ?? "");
const logs = (await readdir(join(home, "sessions"), { recursive: true })).filter((f) => f.endsWith(".jsonl"));
const contents = await Promise.all(logs.map((f) => readFile(join(home, "sessions", f), "utf8")));
for (const [i, c] of contents.entries()) await writeFile(join(out, `session.${i}.jsonl`), snap.normalizeSessionLog(c, { sessionIds: [sessionId, childId], cwd }));
console.log(`exit ${run.status}; ${logs.length} log(s)`);
await rm(base, { recursive: true, force: true });

// Drive one scenario through upstream's published unattended front end: the product CLI's headless
// profile (`dsh --profile headless --patch <overlay> "<task>"`, @deepseek-ai/dsh over dsh-base and
// dsh-headless), as headless.snapshot.ts's "product headless profile" test runs it, with
// @deepseek-ai/dsh-llm-replay as the model instead of the keyless mock.
// usage: node headless.mjs <scenarioDir> [--refresh] [--env K=V ...]
// The task is dshsim.replay.json's prompt, else input.json's first prompt step. The model script is
// session.jsonl with --refresh (the encoded script), else session.expected.jsonl (the recording);
// replay.override.json, when present, is llm-replay's override.
// --refresh writes session.expected.jsonl (the persisted log, normalised and header-scrubbed as the
// suite does) and stderr.expected.txt into <scenarioDir>. Either way it prints the verdicts run.mjs
// prints: "stdout:" (stdout is the last assistant text and a newline, stderr stderr.expected.txt) and
// "session.jsonl:" (the normalised persisted log against session.expected.jsonl).
// Three environment variables vary the composition for a generated case: ORACLE_COMPACTION is
// compaction-basic's config (a YAML flow mapping, e.g. "{thresholdRatio: 1, retainTokens: 100}"),
// ORACLE_CONTEXT_WINDOW the contextWindow llm-replay gives deepseek-v4-flash, and ORACLE_HEADERS=keep
// writes the log's request headers as sent (not scrubbed), so that their price can be checked.
import { readFile, writeFile, readdir, mkdir, mkdtemp, cp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { scenarioArgs, here } from "./args.mjs";
import { tmpdir } from "node:os";
import { normalizeSessionLog, scrubRequestHeaders } from "@deepseek-ai/dsh-acp-snapshot";

const { dir, refresh, env } = scenarioArgs();
const modules = join(here, "node_modules", "@deepseek-ai");
const outDir = process.env.PROBE_OUT ?? join(dir, ".probe-out");

async function readJson(file) {
  try { return JSON.parse(await readFile(file, "utf8")); } catch (e) { throw new Error(`${file}: ${e.message}`); }
}

// The task is the CLI's last argument: one that is empty or starts with "-" would be read as a launcher
// flag (--patch, --dump-config, ...), so it is refused.
async function task() {
  const settings = join(dir, "dshsim.replay.json");
  let p;
  if (existsSync(settings)) p = (await readJson(settings)).prompt;
  if (typeof p !== "string") p = (await readJson(join(dir, "input.json"))).steps?.find((st) => st.op === "prompt")?.text;
  if (typeof p !== "string") throw new Error(`${dir}: no prompt (dshsim.replay.json's prompt or input.json's prompt step)`);
  if (p === "" || p.startsWith("-")) throw new Error(`${dir}: the task ${JSON.stringify(p.slice(0, 40))} is empty or starts with "-", which the CLI would read as a flag`);
  return p;
}

const prompt = await task(); // before anything is made: a refused task leaves nothing behind
await mkdir(outDir, { recursive: true });

// The run's places: the workspace is the process cwd (the tools' workspace root), DSH_HOME and
// DSH_AGENTS_HOME sit beside it, not in it, so that no call of the script sees them.
const base = await mkdtemp(join(tmpdir(), "headless-snapshot-profile-"));
const cwd = join(base, "ws"), home = join(base, "dsh"), profile = join(home, "profiles", "headless");
await mkdir(cwd, { recursive: true });
if (existsSync(join(dir, "workspace"))) await cp(join(dir, "workspace"), cwd, { recursive: true });
await mkdir(join(profile, "oracle"), { recursive: true });
// The profile resolves an overlay's relative plugin names from its own directory: the two plugins
// below are reached from there. hmr.mjs stands in for the HMR service's config watcher that rc.8's
// runProfile registers for the user patch layers (the published cordis-plugin-hmr 1.0.19 has no
// registerConfig); a one-shot run never edits its patches, so the watcher is a no-op.
await writeFile(join(profile, "oracle", "llm-replay.mjs"), `export * from ${JSON.stringify(join(modules, "dsh-llm-replay", "lib", "index.js"))};\n`);
await writeFile(join(profile, "oracle", "hmr.mjs"), [
  'export const name = "oracle-hmr";',
  'export function apply(ctx) { ctx.provide("hmr"); ctx.set("hmr", { registerConfig: async () => async () => {} }); }',
  ""].join("\n"));
// The overlay: llm-replay as deepseek-official's model in place of the DeepSeek adapter, logs
// uncompressed, and no title model (it would take a call of the script).
const overlay = join(base, "oracle.cordis.yml");
await writeFile(overlay, [
  "- id: llm-deepseek", "  disabled: true",
  "- id: session-title-llm", "  disabled: true",
  "- id: session-persistence-jsonl", "  config:", "    root: !!js dshHomePath('sessions')", "    compression: none",
  ...(process.env.ORACLE_COMPACTION ? ["- id: compaction-basic", "  config: " + process.env.ORACLE_COMPACTION] : []),
  "- insert:",
  "    - id: llm-replay", "      name: './oracle/llm-replay.mjs'",
  ...(process.env.ORACLE_CONTEXT_WINDOW ? ["      config:", "        providers: [{id: deepseek-official, models: [{id: deepseek-v4-flash, contextWindow: " +
    Number(process.env.ORACLE_CONTEXT_WINDOW) + "}]}]"] : []),
  "    - id: oracle-hmr", "      name: './oracle/hmr.mjs'",
  ""].join("\n"));
const script = join(dir, refresh ? "session.jsonl" : "session.expected.jsonl");
const override = join(dir, "replay.override.json");
const run = spawnSync(process.execPath, [join(modules, "dsh", "lib", "bin.js"), "--profile", "headless", "--patch", overlay, prompt], {
  cwd, input: "", encoding: "utf8", timeout: Number(process.env.PROBE_TIMEOUT_MS ?? 120000), killSignal: "SIGKILL",
  env: {
    ...process.env, DSH_HOME: home, DSH_AGENTS_HOME: join(base, "agents"), DSH_TELEMETRY_DISABLED: "1",
    DSH_PERMISSION_MODE: env.DSH_PERMISSION_MODE ?? "workspace-write", DSH_SNAPSHOT_FILE: script,
    ...(existsSync(override) ? { DSH_SNAPSHOT_OVERRIDE: override } : {}),
    NODE_OPTIONS: "--disable-warning=ExperimentalWarning",
  },
});
await writeFile(join(outDir, "raw-stdout.txt"), run.stdout ?? "");
await writeFile(join(outDir, "stderr.txt"), run.stderr ?? "");
console.log(`headless: exit ${run.status}${run.signal ? ` (${run.signal})` : ""}${run.error ? ` (${run.error.message})` : ""}`);
const logs = (await readdir(join(home, "sessions"), { recursive: true }).catch(() => [])).filter((f) => f.endsWith(".jsonl"));
const contents = await Promise.all(logs.map((f) => readFile(join(home, "sessions", f), "utf8")));
for (const [i, c] of contents.entries()) await writeFile(join(outDir, `raw-session.${i}.jsonl`), c);
if (contents.length !== 1) console.log(`headless: ${contents.length} session logs persisted (a generated run has one)`);
const header = contents.length > 0 ? JSON.parse(contents[0].split("\n")[0]) : { id: "", cwd };
const ctx = { sessionIds: [header.id], cwd: header.cwd };
const scrub = process.env.ORACLE_HEADERS === "keep" ? (log) => log : scrubRequestHeaders;
const got = contents.length === 1 ? scrub(normalizeSessionLog(contents[0], ctx)) : "";
if (refresh) {
  await writeFile(join(dir, "session.expected.jsonl"), got);
  await writeFile(join(dir, "stderr.expected.txt"), run.stderr ?? "");
  console.log(`refreshed ${dir}: ${contents.length} log(s)`);
}
const fixture = await readFile(join(dir, "session.expected.jsonl"), "utf8").catch(() => "");
const fh = fixture === "" ? { id: "", cwd: "" } : JSON.parse(fixture.split("\n")[0]);
const want = normalizeSessionLog(fixture, { sessionIds: [fh.id], cwd: fh.cwd });
await writeFile(join(outDir, "harvest.norm.jsonl"), got); await writeFile(join(outDir, "fixture.norm.jsonl"), want);
// stdout is the last non-empty assistant text of the interval and a newline (dsh-headless's runner).
const texts = want.split("\n").filter((l) => l.includes('"type":"assistant/message"')).map((l) => JSON.parse(l).data.message.content
  .filter((b) => b.type === "text").map((b) => b.text).join("")).filter((t) => t !== "");
const stdoutWant = `${texts.at(-1) ?? ""}\n`;
const stderrWant = await readFile(join(dir, "stderr.expected.txt"), "utf8").catch(() => "");
console.log("stdout:", run.stdout === stdoutWant && run.stderr === stderrWant ? "MATCH" : "DIFF");
if (run.stdout !== stdoutWant) await writeFile(join(outDir, "stdout.norm.jsonl"), run.stdout ?? "");
console.log("session.jsonl:", got === want && got !== "" ? "MATCH" : "DIFF", `(${got.split("\n").length} vs ${want.split("\n").length} lines)`);
await rm(base, { recursive: true, force: true });

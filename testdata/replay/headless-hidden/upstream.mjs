// Run one task through upstream's published unattended front end, the product CLI's headless profile
// (`dsh --profile headless --patch <overlay> "<task>"`, @deepseek-ai/dsh 0.1.0-rc.8), as
// harness/oracle/agent/headless.mjs does, with an overlay of the caller's: the model and the fixtures
// of a scenario of upstream's headless suite whose example composition (dsh-agent-spine-demo) was not
// published. Writes OUT/stdout.txt, OUT/stderr.txt, OUT/exit.txt and OUT/session.<i>.jsonl (the
// persisted logs, normalised by upstream's normalizeSessionLog: times 0, ids and the cwd tokens) for a look; the recordings made from them say how in their README.
// usage: DSHSIM_ORACLE=DIR node upstream.mjs OUT TASK OVERLAY [--plugin ID=FILE]... [--env K=V]...
// A plugin FILE's bare @deepseek-ai/* imports are resolved to the oracle's packages.
import { readFile, writeFile, readdir, mkdir, mkdtemp, rm } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";

const [out, task, overlayFile, ...rest] = process.argv.slice(2);
const modules = join(process.env.DSHSIM_ORACLE, "agent", "node_modules", "@deepseek-ai");
const snap = await import(join(modules, "dsh-acp-snapshot", "lib", "index.js"));
const env = {}, plugins = {};
for (let i = 0; i < rest.length; i += 2) {
  const [k, ...v] = rest[i + 1].split("=");
  (rest[i] === "--env" ? env : plugins)[k] = v.join("=");
}
const base = await mkdtemp(join(tmpdir(), "headless-hidden-"));
const cwd = join(base, "ws"), home = join(base, "dsh"), profile = join(home, "profiles", "headless");
await mkdir(cwd, { recursive: true });
await mkdir(join(profile, "oracle"), { recursive: true });
for (const [id, file] of Object.entries(plugins)) {
  const src = (await readFile(file, "utf8")).replace(/from '@deepseek-ai\/([a-z0-9-]+)'/g,
    (_, pkg) => `from ${JSON.stringify(join(modules, pkg, "lib", "index.js"))}`);
  await writeFile(join(profile, "oracle", `${id}.mjs`), src);
}
await writeFile(join(profile, "oracle", "hmr.mjs"), [
  'export const name = "oracle-hmr";',
  'export function apply(ctx) { ctx.provide("hmr"); ctx.set("hmr", { registerConfig: async () => async () => {} }); }',
  ""].join("\n"));
const overlay = join(base, "overlay.cordis.yml");
await writeFile(overlay, (await readFile(overlayFile, "utf8")).replaceAll("{{modules}}", modules));
const run = spawnSync(process.execPath, [join(modules, "dsh", "lib", "bin.js"), "--profile", "headless", "--patch", overlay, task], {
  cwd, input: "", encoding: "utf8", timeout: 120000, killSignal: "SIGKILL",
  env: {
    PATH: process.env.PATH, HOME: base, DSH_HOME: home, DSH_AGENTS_HOME: join(base, "agents"), DSH_TELEMETRY_DISABLED: "1",
    DSH_PERMISSION_MODE: "workspace-write", NODE_OPTIONS: "--disable-warning=ExperimentalWarning", ...env,
  },
});
await mkdir(resolve(out), { recursive: true });
await writeFile(join(out, "stdout.txt"), run.stdout ?? "");
await writeFile(join(out, "stderr.txt"), run.stderr ?? "");
await writeFile(join(out, "exit.txt"), `${run.status} ${run.signal ?? ""} ${run.error?.message ?? ""}\n`);
const logs = (await readdir(join(home, "sessions"), { recursive: true }).catch(() => [])).filter((f) => f.endsWith(".jsonl")).sort();
const contents = await Promise.all(logs.map((f) => readFile(join(home, "sessions", f), "utf8")));
const ctx = { sessionIds: contents.map((c) => JSON.parse(c.split("\n")[0]).id), cwd };
for (const [i, c] of contents.entries()) await writeFile(join(out, `session.${i}.jsonl`), snap.normalizeSessionLog(c, ctx));
console.log(`exit ${run.status}; ${logs.length} log(s); cwd ${cwd}`);
await rm(base, { recursive: true, force: true });

// The command line of every driver (run.mjs, goal.mjs, headless.mjs, jsonrpc.mjs):
// <scenarioDir> [--refresh] [--env K=V ...], or PROBE_ARGS (the same as a JSON list) under vitest
// (probe.test.mjs). env holds the --env pairs, the scenario's environment.
import { join, resolve } from "node:path";

export function scenarioArgs() {
  const args = process.env.PROBE_ARGS ? JSON.parse(process.env.PROBE_ARGS) : process.argv.slice(2);
  const env = {};
  for (let i = 0; i < args.length; i++) if (args[i] === "--env") {
    const kv = args[++i];
    if (typeof kv !== "string" || !kv.includes("=")) throw new Error(`--env needs K=V, got ${JSON.stringify(kv)}`);
    const [k, ...v] = kv.split("="); env[k] = v.join("=");
  }
  return { dir: resolve(args[0]), refresh: args.includes("--refresh"), env };
}

// here is the agent directory; acpAgent the reconstructed ACP agent (bin.mjs over cordis.yml).
export const here = new URL(".", import.meta.url).pathname;
export const acpAgent = { binScript: join(here, "bin.mjs"), libBinScript: join(here, "bin.mjs"), configPath: join(here, "cordis.yml"), tsconfigPath: undefined };

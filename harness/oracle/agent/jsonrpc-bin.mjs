#!/usr/bin/env node
// The JSON-RPC agent bin: @deepseek-ai/dsh-sdk-jsonrpc-demo's lib/bin.js (0.0.1-rc.5, its only version),
// which npm cannot install: it depends on @deepseek-ai/dsh-app-boot ^0.0.1-rc.5, and the registry has
// only 0.1.0-rc.6 and rc.8. It imports the rc.8 dsh-app-boot instead. Upstream's code is MIT.
import { existsSync } from "node:fs";
import { boot, installFailLoud, loadEnv, resolveConfigPath } from "@deepseek-ai/dsh-app-boot";
const NAME = "dsh-jsonrpc-agent";
installFailLoud(NAME);
loadEnv(NAME);
const fromEnv = process.env.DSH_CORDIS_CONFIG;
const fromArgv = process.argv[2];
const requested = fromEnv !== undefined && fromEnv !== "" ? fromEnv : fromArgv !== undefined && fromArgv !== "" ? fromArgv : undefined;
const configPath = requested === undefined ? undefined : resolveConfigPath(requested, undefined);
if (configPath === undefined || !existsSync(configPath)) {
  process.stderr.write(`usage: ${NAME} <path/to/cordis.yml> (or set DSH_CORDIS_CONFIG=<path>, which wins); the config is required — there is no built-in fallback\n`);
  process.exit(1);
}
const ctx = await boot(NAME, configPath, undefined, undefined, undefined);
let exiting = false;
async function disposeAndExit(code) {
  if (exiting) return;
  exiting = true;
  try { await ctx.fiber.dispose(); } finally { process.exit(code); }
}
process.stdin.on("end", () => { void disposeAndExit(0); });
process.on("SIGTERM", () => { void disposeAndExit(0); });
process.on("SIGINT", () => { void disposeAndExit(130); });

#!/usr/bin/env node
// Equivalent of @deepseek-ai/dsh-acp-demo lib/bin.js, resolving modules from ../dsh08/node_modules.
import { boot, installFailLoud, resolveConfigPath } from "@deepseek-ai/dsh-app-boot";
const NAME = "dsh-acp-probe";
installFailLoud(NAME);
const snapshotMode = process.env["DSH_SNAPSHOT"];
const ci = process.argv.indexOf("--config"); const cfg = ci > 0 ? process.argv[ci + 1] : new URL("./cordis.yml", import.meta.url).pathname;
const ctx = await boot(NAME, resolveConfigPath(cfg, snapshotMode));
if (snapshotMode !== undefined) process.stdin.on("end", () => { ctx.fiber.dispose().then(() => process.exit(0)); });

// Runs run.mjs (or PROBE_SCRIPT, goal.mjs) inside vitest, needed for input.json ops that use vitest's
// vi.waitFor (promptAndCancel, waitFor*, promptAndWaitForAgentMessage).
// usage: PROBE_ARGS='["../scen/x","--refresh"]' npx vitest run probe.test.mjs
import { test } from "vitest";
test("probe", async () => { await import(process.env.PROBE_SCRIPT ?? "./run.mjs"); }, 180000);

// Runs run.mjs inside vitest, needed for input.json ops that use vitest's vi.waitFor
// (promptAndCancel, waitFor*). usage: PROBE_ARGS='["../scen/x","--refresh"]' npx vitest run probe.test.mjs
import { test } from "vitest";
test("probe", async () => { await import("./run.mjs"); }, 180000);

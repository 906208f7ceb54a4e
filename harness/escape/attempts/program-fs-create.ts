// attack: a run_code program creates a file outside the workspace with fs.promises
const fs = await import("node:fs");
await fs.promises.writeFile("$OUT/new-file", "escaped\n");
return "created";

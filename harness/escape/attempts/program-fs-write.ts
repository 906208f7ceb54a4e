// attack: a run_code program overwrites the outside file with Node's fs
const fs = await import("node:fs");
fs.writeFileSync("$TARGET", "escaped\n");
return "wrote";

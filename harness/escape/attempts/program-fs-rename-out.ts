// attack: a run_code program moves a workspace file out of the workspace with fs.renameSync
const fs = await import("node:fs");
fs.renameSync("$WS/inside.txt", "$OUT/moved");
return "moved";

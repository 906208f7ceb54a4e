// attack: a run_code program runs a shell through child_process to overwrite the outside file
const cp = await import("node:child_process");
cp.execSync("echo escaped > '$TARGET'");
return "ran";

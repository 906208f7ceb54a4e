// attack: a run_code program starts a detached child (its own session) that writes outside after the program returned
// class: late
// settle: 1500ms
const cp = await import("node:child_process");
cp.spawn("sh", ["-c", "sleep 0.5; echo escaped >> '$TARGET'"], {detached: true, stdio: "ignore"}).unref();
return "started";

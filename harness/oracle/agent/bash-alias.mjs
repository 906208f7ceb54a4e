// Compatibility shim: dsh-hooks-codex@0.0.1-rc.1 injects the old "bash" service; the
// 0.1.0-rc.8 stack names the same executor service "shell".
export const name = "bash-alias";
export const inject = ["shell"];
export function apply(ctx) { ctx.provide("bash"); ctx.set("bash", ctx.shell); }

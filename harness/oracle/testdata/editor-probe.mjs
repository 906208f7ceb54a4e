// Runs upstream's published str_replace_editor on its bare fs-local
// provider (no observation policy, no sandbox policy: the minimal
// overlay's composition) over argv[4]'s calls, one JSON line per call:
// {"ok": text} or {"err": message}. argv: ORACLE_DIR WORKSPACE
// MAX_OUTPUT_CHARS CALLS_JSON.
const [oracle, ws, max, calls] = process.argv.slice(2);
const mods = `${oracle}/dsh08/node_modules/@deepseek-ai`;
const { Context } = await import(`${mods}/cordis/lib/index.js`);
const { default: LocalFileSystem } = await import(`${mods}/dsh-fs-local/lib/index.js`);
const editor = await import(`${mods}/dsh-tool-str-replace-editor/lib/index.js`);
const fs = new LocalFileSystem(new Context(), { cwd: ws, diffBasisMaxBytes: 1024 * 1024 });
let tool;
const ctx = { fs, tools: { register(t) { tool = t; } }, waterfall: async (_name, _target, _exec, fallback) => fallback(), emit() {}, get() {} };
editor.apply(ctx, { maxOutputChars: Number(max) });
for (const args of JSON.parse(calls)) {
	try {
		console.log(JSON.stringify({ ok: await tool.execute(args, { signal: new AbortController().signal }) }));
	} catch (error) {
		console.log(JSON.stringify({ err: error.message }));
	}
}

// Prints what JavaScript (this node) says about testdata/cases.json: per
// pattern, the RegExp error or one 0/1 per subject for new RegExp(p).test(s).
// go test compares its output with node-truth.json when node is installed.
const c = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const rows = c.patterns.map((p) => {
  let re;
  try { re = new RegExp(p); } catch (e) { return JSON.stringify({p, err: e.message}); }
  return JSON.stringify({p, m: c.subjects.map((s) => (re.test(s) ? '1' : '0')).join('')});
});
process.stdout.write('{"node":' + JSON.stringify(process.version) + ',"rows":[\n' + rows.join(',\n') + '\n]}\n');

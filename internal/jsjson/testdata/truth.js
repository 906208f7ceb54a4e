// Prints what JavaScript (this node) makes of testdata/cases.json: for each
// input, JSON.stringify(JSON.parse(input)) or "error". go test compares its
// output with node-truth.json when node is installed.
const inputs = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const rows = inputs.map((input) => {
  try { return JSON.stringify({input, out: JSON.stringify(JSON.parse(input))}); }
  catch (e) { return JSON.stringify({input, error: true}); }
});
process.stdout.write('{"node":' + JSON.stringify(process.version) + ',"rows":[\n' + rows.join(',\n') + '\n]}\n');

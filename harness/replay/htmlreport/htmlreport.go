package htmlreport

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
)

type side struct {
	Kind   string         `json:"kind"`
	Label  string         `json:"label"`
	Seq    int64          `json:"seq"`
	Fields map[string]any `json:"fields"`
}

type row struct {
	Turn     int                    `json:"turn"`
	Expected *side                  `json:"expected"`
	Got      *side                  `json:"got"`
	Match    bool                   `json:"match"`
	Diffs    []projection.FieldDiff `json:"diffs"`
}

type rec struct {
	Name     string   `json:"name"`
	Verdict  string   `json:"verdict"`
	Error    string   `json:"error"`
	Mode     string   `json:"mode"`
	Approval string   `json:"approval"`
	Settings string   `json:"settings"`
	Matched  int      `json:"matched"`
	Total    int      `json:"total"`
	Flags    []string `json:"flags"`
	Notes    []string `json:"notes"`
	Served   []string `json:"served"`
	Rows     []row    `json:"rows"`
}

func toSide(it *projection.Item) *side {
	if it == nil {
		return nil
	}
	return &side{Kind: it.Kind, Label: it.Label(), Seq: it.Seq, Fields: it.Fields}
}

// Data converts results into the JSON the page embeds.
func Data(results []*replay.Result) ([]byte, error) {
	out := make([]rec, 0, len(results))
	for _, r := range results {
		x := rec{Name: r.Name, Verdict: r.Verdict, Error: r.Error, Mode: r.Mode, Approval: r.Approval, Settings: r.Settings,
			Matched: r.Comparison.Matched, Total: r.Comparison.Total, Flags: r.Flags, Notes: r.Notes, Served: r.Served, Rows: []row{}}
		for _, p := range r.Comparison.Pairs {
			x.Rows = append(x.Rows, row{Turn: p.Turn, Expected: toSide(p.Expected), Got: toSide(p.Got), Match: p.Match, Diffs: p.Diffs})
		}
		out = append(out, x)
	}
	return json.Marshal(out) // escapes <, > and & so the JSON is safe inside <script>
}

// Write writes the page for results.
func Write(w io.Writer, results []*replay.Result) error {
	data, err := Data(results)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.Replace(page, "/*DATA*/[]", string(data), 1))
	return err
}

const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>dsh-replay report</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .3em}
#summary{margin:.3em 0 1.2em;font-weight:600}
section.recording{background:#fff;border:1px solid #ddd;border-radius:6px;margin:0 0 1.2em;padding:.8em 1em}
section.recording h2{font-size:1.1em;margin:0;display:flex;gap:.6em;align-items:center}
.badge{font-size:.8em;padding:.1em .6em;border-radius:1em;color:#fff}
.badge.match{background:#2e7d32}.badge.mismatch{background:#c62828}.badge.error{background:#6d4c41}
.meta{color:#555;font-size:.9em;margin:.2em 0 .6em}
.flag{color:#c62828}.note{color:#555}
.err{white-space:pre-wrap;color:#6d4c41;font-family:ui-monospace,monospace}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th{text-align:left;font-weight:600;border-bottom:1px solid #ccc;padding:.2em .4em}
td{vertical-align:top;padding:.3em .4em;border-bottom:1px solid #eee;font-family:ui-monospace,monospace;font-size:12px;word-break:break-word}
td.turn,th.turn{width:3.5em;color:#777}
td.turn{font-size:16px;font-weight:700}
tr.mismatch td.turn{color:#c62828}
tr.mismatch td{background:#fdecea}
tr.turnhead td{background:#f0f0f0;font-weight:600;font-family:system-ui,sans-serif}
.label{font-weight:600}
pre{margin:.2em 0 0;white-space:pre-wrap;max-height:12em;overflow:auto}
ul.diffs{margin:.3em 0 0;padding-left:1.2em;color:#b71c1c}
.missing{color:#999;font-style:italic}
</style>
</head>
<body>
<h1>dsh-replay report</h1>
<p>Each recording replayed through the real tool stack; the model was constructed from the recording. Left: the recording (normalised); right: the replay.</p>
<div id="summary">rendering…</div>
<div id="recordings"></div>
<script type="application/json" id="report-data">/*DATA*/[]</script>
<script>
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function verdictOf(r) {
    if (r.error) return 'error';
    if ((r.flags || []).length) return 'mismatch';
    var matched = 0;
    for (var i = 0; i < r.rows.length; i++) {
      if (!r.rows[i].match) return 'mismatch';
      matched++;
    }
    return matched === r.total ? 'match' : 'mismatch';
  }
  function cell(s) {
    var td = el('td');
    if (!s) { td.appendChild(el('span', 'missing', '(nothing here)')); return td; }
    td.appendChild(el('div', 'label', s.label));
    var f = s.fields || {};
    var show = {};
    for (var k in f) if (k !== 'callId' && k !== 'name' && k !== 'toolName' && k !== 'outcome') show[k] = f[k];
    if (s.kind === 'tool/result' || s.kind === 'runtime-context') {
      if (typeof f.text === 'string') td.appendChild(el('pre', '', f.text));
      delete show.text;
    }
    if (Object.keys(show).length) td.appendChild(el('pre', '', JSON.stringify(show, null, 1)));
    return td;
  }
  var counts = {match: 0, mismatch: 0, error: 0};
  var root = document.getElementById('recordings');
  data.forEach(function (r) {
    var v = verdictOf(r);
    counts[v]++;
    var sec = el('section', 'recording');
    sec.setAttribute('data-name', r.name);
    sec.setAttribute('data-verdict', v);
    var h = el('h2');
    h.appendChild(el('span', '', r.name));
    h.appendChild(el('span', 'badge ' + v, v));
    sec.appendChild(h);
    if (v !== r.verdict) sec.appendChild(el('p', 'flag', 'report verdict ' + r.verdict + ' disagrees with the page verdict ' + v));
    if (r.error) { sec.appendChild(el('div', 'err', r.error)); root.appendChild(sec); return; }
    sec.appendChild(el('div', 'meta', r.matched + '/' + r.total + ' events matched · sandbox ' + r.mode + ' · approval ' + r.approval + (r.settings ? ' · ' + r.settings : '')));
    if ((r.served || []).length) {
      var sv = el('div', 'served', 'served from the recording (not run here): ' + r.served.join(', '));
      sv.setAttribute('data-served', r.served.join(' '));
      sec.appendChild(sv);
    }
    (r.flags || []).forEach(function (f) { sec.appendChild(el('div', 'flag', 'flag: ' + f)); });
    (r.notes || []).forEach(function (n) { sec.appendChild(el('div', 'note', 'note: ' + n)); });
    var t = el('table');
    var hr = el('tr');
    hr.appendChild(el('th', 'turn', ''));
    hr.appendChild(el('th', '', 'recording'));
    hr.appendChild(el('th', '', 'replay'));
    t.appendChild(hr);
    var lastTurn = null;
    r.rows.forEach(function (p) {
      if (p.turn !== lastTurn) {
        var th = el('tr', 'turnhead');
        var td = el('td', '', 'turn ' + p.turn);
        td.colSpan = 3;
        th.appendChild(td);
        t.appendChild(th);
        lastTurn = p.turn;
      }
      var tr = el('tr', p.match ? 'match' : 'mismatch');
      tr.appendChild(el('td', 'turn', p.match ? '=' : '≠'));
      tr.appendChild(cell(p.expected));
      var g = cell(p.got);
      if (!p.match && p.diffs && p.diffs.length) {
        var ul = el('ul', 'diffs');
        p.diffs.forEach(function (d) {
          ul.appendChild(el('li', '', d.path + ': expected ' + JSON.stringify(d.expected) + ', got ' + JSON.stringify(d.got) + (d.detail ? ' (' + d.detail + ')' : '')));
        });
        g.appendChild(ul);
      }
      tr.appendChild(g);
      t.appendChild(tr);
    });
    sec.appendChild(t);
    root.appendChild(sec);
  });
  var s = document.getElementById('summary');
  s.setAttribute('data-match', counts.match);
  s.setAttribute('data-mismatch', counts.mismatch);
  s.setAttribute('data-error', counts.error);
  s.textContent = data.length + ' recordings: ' + counts.match + ' match, ' + counts.mismatch + ' mismatch, ' + counts.error + ' error';
})();
</script>
</body>
</html>
`

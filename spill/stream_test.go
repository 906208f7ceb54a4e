package spill

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

func TestWriterMatchesApply(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		content string
	}{
		{"token budget ascii log", TokenConfig(300), logLines(400)},
		{"token budget multibyte", TokenConfig(200), strings.Repeat("é😀ab", 5000)},
		{"byte budget ascii", ByteConfig(800), "SPILL_START-" + strings.Repeat("x", 2000) + "-SPILL_END"},
		{"byte budget multibyte", ByteConfig(500), strings.Repeat("日本語😀", 4000)},
		{"token budget inline stays whole", TokenConfig(300), "short\n"},
		{"byte budget inline stays whole", ByteConfig(800), strings.Repeat("y", 800)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, w := newPolicy(t, tt.cfg, "")
			call := newCall(t, "bash", "s")
			want, spilled := p.Apply(call, result(tt.content))
			sw := p.NewWriter(call)
			rest := []byte(tt.content)
			rng := rand.New(rand.NewPCG(1, 2))
			for len(rest) > 0 { // chunks that cut UTF-8 sequences
				n := min(len(rest), 1+rng.IntN(97))
				if _, err := sw.Write(rest[:n]); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			got, err := sw.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got.Spilled != spilled || got.Bytes != int64(len(tt.content)) {
				t.Fatalf("spilled %v bytes %d, want %v %d (warnings %v)", got.Spilled, got.Bytes, spilled, len(tt.content), *w)
			}
			wantText := want.Text()
			if spilled {
				wantText = strings.Replace(wantText, noticeRe.FindStringSubmatch(wantText)[2], got.Saved.Locator, 1)
				full, _ := os.ReadFile(got.Saved.Locator)
				if string(full) != tt.content || got.Saved.Bytes != int64(len(tt.content)) {
					t.Error("spill file is not the full output")
				}
			}
			if got.Text != wantText {
				t.Errorf("stream text differs from Apply:\n got %q\nwant %q", got.Text, wantText)
			}
		})
	}
}

func TestUnitCounterAcrossChunks(t *testing.T) {
	s := "a\xffé😀日" + strings.Repeat("z", 20) + "\xe6\x97"
	for split := 0; split <= len(s); split++ {
		var c unitCounter
		c.write([]byte(s[:split]))
		c.write([]byte(s[split:]))
		if c.total() != int64(UTF16Len(s)) {
			t.Fatalf("split %d: %d units, want %d", split, c.total(), UTF16Len(s))
		}
	}
}

func logLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "2026-01-01T00:00:%02d worker[%d]: processed batch %d of %d\n", i%60, i%4, i, n)
	}
	return b.String()
}

// lineReader generates size bytes of log lines without holding them.
type lineReader struct {
	left int64
	n    int
	buf  []byte
	line []byte
}

func (r *lineReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	total := 0
	for len(p) > 0 && r.left > 0 {
		if len(r.buf) == 0 { // no allocation per line: only the spill writer's memory is measured
			r.n++
			r.line = append(r.line[:0], "line "...)
			r.line = strconv.AppendInt(r.line, int64(r.n), 10)
			r.line = append(r.line, ": the quick brown fox jumps over the lazy dog\n"...)
			r.buf = r.line
		}
		k := copy(p, r.buf)
		if int64(k) > r.left {
			k = int(r.left)
		}
		r.buf = r.buf[k:]
		r.left -= int64(k)
		p = p[k:]
		total += k
	}
	return total, nil
}

const rssChildEnv = "DSHSIM_SPILL_RSS_CHILD"

// TestStreamRSSChild is the re-executed child of [measureRSS]; it does
// nothing in a normal run.
func TestStreamRSSChild(t *testing.T) {
	size, err := strconv.ParseInt(os.Getenv(rssChildEnv), 10, 64)
	if err != nil {
		t.Skip("child of the RSS measurement only")
	}
	p, _ := newPolicy(t, TokenConfig(DefaultMaxInlineTokens), "")
	sw := p.NewWriter(newCall(t, "bash", "s"))
	before := procStatus(t, "VmRSS")
	if _, err := io.CopyBuffer(sw, &lineReader{left: size}, make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	res, err := sw.Close()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(res.Saved.Locator)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("RSS before=%d hwm=%d file=%d spilled=%v textlen=%d\n", before, procStatus(t, "VmHWM"), fi.Size(), res.Spilled, len(res.Text))
}

func procStatus(t testing.TB, key string) int64 {
	status, err := procfs.Proc.Status("self")
	if err != nil {
		t.Fatal(err)
	}
	v, ok := procfs.ParseStatus(status)[key]
	if !ok {
		t.Fatalf("no %s in /proc/self/status", key)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, "kB")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return kb * 1024
}

// measureRSS spills size bytes in a fresh child process and returns the peak
// RSS growth over the RSS before streaming began.
func measureRSS(t testing.TB, size int64) (growth int64) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStreamRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+strconv.FormatInt(size, 10))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var before, hwm, file, textlen int64
	var spilled bool
	i := bytes.Index(out, []byte("RSS before="))
	if i < 0 {
		t.Fatalf("child printed no measurement:\n%s", out)
	}
	if _, err := fmt.Sscanf(string(out[i:]), "RSS before=%d hwm=%d file=%d spilled=%t textlen=%d", &before, &hwm, &file, &spilled, &textlen); err != nil {
		t.Fatalf("parse %q: %v", out[i:], err)
	}
	if file != size || !spilled {
		t.Fatalf("spill file %d bytes (spilled %v), want %d", file, spilled, size)
	}
	if EstimateTokens(strings.Repeat("x", int(textlen))) > DefaultMaxInlineTokens+4 {
		t.Fatalf("preview of %d bytes exceeds the cap", textlen)
	}
	return hwm - before
}

func TestStreamingSpillHasBoundedMemory(t *testing.T) {
	const size = 128 << 20
	growth := measureRSS(t, size)
	t.Logf("spilling %d MiB grew peak RSS by %.1f MiB", size>>20, float64(growth)/(1<<20))
	if growth > 8<<20 {
		t.Errorf("peak RSS grew by %d bytes for a %d byte output; want < 8 MiB", growth, size)
	}
}

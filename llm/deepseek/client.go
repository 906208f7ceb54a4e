package deepseek

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/llm"
)

// Defaults of a client.
const (
	// PublicBaseURL is DeepSeek's public API.
	PublicBaseURL = "https://api.deepseek.com"
	// BaseURLEnv names the variable a base URL is taken from when none is given.
	BaseURLEnv = "DEEPSEEK_BASE_URL"
	// KeyEnv names the variable the API key is read from by default.
	KeyEnv = "DEEPSEEK_API_KEY"
	// IdleTimeout is the longest a stream may stay silent.
	IdleTimeout = 300 * time.Second
	// UserAgent is the user agent this client sends (ours, not upstream's).
	UserAgent = "dshsim-record (+deepseek-harness compatible)"
)

// Client streams chat completions from one server.
type Client struct {
	// BaseURL is the API root; <BaseURL>/chat/completions is posted to.
	BaseURL string
	// KeyEnv names the key's variable ("": KeyEnv); messages name it.
	KeyEnv string
	// LookupKey reads the key's variable at call time (nil: os.LookupEnv).
	LookupKey func(name string) (string, bool)
	// HTTP is the HTTP client (nil: one without an overall timeout).
	HTTP *http.Client
	// UserID and SessionID are sent as x-deepseek-harness-user-id and
	// x-deepseek-harness-session-id when set.
	UserID, SessionID string
	// IdleTimeout bounds a silent stream (0: IdleTimeout).
	IdleTimeout time.Duration
}

func (c *Client) keyEnv() string {
	if c.KeyEnv == "" {
		return KeyEnv
	}
	return c.KeyEnv
}

var legalKey = regexp.MustCompile(`^[\x21-\x7E]+$`)

// Key resolves the API key: a missing, blank or unsendable key is a
// MISSING_CREDENTIAL or INVALID_CREDENTIAL failure naming the variable.
func (c *Client) Key() (string, error) {
	lookup := c.LookupKey
	if lookup == nil {
		lookup = os.LookupEnv
	}
	ref := c.keyEnv()
	raw, ok := lookup(ref)
	if !ok || raw == "" {
		return "", &llm.Failure{Code: "MISSING_CREDENTIAL", Message: fmt.Sprintf(
			"llm-deepseek: no API key for provider route %q; export %s in the launching environment", "deepseek-official", ref)}
	}
	key := strings.TrimSpace(raw)
	switch {
	case key == "":
		return "", &llm.Failure{Code: "INVALID_CREDENTIAL", Message: fmt.Sprintf("llm-deepseek: the API key resolved from %s is blank; set %s to the raw key or export it in the launching environment", ref, ref)}
	case !legalKey.MatchString(key):
		return "", &llm.Failure{Code: "INVALID_CREDENTIAL", Message: fmt.Sprintf("llm-deepseek: the API key resolved from %s contains characters no HTTP header can carry; set %s to the raw key alone", ref, ref)}
	}
	return key, nil
}

// Stream sends r and hands every chunk to emit as it arrives, the finish
// chunk last. A failure (an [*llm.Failure]) may come after chunks were
// emitted; emit's own error ends the stream and is returned as is.
func (c *Client) Stream(ctx context.Context, r Request, emit func(llm.Chunk) error) error {
	key, err := c.Key()
	if err != nil {
		return err
	}
	body, err := Body(r)
	if err != nil {
		return &llm.Failure{Message: err.Error(), Code: "UNSUPPORTED_REASONING_EFFORT"}
	}
	idle := c.IdleTimeout
	if idle <= 0 {
		idle = IdleTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := newWatchdog(idle, func() { cancel(errIdle) })
	defer watch.stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+"/chat/completions", strings.NewReader(string(body)))
	if err != nil {
		return &llm.Failure{Message: fmt.Sprintf("DeepSeek API request to %s failed", c.BaseURL), Code: "TRANSPORT"}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", UserAgent)
	if c.UserID != "" {
		req.Header.Set("X-Deepseek-Harness-User-Id", c.UserID)
	}
	if c.SessionID != "" {
		req.Header.Set("X-Deepseek-Harness-Session-Id", c.SessionID)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return c.interrupted(ctx, idle, &llm.Failure{Message: fmt.Sprintf("DeepSeek API request to %s failed", c.BaseURL), Code: "TRANSPORT"})
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return httpFailure(resp)
	}
	t := &Translator{}
	sse := newSSEReader(resp.Body, watch.pulse)
	for {
		data, err := sse.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return c.interrupted(ctx, idle, &llm.Failure{Message: "SSE stream ended without [DONE]", Code: "STREAM_CLOSED"})
			}
			return c.interrupted(ctx, idle, &llm.Failure{Message: fmt.Sprintf("DeepSeek API stream from %s failed", c.BaseURL), Code: "TRANSPORT"})
		}
		var chunks []llm.Chunk
		if data == "[DONE]" {
			chunks = t.Done()
		} else if chunks, err = t.Feed(data); err != nil {
			return err
		}
		for _, ch := range chunks {
			if err := emit(ch); err != nil {
				return err
			}
		}
		if data == "[DONE]" {
			return nil
		}
	}
}

var errIdle = errors.New("idle")

// interrupted names why a request or stream broke off: the idle watchdog,
// the caller, or f itself.
func (c *Client) interrupted(ctx context.Context, idle time.Duration, f *llm.Failure) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errIdle):
		return &llm.Failure{Message: fmt.Sprintf("DeepSeek stream idle timeout after %dms", idle.Milliseconds()), Code: "TIMEOUT"}
	case cause != nil:
		return &llm.Failure{Message: "DeepSeek request aborted by caller", Code: "ABORTED"}
	}
	return f
}

// httpFailure classifies a non-2xx response.
func httpFailure(resp *http.Response) error {
	var body struct {
		Error *struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	f := &llm.Failure{Message: fmt.Sprintf("DeepSeek API error (HTTP %d)", resp.StatusCode), Status: resp.StatusCode}
	var detail []string
	if json.Unmarshal(data, &body) == nil && body.Error != nil {
		if body.Error.Message != "" {
			f.Message = body.Error.Message
		}
		if code, ok := body.Error.Code.(string); ok && code != "" {
			detail = append(detail, code)
		} else if n, ok := body.Error.Code.(float64); ok && n != 0 {
			detail = append(detail, strconv.FormatFloat(n, 'f', -1, 64))
		}
		if body.Error.Type != "" {
			detail = append(detail, body.Error.Type)
		}
		if body.Error.Message != "" {
			detail = append(detail, body.Error.Message)
		}
	}
	f.Code = HTTPCode(resp.StatusCode, strings.Join(detail, " "))
	f.ProviderRetryAfterMs = float64(RetryAfterMs(resp.Header.Get("Retry-After"), time.Now()))
	f.RequestID = resp.Header.Get("X-Request-Id")
	if f.RequestID == "" {
		f.RequestID = resp.Header.Get("X-Deepseek-Request-Id")
	}
	return f
}

var (
	quota = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\binsufficient[\s_-]+(?:quota|balance|credits?)\b`),
		regexp.MustCompile(`(?i)\b(?:quota|usage[\s_-]+limit)[\s_-]+(?:exceeded|exhausted|reached)\b`),
		regexp.MustCompile(`(?i)\bexceed(?:ed|s)?[\s_-]+(?:(?:your|the)[\s_-]+)?(?:current[\s_-]+)?quota\b`),
		regexp.MustCompile(`(?i)\b(?:balance|credits?)[\s_-]+(?:exhausted|depleted)\b`),
		regexp.MustCompile(`(?i)\bout[\s_-]+of[\s_-]+(?:credits?|budget)\b`),
	}
	contextWindow = []*regexp.Regexp{
		regexp.MustCompile(`(?i)(?:^|[^a-z0-9])context[\s_-](?:length|window)[\s_-](?:exceed(?:ed|s)?|overflow(?:ed)?|limit[\s_-]exceeded)(?:$|[^a-z0-9])`),
		regexp.MustCompile(`(?i)\b(?:maximum|max)(?:\s+(?:allowed|supported))?\s+context\s+(?:length|window)\b`),
		regexp.MustCompile(`(?i)\b(?:request|prompt|input|messages?)\s+(?:is\s+|are\s+)?too\s+(?:large|long)\s+for\s+(?:(?:this|the)\s+)?(?:model(?:'s)?\s+)?context(?:\s+window)?\b`),
		regexp.MustCompile(`(?i)\b(?:input|prompt|request)\s+(?:is\s+)?too\s+(?:long|large)\s+for\s+(?:this|the)\s+model\b`),
		regexp.MustCompile(`(?i)\b(?:input|prompt|request|messages?)\b.{0,40}\b(?:exceed(?:s|ed)?|overflows?|is\s+larger\s+than)\b.{0,40}\b(?:the\s+)?(?:model(?:'s)?\s+)?context(?:\s+(?:length|window))?\b`),
	}
)

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// HTTPCode classifies an HTTP error status with the provider's error code,
// type and message joined in detail. Pure.
func HTTPCode(status int, detail string) string {
	switch {
	case status == 401 || status == 403:
		return "AUTH"
	case status == 413:
		return "INVALID_REQUEST"
	case anyMatch(quota, detail):
		return "QUOTA"
	case status == 429:
		return "RATE_LIMIT"
	case status == 400 && anyMatch(contextWindow, detail):
		return "CONTEXT_WINDOW_EXCEEDED"
	case status == 400:
		return "INVALID_REQUEST"
	case status >= 500:
		return "SERVER"
	}
	return "HTTP_" + strconv.Itoa(status)
}

// RetryAfterMs reads a Retry-After header: whole seconds, or an HTTP date
// after now; 0 when absent, unreadable or not in the future. Pure.
func RetryAfterMs(v string, now time.Time) int64 {
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0
		}
		return n * 1000
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d := t.Sub(now).Milliseconds(); d > 0 {
		return d
	}
	return 0
}

// watchdog calls fire when pulse was not called for d.
type watchdog struct {
	mu    sync.Mutex
	timer *time.Timer
	d     time.Duration
}

func newWatchdog(d time.Duration, fire func()) *watchdog {
	return &watchdog{timer: time.AfterFunc(d, fire), d: d}
}

func (w *watchdog) pulse() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer.Reset(w.d)
}

func (w *watchdog) stop() { w.timer.Stop() }

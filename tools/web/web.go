package web

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// FetchName is the tool's name.
const FetchName = "web_fetch"

// Texts of upstream's tool-web (VERBATIM, as its published code words them).
const (
	FetchDescription = "Fetch the content of a specific HTTP(S) URL and return it decoded to text."
	// FetchSection is the tool:web_fetch prompt section (order 111).
	FetchSection = "Use the web_fetch tool to retrieve the content of a specific HTTP(S) URL (for example a result from web_search). It returns the page content decoded to text. Cite the URL as a markdown link when you use its content."
	// TruncationFooter ends a fetch cut at the output cap.
	TruncationFooter = "\n\n(Content truncated. Fetch a more specific URL or section for the full text.)"
)

const fetchParameters = `{"type":"object","properties":{"url":{"type":"string","description":"The HTTP(S) URL to fetch."}},"required":["url"]}`

// ErrNoFetcher is the body's answer where it is not served: no fetch
// provider is composed here.
var ErrNoFetcher = errors.New("web_fetch has no fetch provider in this composition")

// Config configures web_fetch: nothing is configurable (its body is served
// from a recording or refuses).
type Config struct{}

// New returns web_fetch's registration: upstream's schema, description,
// argument check and prompt section (tool:web_fetch, order 111), and a body
// that refuses (serve it from a recording with package served).
func New(Config) ([]toolreg.Tool, error) {
	def := pipeline.Tool{
		Name: FetchName, Description: FetchDescription, Parameters: json.RawMessage(fetchParameters), ConcurrencySafe: true,
		Run: func(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
			var a struct {
				URL string `json:"url"`
			}
			if err := call.DecodeArgs(&a); err != nil || len(a.URL) == 0 || trimmedEmpty(a.URL) {
				return pipeline.Output{}, errors.New("url must be a non-empty string")
			}
			return pipeline.Output{}, ErrNoFetcher
		},
	}
	return []toolreg.Tool{{Def: def, Section: &toolreg.Section{Name: "tool:" + FetchName, Order: 111, Text: FetchSection}}}, nil
}

func trimmedEmpty(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' && r != '\v' && r != '\f' && r != 0xA0 && r != 0xFEFF {
			return false
		}
	}
	return true
}

package pipelinetest

import (
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// Registry is a fresh registry holding tools, failing the test if one is
// refused (a duplicate name, an invalid schema).
func Registry(t testing.TB, tools ...pipeline.Tool) *pipeline.Registry {
	t.Helper()
	reg := pipeline.NewRegistry()
	for _, tl := range tools {
		if _, err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

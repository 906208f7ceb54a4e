package code

import (
	"encoding/json"
	"fmt"
)

// Name is the reserved transport's tool name.
const Name = "run_code"

// Runtime languages with a schema flavor and an SDK renderer.
const (
	LanguageTypeScript = "typescript"
	LanguagePython     = "python"
)

// flavor is one language's VERBATIM description and code-argument text (upstream's).
type flavor struct{ description, code string }

var flavors = map[string]flavor{
	LanguageTypeScript: {
		description: "Execute a TypeScript program against the available tools. Takes two required arguments: `code`, the BODY of an async function (erasable syntax only; top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Only what you print or return is program output — curate it. Image-bearing subtool results are attached after the run.",
		code:        "The program: the body of an async TypeScript function.",
	},
	LanguagePython: {
		description: "Execute a Python program against the available tools. Takes two required arguments: `code`, the BODY of an async function (top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Use `print(...)` and/or `return <value>` for program output — curate it. Image-bearing subtool results are attached after the run.",
		code:        "The program: the body of an async Python function.",
	},
}

// descriptionArg is the VERBATIM description of the description argument.
const descriptionArg = `Clear, concise description of what this program does in active voice, 5-10 words (shown in the UI). Examples: "Count TODO markers across packages"; "Read failing test and its fixture"; "Rename config key in every cordis.yml".`

// Description returns run_code's description for the runtime language ("" =
// no runtime mounted: the TypeScript flavor), or the VERBATIM error for a
// language without a flavor.
func Description(language string) (string, error) {
	f, err := flavorOf(language)
	return f.description, err
}

func flavorOf(language string) (flavor, error) {
	if language == "" {
		language = LanguageTypeScript
	}
	f, ok := flavors[language]
	if !ok {
		return flavor{}, fmt.Errorf("dsh-tools: no run_code schema flavor registered for runtime language %q (known: \"typescript\", \"python\")", language)
	}
	return f, nil
}

// Parameters returns run_code's parameters JSON Schema for the runtime
// language: values and key order as recorded, no additionalProperties.
func Parameters(language string) (json.RawMessage, error) {
	f, err := flavorOf(language)
	if err != nil {
		return nil, err
	}
	type prop struct {
		Type        string `json:"type"`
		Description string `json:"description"`
	}
	b, err := json.Marshal(struct {
		Type       string `json:"type"`
		Properties struct {
			Code        prop `json:"code"`
			Description prop `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}{
		Type: "object",
		Properties: struct {
			Code        prop `json:"code"`
			Description prop `json:"description"`
		}{prop{"string", f.code}, prop{"string", descriptionArg}},
		Required: []string{"code", "description"},
	})
	return b, err
}

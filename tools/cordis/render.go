package cordis

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/argschema"
)

// Render is the tool's own rendering of its canonical value into the
// content the model and the session log see (upstream's output.render),
// after the value is checked against the tool's output schema as upstream's
// registry checks it: the inspect tools print JSON.stringify(value, null,
// 2); cordis_define, cordis_run, cordis_stop and cordis_undefine print one
// line (VERBATIM). A value the schema or the rendering refuses (cordis_run
// without its string ids) is an error, as is a name of no cordis tool.
func Render(name string, value json.RawMessage) ([]pipeline.Block, error) {
	d, ok := definitionOf(name)
	if !ok {
		return nil, fmt.Errorf("%s is not a cordis tool", name)
	}
	schema, err := argschema.Compile([]byte(d.output))
	if err != nil {
		return nil, fmt.Errorf("%s: output schema: %w", name, err)
	}
	if v := schema.Validate(value); len(v) > 0 {
		return nil, fmt.Errorf("%s: the value does not satisfy the output schema: %s", name, strings.Join(v, "; "))
	}
	v, err := jsjson.Parse(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	text, err := renderText(name, v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []pipeline.Block{pipeline.TextBlock(text)}, nil
}

func renderText(name string, v *jsjson.Value) (string, error) {
	switch name {
	case InspectListName, InspectQueryName, InspectSelfName:
		return jsjson.StringifyIndent(v, "  "), nil
	case DefineName:
		return fmt.Sprintf("Defined %s/%s (%s); it is not running yet. Use cordis_run to activate this Package.", v.Get("pluginId").Str(), v.Get("packageId").Str(), v.Get("name").Str()), nil
	case StopName:
		return fmt.Sprintf("Dynamic Plugin %s is stopped; its definition and versions remain.", v.Get("pluginId").Str()), nil
	case UndefineName:
		return fmt.Sprintf("Removed dynamic Plugin %s and all of its Packages.", v.Get("pluginId").Str()), nil
	}
	return runText(v)
}

// runText is cordis_run's line: its value must be an object with string
// pluginId, packageId and pluginRunId (upstream's requireJsonObject and
// requireJsonString, with their messages).
func runText(v *jsjson.Value) (string, error) {
	if v.Kind != jsjson.Object {
		return "", fmt.Errorf("expected a JSON object")
	}
	ids := make([]string, 3)
	for i, key := range []string{"pluginId", "packageId", "pluginRunId"} {
		f := v.Get(key)
		if f == nil || f.Kind != jsjson.String {
			return "", fmt.Errorf("expected JSON string field %q", key)
		}
		ids[i] = f.Str()
	}
	status := ""
	if s := v.Get("status"); s != nil && s.Kind == jsjson.String {
		status = s.Str()
	}
	switch status {
	case "awaiting-approval":
		return fmt.Sprintf("%s/%s is awaiting user approval (%s).", ids[0], ids[1], ids[2]), nil
	case "starting":
		return fmt.Sprintf("%s/%s is starting asynchronously (%s).", ids[0], ids[1], ids[2]), nil
	}
	return fmt.Sprintf("%s/%s is running (%s).", ids[0], ids[1], ids[2]), nil
}

func definitionOf(name string) (definition, bool) {
	for _, d := range definitions {
		if d.name == name {
			return d, true
		}
	}
	return definition{}, false
}

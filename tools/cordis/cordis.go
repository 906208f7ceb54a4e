package cordis

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// The tools' names, in upstream's registration order.
const (
	InspectListName  = "cordis_inspect_list"
	InspectQueryName = "cordis_inspect_query"
	InspectSelfName  = "cordis_inspect_self"
	DefineName       = "cordis_define"
	RunName          = "cordis_run"
	StopName         = "cordis_stop"
	UndefineName     = "cordis_undefine"
)

// Names are the tools' names in registration order.
var Names = []string{InspectListName, InspectQueryName, InspectSelfName, DefineName, RunName, StopName, UndefineName}

// Descriptions (VERBATIM, as the recordings' tool schemas pin them).
const (
	InspectListDescription  = "List every Cordis Inspect Provider currently known to the Host, including local Host Providers and the latest manifests synchronized from the Client. Each entry includes its platform, purpose, read-only methods, and input/output schemas. Call this Tool before creating or modifying a Package, then select the provider and method for cordis_inspect_query from its result. Do not guess names or treat an Inspect method as a business Service that Plugin code can call."
	InspectQueryDescription = "Run a read-only query explicitly declared by an Inspect Provider. platform, provider, and method must come from cordis_inspect_list, and input must satisfy that method's schema. Use this Tool before cordis_define to read exact Service methods, Event modes, Builtin signatures, Tool schemas, theme tokens, or live Slot trees and props. Host queries run locally. A Client query waits for the first valid page response and remains pending until a page answers or the Tool is cancelled. This Tool cannot invoke business Service methods or modify the runtime. For Service.listService and Event.listEvents, query without input to navigate the compact signature directory, then query the exact service or event for its structured contract and referenced types. For Slots.listSubTree, query without root to navigate the compact tree, then query the exact root for its complete registration contract and props."
	InspectSelfDescription  = "Inspect dynamic Cordis objects owned by the current Session at increasing levels of detail. With no IDs, list only Plugin summaries. With pluginId alone, return version pointers, the latest Run, and every Package summary. Only pluginId plus packageId returns that immutable Package's Host/Client source and runtime diagnostics. packageId cannot be supplied alone. Query an exact Package before handling @pluginId, repairing an asynchronous failure, or defining an updated version. This Tool is read-only: it neither executes code nor changes version pointers."
	DefineDescription       = "Define an immutable Cordis Package. For a new Plugin, use kind:\"new\" and provide only a semantic prefix of 3–6 lowercase English letters; the Host returns the final pluginId and packageId. To modify an existing Plugin, use kind:\"existing\" with its exact pluginId to append a Package without overwriting older versions. Provide at least one of code.host and code.client. Each value is a plain JavaScript function body that returns a Cordis Plugin; no TypeScript, JSX, or import transformation occurs. Query Inspect before depending on a Service, Event, Builtin, Slot, or token. Define only validates parameters and syntax and records source: it does not request approval, execute apply, or change currentPackageId. On success, call cordis_run with the returned IDs."
	RunDescription          = "Activate one exact Package of a dynamic Plugin. Use mode:\"run\" for the first activation, restarting currentPackageId, or rollback. When current exists, use mode:\"update\" to switch to a different Package, even if the Plugin is currently stopped. An unauthorized Client Package creates an approval request and returns awaiting-approval; an authorized Package returns starting and continues asynchronously in the browser. Neither result waits for the final outcome inside the Tool. currentPackageId changes only after complete success; on failure, the old current and target next remain. Asynchronous success, rejection, or technical failure is reported through state and steering. After a technical failure, read diagnostics with cordis_inspect_self, correct the same Plugin, and retry autonomously. Do not request approval again after the user rejects it."
	StopDescription         = "Stop the current Run of a dynamic Plugin and cancel unfinished approval or activation requests. Retain the Plugin, every immutable Package, grants, currentPackageId, and nextPackageId so it can later run or update directly. Stopping an already stopped Plugin succeeds idempotently. Use this Tool to disable effects temporarily; use cordis_undefine for permanent removal."
	UndefineDescription     = "Permanently remove a dynamic Plugin owned by the current Session. If it is running or awaiting approval, first stop it and cancel the request, then delete every Package, grant, and version pointer. After this returns, its pluginId, packageIds, @ reference, and Package business views are invalid; historical cards retain only a \"Plugin removed\" record. Do not call this Tool when versions must remain available for restart or rollback; use cordis_stop instead."
)

// The parameter schemas, keys in the order the model sees them.
const (
	inspectListParameters  = `{"type":"object","properties":{}}`
	inspectQueryParameters = `{"type":"object","properties":{"platform":{"type":"string","description":"Runtime platform that owns the Provider.","enum":["host","client"]},"provider":{"type":"string","description":"Exact Provider ID returned by cordis_inspect_list."},"method":{"type":"string","description":"Exact method name declared by the Provider manifest."},"input":{"description":"Optional query input; it must satisfy the method input schema."}},"required":["platform","provider","method"]}`
	inspectSelfParameters  = `{"type":"object","properties":{"pluginId":{"type":"string","description":"Stable Plugin ID returned by cordis_define or injected by @pluginId; omit it to list every current Plugin."},"packageId":{"type":"string","description":"Exact immutable Package ID owned by pluginId; when specified, source and diagnostics are returned."}}}`
	defineParameters       = `{"type":"object","properties":{"plugin":{"oneOf":[{"type":"object","additionalProperties":false,"properties":{"kind":{"type":"string","const":"new"},"idPrefix":{"type":"string","description":"Suggested semantic prefix of 3–6 lowercase English letters; the Host adds a unique numeric suffix."}},"required":["kind","idPrefix"]},{"type":"object","additionalProperties":false,"properties":{"kind":{"type":"string","const":"existing"},"pluginId":{"type":"string","description":"Exact ID of an existing Plugin; the new Package is appended to that instance."}},"required":["kind","pluginId"]}]},"name":{"type":"string","description":"Short, readable Package name."},"purpose":{"type":"string","description":"One-sentence, user-facing description of the Package purpose."},"code":{"type":"object","additionalProperties":false,"properties":{"host":{"type":"string","description":"Plain JavaScript function body that returns the Host-half Cordis Plugin."},"client":{"type":"string","description":"Plain JavaScript function body that returns the browser Client-half Cordis Plugin."}}}},"required":["plugin","name","purpose","code"]}`
	runParameters          = `{"type":"object","properties":{"pluginId":{"type":"string","description":"Stable Plugin ID returned by cordis_define."},"packageId":{"type":"string","description":"Exact immutable Package ID to activate under that Plugin."},"mode":{"type":"string","description":"Use run for the first activation, restarting current, or rollback; use update to switch from current to a different Package.","enum":["run","update"]}},"required":["pluginId","packageId","mode"]}`
	stopParameters         = `{"type":"object","properties":{"pluginId":{"type":"string","description":"Stable dynamic Plugin ID to stop."}},"required":["pluginId"]}`
	undefineParameters     = `{"type":"object","properties":{"pluginId":{"type":"string","description":"Stable dynamic Plugin ID to remove permanently."}},"required":["pluginId"]}`
)

// The output schemas: the canonical value a run_code program receives
// (upstream's "json" spec type, any JSON value, is the empty schema).
const (
	jsonOutput     = `{}`
	defineOutput   = `{"type":"object","additionalProperties":false,"properties":{"pluginId":{"type":"string"},"packageId":{"type":"string"},"name":{"type":"string"},"purpose":{"type":"string"},"hasHostHalf":{"type":"boolean"},"hasClientHalf":{"type":"boolean"}},"required":["pluginId","packageId","name","purpose","hasHostHalf","hasClientHalf"]}`
	stopOutput     = `{"type":"object","additionalProperties":false,"properties":{"pluginId":{"type":"string"}},"required":["pluginId"]}`
	undefineOutput = `{"type":"object","additionalProperties":false,"properties":{"pluginId":{"type":"string"},"wasRunning":{"type":"boolean"}},"required":["pluginId","wasRunning"]}`
)

//go:embed prompt.md
var promptFile string

// PromptSection is the tool:cordis system-prompt section (order 115), as
// the advanced recordings pin it (VERBATIM).
var PromptSection = strings.TrimSuffix(promptFile, "\n")

// PromptOrder is the section's order.
const PromptOrder = 115

// ErrNoHost is a body's answer where it is not served: every cordis tool
// works on upstream's Cordis host (its dynamic plugin runner, its inspect
// providers and their JSDoc API catalog), which this stack does not have.
var ErrNoHost = errors.New("the cordis tools need upstream's Cordis host (its dynamic plugin runner and inspect providers), which this stack does not compose")

// definition is one tool's definition beside its body.
type definition struct {
	name, description, parameters, output string
}

var definitions = []definition{
	{InspectListName, InspectListDescription, inspectListParameters, jsonOutput},
	{InspectQueryName, InspectQueryDescription, inspectQueryParameters, jsonOutput},
	{InspectSelfName, InspectSelfDescription, inspectSelfParameters, jsonOutput},
	{DefineName, DefineDescription, defineParameters, defineOutput},
	{RunName, RunDescription, runParameters, jsonOutput},
	{StopName, StopDescription, stopParameters, stopOutput},
	{UndefineName, UndefineDescription, undefineParameters, undefineOutput},
}

// Config configures the cordis tools: nothing is configurable (their
// bodies are served from a recording or refuse).
type Config struct{}

// New returns the seven tools' registrations in upstream's registration
// order: their schemas, descriptions and output schemas, none
// concurrency-safe (upstream declares no isConcurrencySafe for them), and
// bodies that refuse with [ErrNoHost] (unhosted: a composition that serves
// from a recording serves them always, with package served); cordis_define
// brings the tool:cordis prompt section.
func New(Config) ([]toolreg.Tool, error) {
	out := make([]toolreg.Tool, len(definitions))
	for i, d := range definitions {
		out[i].Unhosted = true
		out[i].Def = pipeline.Tool{
			Name: d.name, Description: d.description, Parameters: json.RawMessage(d.parameters), OutputSchema: json.RawMessage(d.output),
			Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
				return pipeline.Output{}, fmt.Errorf("%s: %w", d.name, ErrNoHost)
			},
		}
		if d.name == DefineName {
			out[i].Section = &toolreg.Section{Name: "tool:cordis", Order: PromptOrder, Text: PromptSection}
		}
	}
	return out, nil
}

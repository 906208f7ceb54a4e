package cordis

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/dshsim/dshsim/pipeline"
)

// InspectQueryName is the tool's name.
const InspectQueryName = "cordis_inspect_query"

// InspectQueryDescription is its description (VERBATIM).
const InspectQueryDescription = "Run a read-only query explicitly declared by an Inspect Provider. platform, provider, and method must come from cordis_inspect_list, and input must satisfy that method's schema. Use this Tool before cordis_define to read exact Service methods, Event modes, Builtin signatures, Tool schemas, theme tokens, or live Slot trees and props. Host queries run locally. A Client query waits for the first valid page response and remains pending until a page answers or the Tool is cancelled. This Tool cannot invoke business Service methods or modify the runtime. For Service.listService and Event.listEvents, query without input to navigate the compact signature directory, then query the exact service or event for its structured contract and referenced types. For Slots.listSubTree, query without root to navigate the compact tree, then query the exact root for its complete registration contract and props."

const inspectQueryParameters = `{"type":"object","properties":{"platform":{"type":"string","description":"Runtime platform that owns the Provider.","enum":["host","client"]},"provider":{"type":"string","description":"Exact Provider ID returned by cordis_inspect_list."},"method":{"type":"string","description":"Exact method name declared by the Provider manifest."},"input":{"description":"Optional query input; it must satisfy the method input schema."}},"required":["platform","provider","method"]}`

// ErrNoCatalog is the body's answer where it is not served: its data is
// generated from upstream's JSDoc API catalog of its Cordis host, which
// this stack does not have.
var ErrNoCatalog = errors.New("cordis_inspect_query needs upstream's Cordis host and its JSDoc API catalog, which this stack does not compose")

// InspectQuery returns the tool: upstream's schema and description, and a
// body that refuses (serve it from a recording with package served).
func InspectQuery() pipeline.Tool {
	return pipeline.Tool{
		Name: InspectQueryName, Description: InspectQueryDescription, Parameters: json.RawMessage(inspectQueryParameters),
		ConcurrencySafe: true,
		Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
			return pipeline.Output{}, ErrNoCatalog
		},
	}
}

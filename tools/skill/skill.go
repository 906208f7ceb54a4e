package skill

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the skill tool's name.
const Name = "skill"

// Description is its model-facing description (VERBATIM).
const Description = "Load the full instructions for an available skill. Call this with the exact skill name from the session skill catalog before acting on a task that names or clearly matches that skill."

const parameters = `{"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."}},"required":["name"]}`

// Config locates the skills.
type Config struct {
	// DshHome and AgentsHome are DSH_HOME and DSH_AGENTS_HOME ("" leaves
	// out their roots).
	DshHome, AgentsHome string
	// Warn receives skipped files (nil: dropped).
	Warn func(string)
}

// skills are the skills a session with cwd sees.
func (c Config) skills(cwd string) []Skill {
	return Discover(Roots(cwd, c.DshHome, c.AgentsHome), c.Warn)
}

// New returns the skill tool's registration (no prompt section: the
// catalog is a message, [CatalogMessage]).
func New(cfg Config) ([]toolreg.Tool, error) {
	return []toolreg.Tool{{Def: pipeline.Tool{Name: Name, Description: Description, Parameters: json.RawMessage(parameters), Run: cfg.run}}}, nil
}

func (c Config) run(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, fmt.Errorf(`"arguments" must be an object`)
	}
	if !IsName(a.Name) {
		return pipeline.Output{}, fmt.Errorf("invalid skill name %q", a.Name)
	}
	var found *Skill
	for _, s := range c.skills(cwdOf(call)) {
		if s.Name == a.Name {
			found = &s
			break
		}
	}
	if found == nil {
		return pipeline.Output{}, fmt.Errorf("skill %q is unknown or no longer available", a.Name)
	}
	if !found.ModelInvocable {
		return pipeline.Output{}, fmt.Errorf("skill %q is not available for model invocation", a.Name)
	}
	s, body, ok := Load(*found, c.Warn)
	if !ok || s.Name != a.Name {
		return pipeline.Output{}, fmt.Errorf("skill %q is unknown or no longer available", a.Name)
	}
	if !s.ModelInvocable {
		return pipeline.Output{}, fmt.Errorf("skill %q is not available for model invocation", a.Name)
	}
	value, _ := json.Marshal(struct {
		Name         string `json:"name"`
		Provider     string `json:"provider"`
		ResourceBase struct {
			Kind string `json:"kind"`
			Path string `json:"path"`
		} `json:"resourceBase"`
		Content string `json:"content"`
	}{Name: s.Name, Provider: "filesystem", ResourceBase: struct {
		Kind string `json:"kind"`
		Path string `json:"path"`
	}{"directory", s.Dir}, Content: body})
	return pipeline.Output{Value: value, Content: []pipeline.Block{pipeline.TextBlock(Render(s.Name, s.Dir, body))}}, nil
}

func cwdOf(call *pipeline.Call) string {
	if a := call.Agent(); a != nil && a.Session != nil {
		return a.Session.Header().Cwd
	}
	return ""
}

// Render is a loaded skill as the model reads it (VERBATIM shape).
func Render(name, dir, body string) string {
	return strings.Join([]string{
		`<skill_content name="` + escapeAttr(name) + `">`,
		"<skill_resources>",
		"Base directory for this skill: " + EscapeText(dir),
		"Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.",
		"</skill_resources>",
		"",
		"<skill_instructions>",
		body,
		"</skill_instructions>",
		"</skill_content>",
	}, "\n")
}

func escapeAttr(v string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;").Replace(v)
}

// EscapeText escapes &, < and > in prose embedded in skill markup.
func EscapeText(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(v)
}

// CatalogSource is the source of a catalog message.
type CatalogSource struct {
	Kind    string  `json:"kind"`
	Form    string  `json:"form"`
	Update  bool    `json:"update,omitempty"`
	Entries []Entry `json:"entries"`
}

// Message is the skill catalog's user message as a step enters it (its
// JSON is upstream's, key order included).
type Message = pipeline.UserMessage[CatalogSource]

// CatalogMessage is the text and source of the message that publishes
// entries: the first catalog of a session, or (update) one that replaces
// an earlier catalog.
func CatalogMessage(entries []Entry, update bool) (string, CatalogSource) {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = "- `" + e.Name + "`: " + EscapeText(e.Description)
	}
	var head, tail []string
	switch {
	case !update:
		head = []string{"A skill is a reusable set of task-specific instructions. The following skills are available in this session:"}
		tail = []string{
			"If the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.",
			"A user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.",
		}
	case len(entries) == 0:
		head = []string{"The available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:"}
		tail = []string{"No skills are currently available through the `skill` tool. Do not use names from earlier skill catalogs.", "A user may still invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool for it."}
	default:
		head = []string{"The available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:"}
		tail = []string{"Use only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.", "A user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill."}
	}
	all := []string{"<system-reminder>"}
	all = append(all, head...)
	all = append(all, "", "<available_skills>")
	all = append(all, lines...)
	all = append(all, "</available_skills>", "")
	all = append(all, tail...)
	all = append(all, "</system-reminder>")
	return strings.Join(all, "\n"), CatalogSource{Kind: "skill-catalog", Form: "catalog", Update: update, Entries: entries}
}

// Published is what the session log says of earlier catalogs: whether any
// was published and the digest of the latest.
type Published struct {
	Any    bool
	Digest string
}

// PublishedIn reads evs, a session's log, for the catalogs published in
// it: the user messages whose source is a skill catalog.
func PublishedIn(evs []session.Event) Published {
	pub := Published{}
	for _, e := range evs {
		if e.Type != session.KindUserMessage {
			continue
		}
		var d struct {
			Source CatalogSource `json:"source"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Source.Kind == "skill-catalog" {
			pub = Published{Any: true, Digest: Digest(d.Source.Entries)}
		}
	}
	return pub
}

// NextCatalog decides the catalog message of a step for the session's
// skills given what was published: none when the latest published catalog
// has the same entries, none when nothing was ever published and no skill
// is invocable by the model; else the first catalog or an update.
func (c Config) NextCatalog(cwd string, pub Published) (text string, src CatalogSource, ok bool) {
	entries := Entries(c.skills(cwd), CatalogDescriptionMaxLength)
	if pub.Any && pub.Digest == Digest(entries) {
		return "", CatalogSource{}, false
	}
	if !pub.Any && len(entries) == 0 {
		return "", CatalogSource{}, false
	}
	text, src = CatalogMessage(entries, pub.Any)
	return text, src, true
}

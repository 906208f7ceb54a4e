// Package skill is skill loading (upstream's skill-filesystem provider,
// skill registry and tool-skill): the skills a session can load, the
// catalog message that tells the model about them, and the skill tool.
//
// # Discovery
//
// [Roots] are, for a session cwd: <project>/.dsh/skills and
// <project>/.agents/skills (the project is the nearest ancestor holding a
// .git, else the cwd), then <DSH_HOME>/skills (its .system entry left out)
// and <DSH_AGENTS_HOME>/skills. In each root a directory is a bundle
// (<dir>/SKILL.md, resource base <dir>), a .md file a flat skill (resource
// base the root); a symlink counts as its target. A file is used when it
// is UTF-8 text with YAML front matter between "---" lines carrying a
// non-empty string name in kebab case and a description; the invocation
// controls are disable-model-invocation and user-invocable (booleans, also
// 1/0, yes/no, on/off; the camel-case spellings are refused). Anything else
// is skipped with a warning, as upstream skips it. The lowest rank wins a
// name (project .dsh 100, project .agents 200, DSH_HOME 400, agents home
// 500); the list is sorted by name.
//
// # The catalog
//
// The model-invocable skills are published as one user message, source
// {"kind":"skill-catalog","form":"catalog","entries":[{name,description}]}
// (descriptions' whitespace collapsed, cut to 500 UTF-16 units with "..."),
// whose text is upstream's <system-reminder> listing ([CatalogMessage]). It
// is entered on a step whose catalog differs from the latest published
// one, and never while nothing was published and no skill is listed; a
// later change publishes the replacement text, with "update": true.
//
// # The skill tool
//
// skill {name}: an invalid name is `invalid skill name "<name>"`, an
// unlisted one `skill "<name>" is unknown or no longer available`, a skill
// with disable-model-invocation `skill "<name>" is not available for model
// invocation`. A loaded skill answers
//
//	<skill_content name="<name>">
//	<skill_resources>
//	Base directory for this skill: <dir>
//	Resolve relative paths ... Load referenced resources only as needed.
//	</skill_resources>
//
//	<skill_instructions>
//	<body without front matter, trimmed>
//	</skill_instructions>
//	</skill_content>
//
// Not built: the "/<name>" invocation a user types into a prompt.
//
// # Imports
//
// pipeline, internal/jsjson, tools/toolreg (the registration) and
// go.yaml.in/yaml/v3; never stack or harness.
package skill

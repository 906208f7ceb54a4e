package fs

import (
	"path"
	"strings"
)

// langByExt maps a lower-case file extension to the code-fence language
// persisted as read meta "lang". Unknown extensions, dotfiles, names without
// an extension and a trailing dot give no lang (e.g. ".txt" has none, as the
// fs-read recording shows).
var langByExt = map[string]string{
	"ts": "typescript", "tsx": "tsx", "mts": "typescript", "cts": "typescript",
	"js": "javascript", "jsx": "jsx", "mjs": "javascript", "cjs": "javascript",
	"json": "json", "py": "python", "go": "go", "rs": "rust", "md": "markdown",
	"yaml": "yaml", "yml": "yaml", "toml": "toml", "sh": "bash", "bash": "bash",
	"zsh": "bash", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp",
	"java": "java", "kt": "kotlin", "rb": "ruby", "php": "php", "swift": "swift",
	"css": "css", "scss": "scss", "html": "html", "xml": "xml", "sql": "sql",
	"lua": "lua", "cs": "csharp",
}

// LangFromPath returns the language for p's extension ("" when none): the
// last path segment's last dot decides, case-insensitively.
func LangFromPath(p string) string {
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return ""
	}
	return langByExt[strings.ToLower(base[i+1:])]
}

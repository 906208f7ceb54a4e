package compile

// The two constructs esbuild compiles inside a function body that are not
// erasable (Node's strip-only texts).
const (
	textEnum      = "TypeScript enum is not supported in strip-only mode"
	textParamProp = "TypeScript parameter property is not supported in strip-only mode"
)

type finding struct {
	text      string
	line, col int
}

// paramModifiers mark a constructor parameter property.
var paramModifiers = map[string]bool{"public": true, "private": true, "protected": true, "readonly": true, "override": true}

// findNonErasable scans src (which esbuild already parsed) for an enum
// declaration that is not ambient and for a constructor parameter property.
func findNonErasable(src string) *finding {
	toks := lex(src)
	for i, t := range toks {
		if t.kind != tWord {
			continue
		}
		switch t.text {
		case "enum":
			// enum X { — not a property name (a.enum, {enum: 1}), not declare enum.
			if i+2 < len(toks) && toks[i+1].kind == tWord && toks[i+2].is("{") && !prevIs(toks, i, ".", "?.") {
				start := t
				j := i - 1
				if j >= 0 && toks[j].kind == tWord && toks[j].text == "const" {
					start = toks[j]
					j--
				}
				if j >= 0 && toks[j].kind == tWord && toks[j].text == "declare" {
					continue
				}
				return &finding{textEnum, start.line, start.col}
			}
		case "constructor":
			if i+1 < len(toks) && toks[i+1].is("(") && !prevIs(toks, i, ".", "?.") {
				if f := paramProperty(toks, i+1); f != nil {
					return f
				}
			}
		}
	}
	return nil
}

func prevIs(toks []token, i int, puncts ...string) bool {
	if i == 0 {
		return false
	}
	for _, p := range puncts {
		if toks[i-1].is(p) {
			return true
		}
	}
	return false
}

// paramProperty looks at the parameters of the list opened at toks[open]:
// a parameter that starts with a modifier followed by a name or a pattern.
func paramProperty(toks []token, open int) *finding {
	depth := 0
	atStart := true
	for i := open + 1; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.is("(") || t.is("[") || t.is("{"):
			depth++
		case t.is(")") || t.is("]") || t.is("}"):
			if depth == 0 {
				return nil
			}
			depth--
		case t.is(",") && depth == 0:
			atStart = true
			continue
		}
		if atStart && depth == 0 && t.kind == tWord && paramModifiers[t.text] && i+1 < len(toks) {
			if n := toks[i+1]; n.kind == tWord || n.is("{") || n.is("[") {
				return &finding{textParamProp, t.line, t.col}
			}
		}
		atStart = false
	}
	return nil
}

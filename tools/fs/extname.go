package fs

// extname is Node's path.posix.extname, which upstream's read_image tests a
// path with: the last component's text from its last dot, trailing slashes
// ignored ("dir.png/" has ".png"); a component whose only dot leads it has
// none (".png"), nor has "..", while "..png" has ".png" and "..." has ".".
// It works on bytes: '/' and '.' never occur inside a UTF-8 sequence. Pure.
func extname(path string) string {
	startDot, startPart, end := -1, 0, -1
	matchedSlash := true
	preDotState := 0 // 0: nothing before the dot yet; 1: a dot; -1: another character
	for i := len(path) - 1; i >= 0; i-- {
		c := path[i]
		if c == '/' {
			if !matchedSlash {
				startPart = i + 1
				break
			}
			continue
		}
		if end == -1 {
			matchedSlash, end = false, i+1
		}
		switch {
		case c == '.' && startDot == -1:
			startDot = i
		case c == '.':
			if preDotState != 1 {
				preDotState = 1
			}
		case startDot != -1:
			preDotState = -1
		}
	}
	if startDot == -1 || end == -1 || preDotState == 0 ||
		(preDotState == 1 && startDot == end-1 && startDot == startPart+1) {
		return ""
	}
	return path[startDot:end]
}

// lowerASCII lowers A-Z only. An extension is looked up lowered as
// JavaScript's toLowerCase lowers it; every key is ASCII, and no other
// character lowers to one ASCII letter of a key there (Go's ToLower turns
// U+0130 into "i", JavaScript into "i̇"), so ASCII lowering finds exactly
// upstream's keys.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

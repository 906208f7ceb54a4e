package fs

import "testing"

// TestExtname: Node's path.extname, case by case as Node 22 answers them
// (upstream's read_image tests a path's extension with it). Planted bugs
// caught: filepath.Ext (".png" alone has ".png" there, "dir.png/" none),
// ".." taken for an extension, a trailing slash not skipped.
func TestExtname(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"", ""}, {".", ""}, {"..", ""}, {"...", "."},
		{".png", ""}, {"..png", ".png"}, {"...png", ".png"},
		{"a.png", ".png"}, {"a.PNG", ".PNG"},
		{"dir.png/", ".png"}, {"dir.png//", ".png"}, {"a/b.png/", ".png"},
		{"a/.png", ""}, {"a/..png", ".png"}, {"/.png", ""}, {".png/", ""},
		{"a.b/c", ""}, {"a.b/c.", "."}, {"a.", "."}, {"a..", "."},
		{"/", ""}, {"//", ""}, {"a/..", ""}, {"a/.", ""}, {"a.png/.", ""}, {".../a", ""},
		{"x/a.tar.gz", ".gz"}, {".a.png", ".png"}, {"./a.png", ".png"}, {"a/b/.c.d", ".d"},
		{"a png", ""}, {"é.jpeg", ".jpeg"}, {"a.gİf", ".gİf"}, {"archive.JpEg", ".JpEg"},
		{"a/../b.webp", ".webp"}, {"x.png ", ".png "},
	} {
		if got := extname(tc.path); got != tc.want {
			t.Errorf("extname(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestImageMediaType: the extension lowered as JavaScript lowers it picks
// the media type; a character only Go lowers to ASCII (U+0130) picks none.
func TestImageMediaType(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"a.PNG", "image/png"}, {"b.JpEg", "image/jpeg"}, {"c.jpg", "image/jpeg"}, {"d.WEBP", "image/webp"},
		{"e.gif", "image/gif"}, {"dir.gif/", "image/gif"}, {".png", ""}, {"a.gİf", ""}, {"a.png ", ""}, {"a.tiff", ""},
	} {
		if got := imageExtensions[lowerASCII(extname(tc.path))]; got != tc.want {
			t.Errorf("%q: media type %q, want %q", tc.path, got, tc.want)
		}
	}
}

package attachment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The recorded read-image session's red.png: 1x1, 69 bytes, this digest.
const redID = "sha256:b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640"

func TestSaveStoresTheObjectPrivately(t *testing.T) {
	home := t.TempDir()
	s, err := New(home, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	red := file(t, "red.png")
	ref, err := s.Save(Input{Data: red, MediaType: PNG, Name: "/ws/red.png"})
	if err != nil {
		t.Fatal(err)
	}
	if ref.AttachmentID != redID || ref.Bytes != 69 || ref.Width != 1 || ref.Height != 1 || ref.Name != "red.png" {
		t.Fatalf("ref %+v", ref)
	}
	if got := string(ref.ToolJSON()); got != `{"attachmentId":"`+redID+`","mediaType":"image/png","bytes":69,"width":1,"height":1,"name":"red.png"}` {
		t.Fatalf("tool JSON %s", got)
	}
	if got := string(ref.PromptJSON()); got != `{"attachmentId":"`+redID+`","mediaType":"image/png","width":1,"height":1,"bytes":69}` {
		t.Fatalf("prompt JSON %s", got)
	}
	obj := filepath.Join(home, "attachments", "v1", "objects", "b1", strings.TrimPrefix(redID, "sha256:"))
	st, err := os.Stat(obj)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("object %s: %v %v", obj, st, err)
	}
	for _, d := range []string{filepath.Dir(obj), filepath.Join(home, "attachments", "v1", "tmp")} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("dir %s: %v %v", d, st, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "attachments", "v1", "tmp")); len(ents) != 0 {
		t.Fatalf("staging left behind: %v", ents)
	}
	// Saving the same bytes again verifies the existing object.
	if _, err := s.Save(Input{Data: red, MediaType: PNG}); err != nil {
		t.Fatal(err)
	}
	// A corrupt object under the same digest is refused, not replaced.
	if err := os.WriteFile(obj, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(Input{Data: red, MediaType: PNG}); code(err) != CodeCorrupt {
		t.Fatalf("corrupt object: %v", err)
	}
	if b, _ := os.ReadFile(obj); string(b) != "tampered" {
		t.Fatal("the corrupt object was replaced")
	}
}

func TestByteLimit(t *testing.T) {
	s, _ := New(t.TempDir(), Limits{MaxImageBytes: 69})
	red := file(t, "red.png")
	if _, err := s.Save(Input{Data: red, MediaType: PNG}); err != nil {
		t.Fatalf("69 bytes at a 69-byte limit: %v", err)
	}
	s, _ = New(t.TempDir(), Limits{MaxImageBytes: 68})
	if _, err := s.Save(Input{Data: red, MediaType: PNG}); code(err) != CodeTooLarge || err.Error() != "Image exceeds the configured byte limit." {
		t.Fatalf("69 bytes at a 68-byte limit: %v", err)
	}
}

func TestSaveAllValidatesEveryMemberFirst(t *testing.T) {
	red := file(t, "red.png")
	for _, tc := range []struct {
		name   string
		limits Limits
		ins    []Input
		code   string
		text   string
	}{
		{"count", Limits{MaxImagesPerMessage: 1}, []Input{{Data: red, MediaType: PNG}, {Data: red, MediaType: PNG}}, CodeTooManyImages, "Image batch exceeds the configured image-count limit."},
		{"aggregate", Limits{MaxMessageImageBytes: 137}, []Input{{Data: red, MediaType: PNG}, {Data: red, MediaType: PNG}}, CodeImagesTooLarge, "Image batch exceeds the configured aggregate image-byte limit."},
		{"type", Limits{}, []Input{{Data: red, MediaType: PNG}, {Data: red, MediaType: "image/bmp"}}, CodeUnsupportedType, "Image type image/bmp is not accepted by this deployment."},
		{"a bad member", Limits{}, []Input{{Data: red, MediaType: PNG}, {Data: red, MediaType: GIF}}, CodeTypeMismatch, "Declared image type does not match its bytes."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			s, _ := New(home, tc.limits)
			_, err := s.SaveAll(tc.ins)
			if code(err) != tc.code || err.Error() != tc.text {
				t.Fatalf("error %v, want %s %q", err, tc.code, tc.text)
			}
			if _, err := os.Stat(filepath.Join(home, "attachments")); !os.IsNotExist(err) {
				t.Fatalf("a refused batch wrote something: %v", err)
			}
		})
	}
	s, _ := New(t.TempDir(), Limits{MaxMessageImageBytes: 138})
	refs, err := s.SaveAll([]Input{{Data: red, MediaType: PNG}, {Data: red, MediaType: PNG}})
	if err != nil || len(refs) != 2 {
		t.Fatalf("two images at the aggregate bound: %v", err)
	}
	if _, err := New("relative", Limits{}); err == nil {
		t.Fatal("a relative DSH_HOME was accepted")
	}
}

package fs

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/pipeline"
)

// redPNG is the recorded sessions' red.png (1x1, 69 bytes).
const redPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

func pngOf(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// imageRig is a rig with read_image composed over a store in DSH_HOME
// <ws>/.dsh, the route answering model and image.
func imageRig(t *testing.T, store bool, route *Route) *rig {
	t.Helper()
	var home string
	r := newRig(t, func(c *Config) {
		home = filepath.Join(c.FS.Cwd(), ".dsh")
		ic := &ImageConfig{}
		if store {
			s, err := attachment.New(home, attachment.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			ic.Store = s
		}
		if route != nil {
			ic.Route = func(*pipeline.Call) (Route, bool) { return *route, true }
		}
		c.Images = ic
	})
	red, _ := base64.StdEncoding.DecodeString(redPNG)
	r.put("red.png", string(red))
	return r
}

func TestReadImageGates(t *testing.T) {
	vision := &Route{Model: "deepseek-v4-flash-vision-exp", Image: true}
	text := &Route{Model: "deepseek-v4-flash"}
	for _, tc := range []struct {
		name  string
		store bool
		route *Route
		setup func(r *rig)
		args  string
		want  string
	}{
		{"blank path", true, vision, nil, `{"file_path":"  "}`, "isError: true\ntext: Error: file_path must be a non-empty string\n"},
		{"extension", true, vision, nil, `{"file_path":"notes.txt"}`, "isError: true\ntext: Error: cannot read \"notes.txt\": read_image only accepts PNG/JPEG/WebP/GIF paths\n"},
		{"extension before the store", false, nil, nil, `{"file_path":"a.bmp"}`, "isError: true\ntext: Error: cannot read \"a.bmp\": read_image only accepts PNG/JPEG/WebP/GIF paths\n"},
		{"a dot file has no extension (path.extname)", true, vision, func(r *rig) { r.put(".png", mustRead(t, r, "red.png")) }, `{"file_path":".png"}`, "isError: true\ntext: Error: cannot read \".png\": read_image only accepts PNG/JPEG/WebP/GIF paths\n"},
		{"a trailing slash keeps the extension (path.extname)", true, vision, func(r *rig) { os.Mkdir(r.path("d.png"), 0o755) }, `{"file_path":"d.png/"}`, "isError: true\ntext: Error: cannot read \"<ws>/d.png\": not a regular file\nerror: {\"name\":\"FsError\",\"code\":\"FS_NOT_REGULAR_FILE\"}\n"},
		{"no store", false, vision, nil, `{"file_path":"red.png"}`, "isError: true\ntext: Error: cannot read \"red.png\" as an image: no attachment service is mounted\n"},
		{"no route", true, nil, nil, `{"file_path":"red.png"}`, "isError: true\ntext: Error: cannot read \"red.png\" as an image: the current model route could not be resolved\n"},
		{"text route", true, text, nil, `{"file_path":"red.png"}`, "isError: true\ntext: Error: cannot read \"red.png\" as an image: model \"deepseek-v4-flash\" does not declare image input; switch to an image-capable model to read images\n"},
		{"route before the file", true, text, nil, `{"file_path":"missing.png"}`, "isError: true\ntext: Error: cannot read \"missing.png\" as an image: model \"deepseek-v4-flash\" does not declare image input; switch to an image-capable model to read images\n"},
		{"missing file", true, vision, nil, `{"file_path":"missing.png"}`, "isError: true\ntext: Error: cannot read \"<ws>/missing.png\": not found\nerror: {\"name\":\"FsError\",\"code\":\"FS_NOT_FOUND\"}\n"},
		{"directory", true, vision, func(r *rig) { os.Mkdir(r.path("d.png"), 0o755) }, `{"file_path":"d.png"}`, "isError: true\ntext: Error: cannot read \"<ws>/d.png\": not a regular file\nerror: {\"name\":\"FsError\",\"code\":\"FS_NOT_REGULAR_FILE\"}\n"},
		{"upper-case extension", true, vision, func(r *rig) { r.put("RED.PNG", mustRead(t, r, "red.png")) }, `{"file_path":"RED.PNG"}`, "isError: false\ntext: <path><ws>/RED.PNG</path>\n<type>image</type>\n<content>\nimage/png image, 1x1 px, 69 bytes\n</content>\nmeta: \n"},
		{"type mismatch", true, vision, func(r *rig) { r.put("red.jpg", mustRead(t, r, "red.png")) }, `{"file_path":"red.jpg"}`, "isError: true\ntext: Error: cannot read \"<ws>/red.jpg\": the .jpg extension declares image/jpeg, but the bytes use a different image format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, or convert it to one of those formats\n"},
		{"side over 2000", true, vision, func(r *rig) { r.put("wide.png", pngOf(t, 2001, 1)) }, `{"file_path":"wide.png"}`, "isError: true\ntext: Error: cannot read \"<ws>/wide.png\": at least one image side exceeds the 2000px limit; downscale the image and read the smaller copy\n"},
		{"not an image", true, vision, func(r *rig) { r.put("fake.gif", "plain text, no image") }, `{"file_path":"fake.gif"}`, "isError: true\ntext: Error: Unsupported or malformed image data.\nerror: {\"name\":\"AttachmentError\",\"code\":\"INVALID_IMAGE\"}\n"},
		{"over the byte cap", true, vision, func(r *rig) { r.put("big.png", strings.Repeat("x", attachment.DefaultMaxImageBytes+1)) }, `{"file_path":"big.png"}`, "isError: true\ntext: Error: cannot read \"<ws>/big.png\": 3670017 bytes exceeds the 3670016-byte limit\nerror: {\"name\":\"FsError\",\"code\":\"FS_TOO_LARGE\"}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := imageRig(t, tc.store, tc.route)
			if tc.setup != nil {
				tc.setup(r)
			}
			if got := r.render(r.run(r.agent("a"), ReadImageName, tc.args)); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func mustRead(t *testing.T, r *rig, rel string) string {
	t.Helper()
	s, ok := r.content(rel)
	if !ok {
		t.Fatalf("%s missing", rel)
	}
	return s
}

// TestReadImageSuccess pins the recorded result (text, image block, value),
// the object under DSH_HOME and the observation that authorises an edit.
func TestReadImageSuccess(t *testing.T) {
	r := imageRig(t, true, &Route{Model: "deepseek-v4-flash-vision-exp", Image: true})
	a := r.agent("a")
	out, err := r.run(a, ReadImageName, `{"file_path":"red.png"}`)
	if err != nil {
		t.Fatal(err)
	}
	id := "sha256:b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640"
	content, _ := jsonOf(out.Content)
	want := `[{"type":"text","text":"<path>` + r.ws + `/red.png</path>\n<type>image</type>\n<content>\nimage/png image, 1x1 px, 69 bytes\n</content>"},{"type":"image","attachment":{"attachmentId":"` + id + `","mediaType":"image/png","bytes":69,"width":1,"height":1,"name":"red.png"}}]`
	if content != want {
		t.Fatalf("content\n%s\nwant\n%s", content, want)
	}
	if string(out.Value) != `{"path":"`+r.ws+`/red.png","image":{"attachmentId":"`+id+`","mediaType":"image/png","bytes":69,"width":1,"height":1,"name":"red.png"}}` {
		t.Fatalf("value %s", out.Value)
	}
	obj := filepath.Join(r.ws, ".dsh", "attachments", "v1", "objects", "b1", strings.TrimPrefix(id, "sha256:"))
	if _, err := os.Stat(obj); err != nil {
		t.Fatalf("object not offloaded: %v", err)
	}
	// The read is an observation: writing red.png now replaces it (an
	// unobserved existing file is refused).
	if _, err := r.run(a, "write", `{"file_path":"red.png","content":"x"}`); err != nil {
		t.Fatalf("write after read_image: %v", err)
	}
	if _, err := r.run(r.agent("b"), "write", `{"file_path":"red.png","content":"y"}`); err == nil {
		t.Fatal("another session wrote an unobserved file")
	}
}

func jsonOf(v any) (string, error) {
	return string(marshal(v)), nil
}

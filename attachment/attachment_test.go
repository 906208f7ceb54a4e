package attachment

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func encode(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		p := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black})
		err = gif.Encode(&b, p, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func file(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code()
	}
	if err != nil {
		return "not an attachment error: " + err.Error()
	}
	return ""
}

func TestInspect(t *testing.T) {
	png23 := encode(t, "png", 2, 3)
	for _, tc := range []struct {
		name     string
		data     []byte
		declared string
		limits   Limits
		code     string
		w, h     int
	}{
		{name: "png", data: file(t, "red.png"), declared: PNG, w: 1, h: 1},
		{name: "jpeg", data: encode(t, "jpeg", 4, 2), declared: JPEG, w: 4, h: 2},
		{name: "gif", data: encode(t, "gif", 5, 1), declared: GIF, w: 5, h: 1},
		{name: "webp lossless", data: file(t, "red-2x3.webp"), declared: WebP, w: 2, h: 3},
		{name: "webp lossy", data: file(t, "red-2x3-lossy.webp"), declared: WebP, w: 2, h: 3},
		{name: "empty", data: nil, declared: PNG, code: CodeInvalidImage},
		{name: "not an image", data: []byte("GIF89 nope, plain text"), declared: GIF, code: CodeInvalidImage},
		{name: "bmp is not accepted", data: append([]byte("BM"), make([]byte, 60)...), declared: PNG, code: CodeInvalidImage},
		{name: "truncated raster", data: png23[:len(png23)-20], declared: PNG, code: CodeInvalidImage},
		{name: "type mismatch", data: png23, declared: JPEG, code: CodeTypeMismatch},
		{name: "pixels at the limit", data: png23, declared: PNG, limits: Limits{MaxImagePixels: 6}, w: 2, h: 3},
		{name: "pixels over the limit", data: png23, declared: PNG, limits: Limits{MaxImagePixels: 5}, code: CodeTooManyPixels},
		{name: "side at the limit", data: png23, declared: PNG, limits: Limits{MaxImageDimension: 3}, w: 2, h: 3},
		{name: "side over the limit", data: png23, declared: PNG, limits: Limits{MaxImageDimension: 2}, code: CodeDimensionTooLarge},
		{name: "pixels are checked before sides", data: png23, declared: PNG, limits: Limits{MaxImagePixels: 5, MaxImageDimension: 2}, code: CodeTooManyPixels},
		{name: "default side limit 2000 refuses 2001", data: encode(t, "png", 2001, 1), declared: PNG, code: CodeDimensionTooLarge},
		{name: "default side limit 2000 keeps 2000", data: encode(t, "png", 2000, 1), declared: PNG, w: 2000, h: 1},
		{name: "a mismatch is found after a full decode", data: png23[:len(png23)-20], declared: JPEG, code: CodeInvalidImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Inspect(tc.data, tc.declared, tc.limits)
			if got := code(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
			if tc.code == "" && (info.Width != tc.w || info.Height != tc.h || info.MediaType != tc.declared) {
				t.Fatalf("info %+v, want %dx%d %s", info, tc.w, tc.h, tc.declared)
			}
		})
	}
}

func TestErrorTexts(t *testing.T) {
	png23 := encode(t, "png", 2, 3)
	for _, tc := range []struct {
		err  error
		text string
	}{
		{func() error { _, err := Inspect(nil, PNG, Limits{}); return err }(), "Image is empty."},
		{func() error { _, err := Inspect([]byte("x"), PNG, Limits{}); return err }(), "Unsupported or malformed image data."},
		{func() error { _, err := Inspect(png23, GIF, Limits{}); return err }(), "Declared image type does not match its bytes."},
		{func() error { _, err := Inspect(png23, PNG, Limits{MaxImagePixels: 1}); return err }(), "Image exceeds the configured decoded-pixel limit."},
		{func() error { _, err := Inspect(png23, PNG, Limits{MaxImageDimension: 1}); return err }(), "Image exceeds the configured per-side pixel limit."},
	} {
		if tc.err == nil || tc.err.Error() != tc.text {
			t.Errorf("error %v, want %q", tc.err, tc.text)
		}
	}
	var e *Error
	_, err := Inspect(nil, PNG, Limits{})
	if !errors.As(err, &e) || e.Name() != "AttachmentError" {
		t.Fatalf("name of %v", err)
	}
}

func TestDecodeBase64(t *testing.T) {
	red := file(t, "red.png")
	canonical := base64.StdEncoding.EncodeToString(red)
	if got, err := DecodeBase64(canonical); err != nil || !bytes.Equal(got, red) {
		t.Fatalf("canonical refused: %v", err)
	}
	for name, data := range map[string]string{
		"empty":           "",
		"missing padding": strings.TrimRight(base64.StdEncoding.EncodeToString([]byte("ab")), "="),
		"newline":         canonical[:8] + "\n" + canonical[8:],
		"trailing space":  canonical + " ",
		"url alphabet":    base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff}),
		"stray bits":      "QR==",
		"not base64":      "%%%%",
	} {
		if _, err := DecodeBase64(data); code(err) != CodeInvalidBase64 || err.Error() != "Image upload is not canonical base64." {
			t.Errorf("%s: %q accepted or wrong error: %v", name, data, err)
		}
	}
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"red.png":                         "red.png",
		"/tmp/ws/sub/red.png":             "red.png",
		`C:\x\y.png`:                      "y.png",
		" a\x00b\x1f\x7f.png ":            "ab.png",
		"dir/":                            "",
		strings.Repeat("é", 300) + ".png": strings.Repeat("é", 255),
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}

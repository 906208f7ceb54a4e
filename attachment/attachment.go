package attachment

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"image"
	_ "image/gif"  // GIF decoder
	_ "image/jpeg" // JPEG decoder
	_ "image/png"  // PNG decoder
	"strings"
	"unicode/utf16"

	_ "golang.org/x/image/webp" // WebP decoder
)

// Media types an image may have (upstream's list, in its order).
const (
	PNG  = "image/png"
	JPEG = "image/jpeg"
	WebP = "image/webp"
	GIF  = "image/gif"
)

// MediaTypes are the accepted media types, in upstream's order.
var MediaTypes = []string{PNG, JPEG, WebP, GIF}

// formats maps Go's registered format names to media types.
var formats = map[string]string{"png": PNG, "jpeg": JPEG, "webp": WebP, "gif": GIF}

// Limits are the admission limits (zero fields take upstream's defaults).
type Limits struct {
	// MaxImageBytes bounds one encoded image (default 3.5 MiB).
	MaxImageBytes int64
	// MaxImagesPerMessage bounds a batch (default 20).
	MaxImagesPerMessage int
	// MaxMessageImageBytes bounds a batch's encoded bytes (default 100 MiB).
	MaxMessageImageBytes int64
	// MaxImagePixels bounds width x height (default 40 000 000).
	MaxImagePixels int64
	// MaxImageDimension bounds each side (default 2000).
	MaxImageDimension int
}

// Upstream's defaults.
const (
	DefaultMaxImageBytes        = 3670016
	DefaultMaxImagesPerMessage  = 20
	DefaultMaxMessageImageBytes = 104857600
	DefaultMaxImagePixels       = 40000000
	DefaultMaxImageDimension    = 2000
)

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	l.MaxImageBytes = cmp.Or(l.MaxImageBytes, DefaultMaxImageBytes)
	l.MaxImagesPerMessage = cmp.Or(l.MaxImagesPerMessage, DefaultMaxImagesPerMessage)
	l.MaxMessageImageBytes = cmp.Or(l.MaxMessageImageBytes, DefaultMaxMessageImageBytes)
	l.MaxImagePixels = cmp.Or(l.MaxImagePixels, DefaultMaxImagePixels)
	l.MaxImageDimension = cmp.Or(l.MaxImageDimension, DefaultMaxImageDimension)
	return l
}

// Error codes (upstream's).
const (
	CodeTooManyImages     = "TOO_MANY_IMAGES"
	CodeImagesTooLarge    = "IMAGES_TOO_LARGE"
	CodeUnsupportedType   = "UNSUPPORTED_IMAGE_TYPE"
	CodeInvalidBase64     = "INVALID_IMAGE_BASE64"
	CodeInvalidImage      = "INVALID_IMAGE"
	CodeTypeMismatch      = "IMAGE_TYPE_MISMATCH"
	CodeTooLarge          = "IMAGE_TOO_LARGE"
	CodeTooManyPixels     = "IMAGE_TOO_MANY_PIXELS"
	CodeDimensionTooLarge = "IMAGE_DIMENSION_TOO_LARGE"
	CodeWriteFailed       = "ATTACHMENT_WRITE_FAILED"
	CodeCorrupt           = "ATTACHMENT_CORRUPT"
)

// Error is an attachment failure with a stable code (upstream's
// AttachmentError); its message names no host path and no bytes.
type Error struct {
	code, msg string
	cause     error
}

func errorf(code, msg string) *Error { return &Error{code: code, msg: msg} }

// Error returns the message.
func (e *Error) Error() string { return e.msg }

// Name is the error class name.
func (e *Error) Name() string { return "AttachmentError" }

// Code is the stable code.
func (e *Error) Code() string { return e.code }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

const errInvalid = "Unsupported or malformed image data."

// Info is what a decode proves of an image.
type Info struct {
	// MediaType is the detected type; Width and Height the intrinsic size.
	MediaType     string
	Width, Height int
}

// Inspect runs the admission checks of one image (steps 2 to 6 of the
// package doc) against limits and returns what it detected.
func Inspect(data []byte, declared string, limits Limits) (Info, error) {
	limits = limits.withDefaults()
	if len(data) == 0 {
		return Info{}, errorf(CodeInvalidImage, "Image is empty.")
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	mt, known := formats[format]
	if err != nil || !known {
		return Info{}, &Error{code: CodeInvalidImage, msg: errInvalid, cause: err}
	}
	if int64(cfg.Width)*int64(cfg.Height) > limits.MaxImagePixels {
		return Info{}, errorf(CodeTooManyPixels, "Image exceeds the configured decoded-pixel limit.")
	}
	if max(cfg.Width, cfg.Height) > limits.MaxImageDimension {
		return Info{}, errorf(CodeDimensionTooLarge, "Image exceeds the configured per-side pixel limit.")
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return Info{}, &Error{code: CodeInvalidImage, msg: errInvalid, cause: err}
	}
	if mt != declared {
		return Info{}, errorf(CodeTypeMismatch, "Declared image type does not match its bytes.")
	}
	return Info{MediaType: mt, Width: cfg.Width, Height: cfg.Height}, nil
}

// DecodeBase64 decodes a wire payload, refusing anything but canonical
// base64 (INVALID_IMAGE_BASE64 "Image upload is not canonical base64.").
func DecodeBase64(data string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if data == "" || err != nil || base64.StdEncoding.EncodeToString(b) != data {
		return nil, errorf(CodeInvalidBase64, "Image upload is not canonical base64.")
	}
	return b, nil
}

// DisplayName is upstream's display name of an attachment: the last path
// segment (after / or \), control characters removed, trimmed, at most 255
// UTF-16 units; "" when nothing is left.
func DisplayName(v string) string {
	if i := strings.LastIndexAny(v, `/\`); i >= 0 {
		v = v[i+1:]
	}
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, v)
	v = strings.TrimSpace(v)
	if u := utf16.Encode([]rune(v)); len(u) > 255 {
		v = string(utf16.Decode(u[:255]))
	}
	return v
}

// mediaTypeKnown reports whether mt is one of MediaTypes.
func mediaTypeKnown(mt string) bool {
	for _, m := range MediaTypes {
		if m == mt {
			return true
		}
	}
	return false
}

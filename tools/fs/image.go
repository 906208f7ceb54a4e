package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/pipeline"
)

// ReadImageName is the image tool's name.
const ReadImageName = "read_image"

// ReadImageDescription is its model-facing description (VERBATIM).
const ReadImageDescription = "Read a PNG/JPEG/WebP/GIF file and return the image itself. Requires the current model to accept image input."

// readImageSchema is its parameter schema (VERBATIM, key order included).
const readImageSchema = `{"type":"object","properties":{"file_path":{"type":"string","description":"Path to the image file, resolved by the filesystem backend."}},"required":["file_path"]}`

// ReadImageOutputSchema declares read_image's value {path, image} for
// run_code's SDK.
var ReadImageOutputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string"},` +
	`"image":{"type":"object","additionalProperties":false,"properties":{"attachmentId":{"type":"string"},` +
	`"mediaType":{"type":"string","enum":["image/png","image/jpeg","image/webp","image/gif"]},"bytes":{"type":"integer"},` +
	`"width":{"type":"integer"},"height":{"type":"integer"},"name":{"type":"string"}},"required":["attachmentId","mediaType","bytes","width","height"]}},` +
	`"required":["path","image"]}`)

// imageExtensions are the extensions read_image accepts and the media type
// each declares (the store's decode stays authoritative).
var imageExtensions = map[string]string{
	".png": attachment.PNG, ".jpg": attachment.JPEG, ".jpeg": attachment.JPEG, ".webp": attachment.WebP, ".gif": attachment.GIF,
}

// Route is what read_image knows of the calling model route: the model's
// name and whether its catalog entry declares image input.
type Route struct {
	Model string
	Image bool
}

// RouteFunc resolves the calling route of a call; ok is false when no route
// can be resolved.
type RouteFunc func(call *pipeline.Call) (r Route, ok bool)

// ImageConfig mounts read_image (upstream registers it only while an
// attachment store is mounted).
type ImageConfig struct {
	// Store is the attachment store images are admitted into (nil: the
	// tool is composed but refuses every read, as with no service mounted).
	Store *attachment.Store
	// Route resolves the calling model route (nil: never resolvable).
	Route RouteFunc
}

// ImageValue is read_image's canonical value.
type ImageValue struct {
	Path  string          `json:"path"`
	Image json.RawMessage `json:"image"`
}

// runReadImage is read_image: the gates in upstream's order (blank path,
// extension, store, accepted type, route, image input), then the read
// target as read resolves it (absent: recorded and FS_NOT_FOUND; not a
// regular file), the bytes (at most the smaller of the per-image and
// per-message byte limits), admission into the store, and the observation
// of the version read.
func (t *Tools) runReadImage(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	_, arg, err := fileArgs(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	mt, ok := imageExtensions[lowerASCII(extname(arg))]
	if !ok {
		return pipeline.Output{}, fmt.Errorf("cannot read %q: read_image only accepts PNG/JPEG/WebP/GIF paths", arg)
	}
	store := t.cfg.Images.Store
	if store == nil {
		return pipeline.Output{}, fmt.Errorf("cannot read %q as an image: no attachment service is mounted", arg)
	}
	if !store.Accepts(mt) {
		return pipeline.Output{}, fmt.Errorf("cannot read %q: %s images are not accepted by this deployment", arg, mt)
	}
	var route Route
	if t.cfg.Images.Route != nil {
		route, ok = t.cfg.Images.Route(call)
	}
	if t.cfg.Images.Route == nil || !ok {
		return pipeline.Output{}, fmt.Errorf("cannot read %q as an image: the current model route could not be resolved", arg)
	}
	if !route.Image {
		return pipeline.Output{}, fmt.Errorf("cannot read %q as an image: model %q does not declare image input; switch to an image-capable model to read images", arg, route.Model)
	}
	target, info, err := t.regularReadTarget(call, arg)
	if err != nil {
		return pipeline.Output{}, err
	}
	limits := store.Limits()
	data, err := t.cfg.FS.ReadBytes(ctx, target, min(limits.MaxImageBytes, limits.MaxMessageImageBytes))
	if err != nil {
		return pipeline.Output{}, err
	}
	ref, err := store.Save(attachment.Input{Data: data, MediaType: mt, Name: filepath.Base(target.Display)})
	if err != nil {
		return pipeline.Output{}, imageError(err, target.Display, mt, limits)
	}
	t.record(call.SessionID(), target.Key, fsobserve.Present(info.Version))
	text := "<path>" + target.Display + "</path>\n<type>image</type>\n<content>\n" +
		fmt.Sprintf("%s image, %dx%d px, %d bytes", ref.MediaType, ref.Width, ref.Height, ref.Bytes) + "\n</content>"
	refJSON := ref.ToolJSON()
	return pipeline.Output{
		Value:   marshal(ImageValue{Path: target.Display, Image: refJSON}),
		Content: []pipeline.Block{pipeline.TextBlock(text), pipeline.ImageBlock(refJSON)},
	}, nil
}

// regularReadTarget resolves path as read does, against the session cwd,
// and stats it once: an absent file is recorded absent and fails
// FS_NOT_FOUND; anything but a regular file fails FS_NOT_REGULAR_FILE.
func (t *Tools) regularReadTarget(call *pipeline.Call, path string) (fsobserve.Target, fsobserve.Info, error) {
	fs := t.cfg.FS
	target, err := fs.Resolve(path, t.sessionCwd(call, path))
	if err != nil {
		return fsobserve.Target{}, fsobserve.Info{}, err
	}
	info, exists, err := fs.Stat(target)
	if err != nil {
		return fsobserve.Target{}, fsobserve.Info{}, err
	}
	if !exists {
		t.record(call.SessionID(), target.Key, fsobserve.Absent())
		return fsobserve.Target{}, fsobserve.Info{}, fsobserve.Errorf(fsobserve.CodeNotFound, "cannot read %q: not found", target.Display)
	}
	if info.Kind != fsobserve.KindFile {
		return fsobserve.Target{}, fsobserve.Info{}, fsobserve.Errorf(fsobserve.CodeNotRegularFile, "cannot read %q: not a regular file", target.Display)
	}
	return target, info, nil
}

// imageError rewrites the store's refusals the model can act on (a side
// or the pixel count over the limit, bytes of another format than the
// extension declares) as upstream's read_image words them, plain errors
// without a code; any other failure passes as it is.
func imageError(err error, display, mt string, limits attachment.Limits) error {
	var ae *attachment.Error
	if !errors.As(err, &ae) {
		return err
	}
	switch ae.Code() {
	case attachment.CodeDimensionTooLarge:
		return fmt.Errorf("cannot read %q: at least one image side exceeds the %dpx limit; downscale the image and read the smaller copy", display, limits.MaxImageDimension)
	case attachment.CodeTooManyPixels:
		return fmt.Errorf("cannot read %q: the image exceeds the %d-pixel decoded-size limit; downscale the image and read the smaller copy", display, limits.MaxImagePixels)
	case attachment.CodeTypeMismatch:
		return fmt.Errorf("cannot read %q: the %s extension declares %s, but the bytes use a different image format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, or convert it to one of those formats", display, lowerASCII(extname(display)), mt)
	}
	return err
}

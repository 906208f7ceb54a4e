package attachment

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Store is the local attachment store rooted at <DSH_HOME>/attachments/v1.
type Store struct {
	root   string
	limits Limits
}

// New returns the store under dshHome (absolute) with limits (zero fields:
// upstream's defaults). Nothing is created until the first save.
func New(dshHome string, limits Limits) (*Store, error) {
	if !filepath.IsAbs(dshHome) {
		return nil, fmt.Errorf("attachment: DSH_HOME %q must be an absolute path", dshHome)
	}
	return &Store{root: filepath.Join(dshHome, "attachments", "v1"), limits: limits.withDefaults()}, nil
}

// Root is the versioned storage root.
func (s *Store) Root() string { return s.root }

// Limits are the store's limits, defaults filled in.
func (s *Store) Limits() Limits { return s.limits }

// Accepts reports whether the store accepts images of media type mt.
func (s *Store) Accepts(mt string) bool { return mediaTypeKnown(mt) }

// Input is one image to save: its bytes, declared media type and optional name.
type Input struct {
	Data      []byte
	MediaType string
	Name      string
}

// Ref is the durable reference of a saved image.
type Ref struct {
	AttachmentID string
	MediaType    string
	Bytes        int
	Width        int
	Height       int
	// Name is the display name ("" when none).
	Name string
}

// ToolJSON is the reference as read_image's image block carries it:
// {attachmentId, mediaType, bytes, width, height, name?}.
func (r Ref) ToolJSON() json.RawMessage {
	v := struct {
		AttachmentID string `json:"attachmentId"`
		MediaType    string `json:"mediaType"`
		Bytes        int    `json:"bytes"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		Name         string `json:"name,omitempty"`
	}{r.AttachmentID, r.MediaType, r.Bytes, r.Width, r.Height, r.Name}
	b, _ := json.Marshal(v)
	return b
}

// PromptJSON is the reference as an admitted prompt's image block carries
// it: {attachmentId, mediaType, width, height, bytes} (another key order,
// no name).
func (r Ref) PromptJSON() json.RawMessage {
	v := struct {
		AttachmentID string `json:"attachmentId"`
		MediaType    string `json:"mediaType"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		Bytes        int    `json:"bytes"`
	}{r.AttachmentID, r.MediaType, r.Width, r.Height, r.Bytes}
	b, _ := json.Marshal(v)
	return b
}

// Validate runs the whole admission of one image without writing anything.
func (s *Store) Validate(in Input) (Info, error) {
	if int64(len(in.Data)) > s.limits.MaxImageBytes {
		return Info{}, errorf(CodeTooLarge, "Image exceeds the configured byte limit.")
	}
	return Inspect(in.Data, in.MediaType, s.limits)
}

// Save admits one image and stores it.
func (s *Store) Save(in Input) (Ref, error) {
	info, err := s.Validate(in)
	if err != nil {
		return Ref{}, err
	}
	sum := sha256.Sum256(in.Data)
	sha := hex.EncodeToString(sum[:])
	if err := s.publish(sha, in.Data); err != nil {
		var ae *Error
		if errors.As(err, &ae) {
			return Ref{}, err
		}
		return Ref{}, &Error{code: CodeWriteFailed, msg: "Unable to persist image attachment.", cause: err}
	}
	return Ref{AttachmentID: "sha256:" + sha, MediaType: info.MediaType, Bytes: len(in.Data), Width: info.Width, Height: info.Height, Name: DisplayName(in.Name)}, nil
}

// SaveAll admits a batch (count, aggregate bytes, media types, then every
// member validated) before storing any, and returns the references in
// order.
func (s *Store) SaveAll(ins []Input) ([]Ref, error) {
	if len(ins) > s.limits.MaxImagesPerMessage {
		return nil, errorf(CodeTooManyImages, "Image batch exceeds the configured image-count limit.")
	}
	var total int64
	for _, in := range ins {
		total += int64(len(in.Data))
	}
	if total > s.limits.MaxMessageImageBytes {
		return nil, errorf(CodeImagesTooLarge, "Image batch exceeds the configured aggregate image-byte limit.")
	}
	for _, in := range ins {
		if !mediaTypeKnown(in.MediaType) {
			return nil, errorf(CodeUnsupportedType, fmt.Sprintf("Image type %s is not accepted by this deployment.", in.MediaType))
		}
	}
	for _, in := range ins {
		if _, err := s.Validate(in); err != nil {
			return nil, err
		}
	}
	refs := make([]Ref, 0, len(ins))
	for _, in := range ins {
		r, err := s.Save(in)
		if err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// ObjectPath is where the object of digest sha lives.
func (s *Store) ObjectPath(sha string) string {
	return filepath.Join(s.root, "objects", sha[:2], sha)
}

// publish writes data as the object sha: a private staging file, fsynced,
// linked into place (an existing object must hold the same digest), the
// directories synced, the staging file removed.
func (s *Store) publish(sha string, data []byte) error {
	bucket := filepath.Join(s.root, "objects", sha[:2])
	staging := filepath.Join(s.root, "tmp")
	for _, d := range []string{bucket, staging} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return err
		}
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := filepath.Join(staging, hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	target := s.ObjectPath(sha)
	if err := os.Link(tmp, target); err != nil {
		if !errors.Is(err, os.ErrExist) {
			return err
		}
		old, err := os.ReadFile(target)
		if err != nil {
			return err
		}
		if got := sha256.Sum256(old); hex.EncodeToString(got[:]) != sha {
			return errorf(CodeCorrupt, "Stored attachment failed integrity verification.")
		}
	}
	for _, d := range []string{bucket, filepath.Dir(bucket)} {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

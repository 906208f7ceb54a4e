package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/stack"
)

// promptContent runs a promptContent step: its blocks admitted as
// upstream's bridge admits an inline image prompt (a refusal is the
// prompt's invalid-params error, and no turn starts), then the prompt of
// the admitted content, answered as a text prompt is.
func (c *client) promptContent(ctx context.Context, step recording.Step) error {
	content, err := admitPrompt(c.stack, step.Content)
	if err != nil {
		c.wire.send(acpwire.InvalidParams(err.Error()))
		return nil
	}
	_, err = c.promptAnswered(ctx, promptMessage(content))
	return err
}

// admitPrompt admits a prompt's ACP blocks in upstream's order: images
// only when the connection advertised them (an attachment store and a
// model that declares image input), each image's MIME type, its canonical
// base64, the model, then the batch admitted into the store. Text blocks
// pass as they are; each image becomes an image block whose reference is
// {attachmentId, mediaType, width, height, bytes}.
func admitPrompt(st *stack.Stack, blocks []recording.PromptBlock) ([]pipeline.Block, error) {
	store := st.Attachments()
	var inputs []attachment.Input
	for _, b := range blocks {
		if b.Type != "image" {
			continue
		}
		if store == nil || !st.ImageInput() {
			return nil, errors.New("inline image prompts were not advertised by this connection")
		}
		if !slices.Contains(attachment.MediaTypes, b.MimeType) {
			return nil, errors.New("image mimeType must be image/png, image/jpeg, image/webp, or image/gif")
		}
		data, err := attachment.DecodeBase64(b.Data)
		if err != nil {
			return nil, errors.New("image data must be canonical base64")
		}
		inputs = append(inputs, attachment.Input{Data: data, MediaType: b.MimeType})
	}
	if len(inputs) > 0 && !st.ImageInput() {
		return nil, fmt.Errorf("model %q does not declare image input", st.ImageModel())
	}
	var refs []attachment.Ref
	if len(inputs) > 0 {
		var err error
		if refs, err = store.SaveAll(inputs); err != nil {
			return nil, err
		}
	}
	out := make([]pipeline.Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == "image" {
			out = append(out, pipeline.ImageBlock(refs[0].PromptJSON()))
			refs = refs[1:]
			continue
		}
		out = append(out, pipeline.TextBlock(b.Text))
	}
	return out, nil
}

package compaction

import (
	"fmt"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// The token meter's fixed-density heuristic (upstream's dsh-token-meter).
const (
	// CharsPerToken is the text density: UTF-16 code units per token.
	CharsPerToken = 4
	// BlockOverhead is the structural overhead of one content block, and
	// of one message's role framing.
	BlockOverhead = 4
)

// tokensOf is ceil(units / CharsPerToken).
func tokensOf(units int) int { return (units + CharsPerToken - 1) / CharsPerToken }

// utf16Len is the length of s in UTF-16 code units (JavaScript's
// String.prototype.length).
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// unitsOf is the length of a JSON string value in UTF-16 code units (a
// lone surrogate counted as the one unit it is).
func unitsOf(v *jsjson.Value) int { return len(v.Units) }

// EstimateContent prices content blocks (a JSON array) as upstream's meter
// does: a text or reasoning block ceil(len(text)/4)+4, a tool call
// ceil(len(name)/4)+ceil(len(arguments)/4)+4, a tool result its own
// content's price +4, any other block (an image) 4+ceil(len(JSON)/4);
// lengths in UTF-16 code units. A block without the field its type
// prices is an error naming the block.
func EstimateContent(content *jsjson.Value) (int, error) {
	if content == nil || content.Kind != jsjson.Array {
		return 0, fmt.Errorf("content: want an array")
	}
	tokens := 0
	for i, b := range content.Elems {
		n, err := estimateBlock(b)
		if err != nil {
			return 0, fmt.Errorf("content[%d]: %w", i, err)
		}
		tokens += n
	}
	return tokens, nil
}

// estimateBlock prices one block.
func estimateBlock(b *jsjson.Value) (int, error) {
	str := func(key string) (*jsjson.Value, error) {
		v := b.Get(key)
		if v == nil || v.Kind != jsjson.String {
			return nil, fmt.Errorf("%s: want a string", key)
		}
		return v, nil
	}
	if b == nil || b.Kind != jsjson.Object {
		return 0, fmt.Errorf("want an object")
	}
	switch b.Get("type").Str() {
	case "text", "reasoning":
		t, err := str("text")
		if err != nil {
			return 0, err
		}
		return tokensOf(unitsOf(t)) + BlockOverhead, nil
	case "tool-call":
		name, err := str("name")
		if err != nil {
			return 0, err
		}
		args, err := str("arguments")
		if err != nil {
			return 0, err
		}
		return tokensOf(unitsOf(name)) + tokensOf(unitsOf(args)) + BlockOverhead, nil
	case "tool-result":
		n, err := EstimateContent(b.Get("content"))
		if err != nil {
			return 0, err
		}
		return n + BlockOverhead, nil
	}
	return BlockOverhead + tokensOf(utf16Len(jsjson.Stringify(b))), nil
}

// EstimateMessage prices one model-visible message (its content) plus its
// role framing.
func EstimateMessage(content *jsjson.Value) (int, error) {
	n, err := EstimateContent(content)
	if err != nil {
		return 0, err
	}
	return n + BlockOverhead, nil
}

package hf

import (
	"fmt"
	"strings"
)

// The multimodal wrappers (Gemma4ForConditionalGeneration,
// Gemma3ForConditionalGeneration: the real releases' config.json) hold the
// text model's configuration as text_config and store its weights under a
// prefix of their own; their encoders (vision_config, audio_config) are not
// loaded: tpucc runs the text model, which is what the wrapper computes for
// a prompt of text alone.

// encoder is one of a wrapper's encoders: the config field that describes
// it and the prefixes of its tensors in the checkpoint.
type encoder struct {
	field    string
	prefixes []string
}

// wrapper is one kind of multimodal wrapper.
type wrapper struct {
	text   string // text_config's model_type
	prefix string // where the text model's tensors are
	head   string // the untied head's tensor
	parts  []encoder
	// inert are the wrapper's fields that do not change the text model:
	// the special tokens that mark images, video and audio in a prompt,
	// and how many a picture becomes.
	inert []string
}

var wrappers = map[string]wrapper{
	"gemma4": {text: "gemma4_text", prefix: "model.language_model.", head: "lm_head.weight",
		parts: []encoder{
			{"vision_config", []string{"model.vision_tower.", "model.embed_vision."}},
			{"audio_config", []string{"model.audio_tower.", "model.embed_audio."}},
		},
		inert: []string{"boi_token_id", "eoi_token_id", "image_token_id", "video_token_id",
			"boa_token_id", "eoa_token_id", "eoa_token_index", "audio_token_id"}},
	"gemma3": {text: "gemma3_text", prefix: "language_model.model.", head: "language_model.lm_head.weight",
		parts: []encoder{
			{"vision_config", []string{"vision_tower.", "multi_modal_projector."}},
		},
		inert: []string{"boi_token_index", "eoi_token_index", "image_token_index", "mm_tokens_per_image"}},
}

// readWrapper reads a wrapper's config.json: text_config as its text model,
// the encoders' configurations noted (their tensors are left unloaded), the
// tie of the head to the embedding required to agree.
func readWrapper(f *fields, arch string) *Config {
	w := wrappers[arch]
	text := f.take("text_config")
	if text == nil {
		f.fail("text_config", "missing (a %s config.json describes its text model there)", arch)
		return nil
	}
	c, err := ParseConfig(text)
	if err != nil {
		f.fail("text_config", "%v", err)
		return nil
	}
	if c.Arch != w.text {
		f.fail("text_config", "model_type %q, want %q", c.Arch, w.text)
		return nil
	}
	c.Wrapper, c.Prefix, c.head = arch, w.prefix, w.head
	for _, p := range w.parts {
		if f.has(p.field) {
			c.Unloaded = append(c.Unloaded, p.field)
			c.skip = append(c.skip, p.prefixes...)
		}
	}
	if f.has("tie_word_embeddings") && f.bool("tie_word_embeddings", true) != c.TieEmbed {
		f.fail("tie_word_embeddings", "%v, but text_config's is %v", !c.TieEmbed, c.TieEmbed)
	}
	for _, k := range w.inert {
		f.take(k)
	}
	return c
}

// headName is the untied head's tensor: lm_head.weight unless a wrapper
// says otherwise.
func (c *Config) headName() string {
	if c.head == "" {
		return "lm_head.weight"
	}
	return c.head
}

// prefix is where the text model's tensors are: "model." unless a wrapper
// says otherwise.
func (c *Config) prefix() string {
	if c.Prefix == "" {
		return "model."
	}
	return c.Prefix
}

// skipped tells whether name belongs to an encoder the config describes and
// tpucc does not load.
func (c *Config) skipped(name string) bool {
	for _, p := range c.skip {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// UnloadedText says what a wrapper's checkpoint holds that is not loaded,
// or "" when nothing is left out.
func (c *Config) UnloadedText() string {
	if len(c.Unloaded) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the %s encoders are not loaded (text only)", c.Wrapper, strings.Join(c.Unloaded, " and "))
}

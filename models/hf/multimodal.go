package hf

import (
	"fmt"
	"strings"
)

// The gemma4 wrapper (Gemma4ForConditionalGeneration, the real release's
// config.json) holds the text model's configuration as text_config and
// stores its weights under model.language_model.; its vision and audio
// encoders (vision_config, audio_config) are not loaded: tpucc runs the text
// model, which is what the wrapper computes for a prompt of text alone.

// multimodalParts are the wrapper's encoders: the config field that
// describes each and the prefixes of its tensors in the checkpoint.
var multimodalParts = []struct {
	field    string
	prefixes []string
}{
	{"vision_config", []string{"model.vision_tower.", "model.embed_vision."}},
	{"audio_config", []string{"model.audio_tower.", "model.embed_audio."}},
}

// wrapperInert are the wrapper's fields that do not change the text model:
// the special tokens that mark images, video and audio in a prompt.
var wrapperInert = []string{"boi_token_id", "eoi_token_id", "image_token_id", "video_token_id",
	"boa_token_id", "eoa_token_id", "eoa_token_index", "audio_token_id"}

// gemma4Wrapper reads a gemma4 config.json: text_config as gemma4_text, the
// encoders' configurations noted (their tensors are left unloaded), the
// tie of the head to the embedding required to agree.
func gemma4Wrapper(f *fields) *Config {
	text := f.take("text_config")
	if text == nil {
		f.fail("text_config", "missing (a gemma4 config.json describes its text model there)")
		return nil
	}
	c, err := ParseConfig(text)
	if err != nil {
		f.fail("text_config", "%v", err)
		return nil
	}
	if c.Arch != "gemma4_text" {
		f.fail("text_config", "model_type %q, want \"gemma4_text\"", c.Arch)
		return nil
	}
	c.Prefix = "model.language_model."
	for _, p := range multimodalParts {
		if f.has(p.field) {
			c.Unloaded = append(c.Unloaded, p.field)
			c.skip = append(c.skip, p.prefixes...)
		}
	}
	if f.has("tie_word_embeddings") && f.bool("tie_word_embeddings", true) != c.TieEmbed {
		f.fail("tie_word_embeddings", "%v, but text_config's is %v", !c.TieEmbed, c.TieEmbed)
	}
	for _, k := range wrapperInert {
		f.take(k)
	}
	return c
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
	return fmt.Sprintf("gemma4: the %s encoders are not loaded (text only)", strings.Join(c.Unloaded, " and "))
}

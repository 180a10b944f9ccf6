package hf

import (
	"slices"
	"strings"
	"testing"
)

// The gemma4 wrapper's config.json is its text_config as gemma4_text, with
// the text weights under model.language_model. and the encoders it
// describes noted and left unloaded.
func TestGemma4Wrapper(t *testing.T) {
	wrap := func(extra string) string {
		return `{"model_type": "gemma4", "text_config": ` + gemma4Config + extra + `}`
	}
	c, err := ParseConfig([]byte(wrap(`, "vision_config": {"hidden_size": 8}, "audio_config": null, "image_token_id": 5, "tie_word_embeddings": true`)))
	if err != nil {
		t.Fatal(err)
	}
	if c.Arch != "gemma4_text" || c.Prefix != "model.language_model." || !slices.Equal(c.Unloaded, []string{"vision_config"}) {
		t.Errorf("arch %s prefix %q unloaded %v", c.Arch, c.Prefix, c.Unloaded)
	}
	if !c.skipped("model.vision_tower.encoder.x") || !c.skipped("model.embed_vision.w") || c.skipped("model.audio_tower.x") {
		t.Errorf("skipped prefixes %v", c.skip)
	}
	if got, want := c.UnloadedText(), "gemma4: the vision_config encoders are not loaded (text only)"; got != want {
		t.Errorf("UnloadedText %q, want %q", got, want)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"model_type": "gemma4"}`, `field "text_config": missing (a gemma4 config.json describes its text model there)`},
		{wrap(`, "tie_word_embeddings": false`), `field "tie_word_embeddings": false, but text_config's is true`},
		{wrap(`, "mm_tokens_per_image": 256`), `field "mm_tokens_per_image": not known to tpucc for model_type "gemma4", so it cannot be honoured`},
		{`{"model_type": "gemma4", "text_config": {"model_type": "qwen3"}}`, `field "text_config": field "vocab_size": missing`},
	} {
		_, err := ParseConfig([]byte(bad.in))
		if err == nil || err.Error() != bad.want {
			t.Errorf("%s:\nerror %v\nwant  %s", bad.in[:min(len(bad.in), 60)], err, bad.want)
		}
	}
	if _, err := ParseConfig([]byte(strings.Replace(wrap(""), `"gemma4_text"`, `"qwen3"`, 1))); err == nil {
		t.Error("a qwen3 text_config was accepted")
	}
}

// The gemma3 wrapper (Gemma 3 4B and up) stores its text model under
// language_model.model., an untied head as language_model.lm_head.weight,
// and the vision tower and projector beside it.
func TestGemma3Wrapper(t *testing.T) {
	wrap := `{"architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999, "eoi_token_index": 256000,
	"image_token_index": 262144, "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
	"text_config": ` + strings.Replace(gemma3Config, `"rope_scaling": null`, `"rope_scaling": {"factor": 8.0, "rope_type": "linear"}`, 1) + `,
	"vision_config": {"hidden_size": 1152, "model_type": "siglip_vision_model"}, "tie_word_embeddings": true}`
	c, err := ParseConfig([]byte(wrap))
	if err != nil {
		t.Fatal(err)
	}
	if c.Arch != "gemma3_text" || c.Prefix != "language_model.model." || c.headName() != "language_model.lm_head.weight" || c.Layers[5].Rope.Factor != 8 {
		t.Errorf("arch %s prefix %q head %q rope %+v", c.Arch, c.Prefix, c.headName(), c.Layers[5].Rope)
	}
	if !c.skipped("vision_tower.encoder.x") || !c.skipped("multi_modal_projector.mm_input_projection_weight") || c.skipped("language_model.model.norm.weight") {
		t.Errorf("skipped prefixes %v", c.skip)
	}
	if got, want := c.UnloadedText(), "gemma3: the vision_config encoders are not loaded (text only)"; got != want {
		t.Errorf("UnloadedText %q, want %q", got, want)
	}
	if _, err := ParseConfig([]byte(`{"model_type": "gemma3", "text_config": ` + gemma4Config + `}`)); err == nil ||
		err.Error() != `field "text_config": model_type "gemma4_text", want "gemma3_text"` {
		t.Errorf("a gemma4_text text_config: %v", err)
	}
}

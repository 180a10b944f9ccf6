package hf

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// LoadGeneration reads eos_token_id and pad_token_id from
// generation_config.json, falling back field by field to config.json, and
// pads with the first EOS id without a pad_token_id, as transformers does.
func TestLoadGeneration(t *testing.T) {
	cases := []struct {
		name, gen, cfg string // gen "": no generation_config.json
		eos            []int
		pad            int
	}{
		{"int", `{"eos_token_id": 7, "pad_token_id": 3}`, `{}`, []int{7}, 3},
		{"list", `{"eos_token_id": [7, 9], "do_sample": true}`, `{}`, []int{7, 9}, 7},
		{"config fallback", ``, `{"eos_token_id": 5, "pad_token_id": null}`, []int{5}, 5},
		{"field fallback", `{"pad_token_id": 2}`, `{"eos_token_id": [5, 6]}`, []int{5, 6}, 2},
		{"null", `{"eos_token_id": null}`, `{"eos_token_id": 4}`, []int{4}, 4},
		{"none", `{}`, `{}`, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := genDir(t, c.gen, c.cfg)
			g, err := LoadGeneration(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g.EOS, c.eos) || g.Pad != c.pad {
				t.Errorf("got eos %v pad %d, want eos %v pad %d", g.EOS, g.Pad, c.eos, c.pad)
			}
		})
	}
}

func TestLoadGenerationErrors(t *testing.T) {
	cases := []struct{ gen, cfg, want string }{
		{`{"eos_token_id": "x"}`, `{}`, `GEN: field "eos_token_id": "x" is not a token id or a list of them`},
		{`{"eos_token_id": [1, -2]}`, `{}`, `GEN: field "eos_token_id": -2 is not a token id`},
		{``, `{"pad_token_id": [1, 2]}`, `CFG: field "pad_token_id": [1, 2] is a list; a row is padded with one token`},
		{`{"eos_token_id": 1, "eos_token_id": 2}`, `{}`, `GEN: duplicate key "eos_token_id" in the object at $`},
		{`[1]`, `{}`, `GEN: not a JSON object of fields`},
		{`{"eos_token_id": 1, "x": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, `{}`, `GEN: invalid JSON: nested deeper than 64 levels at byte 88`},
	}
	for _, c := range cases {
		dir := genDir(t, c.gen, c.cfg)
		_, err := LoadGeneration(dir)
		want := c.want
		if len(want) > 3 && want[:3] == "GEN" {
			want = filepath.Join(dir, GenerationFile) + want[3:]
		} else {
			want = filepath.Join(dir, ConfigFile) + want[3:]
		}
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v\nwant %s", c.gen, err, want)
		}
	}
}

func genDir(t *testing.T, gen, cfg string) string {
	t.Helper()
	dir := t.TempDir()
	if gen != "" {
		if err := os.WriteFile(filepath.Join(dir, GenerationFile), []byte(gen), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

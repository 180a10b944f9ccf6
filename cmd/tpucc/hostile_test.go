package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileDir holds the hostile model files, programs and arrays crafted
// against the parsers' budgets (issue 29): each must get one clear error,
// exit status 1 and no output, in bounded memory.
const hostileDir = "../../testdata/hostile"

// TestHostileFiles runs every entry of the corpus through the command a
// user would give it, and requires every entry of the directory to be here.
func TestHostileFiles(t *testing.T) {
	id := writeFile(t, t.TempDir(), "id.tir", []byte("func @main(%x: f32[]) -> f32[] {\n  return %x\n}\n"))
	generate := func(dir string) []string { return []string{"generate", "--model", dir, "--prompt-ids", "1"} }
	text := func(dir string) []string { return []string{"generate", "--model", dir, "--prompt", "hi"} }
	cases := []struct {
		name string
		args func(path string) []string
		want string // the last line of stderr, after the path
	}{
		{"config-deep", generate, "/config.json: invalid JSON: nested deeper than 64 levels at byte 96"},
		{"config-maxpos-zero", generate, `/config.json: field "max_position_embeddings": must be positive`},
		{"config-maxpos-negative", generate, `/config.json: field "max_position_embeddings": -1 is not a non-negative integer`},
		{"config-maxpos-missing", generate, `/config.json: field "max_position_embeddings": missing`},
		{"index-deep", generate, "/model.safetensors.index.json: invalid JSON: nested deeper than 64 levels at byte 75"},
		{"safetensors-deep", generate, "/model.safetensors: header: invalid JSON: nested deeper than 64 levels at byte 83"},
		{"safetensors-rank", generate, `/model.safetensors: tensor "x": shape has 10000 dimensions, more than 64`},
		{"tokenizer-deep", text, "/tokenizer.json: invalid JSON: nested deeper than 64 levels at byte 93"},
		{"tokenizer-bigid", text, `/tokenizer.json: model: vocab: token "a" has id 16777216, outside [0, 1026] (twice the file's 1 tokens, and 1024)`},
		{"deep.tir", func(p string) []string { return []string{"check", p} }, ":2:272: error: syntax error: brackets nested more than 256 deep"},
		{"rank.tir", func(p string) []string { return []string{"check", p} }, ":1:16: error: a type of 10000 dimensions, more than 64"},
		{"deep.npy", func(p string) []string { return []string{"run", id, "--input", "x=" + p} }, ": error: bad header: value of 'shape': nested deeper than 8 levels at offset 59"},
		{"rank.npy", func(p string) []string { return []string{"run", id, "--input", "x=" + p} }, ": error: bad header: 'shape' has 10000 dimensions, more than 64"},
	}
	entries, err := os.ReadDir(hostileDir)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range cases {
		known[c.name] = true
		path := filepath.Join(hostileDir, c.name)
		r := tpucc(t, "", c.args(path)...)
		last := strings.TrimSuffix(r.stderr, "\n")
		last = last[strings.LastIndexByte(last, '\n')+1:]
		if r.code != 1 || last != path+c.want || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr ends\n%.300s\nwant exit 1 and\n%s", c.name, r.code, r.stdout, last, path+c.want)
		}
	}
	for _, e := range entries {
		if !known[e.Name()] && e.Name() != "README.md" {
			t.Errorf("%s/%s has no case in TestHostileFiles", hostileDir, e.Name())
		}
	}
}
